//! vitest's errors outside any test. "Unhandled Errors": errors thrown outside any test (a timer,
//! a rejected promise) while the run went on; vitest then fails the run with every test passed and
//! warns of false positive tests. Errors printed on their own: an `Unhandled Error` banner when the
//! run itself failed (a `globalSetup` that threw: no test ran, and vitest says only "No test files
//! found"), "Source Errors" (type errors outside the test files, vitest 0.x's typecheck), and "There
//! were unhandled errors during test collection" (`vitest list`). vitest says these in its console
//! output only (its JSON report says nothing); each error becomes an `error` case quoting vitest's
//! words, the error and where it was thrown.

use std::path::Path;

use crate::collect::{DETAILS_CAP, OUTPUT_CAP};
use crate::model::{Case, CaseStatus, incomplete::UNHANDLED_ERROR_CASE};
use crate::text::truncate_chars;

/// How vitest starts the lines naming the test file and the latest test an error came during.
const ORIGIN: &str = "This error originated in ";
const LATEST: &str = "The latest test that might've caused the error is ";

/// Most cases made for one run's unhandled errors (vitest prints each; a loop could print many).
const MOST: usize = 20;

/// The banners vitest prints over one error of its own outside a "Vitest caught …" section
/// (`printError`'s `type`): the run failed there, not in a test.
const LONE_KINDS: &[&str] =
    &["Unhandled Error", "Unhandled Rejection", "Uncaught Exception", "Unhandled Source Error", "Typecheck Error"];
/// vitest's typecheck section for type errors outside the test files, and its sentence.
const SOURCE_ERRORS: &str = "Source Errors";
/// `vitest list`'s sentence before the errors it met while collecting, which it prints as node does.
const COLLECTION: &str = "There were unhandled errors during test collection";

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

/// `❯ Timeout._onTimeout a.test.js:2:71` (or `❯ a.test.js:2:71`), or node's `at fn (file:///p/a.js:2:7)`:
/// the file and line, unless node's own or a dependency's.
fn frame(line: &str) -> Option<(String, u32)> {
    let line = line.trim();
    let location = match line.strip_prefix('❯') {
        Some(rest) => rest.trim().rsplit(' ').next()?,
        None => {
            let rest = line.strip_prefix("at ")?;
            rest.rsplit_once('(').map_or(rest, |(_, inner)| inner.trim_end_matches(')'))
        }
    };
    let location = location.strip_prefix("file://").unwrap_or(location);
    let mut parts = location.rsplitn(3, ':');
    let (_column, line_no, file) = (parts.next()?, parts.next()?, parts.next()?);
    if file.starts_with("node:") || file.contains("node_modules") || file.is_empty() {
        return None;
    }
    Some((file.to_string(), line_no.parse().ok()?))
}

/// One `error` case per error vitest printed outside its tests in `output` (empty when none).
pub(super) fn unhandled_errors(output: &str, root: &Path) -> Vec<Case> {
    let text = strip_ansi_escapes::strip_str(output);
    let lines: Vec<&str> = text.lines().collect();
    let mut cases = Vec::new();
    let caught = lines.iter().position(|l| {
        let l = l.trim();
        l.starts_with("Vitest caught ") && l.contains(" unhandled error")
    });
    // What the "Vitest caught" section spans; lone errors are looked for outside it.
    let mut section = 0..0;
    if let Some(start) = caught {
        let (found, end) = caught_errors(&lines, start, root);
        cases.extend(found);
        section = start..end;
    }
    let mut i = 0;
    while i < lines.len() {
        if section.contains(&i) {
            i = section.end;
            continue;
        }
        let line = lines[i].trim();
        let (found, next) = match banner(line) {
            Some(kind) if LONE_KINDS.contains(&kind) => lone_error(&lines, i, kind, root),
            Some(SOURCE_ERRORS) => listed_errors(&lines, i + 1, SOURCE_ERRORS, root),
            _ if line == COLLECTION => listed_errors(&lines, i + 1, COLLECTION, root),
            _ => (Vec::new(), i + 1),
        };
        cases.extend(found);
        i = next.max(i + 1);
    }
    cases.truncate(MOST);
    cases
}

