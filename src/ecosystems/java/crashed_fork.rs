//! Surefire test JVMs that ended mid-class (`System.exit` in code under test, a JVM crash).
//!
//! Surefire then writes no report for the class that was running, so its tests vanish and the
//! run looks like "every reported test passed"; Maven's own words and the class it names under
//! `Crashed tests:` become an error case, with the class's tests that have no result.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use super::locations;
use crate::ecosystems::Collected;
use crate::model::{Case, CaseStatus};

/// What Maven printed about a fork that ended without saying goodbye.
#[derive(Debug, Default, PartialEq)]
struct Crash {
    /// Surefire's sentence, `The forked VM terminated without properly saying goodbye. …`.
    cause: String,
    /// `Process Exit Code: 0` (0 is `System.exit(0)`; 134, 137… a crash or a kill).
    exit_code: Option<String>,
    /// The classes listed under `Crashed tests:`, each once.
    classes: Vec<String>,
}

/// Adds an `error` case for each class Maven lists under `Crashed tests:` that has no failing
/// case already, quoting Maven's cause and naming the class's tests that have no result.
pub(super) fn flag_crashed_classes(collected: &mut Collected, output: &str, root: &Path) {
    let Some(crash) = crash_in(output) else { return };
    let exit = crash.exit_code.as_deref().map(|code| format!(" (Process Exit Code: {code})")).unwrap_or_default();
    for class in &crash.classes {
        let reported: Vec<&Case> =
            collected.cases.iter().filter(|c| c.classname.as_deref() == Some(class.as_str())).collect();
        if reported.iter().any(|c| c.status.is_failure()) {
            continue;
        }
        let file = locations::source_file(class, root);
        let declared =
            file.as_deref().map(|f| test_methods(&std::fs::read_to_string(root.join(f)).unwrap_or_default()));
        let missing: Vec<&String> = declared
            .iter()
            .flatten()
            .filter(|m| !reported.iter().any(|c| c.name.split(['(', '[']).next() == Some(m.as_str())))
            .collect();
        let unrun = if missing.is_empty() {
            "its remaining tests did not run".to_string()
        } else {
            let names: Vec<&str> = missing.iter().map(|m| m.as_str()).collect();
            format!(
                "no result for {} ({}): the test that ended the JVM and any after it did not finish",
                if names.len() == 1 { "its test" } else { "its tests" },
                names.join(", ")
            )
        };
        collected.cases.push(
            Case {
                name: format!("{} {class}", crate::model::incomplete::CRASHED_CASE).into(),
                classname: Some(class.clone().into()),
                file: file.map(Into::into),
                status: CaseStatus::Error,
                ..Case::default()
            }
            .with_message(Some(format!(
                "the test JVM ended while {class} ran; Maven: \"{}\"{exit}; {unrun}; look for System.exit in the \
                 code it tests, or a JVM crash log (hs_err_pid*.log)",
                crash.cause
            ))),
        );
    }
}

/// The first crashed fork Maven reported in `output`, with every class it named as crashed.
fn crash_in(output: &str) -> Option<Crash> {
    let mut crash: Option<Crash> = None;
    let mut listing = false;
    for line in output.lines() {
        let line = line.trim_start_matches("[ERROR]").trim();
        if listing {
            if is_class_name(line) {
                let crash = crash.as_mut()?;
                if !crash.classes.iter().any(|c| c == line) {
                    crash.classes.push(line.to_string());
                }
                continue;
            }
            listing = false;
        }
        // Surefire 3 says "without properly saying goodbye", 2.x "without saying properly goodbye".
        if let Some(at) = line.find("The forked VM terminated without") {
            crash.get_or_insert_with(|| Crash { cause: line[at..].to_string(), ..Crash::default() });
        } else if let Some(code) = line.strip_prefix("Process Exit Code:")
            && let Some(crash) = crash.as_mut()
        {
            crash.exit_code.get_or_insert_with(|| code.trim().to_string());
        } else if line == "Crashed tests:" {
            listing = crash.is_some();
        }
    }
    crash.filter(|c| !c.classes.is_empty())
}

