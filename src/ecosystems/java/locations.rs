//! Where a JVM test is: Surefire's and Gradle's JUnit reports name a case by class and method
//! only. The class's source file is found in the project's (or a module's) source directories
//! (`src/test/java/dev/x/FooTest.java` for `dev.x.FooTest`), a failure's line is the test class's frame in the stack trace
//! (`at dev.x.FooTest.adds(FooTest.java:30)`, the line Maven prints), and any other case's line
//! is its method's declaration.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use crate::ecosystems::NEVER_WALK;
use crate::model::Case;

/// Gives the cases without a file the source file of their class and a line.
pub(super) fn locate_junit_cases(cases: &mut [Case], root: &Path) {
    if !cases.iter().any(|c| c.file.is_none() && c.classname.as_deref().is_some_and(is_class_name)) {
        return;
    }
    let roots = source_roots(root);
    let mut sources: HashMap<String, Option<Vec<String>>> = HashMap::new();
    for case in cases.iter_mut().filter(|c| c.file.is_none()) {
        let Some(class) = case.classname.clone().filter(|c| is_class_name(c)) else { continue };
        let Some(file) = source_of(&class, root, &roots) else { continue };
        let method = case.name.split(['(', '[']).next().unwrap_or_default().trim().to_string();
        let thrown = case.details().and_then(|d| frame_of(&d, &class, &file));
        case.line = thrown.or_else(|| {
            let lines = sources.entry(file.clone()).or_insert_with(|| {
                std::fs::read_to_string(root.join(&file)).ok().map(|t| t.lines().map(str::to_string).collect())
            });
            declaration(lines.as_deref()?, &method)
        });
        case.file = Some(file.into());
    }
}

/// The source file of `class` in the project's (or a module's) source directories.
pub(super) fn source_file(class: &str, root: &Path) -> Option<String> {
    source_of(class, root, &source_roots(root))
}

/// `dev.fcorr.FooTest`, `FooTest$Nested`: dotted Java identifiers.
fn is_class_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
}

/// The source directories of the project and of its modules (one or two levels down), as Maven
/// and Gradle lay them out: `src/test/java`, `module/src/test/kotlin`…
fn source_roots(root: &Path) -> Vec<String> {
    const LAYOUT: &[&str] = &[
        "src/test/java",
        "src/test/kotlin",
        "src/integrationTest/java",
        "src/integrationTest/kotlin",
        "src/it/java",
        "src/testFixtures/java",
        "src/main/java",
        "src/main/kotlin",
    ];
    let subdirectories = |dir: &Path| -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.') && !NEVER_WALK.contains(&n.as_str()) && n != "build")
            .collect();
        names.sort();
        names
    };
    let mut modules = vec![String::new()];
    for first in subdirectories(root) {
        for second in subdirectories(&root.join(&first)) {
            modules.push(format!("{first}/{second}/"));
        }
        modules.push(format!("{first}/"));
    }
    modules
        .iter()
        .flat_map(|module| LAYOUT.iter().map(move |dir| format!("{module}{dir}")))
        .filter(|dir| root.join(dir).is_dir())
        .collect()
}

/// The one source file of a class (its outer class for a nested one), `.java` or `.kt`, in the
/// source directories; `None` when there is none or more than one.
fn source_of(class: &str, root: &Path, roots: &[String]) -> Option<String> {
    let outer = class.split('$').next().unwrap_or(class).replace('.', "/");
    let found: Vec<String> = roots
        .iter()
        .flat_map(|dir| [".java", ".kt"].map(|ext| format!("{dir}/{outer}{ext}")))
        .filter(|path| root.join(path).is_file())
        .collect();
    match <[String; 1]>::try_from(found) {
        Ok([one]) => Some(one),
        Err(_) => None,
    }
}

/// The line of the first stack frame in the test class (or a class nested in it) and its file.
fn frame_of(details: &str, class: &str, file: &str) -> Option<u32> {
    static FRAME: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles: `at pkg.Class.method(File.java:30)`.
    let frame = FRAME
        .get_or_init(|| Regex::new(r"at ([\w.$]+)\.[\w$<>]+\(([\w$]+\.(?:java|kt)):(\d+)\)").expect("valid regex"));
    let outer = class.split('$').next().unwrap_or(class);
    let base = file.rsplit('/').next().unwrap_or(file);
    frame.captures_iter(details).find_map(|c| {
        let in_class = &c[1] == class || c[1].starts_with(&format!("{outer}$")) || &c[1] == outer;
        (in_class && &c[2] == base).then(|| c[3].parse().ok()).flatten()
    })
}

/// The 1-based line that declares `method` (`void adds(`, `fun adds(`).
fn declaration(lines: &[String], method: &str) -> Option<u32> {
    if method.is_empty() {
        return None;
    }
    let needle = format!("{method}(");
    lines
        .iter()
        .position(|l| {
            let t = l.trim_start();
            let Some(at) = t.find(&needle) else { return false };
            let before = &t[..at];
            (before.ends_with("void ") || before.ends_with("fun ") || before.ends_with("fun `"))
                && !t.starts_with("//")
                && !t.starts_with('*')
        })
        .map(|i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CaseStatus;

    #[test]
    fn cases_get_their_class_file_and_the_line_maven_prints() {
        let dir = tempfile::tempdir().unwrap();
        let java = "package dev.x;\n\nclass InventoryTest {\n    @Test\n    void adds() {\n    }\n\n    @Test\n    void \
                    totals() {\n        assertEquals(7, total());\n    }\n}\n";
        std::fs::create_dir_all(dir.path().join("src/test/java/dev/x")).unwrap();
        std::fs::write(dir.path().join("src/test/java/dev/x/InventoryTest.java"), java).unwrap();
        let case = |name: &str, details: Option<&str>| Case {
            name: name.into(),
            classname: Some("dev.x.InventoryTest".into()),
            status: if details.is_some() { CaseStatus::Failed } else { CaseStatus::Passed },
            extra: crate::model::CaseExtra { details: details.map(Into::into), ..Default::default() }.packed(),
            ..Case::default()
        };
        let mut cases = vec![
            case("adds", None),
            case(
                "totals",
                Some(
                    "org.opentest4j.AssertionFailedError: ==> expected: <7> but was: <2>\n\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:563)\n\tat dev.x.InventoryTest.totals(InventoryTest.java:10)",
                ),
            ),
            case("totals(int)[1]", None),
            Case { classname: Some("cart > totals".into()), ..case("x", None) },
        ];
        locate_junit_cases(&mut cases, dir.path());
        let got: Vec<_> = cases.iter().map(|c| (c.file.as_deref(), c.line)).collect();
        let file = Some("src/test/java/dev/x/InventoryTest.java");
        assert_eq!(got, [(file, Some(5)), (file, Some(10)), (file, Some(9)), (None, None)]);
    }
}
