//! Java (and Kotlin) projects built with Maven (`pom.xml`) or Gradle (`build.gradle[.kts]`).
//!
//! Maven: one run of `test` (or `verify` when the failsafe plugin is configured), through `./mvnw`
//! when the project ships it; a compile error in that run is a build failure; results come from
//! surefire/failsafe `TEST-*.xml` through the JUnit reader. Gradle: `./gradlew` when the wrapper
//! is committed, else `gradle`; results from `build/test-results/**/*.xml`. A wrapper without its
//! executable bit runs through `sh`. Old report directories are removed before tests run, so a crash
//! can never be scored with the previous run's results; a Maven module with tests and no report
//! after a successful run is an error (`silent_modules.rs`), and so is a class whose test JVM
//! ended mid-class (`crashed_fork.rs`), and a module the reactor skipped or could not compile
//! (`reactor.rs`).

use std::path::Path;
use std::sync::OnceLock;

mod crashed_fork;
mod locations;
mod pom;
mod reactor;
mod silent_modules;

use super::{
    Candidate, CollectContext, Collected, Ecosystem, Members, PhasePlan, ProjectContext, ProjectFiles,
    ProjectPlanError, generic_build_diagnostics,
};
use crate::collect::{ReportSpec, relativize};
use crate::execute::process::{CommandSpec, find_on_path};
use crate::model::{Detection, Diagnostic, LeftOut, PhaseKind, Severity};

/// Maven and Gradle projects.
pub(crate) struct Java;

/// Where surefire writes its reports, in every module.
const MAVEN_REPORTS: &str = "**/target/surefire-reports/TEST-*.xml";

const GRADLE_FILES: &[&str] = &["build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"];