/// The errors of the section that starts at `lines[start]`, "Vitest caught 1 unhandled error
/// during the test run.", and where the section ends.
fn caught_errors(lines: &[&str], start: usize, root: &Path) -> (Vec<Case>, usize) {
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
        return (vec![error_case(None, None, message, None)], end);
    }
    let total = blocks.len();
    let cases = blocks
        .into_iter()
        .take(MOST)
        .enumerate()
        .map(|(i, (kind, body))| {
            let origin = body
                .iter()
                .find_map(|l| quoted_after(l, ORIGIN))
                .or_else(|| (origins.len() == total).then(|| origins[i]));
            let latest = body
                .iter()
                .find_map(|l| quoted_after(l, LATEST))
                .or_else(|| (latests.len() == total).then(|| latests[i]));
            let mut context = Vec::new();
            if let Some(origin) = origin {
                context.push(format!("it originated in test file {origin}"));
            }
            if let Some(latest) = latest {
                context.push(format!("the latest test before it was \"{latest}\""));
            }
            let context = if context.is_empty() { String::new() } else { format!("; {}", context.join(", ")) };
            let which = if total > 1 { format!(" (error {} of {total})", i + 1) } else { String::new() };
            let origin = origin.map(|o| crate::collect::relativize(o, Some(root)));
            quoted(&format!("{caught}{which}: {kind} "), &body, &format!("{context}{said}"), origin, root)
        })
        .collect();
    (cases, end)
}

/// The error under a lone banner at `lines[at]` (its kind), up to the next banner or vitest's
/// summary, and the line after it.
fn lone_error(lines: &[&str], at: usize, kind: &str, root: &Path) -> (Vec<Case>, usize) {
    let end = (at + 1..lines.len())
        .find(|&i| banner(lines[i]).is_some() || lines[i].trim_start().starts_with("Test Files "))
        .unwrap_or(lines.len());
    let head = format!("vitest failed outside any test: {kind} ");
    (vec![quoted(&head, &lines[at + 1..end], "", None, root)], end)
}

/// The errors vitest lists after `lines[from - 1]` ("Source Errors", "There were unhandled errors
/// during test collection"), each starting at a line of its own that is not indented, up to a
/// divider or two blank lines; and the line after them.
fn listed_errors(lines: &[&str], from: usize, what: &str, root: &Path) -> (Vec<Case>, usize) {
    let mut end = lines.len();
    let mut errors: Vec<Vec<&str>> = Vec::new();
    for i in from..lines.len() {
        let line = lines[i];
        let blank_pair = line.trim().is_empty() && lines.get(i + 1).is_some_and(|l| l.trim().is_empty());
        if banner(line).is_some() || (blank_pair && !errors.is_empty()) {
            end = i;
            break;
        }
        let sentence = line.trim_start().starts_with("Vitest found ");
        let starts = !line.starts_with([' ', '\t']) && !line.trim().is_empty() && !line.starts_with("Caused by");
        match errors.last_mut() {
            _ if sentence => {}
            Some(body) if !starts => body.push(line),
            _ if starts => errors.push(vec![line]),
            _ => {}
        }
    }
    let sentence = lines[from..end].iter().map(|l| l.trim()).find(|l| l.starts_with("Vitest found "));
    let head = sentence.unwrap_or(what).trim_end_matches('.');
    let total = errors.len();
    let cases = errors
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let which = if total > 1 { format!(" (error {} of {total})", i + 1) } else { String::new() };
            quoted(&format!("{head}{which}: "), body, "", None, root)
        })
        .collect();
    (cases, end)
}

