//! Maven modules that have tests and ran none.
//!
//! Maven calls a module whose surefire found no test a success (`Tests run: 0`), and the reports
//! of the other modules make the run look whole. The classic cause is JUnit 5 under Maven's
//! default surefire (2.12.4 on Maven 3.8), which does not see Jupiter tests at all. A module with
//! `@Test` sources under `src/test/java` and no surefire report is an error case naming it and
//! the likely fix, unless its pom skips the tests on purpose.

use std::collections::BTreeMap;
use std::path::Path;

use crate::ecosystems::{Collected, ProjectFiles};
use crate::model::{Case, CaseStatus};

/// Where a module's test sources live, as Maven lays them out.
const TEST_SOURCES: &str = "src/test/java/";

/// Adds an `error` case for each module under `root` whose test sources hold `@Test` methods and
/// whose `target/surefire-reports` holds no `TEST-*.xml` after a Maven run that succeeded.
pub(super) fn flag_modules_that_ran_no_test(collected: &mut Collected, root: &Path) {
    let Ok(files) = ProjectFiles::scan(root) else { return };
    // Module directory ("" for the root) -> (test files with @Test, of which JUnit 5).
    let mut modules: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for file in files.files.iter().filter(|f| f.ends_with(".java")) {
        let Some(at) = file.find(TEST_SOURCES).filter(|&at| at == 0 || file[..at].ends_with('/')) else { continue };
        let Some(text) = files.read(file) else { continue };
        if !text.contains("@Test") {
            continue;
        }
        let entry = modules.entry(file[..at].trim_end_matches('/').to_string()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(text.contains("org.junit.jupiter"));
    }
    let root_pom = files.read("pom.xml").unwrap_or_default();
    for (module, (tests, jupiter)) in modules {
        let dir = if module.is_empty() { root.to_path_buf() } else { root.join(&module) };
        if has_surefire_report(&dir) {
            continue;
        }
        let pom =
            files.read(&format!("{}pom.xml", if module.is_empty() { String::new() } else { format!("{module}/") }));
        if pom.is_none() || [pom.as_deref().unwrap_or(""), root_pom.as_str()].iter().any(|p| skips_tests(p)) {
            continue;
        }
        let shown = if module.is_empty() { ".".to_string() } else { module.clone() };
        let why = if jupiter > 0 {
            "its tests are JUnit 5 (Jupiter), which surefire before 2.22 does not see (Maven 3.8 uses 2.12.4 \
             unless the pom pins a version): pin maven-surefire-plugin 3.x"
                .to_string()
        } else {
            "check the surefire version and its <includes> (class names Test*, *Test, *Tests, *TestCase)".to_string()
        };
        collected.cases.push(
            Case {
                name: format!("{} {shown}", crate::model::incomplete::NO_TESTS_RAN_CASE).into(),
                classname: Some(shown.clone().into()),
                status: CaseStatus::Error,
                ..Case::default()
            }
            .with_message(Some(format!(
                "module {shown} has @Test methods in {tests} file{} under {TEST_SOURCES} but surefire ran none and \
                 wrote no report, and Maven still said SUCCESS; {why}",
                if tests == 1 { "" } else { "s" }
            ))),
        );
    }
}

fn has_surefire_report(module: &Path) -> bool {
    std::fs::read_dir(module.join("target/surefire-reports")).is_ok_and(|entries| {
        entries.flatten().any(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("TEST-") && n.ends_with(".xml")))
    })
}

/// A pom that turns the tests off on purpose (`skipTests`, `maven.test.skip`).
fn skips_tests(pom: &str) -> bool {
    let compact: String = pom.split_whitespace().collect();
    ["<skipTests>true</skipTests>", "<maven.test.skip>true</maven.test.skip>", "<skip>true</skip>"]
        .iter()
        .any(|flag| compact.contains(flag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_with_tests_and_no_report_is_an_error_and_one_that_skips_them_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("pom.xml", "<project><modules><module>core</module><module>app</module></modules></project>");
        for module in ["core", "app", "off"] {
            write(&format!("{module}/pom.xml"), "<project></project>");
        }
        write(
            "core/src/test/java/ex/CoreTest.java",
            "import org.junit.Test;\nclass CoreTest { @Test public void a() {} }",
        );
        write("core/target/surefire-reports/TEST-ex.CoreTest.xml", "<testsuite/>");
        write(
            "app/src/test/java/ex/AppTest.java",
            "import org.junit.jupiter.api.Test;\nclass AppTest { @Test void a() {} }",
        );
        write("app/src/test/java/ex/Util.java", "class Util {}");
        write("off/pom.xml", "<project><properties><skipTests>\n true </skipTests></properties></project>");
        write("off/src/test/java/ex/OffTest.java", "class OffTest { @Test void a() {} }");
        let mut collected = Collected::nothing();
        flag_modules_that_ran_no_test(&mut collected, dir.path());
        let names: Vec<&str> = collected.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["[no tests ran] app"]);
        let message = collected.cases[0].message().unwrap();
        assert!(message.contains("@Test methods in 1 file") && message.contains("JUnit 5"), "{message}");
    }
}