impl Ecosystem for Java {
    fn name(&self) -> &'static str {
        "java"
    }

    /// Surefire/Gradle JUnit cases get their class's source file and line (a failure: the line
    /// the stack trace and Maven print; otherwise the method's declaration).
    fn locate(&self, format: &str, report: &mut crate::collect::ParsedReport, root: &Path) {
        if format == crate::collect::junit::NAME {
            locations::locate_junit_cases(&mut report.cases, root);
        }
    }

    /// The reports, and after a Maven run that succeeded, an error case for each module that has
    /// tests and ran none (`silent_modules.rs`); after one that failed, an error case for each
    /// class whose test JVM ended mid-class (`crashed_fork.rs`), each module that did not compile
    /// and each module with tests the reactor skipped (`reactor.rs`).
    fn collect(&self, ctx: &CollectContext<'_>) -> Collected {
        let mut collected = super::collect_reports(ctx);
        let maven = ctx.reports.iter().any(|r| r.pattern == MAVEN_REPORTS);
        let output = &ctx.outcome.output;
        if maven && ctx.outcome.exit == crate::execute::process::Exit::Code(0) {
            silent_modules::flag_modules_that_ran_no_test(&mut collected, ctx.root);
        } else if maven {
            crashed_fork::flag_crashed_classes(&mut collected, output, ctx.root);
            reactor::flag_uncompiled_modules(&mut collected, output, ctx.root);
            reactor::flag_skipped_modules(&mut collected, output, ctx.root);
        }
        collected
    }

    fn frameworks(&self) -> &'static [&'static str] {
        &["maven", "gradle"]
    }

    fn detect(&self, files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
        let maven = files.has("pom.xml");
        let gradle_marker = GRADLE_FILES.iter().find(|f| files.has(f));
        let tool = match framework {
            Some("maven") => "maven",
            Some("gradle") => "gradle",
            _ if maven => "maven",
            _ if gradle_marker.is_some() => "gradle",
            _ => return None,
        };
        if !maven && gradle_marker.is_none() {
            return None;
        }
        let mut markers = Vec::new();
        let mut confidence: f64 = 0.9;
        if let Some(name) = framework {
            markers.push(format!("fcorr.toml: framework = \"{name}\""));
            confidence = 1.0;
        }
        let build_file = if tool == "maven" { "pom.xml" } else { gradle_marker.copied().unwrap_or("build.gradle") };
        markers.push(build_file.to_string());
        if maven && gradle_marker.is_some() {
            markers.push(format!(
                "both pom.xml and {} exist; {tool} is used — set `framework = \"maven\"` or `\"gradle\"` to choose",
                gradle_marker.copied().unwrap_or_default()
            ));
        }
        let wrapper = if tool == "maven" { "mvnw" } else { "gradlew" };
        if files.has(wrapper) {
            markers.push(format!("{wrapper} (wrapper)"));
        } else if find_on_path(if tool == "maven" { "mvn" } else { "gradle" }).is_none() {
            markers.push(if tool == "maven" {
                "mvn is not on PATH and there is no ./mvnw: install Maven (https://maven.apache.org/install.html)"
                    .into()
            } else {
                "gradle is not on PATH and there is no ./gradlew: install Gradle (https://gradle.org/install/) or \
                 commit the Gradle wrapper"
                    .to_string()
            });
        }
        let build_text = files.read(build_file).unwrap_or_default();
        for (needle, label) in [
            ("junit-jupiter", "JUnit 5"),
            ("junit-bom", "JUnit 5"),
            ("<artifactId>junit</artifactId>", "JUnit 4"),
            ("junit:junit", "JUnit 4"),
            ("testng", "TestNG"),
        ] {
            if build_text.contains(needle) {
                markers.push(format!("{build_file}: {label}"));
                confidence = confidence.max(0.95);
                break;
            }
        }
        if build_text.contains("maven-failsafe-plugin") {
            markers.push("pom.xml: maven-failsafe-plugin (integration tests run with `verify`)".into());
        }
        let kotlin = !files.matching("**/*.kt").is_empty() || build_file.ends_with(".kts");
        Some(Candidate {
            detection: Detection {
                ecosystem: "java".into(),
                language: if kotlin { "Kotlin" } else { "Java" }.into(),
                framework: tool.into(),
                package_manager: Some(tool.into()),
                confidence,
                markers,
            },
            problem: None,
        })
    }

    fn plan(&self, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        match ctx.detection.framework.as_str() {
            "maven" => Ok(maven_plan(ctx)),
            "gradle" => Ok(gradle_plan(ctx)),
            other => Err(ProjectPlanError::Framework {
                runner: "java",
                framework: other.to_string(),
                supported: "maven, gradle",
            }),
        }
    }

    fn build_failure_in_test(&self, output: &str, root: &Path) -> Option<Vec<Diagnostic>> {
        // Maven stops before surefire when compiling fails; Gradle keeps its separate build phase.
        if !(output.contains("COMPILATION ERROR") || output.contains("Compilation failure")) {
            return None;
        }
        let diagnostics = self.build_diagnostics(output, root);
        if !diagnostics.is_empty() {
            return Some(diagnostics);
        }
        let line =
            output.lines().find(|l| l.starts_with("[ERROR] Failed to execute goal")).unwrap_or("compilation failed");
        Some(vec![Diagnostic {
            severity: Severity::Error,
            source: "build".into(),
            message: line.trim_start_matches("[ERROR] ").to_string(),
            file: None,
            line: None,
            column: None,
        }])
    }

    fn rejected_tool_version(&self, output: &str) -> Option<String> {
        enforcer_version_rejection(output)
    }

    /// Maven modules and Gradle subprojects in the tree that the root build does not include:
    /// `mvn test` and `gradle test` at the root test every module they include, and no other.
    fn members(&self, files: &ProjectFiles) -> Members {
        let left_out = if files.has("pom.xml") { maven_left_out(files) } else { gradle_left_out(files) };
        Members { left_out, ..Members::default() }
    }

    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        let diagnostics = javac_diagnostics(output, root);
        if diagnostics.is_empty() { generic_build_diagnostics(output) } else { diagnostics }
    }

    /// Maven: the same test phase (old reports removed first) with Surefire's
    /// `-Dtest=pkg.Class#a+b,pkg.Other#c`. Parameterised and display names rerun their method.
    fn select_tests(&self, test: &PhasePlan, failed: &[&crate::model::Case]) -> Option<super::Rerun> {
        let maven = test.commands.iter().position(|c| c.args.iter().any(|a| a == "--fail-at-end"))?;
        let mut selected = Vec::new();
        let mut classes: Vec<(String, Vec<String>)> = Vec::new();
        for (i, case) in failed.iter().enumerate() {
            let Some(class) = case.classname.as_deref().filter(|c| !c.is_empty()) else { continue };
            // `add(int)[1]`, `add(int, int)`: Surefire selects by method name.
            let method = case.name.split(['(', '[', ' ']).next().unwrap_or_default();
            if method.is_empty() {
                continue;
            }
            selected.push(i);
            match classes.iter_mut().find(|(c, _)| c == class) {
                Some((_, methods)) if !methods.iter().any(|m| m == method) => methods.push(method.to_string()),
                Some(_) => {}
                None => classes.push((class.to_string(), vec![method.to_string()])),
            }
        }
        let filter: Vec<String> = classes.iter().map(|(c, m)| format!("{c}#{}", m.join("+"))).collect();
        let mut phase = test.clone();
        let command = &mut phase.commands[maven];
        command.args.push(format!("-Dtest={}", filter.join(",")));
        // A module of a multi-module build that has none of these classes is not a failure.
        command.args.push("-Dsurefire.failIfNoSpecifiedTests=false".into());
        Some(super::Rerun { phase, selected })
    }
}

