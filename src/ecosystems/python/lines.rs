//! The line a pytest case points at. pytest's JUnit `line` attribute is 0-based (it is the
//! line *index* of the test function, or of its first decorator); a failure's line is the test
//! file's frame in the traceback pytest wrote into the report, else the `def`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use crate::collect::relativize;
use crate::model::Case;

/// Points each case of a pytest JUnit report at its line: for a failure, the first frame of the
/// traceback in the case's own file (`tests/test_x.py:12: AssertionError`, or `File "…", line 12`
/// with `--tb=native`); otherwise the `def` line, 1-based.
pub(super) fn locate_pytest_cases(cases: &mut [Case], root: &Path) {
    let mut sources: HashMap<String, Option<Vec<String>>> = HashMap::new();
    for case in cases.iter_mut() {
        let Some(file) = case.file.as_deref().map(String::from) else { continue };
        let thrown = case.details().and_then(|d| frame_in(&d, &file, root));
        case.line = thrown.or_else(|| {
            let index = case.line?;
            let lines = sources.entry(file.clone()).or_insert_with(|| {
                std::fs::read_to_string(root.join(&file)).ok().map(|t| t.lines().map(str::to_string).collect())
            });
            Some(def_line(lines.as_deref(), index))
        });
    }
}

/// The 1-based line of the `def` pytest's 0-based `index` points at: the line itself, or, when it
/// is the first decorator, the `def` below the decorators.
fn def_line(lines: Option<&[String]>, index: u32) -> u32 {
    let start = index as usize;
    let decorated = lines.and_then(|l| l.get(start)).is_some_and(|l| l.trim_start().starts_with('@'));
    let def = lines.filter(|_| decorated).and_then(|lines| {
        lines.iter().enumerate().skip(start).take(100).find_map(|(i, line)| {
            let line = line.trim_start();
            (line.starts_with("def ") || line.starts_with("async def ")).then_some(i as u32)
        })
    });
    def.unwrap_or(index) + 1
}

/// The line of the first traceback frame in `file`.
fn frame_in(details: &str, file: &str, root: &Path) -> Option<u32> {
    static FRAMES: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles. `path:12: …` (long, short, line tracebacks) or
    // `File "path", line 12` (native).
    let frames = FRAMES.get_or_init(|| {
        Regex::new(r#"(?m)^(?:([^\s"][^\n"]*?\.py):(\d+):|\s*File "([^"]+\.py)", line (\d+))"#).expect("valid regex")
    });
    frames.captures_iter(details).find_map(|c| {
        let (path, line) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(path), Some(line), _, _) | (_, _, Some(path), Some(line)) => (path.as_str(), line.as_str()),
            _ => return None,
        };
        let same = relativize(path, Some(root)) == file || path.ends_with(&format!("/{file}"));
        same.then(|| line.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CaseStatus;

    /// What pytest 9 wrote for tests/test_div.py: `def test_div` on line 10 (`line="9"`), a
    /// parametrised method whose decorator is on line 24 (`line="23"`), def on 25.
    const SOURCE: &str = "import pytest\n\n\ndef divide(a, b):\n    return a / b\n\ndef helper(x):\n    assert x == 3\n\n\
                          def test_div():\n    x = 1\n    assert divide(4, 2) == 3\n\n\ndef test_helper():\n    helper(4)\n\n\n\
                          def test_ok():\n    pass\n\n\nclass TestK:\n    @pytest.mark.parametrize(\"v\", [1, 2])\n    \
                          def test_param(self, v):\n        assert v == 1\n";

    #[test]
    fn failures_point_at_the_test_files_frame_and_passes_at_the_def() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_div.py"), SOURCE).unwrap();
        let case = |name: &str, line: u32, details: Option<&str>| Case {
            name: name.into(),
            file: Some("tests/test_div.py".into()),
            line: Some(line),
            status: if details.is_some() { CaseStatus::Failed } else { CaseStatus::Passed },
            extra: crate::model::CaseExtra { details: details.map(Into::into), ..Default::default() }.packed(),
            ..Case::default()
        };
        let mut cases = vec![
            case(
                "test_div",
                9,
                Some(
                    "def test_div():\n>       assert divide(4, 2) == 3\nE   assert 2.0 == 3\n\ntests/test_div.py:12: AssertionError",
                ),
            ),
            // The test's own frame first, then the helper's, both in the file.
            case(
                "test_helper",
                14,
                Some(
                    "def test_helper():\n>       helper(4)\n\ntests/test_div.py:16: \n_ _ _\n\n    def helper(x):\n>       assert x == 3\n\ntests/test_div.py:8: AssertionError",
                ),
            ),
            case(
                "test_native",
                14,
                Some(
                    "Traceback (most recent call last):\n  File \"/abs/tests/test_div.py\", line 16, in test_helper\n    helper(4)\nAssertionError",
                ),
            ),
            case("test_ok", 18, None),
            case("test_param[1]", 23, None),
            // A frame in another file only: the def.
            case("test_elsewhere", 9, Some("src/lib.py:3: ZeroDivisionError")),
        ];
        locate_pytest_cases(&mut cases, dir.path());
        let lines: Vec<Option<u32>> = cases.iter().map(|c| c.line).collect();
        assert_eq!(lines, [Some(12), Some(16), Some(16), Some(19), Some(25), Some(10)]);
    }
}