/// The case quoting one error: `head`, its first line in backquotes, where it was thrown, `tail`;
/// its lines as the details. The classname is `origin` (the test file it came from) or its file.
fn quoted(head: &str, body: &[&str], tail: &str, origin: Option<String>, root: &Path) -> Case {
    let error = body.iter().map(|l| l.trim()).find(|l| !l.is_empty()).unwrap_or("(no message)");
    let location = body.iter().find_map(|l| frame(l)).map(|(f, l)| (crate::collect::relativize(&f, Some(root)), l));
    let at = location.as_ref().map(|(f, l)| format!(" at {f}:{l}")).unwrap_or_default();
    let message = format!("{head}`{}`{at}{tail}", truncate_chars(error, OUTPUT_CAP / 4));
    let (file, line) = location.unzip();
    let classname = origin.or_else(|| file.clone());
    let details = body.join("\n");
    let mut case = error_case(classname, file, message, Some(details.trim_matches('\n')));
    case.line = line;
    case
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

    // vitest 3.2.7's output for a globalSetup that throws (tests/fixtures/js-vitest-global-setup),
    // colours stripped.
    const LONE: &str = "
 RUN  v3.2.7 /p

No test files found, exiting with code 1

⎯⎯⎯⎯⎯⎯ Unhandled Error ⎯⎯⎯⎯⎯⎯⎯
Error: the test database is not reachable at postgres://localhost:5433/app_test
 ❯ Object.setup test/global-setup.js:6:9

 ❯ TestProject._initializeGlobalSetup node_modules/vitest/dist/chunks/cli-api.DVe0nWUx.js:7084:50
 ❯ startVitest node_modules/vitest/dist/chunks/cli-api.DVe0nWUx.js:10520:8



";

    #[test]
    fn an_error_under_a_lone_banner_is_a_case_with_its_place() {
        let cases = unhandled_errors(LONE, Path::new("/p"));
        let [case] = cases.as_slice() else { panic!("{cases:#?}") };
        assert_eq!(
            case.message(),
            Some(
                "vitest failed outside any test: Unhandled Error `Error: the test database is not reachable at \
                 postgres://localhost:5433/app_test` at test/global-setup.js:6"
            )
        );
        assert_eq!((case.file.as_deref(), case.line), (Some("test/global-setup.js"), Some(6)));
        assert!(case.details().unwrap().contains("_initializeGlobalSetup"), "{:?}", case.details());
        // A lone banner inside a "Vitest caught" section is that section's, counted once.
        assert_eq!(unhandled_errors(UNHANDLED, Path::new("/p")).len(), 1);
    }

    /// The shapes vitest's `printSourceTypeErrors` (0.x typecheck) and `vitest list` print, from
    /// its source: every error quoted, with its place.
    #[test]
    fn source_errors_and_collection_errors_are_cases_too() {
        let source = "⎯⎯⎯⎯⎯⎯ Source Errors ⎯⎯⎯⎯⎯⎯\n\nVitest found 2 errors not related to your test files.\n\
                      TypeCheckError: Type 'string' is not assignable to type 'number'.\n ❯ src/tax.ts:1:14\n\
                      \x20     1| export const rate: number = '7%';\n\nTypeCheckError: Cannot find name 'x'.\n \
                      ❯ src/b.ts:4:3\n⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯\n Test Files  1 passed (1)\n";
        let cases = unhandled_errors(source, Path::new("/p"));
        let got: Vec<(Option<&str>, Option<u32>, Option<&str>)> =
            cases.iter().map(|c| (c.file.as_deref(), c.line, c.message())).collect();
        assert_eq!(
            got,
            [
                (
                    Some("src/tax.ts"),
                    Some(1),
                    Some(
                        "Vitest found 2 errors not related to your test files (error 1 of 2): `TypeCheckError: Type \
                         'string' is not assignable to type 'number'.` at src/tax.ts:1"
                    )
                ),
                (
                    Some("src/b.ts"),
                    Some(4),
                    Some(
                        "Vitest found 2 errors not related to your test files (error 2 of 2): `TypeCheckError: \
                         Cannot find name 'x'.` at src/b.ts:4"
                    )
                ),
            ]
        );
        let collection = "\nThere were unhandled errors during test collection\nError: no config for env staging\n    \
                          at loadEnv (file:///p/src/env.js:12:11)\n    at node:internal/modules/esm/module_job:271:25\n\n\n\n";
        let cases = unhandled_errors(collection, Path::new("/p"));
        let [case] = cases.as_slice() else { panic!("{cases:#?}") };
        assert_eq!(
            case.message(),
            Some(
                "There were unhandled errors during test collection: `Error: no config for env staging` at \
                 src/env.js:12"
            )
        );
        assert_eq!((case.file.as_deref(), case.line), (Some("src/env.js"), Some(12)));
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
