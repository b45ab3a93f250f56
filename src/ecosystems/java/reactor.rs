//! Maven modules a multi-module run did not test, read from Maven's Reactor Summary.
//!
//! With `--fail-at-end`, a module that depends on one that failed is `SKIPPED`: its tests never
//! compile or run, and no report says so (quarantining the failure upstream would pass the run).
//! Each skipped module with test sources is an `error` case `[skipped by Maven] <module>`; each
//! module whose compilation failed is `[build failed] <module>`; both quote Maven.

use std::path::Path;
use std::sync::OnceLock;

use super::pom::{Pom, module_dir};
use crate::ecosystems::Collected;
use crate::model::incomplete::{BUILD_FAILED_CASE, SKIPPED_BY_MAVEN_CASE};
use crate::model::{Case, CaseStatus};

/// One line of the Reactor Summary: the name Maven prints and how the module ended.
#[derive(Debug, PartialEq)]
struct Entry {
    name: String,
    status: String,
}

/// A module of the build: its directory (relative, `""` for the root) and its pom.
struct Module {
    dir: String,
    pom: Pom,
}

/// Adds an `error` case for each module Maven's Reactor Summary says it SKIPPED and that has test
/// sources (or whose directory fcorr cannot find: then it cannot tell, and says so).
pub(super) fn flag_skipped_modules(collected: &mut Collected, output: &str, root: &Path) {
    let entries = reactor_summary(output);
    if !entries.iter().any(|e| e.status == "SKIPPED") {
        return;
    }
    let modules = modules(root);
    for entry in entries.iter().filter(|e| e.status == "SKIPPED") {
        let module = find(&modules, &entry.name);
        if module.is_some_and(|m| !has_test_sources(root, &m.dir)) {
            continue;
        }
        let shown = module.map_or_else(|| entry.name.clone(), |m| shown_dir(&m.dir));
        let listed = if shown == entry.name { shown.clone() } else { format!("\"{}\" ({shown})", entry.name) };
        let why = match module.map(|m| failed_dependencies(m, &modules, &entries)).filter(|d| !d.is_empty()) {
            Some(deps) => format!("it depends on {}", deps.join(", ")),
            None => "a module it depends on did not finish".to_string(),
        };
        let tests = match module {
            Some(m) => format!("its tests under {}src/test never compiled or ran", prefix(&m.dir)),
            None => "fcorr found no module directory for this name, so it cannot tell whether it has tests".into(),
        };
        collected.cases.push(error_case(
            format!("{SKIPPED_BY_MAVEN_CASE} {shown}"),
            &shown,
            module.map(|m| format!("{}pom.xml", prefix(&m.dir))),
            format!(
                "Maven's Reactor Summary lists {listed} as SKIPPED: {why}, and Maven does not build a module after \
                 one it depends on failed; {tests}"
            ),
        ));
    }
}

/// Adds an `error` case for each module whose compilation failed, quoting Maven's
/// `Failed to execute goal … on project <artifactId>: Compilation failure` line.
pub(super) fn flag_uncompiled_modules(collected: &mut Collected, output: &str, root: &Path) {
    static GOAL: OnceLock<regex::Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let goal = GOAL.get_or_init(|| {
        regex::Regex::new(r"^\[ERROR\] (Failed to execute goal (\S+) .*?on project ([^:\s]+): (.*?))\s*$")
            .expect("valid regex")
    });
    let mut known: Option<Vec<Module>> = None;
    let mut named: Vec<String> = Vec::new();
    for line in plain(output).lines() {
        let Some(c) = goal.captures(line) else { continue };
        let compile = c[2].contains("compiler") || c[4].starts_with("Compilation failure");
        if !compile || named.contains(&c[3].to_string()) {
            continue;
        }
        named.push(c[3].to_string());
        let module =
            known.get_or_insert_with(|| modules(root)).iter().find(|m| m.pom.artifact_id.as_deref() == Some(&c[3]));
        let shown = module.map_or_else(|| c[3].to_string(), |m| shown_dir(&m.dir));
        collected.cases.push(error_case(
            format!("{BUILD_FAILED_CASE} {shown}"),
            &shown,
            module.map(|m| format!("{}pom.xml", prefix(&m.dir))),
            format!("module {shown} did not compile, so none of its tests ran; Maven: \"{}\"", &c[1]),
        ));
    }
}

