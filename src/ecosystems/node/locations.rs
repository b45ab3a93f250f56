//! Where each `node --test` test is defined.
//!
//! Node's JUnit reporter, which carries the results, has no file or line. A small reporter fcorr
//! adds next to it writes one JSON line per test with its describe path, file and line (node
//! reports them for passing tests too), and the cases read from the JUnit report take them by
//! name. Passing and failing alike get the definition's file, so a case's id does not change
//! when it starts failing; a failure's line is where it threw, when that is in the same file.
//!
//! Node counts a test with subtests as a test (`# tests`), but its JUnit reporter writes it as a
//! `<testsuite>` and drops its own failure. The sidecar also carries each test's outcome, so
//! such parent tests become cases here, with their own message, file and line. It drops a
//! describe's own hook failure too; the sidecar carries it, and it becomes an error case.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::collect::{DETAILS_CAP, relativize};
use crate::ecosystems::Collected;
use crate::model::{Case, CaseStatus};

/// The sidecar report's file name in the suite's work directory.
pub(super) const REPORT: &str = "node-test-locations.jsonl";
/// The reporter's file name in the suite's work directory (node loads reporters by path).
pub(super) const REPORTER_FILE: &str = "fcorr-node-locations.mjs";

/// A node:test reporter (Node ≥ 20) writing `{"name", "file", "line", "status", "message",
/// "stack"}` per test, where `name` is the describe path joined with ` > `, as the JUnit reader
/// names cases.
pub(super) const REPORTER: &str = r#"// Written by fcorr: where each test is defined, one JSON line per test.
// node's JUnit reporter carries the results; it has no file or line.
export default async function* fcorrLocations(source) {
  const stacks = new Map(); // file -> names of the tests open at each nesting level
  for await (const event of source) {
    const data = event.data || {};
    if (!data.file) continue;
    if (event.type === 'test:start') {
      const stack = stacks.get(data.file) || [];
      stack.length = data.nesting;
      stack[data.nesting] = data.name;
      stacks.set(data.file, stack);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      const stack = stacks.get(data.file) || [];
      const path = stack.slice(0, data.nesting).concat([data.name]);
      if (data.details && data.details.type === 'suite') {
        // A describe's own hook that threw ("failed running before hook"): node's JUnit drops it.
        const error = data.details.error;
        if (event.type !== 'test:fail' || !error || error.failureType !== 'hookFailed') continue;
        const own = error.cause instanceof Error ? error.cause : undefined;
        const message = String(own ? own.message : error.cause || '').slice(0, 4096);
        const trace = own && own.stack ? String(own.stack).slice(0, 16384) : undefined;
        yield JSON.stringify({ name: path.join(' > '), file: data.file, line: data.line, status: 'fail', suite: true,
          hook: String(error.message || 'failed running a hook').slice(0, 200), message, stack: trace }) + '\n';
        continue;
      }
      // A skip or todo that threw is reported as test:fail, yet it fails nothing (node exits 0).
      const status = data.skip !== undefined ? 'skip' : data.todo !== undefined ? 'todo'
        : event.type === 'test:fail' ? 'fail' : 'pass';
      const error = data.details && data.details.error;
      // node wraps what the test threw in ERR_TEST_FAILURE; the cause is the test's own error.
      const own = error && error.cause instanceof Error ? error.cause : error;
      const message = own ? String(own.message || own).slice(0, 4096) : undefined;
      const trace = own && own.stack ? String(own.stack).slice(0, 16384) : undefined;
      yield JSON.stringify({ name: path.join(' > '), file: data.file, line: data.line, status, message, stack: trace }) + '\n';
    }
  }
}
"#;

#[derive(Deserialize)]
struct Location {
    name: String,
    file: String,
    line: Option<u32>,
    /// `pass`, `fail`, `skip` or `todo` (absent in sidecars of older fcorr versions).
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
    /// A describe block's hook failure, not a test (`hook`: node's words, "failed running before
    /// hook").
    #[serde(default)]
    suite: bool,
    #[serde(default)]
    hook: Option<String>,
}

/// The sidecar's test lines; a describe's hook failures are [`hook_failures`]'s.
fn tests_in(sidecar: &str) -> impl Iterator<Item = Location> + '_ {
    sidecar.lines().filter_map(|l| serde_json::from_str::<Location>(l).ok()).filter(|l| !l.suite)
}