/// The maven-enforcer-plugin's version rules (`requireMavenVersion`, `requireJavaVersion`):
/// `Detected Maven Version: 3.8.7 is not in the allowed range [3.9.0,).`, or the rule's own
/// message when the project wrote one.
fn enforcer_version_rejection(output: &str) -> Option<String> {
    static DETECTED: OnceLock<regex::Regex> = OnceLock::new();
    let detected = DETECTED.get_or_init(|| {
        // Enforcer 3.x says `Detected JDK version 17.0.15 (JAVA_HOME=...) is not in...`, 1.x
        // `Detected JDK Version: 17.0.15 is not in...`.
        regex::Regex::new(
            r"Detected (Maven|JDK) [Vv]ersion:? (\S+)(?: \([^)]*\))? is not in the allowed range (.+?)\.?\s*$",
        )
        .expect("valid regex")
    });
    let lines: Vec<&str> = output.lines().map(|l| l.trim_start_matches("[ERROR] ").trim_end()).collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = detected.captures(line) {
            let tool = if &c[1] == "JDK" { "Java" } else { "Maven" };
            return Some(format!(
                "the project requires {tool} {} (maven-enforcer-plugin), found {tool} {}",
                &c[3], &c[2]
            ));
        }
        // A rule with its own <message>: quote it.
        let rule = ["RequireMavenVersion", "RequireJavaVersion"].into_iter().find(|r| line.contains(r));
        if let Some(rule) = rule
            && line.ends_with("failed with message:")
            && let Some(message) = lines.get(i + 1).filter(|m| !m.is_empty() && !m.contains("Detected"))
        {
            let tool = if rule == "RequireJavaVersion" { "Java" } else { "Maven" };
            return Some(format!("the project's maven-enforcer-plugin rejects this {tool} version: {message}"));
        }
    }
    None
}

/// Directories below the root with a pom.xml that the root's build does not reach: no
/// `<module>` names them (followed through each module's own `<modules>`), or only the modules of
/// a profile that is not active by default do (`-P it` builds them; `mvn test` does not).
fn maven_left_out(files: &ProjectFiles) -> Vec<LeftOut> {
    // Directory -> the profile (and the pom declaring it) that alone reaches it; `None`: built.
    let mut reached: Vec<(String, Option<(String, String)>)> = vec![(String::new(), None)];
    let mut queue: Vec<(String, Option<(String, String)>)> = vec![(String::new(), None)];
    while let Some((dir, via)) = queue.pop() {
        let Some(pom) = pom::Pom::read(files, &dir) else { continue };
        let own = pom.modules.iter().map(|m| (m, via.clone()));
        let profiles = pom.profiles.iter().flat_map(|p| {
            let via = match &via {
                Some(outer) => Some(outer.clone()),
                None if p.may_be_active => None,
                None => Some((p.id.clone(), if dir.is_empty() { "pom.xml".into() } else { format!("{dir}/pom.xml") })),
            };
            p.modules.iter().map(move |m| (m, via.clone()))
        });
        for (module, via) in own.chain(profiles) {
            let Some(path) = pom::module_dir(&dir, module) else { continue };
            match reached.iter_mut().find(|(d, _)| *d == path) {
                // Reached through a profile first, through an active path now: built after all.
                Some((_, seen)) if seen.is_some() && via.is_none() => {
                    *seen = None;
                    queue.push((path, None));
                }
                Some(_) => {}
                None => {
                    reached.push((path.clone(), via.clone()));
                    queue.push((path, via));
                }
            }
        }
    }
    nested_build_dirs(files, &["pom.xml"])
        .into_iter()
        .filter_map(|dir| {
            let reason = match reached.iter().find(|(d, _)| *d == dir) {
                Some((_, None)) => return None,
                Some((_, Some((profile, pom)))) => format!(
                    "a module only in profile `{profile}` of {pom}, which is not active: `mvn test` at the root \
                     builds it only with `-P {profile}`"
                ),
                None => "has a pom.xml but is not a <module> of the root's build: `mvn test` at the root does not \
                         test it"
                    .into(),
            };
            Some(LeftOut { path: dir, reason })
        })
        .collect()
}