fn error_case(name: String, module: &str, file: Option<String>, message: String) -> Case {
    Case {
        name: name.into(),
        classname: Some(module.to_string().into()),
        file: file.map(Into::into),
        status: CaseStatus::Error,
        ..Case::default()
    }
    .with_message(Some(message))
}

/// Maven's output without the colour codes it writes even with `-B`.
fn plain(output: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: OnceLock<regex::Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    ANSI.get_or_init(|| regex::Regex::new(r"\x1b\[[0-9;]*m").expect("valid regex")).replace_all(output, "")
}

/// The lines of the last Reactor Summary in `output`.
fn reactor_summary(output: &str) -> Vec<Entry> {
    static LINE: OnceLock<regex::Regex> = OnceLock::new();
    // The pattern is a literal; it compiles. `name ....... SKIPPED`, `name ... SUCCESS [  0.3 s]`.
    let pattern = LINE.get_or_init(|| {
        regex::Regex::new(r"^\[INFO\] (.+?) \.* ?(SUCCESS|FAILURE|SKIPPED)(?: \[.*\])?\s*$").expect("valid regex")
    });
    let text = plain(output);
    let Some(start) = text.rfind("Reactor Summary") else { return Vec::new() };
    // The summary ends at Maven's next rule line, before `BUILD FAILURE`.
    text[start..]
        .lines()
        .skip(1)
        .take_while(|line| !line.contains("-----"))
        .filter_map(|line| pattern.captures(line))
        .map(|c| Entry { name: c[1].trim().to_string(), status: c[2].to_string() })
        .collect()
}

/// Every module the root's build reaches (through `<modules>` and every profile's), with its pom.
fn modules(root: &Path) -> Vec<Module> {
    let mut found: Vec<Module> = Vec::new();
    let mut queue = vec![String::new()];
    while let Some(dir) = queue.pop() {
        if found.iter().any(|m| m.dir == dir) {
            continue;
        }
        let Some(pom) = Pom::read_at(root, &dir) else { continue };
        let declared = pom.modules.iter().chain(pom.profiles.iter().flat_map(|p| &p.modules));
        queue.extend(declared.filter_map(|m| module_dir(&dir, m)));
        found.push(Module { dir, pom });
    }
    found
}

/// The module Maven printed as `name`: by `<name>` or artifactId; Maven appends the version when
/// it differs from the top project's (`core 2.0`).
fn find<'a>(modules: &'a [Module], name: &str) -> Option<&'a Module> {
    let by = |name: &str| {
        modules.iter().find(|m| m.pom.display_name() == Some(name) || m.pom.artifact_id.as_deref() == Some(name))
    };
    by(name).or_else(|| name.rsplit_once(' ').and_then(|(without_version, _)| by(without_version)))
}

/// The modules `module` depends on directly that Maven did not finish (FAILURE or SKIPPED), as
/// `dir (FAILURE)`.
fn failed_dependencies(module: &Module, modules: &[Module], entries: &[Entry]) -> Vec<String> {
    let mut out = Vec::new();
    for artifact in &module.pom.dependencies {
        let Some(dep) = modules.iter().find(|m| m.pom.artifact_id.as_deref() == Some(artifact)) else { continue };
        let Some(entry) = entries.iter().find(|e| find(modules, &e.name).is_some_and(|m| m.dir == dep.dir)) else {
            continue;
        };
        if entry.status != "SUCCESS" {
            out.push(format!("{} ({})", shown_dir(&dep.dir), entry.status));
        }
    }
    out
}

fn has_test_sources(root: &Path, dir: &str) -> bool {
    let tests = root.join(dir).join("src/test");
    walk_has_file(&tests, 32)
}

/// True when `dir` holds a file within `depth` levels.
fn walk_has_file(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_file() => true,
        Ok(t) if t.is_dir() && depth > 0 => walk_has_file(&e.path(), depth - 1),
        _ => false,
    })
}

fn shown_dir(dir: &str) -> String {
    if dir.is_empty() { ".".to_string() } else { dir.to_string() }
}