/// Gives the collected cases without a file the location the sidecar report names. A name that
/// appears in two places (the same test title in two files) is left alone: no guess.
pub(super) fn apply(collected: &mut Collected, work_dir: &Path, root: &Path) {
    let Ok(text) = std::fs::read_to_string(work_dir.join(REPORT)) else { return };
    add_parent_tests(collected, &text, root);
    add_hook_failures(collected, &text, root);
    let mut by_name: HashMap<String, Option<Location>> = HashMap::new();
    for location in tests_in(&text) {
        by_name
            .entry(location.name.clone())
            .and_modify(|seen| {
                if seen.as_ref().is_some_and(|s| s.file != location.file || s.line != location.line) {
                    *seen = None;
                }
            })
            .or_insert(Some(location));
    }
    for case in collected.cases.iter_mut().filter(|c| c.file.is_none()) {
        let Some(Some(location)) = by_name.get(case.name.as_str()) else { continue };
        case.file = Some(relativize(&location.file, Some(root)).into());
        case.line = thrown_at(case.details().as_deref(), &location.file).or(location.line);
    }
}

/// Adds a case for each test that has subtests: the JUnit report made it a `<testsuite>` (its
/// children are named `parent > child`), node counts it as a test, and its own failure (an
/// assertion after its subtests passed) is only in the sidecar.
fn add_parent_tests(collected: &mut Collected, sidecar: &str, root: &Path) {
    let names: std::collections::HashSet<&str> = collected.cases.iter().map(|c| c.name.as_str()).collect();
    let mut parents = Vec::new();
    for location in tests_in(sidecar) {
        let Some(status) = location.status.as_deref() else { continue };
        let prefix = format!("{} > ", location.name);
        let is_parent = !names.contains(location.name.as_str()) && names.iter().any(|n| n.starts_with(&prefix));
        if !is_parent {
            continue;
        }
        let status = match status {
            "fail" => CaseStatus::Failed,
            "skip" | "todo" => CaseStatus::Skipped,
            _ => CaseStatus::Passed,
        };
        let file = relativize(&location.file, Some(root));
        let line = location.stack.as_deref().and_then(|s| thrown_at(Some(s), &location.file)).or(location.line);
        parents.push(
            Case {
                classname: location.name.rsplit_once(" > ").map(|(path, _)| path.to_string()).map(Into::into),
                name: location.name.into(),
                file: Some(file.into()),
                line,
                status, // Its first line, as for the other cases (assert adds a diff below it, kept in details).
                extra: crate::model::CaseExtra {
                    details: location
                        .stack
                        .filter(|_| status == CaseStatus::Failed)
                        .map(|s| crate::model::Text::capped(&s, DETAILS_CAP)),
                    ..Default::default()
                }
                .packed(),
                ..Case::default()
            }
            .with_message(
                location
                    .message
                    .filter(|_| status == CaseStatus::Failed)
                    .and_then(|m| m.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)),
            ),
        );
    }
    collected.cases.extend(parents);
}

/// What node says when a describe's hook failed and its tests never finished.
const CANCELLED: &str = "test did not finish before its parent and was cancelled";

/// Adds an `error` case `<describe> > [before hook]` for each describe whose own hook threw:
/// node's JUnit report drops the failure (an `after` hook's leaves every test passed and only the
/// exit code failing), and the tests a `before` hook cancelled say only that they were cancelled.
/// Those now name the hook and its error too.
fn add_hook_failures(collected: &mut Collected, sidecar: &str, root: &Path) {
    let hooks = sidecar.lines().filter_map(|l| serde_json::from_str::<Location>(l).ok()).filter(|l| l.suite);
    let mut failures = Vec::new();
    for location in hooks {
        let hook = location.hook.as_deref().unwrap_or("failed running a hook");
        // The error's first line as node printed it (`Error: cannot connect to db`).
        let message = location.message.as_deref().unwrap_or_default();
        let error = location.stack.as_deref().and_then(|s| s.lines().next()).unwrap_or(message);
        let said = format!("{hook}: {}", error.trim());
        let prefix = format!("{} > ", location.name);
        for case in collected.cases.iter_mut().filter(|c| c.name.starts_with(&prefix)) {
            if case.message() == Some(CANCELLED) {
                case.set_message(Some(format!("{CANCELLED}: `{}` {said}", location.name)));
            }
        }
        let which = hook.strip_prefix("failed running ").unwrap_or("hook");
        let line = location.stack.as_deref().and_then(|s| thrown_at(Some(s), &location.file)).or(location.line);
        failures.push(
            Case {
                name: format!("{} > [{which}]", location.name).into(),
                classname: Some(location.name.clone().into()),
                file: Some(relativize(&location.file, Some(root)).into()),
                line,
                status: CaseStatus::Error,
                extra: crate::model::CaseExtra {
                    details: location.stack.as_deref().map(|s| crate::model::Text::capped(s, DETAILS_CAP)),
                    ..Default::default()
                }
                .packed(),
                ..Case::default()
            }
            .with_message(Some(format!("`{}` {said}", location.name))),
        );
    }
    collected.cases.extend(failures);
}