/// Directories below the root with a Gradle build file that settings.gradle does not `include`
/// (`include 'a', ':b:c'` → `a`, `b/c`; buildSrc is Gradle's own and never left out); an
/// `includeBuild` is named as such: `gradle test` at the root does not run an included build's
/// tests.
fn gradle_left_out(files: &ProjectFiles) -> Vec<LeftOut> {
    let Some((settings_file, settings)) =
        ["settings.gradle", "settings.gradle.kts"].into_iter().find_map(|f| Some((f, files.read(f)?)))
    else {
        return Vec::new();
    };
    static QUOTED: OnceLock<regex::Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let quoted = QUOTED.get_or_init(|| regex::Regex::new(r#"['"]([^'"]+)['"]"#).expect("valid regex"));
    let mut included: Vec<String> = Vec::new();
    let mut builds: Vec<String> = Vec::new();
    let mut in_include = false;
    for line in settings.lines().map(|l| l.split("//").next().unwrap_or("").trim()) {
        if line.starts_with("includeBuild") {
            builds.extend(quoted.captures_iter(line).filter_map(|c| normalize("", &c[1])));
            continue;
        }
        // `include` lists may continue over several lines (a trailing comma, an open parenthesis).
        if !(in_include || line.starts_with("include ") || line.starts_with("include(")) {
            continue;
        }
        included.extend(quoted.captures_iter(line).map(|c| c[1].trim_start_matches(':').replace(':', "/")));
        in_include = line.ends_with(',') || (line.contains('(') && !line.contains(')'));
    }
    let in_build = |dir: &str| builds.iter().find(|b| dir == b.as_str() || dir.starts_with(&format!("{b}/")));
    nested_build_dirs(files, &["build.gradle", "build.gradle.kts"])
        .into_iter()
        .filter(|dir| dir != "buildSrc" && !dir.starts_with("buildSrc/") && !included.contains(dir))
        .map(|dir| {
            let reason = match in_build(&dir) {
                Some(build) => format!(
                    "part of the included build `{build}` (`includeBuild` in {settings_file}): `gradle test` at the \
                     root does not run an included build's tests"
                ),
                None => format!(
                    "has a Gradle build file but {settings_file} does not include it: `gradle test` at the root \
                     does not test it"
                ),
            };
            LeftOut { path: dir, reason }
        })
        .collect()
}

/// Directories below the root (relative, `/`-separated) holding one of these build files.
fn nested_build_dirs(files: &ProjectFiles, names: &[&str]) -> Vec<String> {
    let mut dirs: Vec<String> = files
        .files
        .iter()
        .filter_map(|f| names.iter().find_map(|n| f.strip_suffix(&format!("/{n}"))))
        .map(str::to_string)
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// `base/rel` with `.` and `..` resolved; `None` when it leaves the project.
fn normalize(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The program and leading arguments that run Maven or Gradle: the project's committed wrapper
/// (`./mvnw`, `./gradlew`, which pins the tool version the project builds with) when there is one,
/// else the tool on PATH. A wrapper checked out without its executable bit (common from Windows)
/// still runs, through `sh`.
fn launcher(ctx: &ProjectContext<'_>, wrapper: &'static str, tool: &'static str) -> (&'static str, Vec<&'static str>) {
    // `wrapper` is `./mvnw` or `./gradlew`: the listing has it without the `./`.
    let file = wrapper.trim_start_matches("./");
    if !ctx.files.has(file) {
        return (tool, Vec::new());
    }
    if is_executable(&ctx.root.join(file)) { (wrapper, Vec::new()) } else { ("sh", vec![wrapper]) }
}

/// Deletes report directories (`*/target/surefire-reports`...) left by an earlier run.
fn clean_reports(root: &Path, dirs: &[&str]) -> CommandSpec {
    let names: Vec<String> = dirs.iter().map(|d| format!("-path '*/{d}'")).collect();
    let script = format!(
        "find . \\( -name node_modules -o -name .git \\) -prune -o -type d \\( {} \\) -prune -exec rm -rf {{}} +",
        names.join(" -o ")
    );
    CommandSpec::shell(&script, root)
}

fn maven_plan(ctx: &ProjectContext<'_>) -> Vec<PhasePlan> {
    let root = ctx.root;
    let (mvn, wrapper_args) = launcher(ctx, "./mvnw", "mvn");
    let pom = ctx.files.read("pom.xml").unwrap_or_default();
    let failsafe = pom.contains("maven-failsafe-plugin");
    // One Maven run, as a developer types it: `test` resolves the dependencies and compiles before
    // surefire runs, so separate `dependency:resolve` and `test-compile` runs only cost JVM starts.
    // A compile error in that run is reported as a build failure (`build_failure_in_test`).
    let install = if ctx.install {
        PhasePlan::skipped(PhaseKind::Install, "Maven resolves dependencies in the test run (one Maven invocation)")
    } else {
        PhasePlan::skipped(PhaseKind::Install, "--no-install")
    };
    let build = PhasePlan::skipped(PhaseKind::Build, "compiled by the test run (one Maven invocation)");
    // --fail-at-end: one failing module must not hide the results of the others.
    let goal = if failsafe { "verify" } else { "test" };
    let mut reports =
        vec![ReportSpec { pattern: MAVEN_REPORTS.into(), format: Some(crate::collect::junit::NAME.into()) }];
    if failsafe {
        reports.push(ReportSpec {
            pattern: "**/target/failsafe-reports/TEST-*.xml".into(),
            format: Some(crate::collect::junit::NAME.into()),
        });
    }
    let test = PhasePlan::run(
        PhaseKind::Test,
        vec![
            clean_reports(root, &["target/surefire-reports", "target/failsafe-reports"]),
            CommandSpec::new(mvn, &[wrapper_args.as_slice(), &["-B", "--fail-at-end", goal]].concat(), root),
        ],
    )
    .with_reports(reports);
    vec![install, build, test]
}

fn gradle_plan(ctx: &ProjectContext<'_>) -> Vec<PhasePlan> {
    let root = ctx.root;
    let (gradle, wrapper_args) = launcher(ctx, "./gradlew", "gradle");
    let install = PhasePlan::skipped(PhaseKind::Install, "Gradle resolves dependencies during the build");
    let build = PhasePlan::run(
        PhaseKind::Build,
        vec![CommandSpec::new(
            gradle,
            &[wrapper_args.as_slice(), &["--no-daemon", "--console=plain", "-q", "testClasses"]].concat(),
            root,
        )],
    );
    let test = PhasePlan::run(
        PhaseKind::Test,
        vec![
            clean_reports(root, &["build/test-results"]),
            CommandSpec::new(
                gradle,
                &[wrapper_args.as_slice(), &["--no-daemon", "--console=plain", "--continue", "test"]].concat(),
                root,
            ),
        ],
    )
    .with_reports(vec![ReportSpec {
        pattern: "**/build/test-results/**/*.xml".into(),
        format: Some(crate::collect::junit::NAME.into()),
    }]);
    vec![install, build, test]
}

/// javac errors as Maven prints them (`[ERROR] /abs/File.java:[12,5] message`) and as Gradle
/// prints them (`/abs/File.java:12: error: message`).
fn javac_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    static MAVEN: OnceLock<regex::Regex> = OnceLock::new();
    static GRADLE: OnceLock<regex::Regex> = OnceLock::new();
    // The patterns are literals; they compile.
    let maven = MAVEN.get_or_init(|| {
        regex::Regex::new(r"(?m)^\[(ERROR|WARNING)\] (\S+\.(?:java|kt)):\[(\d+),(\d+)\] (.+?)\s*$")
            .expect("valid regex")
    });
    let gradle = GRADLE.get_or_init(|| {
        regex::Regex::new(r"(?m)^(?:e: )?(\S+\.(?:java|kt)):(\d+): (error|warning): (.+?)\s*$").expect("valid regex")
    });
    let mut out: Vec<Diagnostic> = Vec::new();
    for c in maven.captures_iter(output) {
        let diagnostic = Diagnostic {
            severity: if &c[1] == "WARNING" { Severity::Warning } else { Severity::Error },
            source: "build".into(),
            message: c[5].to_string(),
            file: Some(relativize(&c[2], Some(root))),
            line: c[3].parse().ok(),
            column: c[4].parse().ok(),
        };
        // Maven prints each compiler error twice (once while compiling, once in the summary).
        if !out.contains(&diagnostic) {
            out.push(diagnostic);
        }
    }
    for c in gradle.captures_iter(output) {
        out.push(Diagnostic {
            severity: if &c[3] == "warning" { Severity::Warning } else { Severity::Error },
            source: "build".into(),
            message: c[4].to_string(),
            file: Some(relativize(&c[1], Some(root))),
            line: c[2].parse().ok(),
            column: None,
        });
    }
    out.retain(|d| d.severity == Severity::Error);
    out.truncate(50);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enforcer_version_rules_name_required_and_found_versions() {
        // Maven 3.8.7 with enforcer 3.5.0 (the maven-enforcer fixture's real output).
        let maven = "[ERROR] Rule 0: org.apache.maven.enforcer.rules.version.RequireMavenVersion failed with message:\n\
[ERROR] Detected Maven Version: 3.8.7 is not in the allowed range [99.0,).\n[ERROR] -> [Help 1]\n";
        assert_eq!(
            enforcer_version_rejection(maven).as_deref(),
            Some("the project requires Maven [99.0,) (maven-enforcer-plugin), found Maven 3.8.7")
        );
        let java = "[ERROR] Rule 1: org.apache.maven.enforcer.rules.version.RequireJavaVersion failed with message:\n\
[ERROR] Detected JDK version 17.0.15 (JAVA_HOME=/usr/lib/jvm/java-17) is not in the allowed range [21,).\n";
        assert_eq!(
            enforcer_version_rejection(java).as_deref(),
            Some("the project requires Java [21,) (maven-enforcer-plugin), found Java 17.0.15")
        );
        let custom = "[ERROR] Rule 0: org.apache.maven.enforcer.rules.version.RequireJavaVersion failed with message:\n\
[ERROR] Build with JDK 21 or newer\n";
        assert_eq!(
            enforcer_version_rejection(custom).as_deref(),
            Some("the project's maven-enforcer-plugin rejects this Java version: Build with JDK 21 or newer")
        );
        assert_eq!(enforcer_version_rejection("[ERROR] COMPILATION ERROR :\n"), None);
    }

    #[test]
    fn maven_compiler_errors_are_relative_and_deduplicated() {
        let out = "[ERROR] COMPILATION ERROR : \n\
[ERROR] /p/src/test/java/dev/X.java:[12,5] cannot find symbol\n\
  symbol:   method nope()\n\
[WARNING] /p/src/main/java/dev/Y.java:[3,1] deprecated\n\
[ERROR] Failed to execute goal ...\n\
[ERROR] /p/src/test/java/dev/X.java:[12,5] cannot find symbol\n";
        let d = javac_diagnostics(out, Path::new("/p"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].file.as_deref(), Some("src/test/java/dev/X.java"));
        assert_eq!((d[0].line, d[0].column), (Some(12), Some(5)));
        assert_eq!(d[0].message, "cannot find symbol");
    }

    #[test]
    fn gradle_compiler_errors() {
        let d = javac_diagnostics("/p/src/main/java/A.java:7: error: ';' expected\n", Path::new("/p"));
        assert_eq!((d[0].file.as_deref(), d[0].line), (Some("src/main/java/A.java"), Some(7)));
    }

    #[test]
    fn detects_maven_over_gradle_and_explains() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pom.xml"), "<artifactId>junit-jupiter</artifactId>").unwrap();
        std::fs::write(dir.path().join("build.gradle"), "").unwrap();
        let files = ProjectFiles::scan(dir.path()).unwrap();
        let c = Java.detect(&files, None).unwrap();
        assert_eq!(c.detection.framework, "maven");
        assert!(c.detection.markers.iter().any(|m| m.contains("both pom.xml")), "{:?}", c.detection.markers);
        assert!(c.detection.markers.iter().any(|m| m.contains("JUnit 5")));
        assert_eq!(Java.detect(&files, Some("gradle")).unwrap().detection.framework, "gradle");
    }

    /// Planning a project at `root`, installing, without script steps.
    fn plan_context<'a>(root: &'a Path, files: &'a ProjectFiles, detection: &'a Detection) -> ProjectContext<'a> {
        ProjectContext {
            root,
            files,
            detection,
            work_dir: root,
            cache_dir: root,
            install: true,
            run_script_steps: false,
            build_script: None,
            dry_run: false,
        }
    }

    /// The commands planned for a project holding `files` (gradlew made executable or not).
    fn planned(files: &[&str], framework: &str, executable_wrapper: bool) -> Vec<String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            std::fs::write(dir.path().join(file), "#!/bin/sh\n").unwrap();
            let mode = if executable_wrapper { 0o755 } else { 0o644 };
            std::fs::set_permissions(dir.path().join(file), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let project = ProjectFiles::scan(dir.path()).unwrap();
        let detection = Java.detect(&project, Some(framework)).unwrap().detection;
        let phases = Java.plan(&plan_context(dir.path(), &project, &detection)).unwrap();
        // Skip the report-cleaning `sh -c find ...` before the test run.
        phases
            .iter()
            .flat_map(|p| &p.commands)
            .filter(|c| c.args.first().is_none_or(|a| a != "-c"))
            .map(CommandSpec::display)
            .collect()
    }

    #[test]
    fn a_framework_it_cannot_drive_is_a_typed_plan_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pom.xml"), "<project/>").unwrap();
        let project = ProjectFiles::scan(dir.path()).unwrap();
        let mut detection = Java.detect(&project, None).unwrap().detection;
        detection.framework = "ant".into();
        let error = Java.plan(&plan_context(dir.path(), &project, &detection)).unwrap_err();
        assert!(matches!(&error, ProjectPlanError::Framework { runner: "java", framework, .. } if framework == "ant"));
        assert_eq!(error.to_string(), "the java runner cannot run framework `ant` (maven, gradle)");
    }

    #[test]
    fn a_committed_wrapper_runs_instead_of_the_tool_on_path() {
        assert_eq!(
            planned(&["build.gradle", "gradlew"], "gradle", true),
            [
                "./gradlew --no-daemon --console=plain -q testClasses",
                "./gradlew --no-daemon --console=plain --continue test"
            ]
        );
        assert_eq!(
            planned(&["build.gradle"], "gradle", true),
            ["gradle --no-daemon --console=plain -q testClasses", "gradle --no-daemon --console=plain --continue test"]
        );
        assert_eq!(planned(&["pom.xml", "mvnw"], "maven", true), ["./mvnw -B --fail-at-end test"]);
        assert_eq!(planned(&["pom.xml"], "maven", true), ["mvn -B --fail-at-end test"]);
    }

    #[test]
    fn a_wrapper_without_its_executable_bit_runs_through_sh() {
        // Checked out from Windows or a zip: `./gradlew` would fail with "Permission denied".
        assert_eq!(
            planned(&["build.gradle", "gradlew"], "gradle", false),
            [
                "sh ./gradlew --no-daemon --console=plain -q testClasses",
                "sh ./gradlew --no-daemon --console=plain --continue test"
            ]
        );
        assert_eq!(planned(&["pom.xml", "mvnw"], "maven", false), ["sh ./mvnw -B --fail-at-end test"]);
    }

    fn left_paths(files: &ProjectFiles) -> Vec<String> {
        Java.members(files).left_out.into_iter().map(|l| l.path).collect()
    }

    #[test]
    fn maven_directories_no_module_reaches_are_left_out() {
        let (_dir, files) = crate::ecosystems::project_of(&[
            ("pom.xml", "<project><modules><module>core</module><module>./tools/</module></modules></project>"),
            ("core/pom.xml", "<project><modules><module>../shared/pom.xml</module></modules></project>"),
            ("shared/pom.xml", ""),
            (
                "tools/pom.xml",
                "<project><profiles><profile><activation><activeByDefault>true</activeByDefault></activation>\
                 <modules><module>extra</module></modules></profile></profiles></project>",
            ),
            ("tools/extra/pom.xml", ""),
            ("sandbox/pom.xml", ""),
        ]);
        assert_eq!(left_paths(&files), ["sandbox"]);
    }

    #[test]
    fn maven_modules_only_an_inactive_profile_reaches_are_left_out_naming_the_profile() {
        // Maven builds a profile's modules only when the profile is active (`-P it`).
        let (_dir, files) = crate::ecosystems::project_of(&[
            (
                "pom.xml",
                "<project><modules><module>core</module><!-- <module>old</module> --></modules><profiles>\
                 <profile><id>it</id><modules><module>integration</module><module>core</module></modules></profile>\
                 <profile><id>ci</id><activation><property><name>env.CI</name></property></activation>\
                 <modules><module>ci</module></modules></profile></profiles></project>",
            ),
            ("core/pom.xml", "<project/>"),
            ("ci/pom.xml", "<project/>"),
            ("integration/pom.xml", "<project><modules><module>deep</module></modules></project>"),
            ("integration/deep/pom.xml", "<project/>"),
            ("old/pom.xml", "<project/>"),
        ]);
        let left = Java.members(&files).left_out;
        let got: Vec<(&str, &str)> = left.iter().map(|l| (l.path.as_str(), l.reason.as_str())).collect();
        let profile = "a module only in profile `it` of pom.xml, which is not active: `mvn test` at the root builds \
                       it only with `-P it`";
        assert_eq!(got[..2], [("integration", profile), ("integration/deep", profile)]);
        assert_eq!(got[2].0, "old", "a commented-out module is not one");
        assert_eq!(got.len(), 3, "{got:?}");
    }

    #[test]
    fn gradle_directories_settings_do_not_include_are_left_out() {
        let (_dir, files) = crate::ecosystems::project_of(&[
            ("settings.gradle", "rootProject.name = 'x'\ninclude 'lib', ':app:web'\ninclude(\n  \"cli\",\n)\n"),
            ("build.gradle", ""),
            ("lib/build.gradle", ""),
            ("app/web/build.gradle.kts", ""),
            ("cli/build.gradle", ""),
            ("buildSrc/build.gradle", ""),
            ("experiments/build.gradle", ""),
        ]);
        assert_eq!(left_paths(&files), ["experiments"]);
    }

    #[test]
    fn a_gradle_included_build_is_named_as_one() {
        let (_dir, files) = crate::ecosystems::project_of(&[
            ("settings.gradle", "include 'a'\nincludeBuild 'tools'\nincludeBuild(\"./plugins/conv\")\n"),
            ("a/build.gradle", ""),
            ("tools/build.gradle", ""),
            ("tools/sub/build.gradle", ""),
            ("plugins/conv/build.gradle.kts", ""),
            ("orphan/build.gradle", ""),
        ]);
        let left = Java.members(&files).left_out;
        let got: Vec<(&str, &str)> = left.iter().map(|l| (l.path.as_str(), l.reason.as_str())).collect();
        let tools = "part of the included build `tools` (`includeBuild` in settings.gradle): `gradle test` at the root \
                     does not run an included build's tests";
        assert_eq!(
            got,
            [
                (
                    "orphan",
                    "has a Gradle build file but settings.gradle does not include it: `gradle test` at the root does \
                     not test it"
                ),
                (
                    "plugins/conv",
                    "part of the included build `plugins/conv` (`includeBuild` in settings.gradle): `gradle test` at \
                     the root does not run an included build's tests"
                ),
                ("tools", tools),
                ("tools/sub", tools),
            ]
        );
    }
}