/// `dev.fcorr.FooTest`: dotted Java identifiers with at least one dot or an uppercase start.
fn is_class_name(line: &str) -> bool {
    !line.is_empty()
        && !line.contains(' ')
        && line.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

/// The methods annotated `@Test` in a JUnit source file, in the order they are declared.
fn test_methods(source: &str) -> Vec<String> {
    static TEST: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles. `@Test` (not `@TestFactory`…), other annotations and
    // modifiers, then `void name(`.
    let test = TEST.get_or_init(|| {
        Regex::new(r"@Test\b(?:\s*\([^)]*\))?(?:\s+@[\w.]+(?:\([^)]*\))?)*(?:\s+\w+)*?\s+void\s+(\w+)\s*\(")
            .expect("valid regex")
    });
    test.captures_iter(source).map(|c| c[1].to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Maven 3.8.7 printed for surefire 3.5.2 when a test called `System.exit(0)`.
    const MAVEN: &str = "[INFO] Running dev.fcorr.fixture.ExitTest
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.5.2:test (default-test) on project x:
[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit called?
[ERROR] Command was /bin/sh -c cd '/tmp/mx' && 'java' '-jar' 'surefirebooter.jar'
[ERROR] Process Exit Code: 0
[ERROR] Crashed tests:
[ERROR] dev.fcorr.fixture.ExitTest
[ERROR] org.apache.maven.surefire.booter.SurefireBooterForkException: The forked VM terminated without properly saying goodbye. VM crash or System.exit called?
[ERROR] Process Exit Code: 0
[ERROR] Crashed tests:
[ERROR] dev.fcorr.fixture.ExitTest
[ERROR] 	at org.apache.maven.plugin.surefire.booterclient.ForkStarter.fork(ForkStarter.java:643)
";

    #[test]
    fn the_cause_exit_code_and_crashed_classes_are_read_once() {
        let crash = crash_in(MAVEN).unwrap();
        assert_eq!(
            crash,
            Crash {
                cause: "The forked VM terminated without properly saying goodbye. VM crash or System.exit called?"
                    .into(),
                exit_code: Some("0".into()),
                classes: vec!["dev.fcorr.fixture.ExitTest".into()],
            }
        );
        // Surefire 2.x's word order; no class listed is no crash to report.
        let old = "[ERROR] The forked VM terminated without saying properly goodbye. VM crash or System.exit called?\n\
                   [ERROR] Crashed tests:\n[ERROR] a.BTest\n";
        assert_eq!(crash_in(old).unwrap().classes, ["a.BTest"]);
        assert_eq!(crash_in("[ERROR] The forked VM terminated without properly saying goodbye.\n"), None);
        assert_eq!(crash_in("Crashed tests:\na.BTest\n"), None);
    }

    #[test]
    fn the_crashed_class_is_an_error_naming_its_tests_without_a_result() {
        let dir = tempfile::tempdir().unwrap();
        let java = "package dev.fcorr.fixture;\nclass ExitTest {\n    @Test\n    void aPasses() {}\n    @Test @Timeout(5)\n    \
                    public void bExits() { System.exit(0); }\n    @TestFactory\n    Stream<DynamicTest> d() {}\n    \
                    @Test\n    void cFails() {}\n    void helper() {}\n}\n";
        std::fs::create_dir_all(dir.path().join("src/test/java/dev/fcorr/fixture")).unwrap();
        std::fs::write(dir.path().join("src/test/java/dev/fcorr/fixture/ExitTest.java"), java).unwrap();
        let mut collected = Collected::nothing();
        flag_crashed_classes(&mut collected, MAVEN, dir.path());
        let [case] = collected.cases.as_slice() else { panic!("{:?}", collected.cases) };
        assert_eq!((case.name.as_str(), case.status), ("[crashed] dev.fcorr.fixture.ExitTest", CaseStatus::Error));
        assert_eq!(case.file.as_deref(), Some("src/test/java/dev/fcorr/fixture/ExitTest.java"));
        let message = case.message().unwrap();
        assert!(message.contains("Maven: \"The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\" (Process Exit Code: 0)"), "{message}");
        assert!(message.contains("no result for its tests (aPasses, bExits, cFails)"), "{message}");

        // Without the source, the message still says what is missing.
        let mut collected = Collected::nothing();
        flag_crashed_classes(&mut collected, MAVEN, Path::new("/nonexistent"));
        assert!(collected.cases[0].message().unwrap().contains("its remaining tests did not run"));
    }
}