/// jest and vitest give a case the line of its `test(…)` call; a failing case points at the line
/// that threw instead: the first stack frame in the case's own file, as the tool prints it
/// (`at Object.toBe (src/cart.test.js:21:39)`, `❯ src/slug.test.js:15:37`).
pub(super) fn failing_lines(cases: &mut [Case]) {
    static FRAME: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // The pattern is a literal; it compiles: a path, a line and a column.
    let frame = FRAME.get_or_init(|| regex::Regex::new(r#"([^\s()'"]+):(\d+):\d+"#).expect("valid regex"));
    for case in cases.iter_mut().filter(|c| c.status.is_failure()) {
        let (Some(file), Some(details)) = (case.file.as_deref(), case.details()) else { continue };
        let suffix = format!("/{file}");
        let line = frame.captures_iter(&details).find_map(|c| {
            let path = c[1].strip_prefix("file://").unwrap_or(&c[1]);
            (path == file || path.ends_with(&suffix)).then(|| c[2].parse().ok()).flatten()
        });
        if line.is_some() {
            case.line = line;
        }
    }
}

/// The line of the first stack frame in `file` (`(/abs/file.js:12:5)`), for a failure.
fn thrown_at(details: Option<&str>, file: &str) -> Option<u32> {
    let details = details?;
    let needle = format!("{file}:");
    let at = details.find(&needle)? + needle.len();
    let digits: String = details[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jest_and_vitest_failures_point_at_the_line_that_threw() {
        let case = |file: &str, details: &str| Case {
            name: "t".into(),
            file: Some(file.into()),
            line: Some(19),
            status: CaseStatus::Failed,
            extra: crate::model::CaseExtra { details: Some(details.into()), ..Default::default() }.packed(),
            ..Case::default()
        };
        let mut cases = vec![
            case(
                "src/cart.test.js",
                "Error: expect(received).toBe(expected)\n    at Object.toBe (/p/src/cart.test.js:21:39)\n    at Promise.then.completed (/p/node_modules/jest-circus/build/utils.js:298:28)",
            ),
            case(
                "src/slug.test.js",
                "AssertionError: expected 'a'\n    at /p/src/slug.test.js:15:37\n    at file:///p/node_modules/@vitest/runner/dist/chunk-hooks.js:155:11",
            ),
            case("src/helper.test.js", "Error: x\n    at helper (/p/src/lib.js:3:9)"),
        ];
        failing_lines(&mut cases);
        let lines: Vec<_> = cases.iter().map(|c| c.line).collect();
        assert_eq!(lines, [Some(21), Some(15), Some(19)]);
    }

    #[test]
    fn cases_take_their_location_by_name() {
        let work = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"name":"math > adds","file":"/repo/test/math.test.js","line":4}"#,
            r#"{"name":"math > fails","file":"/repo/test/math.test.js","line":9}"#,
            r#"{"name":"same title","file":"/repo/test/a.test.js","line":1}"#,
            r#"{"name":"same title","file":"/repo/test/b.test.js","line":1}"#,
            "not json",
        ];
        std::fs::write(work.path().join(REPORT), lines.join("\n")).unwrap();
        let case = |name: &str, details: Option<&str>| Case {
            name: name.into(),
            status: if details.is_some() { CaseStatus::Failed } else { CaseStatus::Passed },
            extra: crate::model::CaseExtra { details: details.map(Into::into), ..Default::default() }.packed(),
            ..Case::default()
        };
        let mut collected = Collected::nothing();
        collected.cases = vec![
            case("math > adds", None),
            case(
                "math > fails",
                Some("AssertionError\n    at TestContext.<anonymous> (/repo/test/math.test.js:11:10)"),
            ),
            case("same title", None),
            case("not reported", None),
        ];
        apply(&mut collected, work.path(), Path::new("/repo"));
        let got: Vec<_> = collected.cases.iter().map(|c| (c.file.as_deref(), c.line)).collect();
        assert_eq!(
            got,
            [(Some("test/math.test.js"), Some(4)), (Some("test/math.test.js"), Some(11)), (None, None), (None, None)]
        );
    }
}
