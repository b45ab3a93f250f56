//! vitest's "Unhandled Errors": errors thrown outside any test (a timer, a rejected promise) while
//! the run went on. vitest then fails the run with every test passed and warns of false positive
//! tests, in its console output only (its JSON report says nothing); each error becomes an
//! `error` case quoting vitest's words, the error and where it was thrown.

use std::path::Path;

use crate::collect::{DETAILS_CAP, OUTPUT_CAP};
use crate::model::{Case, CaseStatus, incomplete::UNHANDLED_ERROR_CASE};
use crate::text::truncate_chars;

/// How vitest starts the lines naming the test file and the latest test an error came during.
const ORIGIN: &str = "This error originated in ";
const LATEST: &str = "The latest test that might've caused the error is ";

/// Most cases made for one run's unhandled errors (vitest prints each; a loop could print many).
const MOST: usize = 20;

/// vitest's banner line: `⎯⎯⎯ Uncaught Exception ⎯⎯⎯` (its text), or `⎯⎯⎯⎯` alone (`Some("")`).
fn banner(line: &str) -> Option<&str> {
    let line = line.trim();
    line.starts_with('⎯').then(|| line.trim_matches(|c: char| c == '⎯' || c.is_whitespace()))
}

/// The text between the first pair of double quotes after `prefix`, on a line that starts with it.
fn quoted_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.trim().strip_prefix(prefix)?;
    rest.split('"').nth(1)
}

/// `❯ Timeout._onTimeout a.test.js:2:71` (or `❯ a.test.js:2:71`): the file and line, unless node's
/// own or a dependency's.
fn frame(line: &str) -> Option<(String, u32)> {
    let rest = line.trim().strip_prefix('❯')?.trim();
    let location = rest.rsplit(' ').next()?;
    let mut parts = location.rsplitn(3, ':');
    let (_column, line_no, file) = (parts.next()?, parts.next()?, parts.next()?);
    if file.starts_with("node:") || file.contains("node_modules") || file.is_empty() {
        return None;
    }
    Some((file.to_string(), line_no.parse().ok()?))
}

/// One `error` case per unhandled error vitest printed in `output` (empty when it printed none).
pub(super) fn unhandled_errors(output: &str, root: &Path) -> Vec<Case> {
    let text = strip_ansi_escapes::strip_str(output);
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| {
        let l = l.trim();
        l.starts_with("Vitest caught ") && l.contains(" unhandled error")
    }) else {
        return Vec::new();
    };
    // "Vitest caught 1 unhandled error during the test run." and the warning on the next line.
    let caught = lines[start].trim().trim_end_matches('.');
    let warning = lines.get(start + 1).map(|l| l.trim()).filter(|l| l.starts_with("This might cause"));
    let warning = warning.and_then(|w| w.split('.').next()).unwrap_or("");
    // Each error: its banner (the kind) and the lines up to the next banner.
    let mut blocks: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        match banner(line) {
            Some("") => {
                end = i;
                break;
            }
            Some(kind) => blocks.push((kind, Vec::new())),
            None => {
                if let Some((_, body)) = blocks.last_mut() {
                    body.push(line);
                }
            }
        }
    }
    // vitest writes where an error came from on stderr, the rest on stdout: captured together,
    // those lines may land after the section. Given one per error, they are the errors' in order.
    let after = |prefix: &str| -> Vec<&str> { lines[end..].iter().filter_map(|l| quoted_after(l, prefix)).collect() };
    let (origins, latests) = (after(ORIGIN), after(LATEST));
    let said = if warning.is_empty() { String::new() } else { format!(" (vitest: \"{warning}\")") };
    if blocks.is_empty() {
        let message = format!("{caught}{said}; the errors are in the test phase's log");
        return vec![error_case(None, None, message, None)];
    }
    let total = blocks.len();
    blocks
        .into_iter()
        .take(MOST)
        .enumerate()
        .map(|(i, (kind, body))| {
            let error = body.iter().map(|l| l.trim()).find(|l| !l.is_empty()).unwrap_or("(no message)");
            let location = body.iter().find_map(|l| frame(l));
            let origin = body
                .iter()
                .find_map(|l| quoted_after(l, ORIGIN))
                .or_else(|| (origins.len() == total).then(|| origins[i]));
            let latest = body
                .iter()
                .find_map(|l| quoted_after(l, LATEST))
                .or_else(|| (latests.len() == total).then(|| latests[i]));
            let at = location.as_ref().map(|(f, l)| format!(" at {f}:{l}")).unwrap_or_default();
            let mut context = Vec::new();
            if let Some(origin) = origin {
                context.push(format!("it originated in test file {origin}"));
            }
            if let Some(latest) = latest {
                context.push(format!("the latest test before it was \"{latest}\""));
            }
            let context = if context.is_empty() { String::new() } else { format!("; {}", context.join(", ")) };
            let which = if total > 1 { format!(" (error {} of {total})", i + 1) } else { String::new() };
            let message =
                format!("{caught}{which}: {kind} `{}`{at}{context}{said}", truncate_chars(error, OUTPUT_CAP / 4));
            let file = location.as_ref().map(|(f, _)| crate::collect::relativize(f, Some(root)));
            let classname = origin.map(|o| crate::collect::relativize(o, Some(root))).or_else(|| file.clone());
            let details = body.join("\n");
            let mut case = error_case(classname, file, message, Some(details.trim_matches('\n')));
            case.line = location.map(|(_, l)| l);
            case
        })
        .collect()
}