fn prefix(dir: &str) -> String {
    if dir.is_empty() { String::new() } else { format!("{dir}/") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Maven 3.8.7's output for modules a, b, c (c depends on b, b failed), with its colour codes.
    const OUTPUT: &str = "[INFO] Skipping c\n\
[INFO] This project has been banned from the build due to previous failures.\n\
[INFO] \u{1b}[1m------------------------------------------------------------------------\u{1b}[m\n\
[INFO] \u{1b}[1mReactor Summary for parent 1.0:\u{1b}[m\n\
[INFO] \n\
[INFO] parent ............................................. \u{1b}[1;32mSUCCESS\u{1b}[m [  0.001 s]\n\
[INFO] a .................................................. \u{1b}[1;32mSUCCESS\u{1b}[m [  6.560 s]\n\
[INFO] b .................................................. \u{1b}[1;31mFAILURE\u{1b}[m [  1.494 s]\n\
[INFO] Order Service ...................................... \u{1b}[1;33mSKIPPED\u{1b}[m\n\
[INFO] docs ............................................... \u{1b}[1;33mSKIPPED\u{1b}[m\n\
[INFO] ------------------------------------------------------------------------\n\
[INFO] BUILD FAILURE\n\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.1:compile (default-compile) on project b: Compilation failure\n\
[ERROR] /p/b/src/main/java/ex/b/M.java:[1,65] incompatible types\n\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project a: There are test failures.\n";

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_the_reactor_summary() {
        let entries = reactor_summary(OUTPUT);
        let got: Vec<(&str, &str)> = entries.iter().map(|e| (e.name.as_str(), e.status.as_str())).collect();
        assert_eq!(
            got,
            [
                ("parent", "SUCCESS"),
                ("a", "SUCCESS"),
                ("b", "FAILURE"),
                ("Order Service", "SKIPPED"),
                ("docs", "SKIPPED")
            ]
        );
    }

    #[test]
    fn skipped_modules_with_tests_and_uncompiled_modules_are_error_cases() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "pom.xml",
            "<project><artifactId>parent</artifactId><modules><module>a</module><module>b</module><module>svc</module><module>docs</module></modules></project>",
        );
        write(root, "a/pom.xml", "<project><artifactId>a</artifactId></project>");
        write(root, "b/pom.xml", "<project><artifactId>b</artifactId></project>");
        write(
            root,
            "svc/pom.xml",
            "<project><artifactId>svc</artifactId><name>Order Service</name>\
             <dependencies><dependency><artifactId>b</artifactId></dependency></dependencies></project>",
        );
        write(root, "svc/src/test/java/ex/SvcTest.java", "class SvcTest {}");
        // No test sources: Maven skipping it loses no test.
        write(root, "docs/pom.xml", "<project><artifactId>docs</artifactId></project>");
        let mut collected = Collected::nothing();
        flag_skipped_modules(&mut collected, OUTPUT, root);
        flag_uncompiled_modules(&mut collected, OUTPUT, root);
        let names: Vec<&str> = collected.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["[skipped by Maven] svc", "[build failed] b"]);
        assert!(collected.cases.iter().all(Case::marks_incomplete_results));
        let skipped = collected.cases[0].message().unwrap();
        assert_eq!(
            skipped,
            "Maven's Reactor Summary lists \"Order Service\" (svc) as SKIPPED: it depends on b (FAILURE), and Maven \
             does not build a module after one it depends on failed; its tests under svc/src/test never compiled or \
             ran"
        );
        assert_eq!(collected.cases[0].file.as_deref(), Some("svc/pom.xml"));
        assert!(collected.cases[1].message().unwrap().ends_with(
            "Maven: \"Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.1:compile \
             (default-compile) on project b: Compilation failure\""
        ));
    }

    #[test]
    fn a_skipped_name_with_no_module_directory_is_still_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut collected = Collected::nothing();
        flag_skipped_modules(&mut collected, OUTPUT, dir.path());
        let names: Vec<&str> = collected.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["[skipped by Maven] Order Service", "[skipped by Maven] docs"]);
        assert!(collected.cases[0].message().unwrap().contains("cannot tell whether it has tests"));
    }
}
