//! `node --test` files that ran without reporting a test.
//!
//! Node runs each test file in its own process. When that process ends without reporting any
//! test, node still reports the file itself as one passing test named by its path: a file that
//! called `process.exit(0)` mid-run (its remaining tests vanish) and one whose `test()` calls
//! sat behind a condition look exactly like a passing test. A file that imports `node:test` and
//! reported nothing ran tests fcorr cannot see, so its case becomes an error that says so. Files
//! that never import `node:test` (helpers under `test/` that node's default glob also runs) keep
//! node's own count.

use std::path::Path;

use crate::ecosystems::Collected;
use crate::model::CaseStatus;

/// A test file larger than this is not read to look for its import (it is no hand-written test).
const READ_CAP: u64 = 4 << 20;

/// Turns node's stand-in "the file passed" case of each test file that reported no test into an
/// `error` case naming the file and the likely cause.
pub(super) fn flag_files_without_tests(collected: &mut Collected, root: &Path) {
    for case in collected.cases.iter_mut() {
        if case.status != CaseStatus::Passed || case.classname.is_some() {
            continue;
        }
        let path = root.join(case.name.as_str());
        if !imports_node_test(&path) {
            continue;
        }
        let shown = crate::collect::relativize(&path.to_string_lossy(), Some(root));
        case.status = CaseStatus::Error;
        case.file = Some(shown.clone().into());
        case.set_message(Some(format!(
            "{shown} imports node:test but reported no test: it exited before its tests reported \
             (process.exit() in a test or at load time?) or registered none (test() behind a \
             condition?); node counts the file as one passing test, fcorr does not: tests that \
             never reported are not a pass"
        )));
    }
}

/// Whether `path` is a file (small enough to read) that imports or requires `node:test`.
fn imports_node_test(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    if !meta.is_file() || meta.len() > READ_CAP {
        return false;
    }
    std::fs::read(path).is_ok_and(|bytes| {
        let text = String::from_utf8_lossy(&bytes);
        text.contains("'node:test'") || text.contains("\"node:test\"") || text.contains("`node:test`")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Case;

    fn collected(names: &[&str]) -> Collected {
        Collected {
            cases: names
                .iter()
                .map(|n| Case { name: (*n).into(), status: CaseStatus::Passed, ..Case::default() })
                .collect(),
            ..Collected::nothing()
        }
    }

    #[test]
    fn a_test_file_that_reported_nothing_is_an_error_and_a_helper_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("test")).unwrap();
        let exits = dir.path().join("test/exits.test.js");
        std::fs::write(&exits, "const test = require('node:test');\ntest('x', () => process.exit(0));\n").unwrap();
        let helper = dir.path().join("test/helpers.js");
        std::fs::write(&helper, "module.exports = { two: 2 };\n").unwrap();
        let exits_name = exits.display().to_string();
        let helper_name = helper.display().to_string();
        let mut got = collected(&[&exits_name, &helper_name, "adds two numbers", "test/exits.test.js"]);
        flag_files_without_tests(&mut got, dir.path());
        let summary: Vec<(CaseStatus, Option<&str>)> =
            got.cases.iter().map(|c| (c.status, c.file.as_deref())).collect();
        assert_eq!(
            summary,
            vec![
                (CaseStatus::Error, Some("test/exits.test.js")),
                (CaseStatus::Passed, None),
                (CaseStatus::Passed, None),
                // A relative name (as newer node versions may print) is read from the root.
                (CaseStatus::Error, Some("test/exits.test.js")),
            ]
        );
        assert!(got.cases[0].message().unwrap().contains("reported no test"), "{:?}", got.cases[0].message());
    }
}