fn error_case(classname: Option<String>, file: Option<String>, message: String, details: Option<&str>) -> Case {
    let mut case = Case {
        name: UNHANDLED_ERROR_CASE.into(),
        classname: classname.map(Into::into),
        file: file.map(Into::into),
        status: CaseStatus::Error,
        ..Case::default()
    }
    .with_message(Some(message));
    if let Some(details) = details.filter(|d| !d.is_empty()) {
        case.extra_mut().details = Some(crate::model::Text::capped(details, DETAILS_CAP));
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;

    // vitest 2.1.9's output (colours kept, as fcorr's log has them) for a test whose timer throws
    // after it passed: tests/fixtures/js-vitest-unhandled.
    const UNHANDLED: &str = "\u{1b}[32m✓\u{1b}[39m a.test.js (2 tests) 52ms

\u{1b}[31m⎯⎯⎯⎯⎯⎯\u{1b}[1m\u{1b}[7m Unhandled Errors \u{1b}[27m\u{1b}[22m⎯⎯⎯⎯⎯⎯\u{1b}[39m
\u{1b}[31m\u{1b}[1m
Vitest caught 1 unhandled error during the test run.
This might cause false positive tests. Resolve unhandled errors to make sure your tests are not affected.\u{1b}[22m\u{1b}[39m

\u{1b}[31m⎯⎯⎯⎯⎯\u{1b}[1m\u{1b}[7m Uncaught Exception \u{1b}[27m\u{1b}[22m⎯⎯⎯⎯⎯\u{1b}[39m
\u{1b}[31m\u{1b}[1mError\u{1b}[22m: unhandled after test\u{1b}[39m
\u{1b}[36m \u{1b}[2m❯\u{1b}[22m Timeout._onTimeout a.test.js:\u{1b}[2m2:71\u{1b}[22m\u{1b}[39m
    \u{1b}[90m  1| \u{1b}[39mimport { test, expect } from 'vitest';
\u{1b}[90m \u{1b}[2m❯\u{1b}[22m listOnTimeout node:internal/timers:\u{1b}[2m581:17\u{1b}[22m\u{1b}[39m

\u{1b}[31mThis error originated in \"\u{1b}[1ma.test.js\u{1b}[22m\" test file. It doesn't mean the error was thrown inside the file itself, but while it was running.\u{1b}[39m
\u{1b}[31mThe latest test that might've caused the error is \"\u{1b}[1mslow ok\u{1b}[22m\". It might mean one of the following:
- The error was thrown, while Vitest was running this test.\u{1b}[39m
\u{1b}[31m⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯\u{1b}[39m

 Test Files  1 passed (1)
      Tests  2 passed (2)
     Errors  1 error
";

    #[test]
    fn each_unhandled_error_is_an_error_case_quoting_vitest() {
        let cases = unhandled_errors(UNHANDLED, Path::new("/p"));
        assert_eq!(cases.len(), 1);
        let case = &cases[0];
        assert_eq!((case.name.as_str(), case.status), (UNHANDLED_ERROR_CASE, CaseStatus::Error));
        assert_eq!(
            (case.classname.as_deref(), case.file.as_deref(), case.line),
            (Some("a.test.js"), Some("a.test.js"), Some(2))
        );
        assert_eq!(
            case.message(),
            Some(
                "Vitest caught 1 unhandled error during the test run: Uncaught Exception `Error: unhandled after \
                 test` at a.test.js:2; it originated in test file a.test.js, the latest test before it was \"slow \
                 ok\" (vitest: \"This might cause false positive tests\")"
            )
        );
        assert!(case.details().unwrap().contains("listOnTimeout"), "{:?}", case.details());
        assert!(case.marks_incomplete_results());
    }

    #[test]
    fn where_an_error_came_from_is_found_after_the_section_too() {
        // As fcorr captures it (stdout and stderr together), vitest's stderr lines may follow
        // its summary.
        let start = UNHANDLED.find("\u{1b}[31mThis error originated").unwrap();
        let end = UNHANDLED.find("\u{1b}[31m⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯").unwrap();
        let moved = format!("{}{}{}", &UNHANDLED[..start], &UNHANDLED[end..], &UNHANDLED[start..end]);
        let cases = unhandled_errors(&moved, Path::new("/p"));
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].message(), unhandled_errors(UNHANDLED, Path::new("/p"))[0].message());
    }

    #[test]
    fn two_errors_are_two_cases_and_output_without_the_banner_is_none() {
        let second = "⎯⎯⎯⎯ Unhandled Rejection ⎯⎯⎯⎯\nError: rejected later\n ❯ src/b.test.ts:7:3\n";
        let two = UNHANDLED
            .replacen("Vitest caught 1 unhandled error", "Vitest caught 2 unhandled errors", 1)
            .replacen("\u{1b}[31m⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯", &format!("{second}⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯"), 1);
        let cases = unhandled_errors(&two, Path::new("/p"));
        let got: Vec<(Option<&str>, Option<u32>)> = cases.iter().map(|c| (c.file.as_deref(), c.line)).collect();
        assert_eq!(got, vec![(Some("a.test.js"), Some(2)), (Some("src/b.test.ts"), Some(7))]);
        let message = cases[1].message().unwrap();
        assert!(message.starts_with("Vitest caught 2 unhandled errors during the test run (error 2 of 2): Unhandled Rejection `Error: rejected later` at src/b.test.ts:7"), "{message}");
        assert!(unhandled_errors(" Tests  2 passed (2)\n", Path::new("/p")).is_empty());
        // Cut after vitest's sentence: still named, never a pass.
        let cut = &UNHANDLED[..UNHANDLED.find("not affected").unwrap()];
        let cases = unhandled_errors(cut, Path::new("/p"));
        assert_eq!(cases.len(), 1);
        assert!(cases[0].message().unwrap().starts_with("Vitest caught 1 unhandled error during the test run"));
    }
}
