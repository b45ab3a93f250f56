//! TAP 13/14 (Test Anything Protocol): `node --test`, node-tap, prove, bats and friends.
//!
//! Test points (`ok`/`not ok`) with `# SKIP`/`# TODO` directives, YAML diagnostic blocks (a small
//! subset: scalars, quoted strings, block scalars and one level of nesting, enough for `message`,
//! `at`/`file`/`line`, `location`, `error` and `stack`), indented subtests with TAP 14's
//! `# Subtest:` names, plans and `Bail out!`. A test point whose subtests came before it is a
//! suite, not a test: only leaves are cases.

use std::io::BufRead;

use super::{DETAILS_CAP, LINE_CAP, ParseOptions, ParsedReport, ReportParser, read_line_capped};
use crate::errors::ParseError;
use crate::model::{Case, CaseStatus};

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "tap";

/// Test Anything Protocol.
pub struct Tap;

impl ReportParser for Tap {
    fn format(&self) -> &'static str {
        NAME
    }

    fn sniff(&self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        let text = text.trim_start_matches('\u{feff}');
        let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
            return false;
        };
        first.starts_with("TAP version")
            || first.starts_with("# Subtest:")
            || first.starts_with("ok ")
            || first == "ok"
            || first.starts_with("not ok")
            || parse_plan(first).is_some()
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        parse(input, options)
    }
}

/// One test point as read, before deciding whether it is a leaf.
struct Point {
    indent: usize,
    /// The line it is on: a subtest's plan belongs to the point whose block holds it.
    line: usize,
    /// The number the producer gave it (`ok 3`), if any.
    number: Option<u32>,
    ok: bool,
    name: String,
    /// Names of the enclosing subtests, outermost first.
    parents: Vec<String>,
    directive: Option<DirectiveWithReason>,
    yaml: Vec<(String, String)>,
    /// Bytes of the YAML block kept so far: the rest is dropped (see [`YAML_CAP`]).
    yaml_bytes: usize,
}

/// Most of a YAML block kept while reading: its fields are capped at [`DETAILS_CAP`] anyway, and a
/// 300 MB block must not be held whole.
const YAML_CAP: usize = 4 * DETAILS_CAP;

#[derive(Clone, Copy, PartialEq)]
enum Directive {
    Skip,
    Todo,
}

fn parse(input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
    let mut report = ParsedReport::default();
    let mut points: Vec<Point> = Vec::new();
    // Open `# Subtest:` names by indentation.
    let mut subtests: Vec<(usize, String)> = Vec::new();
    // Plans (`1..N`): (indentation, count, line number).
    let mut plans: Vec<(usize, u32, usize)> = Vec::new();
    let mut yaml_for: Option<(usize, usize)> = None; // (point index, indent of the `---` line)
    let mut saw_tap = false;
    let mut bail: Option<String> = None;
    let mut line = String::new();
    let mut line_no = 0usize;

    loop {
        let (n, _) = read_line_capped(input, &mut line, LINE_CAP).map_err(|e| {
            ParseError::new(NAME, format!("line {}: cannot read: {e}", line_no + 1)).at_line(line_no as u64 + 1)
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let raw = line.trim_end_matches(['\n', '\r']);
        let raw = if line_no == 1 { raw.trim_start_matches('\u{feff}') } else { raw };
        let indent = raw.len() - raw.trim_start_matches([' ', '\t']).len();
        let content = raw.trim();

        if let Some((index, yaml_indent)) = yaml_for {
            if content == "..." && indent == yaml_indent {
                yaml_for = None;
                let yaml = std::mem::take(&mut points[index].yaml);
                points[index].yaml = parse_yaml(&yaml);
            } else if points[index].yaml_bytes < YAML_CAP {
                // Raw lines for now (key, original line): parsed once the block ends.
                let kept = raw.get(yaml_indent.min(raw.len())..).unwrap_or("").to_string();
                points[index].yaml_bytes += kept.len();
                points[index].yaml.push((String::new(), kept));
            }
            continue;
        }
        if content.is_empty() {
            continue;
        }
        if content.starts_with("TAP version") {
            saw_tap = true;
            continue;
        }
        if let Some(rest) = content.strip_prefix("Bail out!") {
            saw_tap = true;
            bail = Some(rest.trim().to_string());
            break;
        }
        if let Some(name) = content.strip_prefix("# Subtest:") {
            subtests.retain(|(i, _)| *i < indent);
            subtests.push((indent, name.trim().to_string()));
            continue;
        }
        if content.starts_with('#') {
            continue;
        }
        if let Some(count) = parse_plan(content) {
            saw_tap = true;
            plans.push((indent, count, line_no));
            continue;
        }
        if content == "---"
            && let Some(last) = points.last()
            && indent > last.indent
            && last.yaml.is_empty()
        {
            yaml_for = Some((points.len() - 1, indent));
            continue;
        }
        if let Some(point) = parse_point(content) {
            saw_tap = true;
            let (ok, number, name, directive) = point;
            // Deeper subtests are finished once a point at a shallower level appears.
            subtests.retain(|(i, _)| *i <= indent);
            let own = subtests.last().filter(|(i, _)| *i == indent).map(|(_, n)| n.clone());
            let parents: Vec<String> = subtests.iter().filter(|(i, _)| *i < indent).map(|(_, n)| n.clone()).collect();
            subtests.retain(|(i, _)| *i < indent);
            // The `# Subtest:` name is the full name; the test point's description may be shortened.
            let name = own.filter(|n| !n.is_empty()).unwrap_or(name);
            points.push(Point {
                indent,
                line: line_no,
                number,
                ok,
                name,
                parents,
                directive,
                yaml: Vec::new(),
                yaml_bytes: 0,
            });
            continue;
        }
        // Anything else is output the producer let through (console.log...): not TAP, ignore.
    }
    if !saw_tap {
        return Err(ParseError::new(NAME, "no TAP version line, plan or test point (`ok`/`not ok`): not a TAP report"));
    }
    // A stream that stops mid-test is incomplete: what the rest would have said is unknown.
    let mut cut_short = None;
    if let Some((index, _)) = yaml_for {
        let yaml = std::mem::take(&mut points[index].yaml);
        points[index].yaml = parse_yaml(&yaml);
        cut_short = Some(format!("the stream ends inside the YAML block of `{}` (line {line_no})", points[index].name));
    } else if let Some((_, name)) = subtests.last().filter(|_| bail.is_none()) {
        cut_short = Some(format!("the stream ends inside subtest `{name}`, before its result (line {line_no})"));
    }
    // The indentation of the top-level test points (and of their plan).
    let top = points.iter().map(|p| p.indent).min().unwrap_or(0);
    let missing = check_plans(&points, &plans, top, &mut report);
    if cut_short.is_none() && bail.is_none() && !points.is_empty() && !plans.iter().any(|(indent, _, _)| *indent == top)
    {
        // prove's "No plan found": without a plan nothing says the run got to its end.
        cut_short = Some("no plan (`1..N`) at the top level, so nothing says the run got to its end".into());
    }

    for (index, point) in points.iter().enumerate() {
        let previous_deeper = index > 0 && points[index - 1].indent > point.indent;
        if previous_deeper {
            // A parent (suite): its subtests are the cases. Keep it only when it failed and no
            // subtest explains why (a failing hook, a suite that crashed).
            let first_child = points[..index].iter().rposition(|p| p.indent <= point.indent).map_or(0, |i| i + 1);
            let child_failed = points[first_child..index].iter().any(|p| !p.ok && p.directive.is_none());
            if point.ok || child_failed || point.directive.is_some() {
                continue;
            }
        }
        report.cases.push(to_case(point, options));
    }
    if let Some(reason) = bail {
        report.cases.push(
            Case { name: "Bail out!".into(), status: CaseStatus::Error, ..Case::default() }
                .with_message(Some(if reason.is_empty() { "the test run bailed out".into() } else { reason })),
        );
        report.warnings.push("the producer bailed out: tests after that point did not run".into());
    } else if let Some(problem) = out_of_sequence(&points, &plans, top) {
        // prove fails both ("Tests out of sequence", "More than one plan found"): with numbers
        // repeated or skipped, the count matching the plan does not mean every test reported.
        report.cases.push(
            Case { name: problem.0.into(), status: CaseStatus::Error, ..Case::default() }.with_message(Some(problem.1)),
        );
    } else if let Some((planned, reported)) = missing {
        // prove calls this "Bad plan" and fails: tests that were meant to run did not report.
        report.cases.push(Case {
            name: crate::model::incomplete::PLANNED_TESTS_CASE.into(),
            status: CaseStatus::Error,
            ..Case::default()
        }.with_message(Some(format!(
                "the plan says 1..{planned} but only {reported} test points were reported: {} never ran or the output stopped early",
                planned - reported
            ))));
    }
    // A subtest's plan is checked as the top level's is: fewer or more points than it says means
    // its block is not what the producer meant to run, whatever its parent's `ok` says.
    report.cases.extend(subtest_plans_not_met(&points, &plans));
    if let Some(at) = cut_short {
        report.cut_short(format!("{at}: the stream was cut short, so results after that point are unknown"));
    }
    Ok(report)
}

/// The top level's numbering problem, as (case name, message): a second top-level plan, or a
/// test point whose number is not its place (a number repeated, or one skipped).
fn out_of_sequence(points: &[Point], plans: &[(usize, u32, usize)], top: usize) -> Option<(&'static str, String)> {
    let top_plans: Vec<usize> =
        plans.iter().filter(|(indent, _, _)| *indent == top).map(|(_, _, line)| *line).collect();
    if let [first, second, ..] = top_plans[..] {
        return Some((
            crate::model::incomplete::SECOND_PLAN_CASE,
            format!(
                "lines {first} and {second} both give the top-level plan (`1..N`): two runs' output joined, or a \
                 producer that started over; which tests belong to this run is unknown"
            ),
        ));
    }
    let (at, number) = points
        .iter()
        .filter(|p| p.indent == top)
        .zip(1u32..)
        .find_map(|(p, place)| p.number.filter(|n| *n != place).map(|n| (place, n)))?;
    Some((
        crate::model::incomplete::OUT_OF_SEQUENCE_CASE,
        format!(
            "test point {at} is numbered {number}: a test was reported twice or one never reported, so the \
             count of test points does not prove that every planned test ran"
        ),
    ))
}

/// An `error` case for each subtest whose plan (`    1..N` inside its block) does not match the
/// test points its block reported directly (its own children, not theirs).
fn subtest_plans_not_met(points: &[Point], plans: &[(usize, u32, usize)]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (index, parent) in points.iter().enumerate() {
        // The block of `parent`: the lines after the previous point at its level or above.
        let before = points[..index].iter().rposition(|p| p.indent <= parent.indent);
        let start_line = before.map_or(0, |i| points[i].line);
        let first = before.map_or(0, |i| i + 1);
        // Plans are in line order: the block's are found by halving, not by a scan per point.
        let from = plans.partition_point(|(_, _, line)| *line <= start_line);
        let to = plans.partition_point(|(_, _, line)| *line < parent.line).max(from);
        let block_plans = plans[from..to].iter().filter(|(indent, _, _)| *indent > parent.indent);
        let children = &points[first..index];
        // Its own children are the shallowest lines of the block; deeper ones are theirs.
        let Some(level) = block_plans.clone().map(|(i, _, _)| *i).chain(children.iter().map(|p| p.indent)).min() else {
            continue;
        };
        let Some(&(_, planned, line)) = block_plans.clone().find(|(indent, _, _)| *indent == level) else { continue };
        let reported = children.iter().filter(|p| p.indent == level).count();
        if planned as usize == reported {
            continue;
        }
        let why = if (planned as usize) > reported {
            format!("{} never ran or its output stopped early", planned as usize - reported)
        } else {
            "its output holds test points it did not plan (another run's, or a wrong plan)".to_string()
        };
        let mut case = Case {
            name: format!("{} {}", crate::model::incomplete::SUBTEST_PLAN_CASE, parent.name).into(),
            status: CaseStatus::Error,
            ..Case::default()
        }
        .with_message(Some(format!(
            "subtest `{}`: its plan (line {line}) says 1..{planned} but {reported} test point{} reported: {why}",
            parent.name,
            if reported == 1 { " was" } else { "s were" }
        )));
        case.classname = (!parent.parents.is_empty()).then(|| parent.parents.join(" > ").into());
        cases.push(case);
    }
    cases
}

/// Warns when the top-level plan and the points disagree; returns (planned, reported) when fewer
/// points than planned were reported.
fn check_plans(
    points: &[Point],
    plans: &[(usize, u32, usize)],
    top: usize,
    report: &mut ParsedReport,
) -> Option<(usize, usize)> {
    // Only the top-level plan is checked: subtest plans belong to their own blocks.
    let top_points = points.iter().filter(|p| p.indent == top).count();
    if let Some((_, planned, line)) = plans.iter().find(|(indent, _, _)| *indent == top)
        && *planned as usize != top_points
    {
        report.warnings.push(format!(
            "line {line}: the plan says 1..{planned} but {top_points} top-level test points were reported"
        ));
    }
    plans
        .iter()
        .find(|(indent, _, _)| *indent == top)
        .map(|(_, planned, _)| *planned as usize)
        .filter(|planned| *planned > top_points)
        .map(|planned| (planned, top_points))
}

/// `1..N` (optionally followed by `# reason`).
fn parse_plan(content: &str) -> Option<u32> {
    let rest = content.strip_prefix("1..")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = rest[digits.len()..].trim_start();
    if digits.is_empty() || !(after.is_empty() || after.starts_with('#')) {
        return None;
    }
    digits.parse().ok()
}

/// A directive and its reason.
type DirectiveWithReason = (Directive, String);

/// `ok 3 - description # SKIP reason` → (ok, description, directive).
fn parse_point(content: &str) -> Option<(bool, Option<u32>, String, Option<DirectiveWithReason>)> {
    let (ok, rest) = if let Some(rest) = content.strip_prefix("not ok") {
        (false, rest)
    } else if let Some(rest) = content.strip_prefix("ok") {
        (true, rest)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with([' ', '\t', '#'])) {
        return None;
    }
    let rest = rest.trim_start();
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let number = &rest[..digits];
    let rest = rest[digits..].trim_start();
    let rest = rest.strip_prefix("- ").or_else(|| rest.strip_prefix('-')).unwrap_or(rest);
    let (description, directive) = split_directive(rest);
    let mut name = unescape(description.trim());
    if name.is_empty() {
        name = if number.is_empty() { "(unnamed)".into() } else { format!("test {number}") };
    }
    Some((ok, number.parse().ok(), name, directive))
}

/// Splits at the first unescaped `#` followed by SKIP/TODO (case-insensitive).
fn split_directive(text: &str) -> (&str, Option<DirectiveWithReason>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'#' => {
                let after = text[i + 1..].trim_start();
                let upper: String = after.chars().take(4).collect::<String>().to_ascii_uppercase();
                let directive = match upper.as_str() {
                    "SKIP" => Some(Directive::Skip),
                    "TODO" => Some(Directive::Todo),
                    _ => None,
                };
                if let Some(directive) = directive {
                    // "SKIP", "SKIPPED", "skip:" all mean skip; the reason follows the word.
                    let word_len = after.find(|c: char| c.is_whitespace() || c == ':').unwrap_or(after.len());
                    let reason = after[word_len..].trim_start_matches(':').trim().to_string();
                    return (&text[..i], Some((directive, reason)));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    (text, None)
}

fn unescape(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_string();
    }
    text.replace("\\#", "#").replace("\\\\", "\\")
}

/// Reads the YAML subset TAP producers write: `key: value`, quoted values, block scalars
/// (`|`, `|-`, `>`, `>-`) and one nested map level (flattened to `parent.key`).
fn parse_yaml(lines: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i].1;
        let indent = line.len() - line.trim_start().len();
        let content = line.trim();
        i += 1;
        if content.is_empty() || content.starts_with('#') || indent > 0 {
            continue;
        }
        let Some((key, value)) = content.split_once(':') else { continue };
        let key = key.trim().to_string();
        let value = value.trim();
        if value.starts_with('|') || value.starts_with('>') {
            let folded = value.starts_with('>');
            let mut block: Vec<&str> = Vec::new();
            let mut block_indent: Option<usize> = None;
            while i < lines.len() {
                let next = &lines[i].1;
                let next_indent = next.len() - next.trim_start().len();
                if !next.trim().is_empty() && next_indent == 0 {
                    break;
                }
                if !next.trim().is_empty() && block_indent.is_none() {
                    block_indent = Some(next_indent);
                }
                let cut = block_indent.unwrap_or(0).min(next_indent);
                block.push(next.get(cut..).unwrap_or(""));
                i += 1;
            }
            while block.last().is_some_and(|l| l.trim().is_empty()) {
                block.pop();
            }
            let text = if folded { block.join(" ") } else { block.join("\n") };
            out.push((key, text));
        } else if value.is_empty() {
            // A nested map: `at:` followed by indented `file: x`, `line: 3`.
            while i < lines.len() {
                let next = &lines[i].1;
                let next_indent = next.len() - next.trim_start().len();
                if !next.trim().is_empty() && next_indent == 0 {
                    break;
                }
                if let Some((k, v)) = next.trim().split_once(':')
                    && !v.trim().starts_with(['|', '>'])
                {
                    out.push((format!("{key}.{}", k.trim()), unquote(v.trim())));
                }
                i += 1;
            }
        } else {
            out.push((key, unquote(value)));
        }
    }
    out
}

fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        value[1..value.len() - 1].replace("''", "'")
    } else if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        serde_json::from_str::<String>(value).unwrap_or_else(|_| value[1..value.len() - 1].to_string())
    } else {
        value.to_string()
    }
}

fn to_case(point: &Point, options: &ParseOptions) -> Case {
    let get = |key: &str| point.yaml.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let status = match (&point.directive, point.ok) {
        (Some((Directive::Skip, _)), _) | (Some((Directive::Todo, _)), _) => CaseStatus::Skipped,
        (None, true) => CaseStatus::Passed,
        (None, false) => CaseStatus::Failed,
    };
    let mut case = Case {
        name: point.name.clone().into(),
        classname: (!point.parents.is_empty()).then(|| point.parents.join(" > ")).map(Into::into),
        status,
        duration_ms: get("duration_ms").and_then(|v| v.parse::<f64>().ok()).filter(|d| d.is_finite() && *d >= 0.0),
        ..Case::default()
    };
    match &point.directive {
        Some((Directive::Skip, reason)) => case.set_message(Some(reason.clone()).filter(|r| !r.is_empty())),
        Some((Directive::Todo, reason)) => {
            case.set_message(Some(if reason.is_empty() { "todo".into() } else { format!("todo: {reason}") }))
        }
        None => {}
    }
    // Location: node-tap `at: {file, line}`, node:test `location: 'file:line:col'`, or plain keys.
    let (mut file, mut line) = (
        get("at.file").or(get("file")).map(str::to_string),
        get("at.line").or(get("line")).and_then(|v| v.parse().ok()),
    );
    if file.is_none()
        && let Some(location) = get("location")
    {
        let (f, l) = split_location(location);
        file = Some(f.to_string());
        line = l;
    }
    case.file =
        file.filter(|f| !f.is_empty()).map(|f| options.relative_path(f.trim_start_matches("file://"))).map(Into::into);
    case.line = line;
    if status == CaseStatus::Failed {
        let text = get("message").or(get("error"));
        case.set_message(text.and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty())).map(str::to_string));
        let details = match (get("error"), get("stack")) {
            (Some(error), Some(stack)) => format!("{error}\n{stack}"),
            (Some(error), None) => error.to_string(),
            (None, Some(stack)) => stack.to_string(),
            (None, None) => String::new(),
        };
        if !details.trim().is_empty() {
            case.extra_mut().details = Some(crate::model::Text::capped(details.trim(), DETAILS_CAP));
        }
        if get("failureType") == Some("cancelledByParent") || get("failureType") == Some("hookFailed") {
            case.status = CaseStatus::Error;
        }
        if get("failureType") == Some("testTimeoutFailure") {
            case.status = CaseStatus::Timeout;
        }
    }
    case
}

/// `'/p/test/a.js:21:5'` → (`/p/test/a.js`, Some(21)); the column, if any, is dropped.
fn split_location(location: &str) -> (&str, Option<u32>) {
    let mut rest = location;
    let mut numbers = Vec::new();
    while numbers.len() < 2 {
        match rest.rsplit_once(':') {
            Some((head, tail)) if tail.parse::<u32>().is_ok() => {
                numbers.push(tail.parse::<u32>().ok());
                rest = head;
            }
            _ => break,
        }
    }
    (rest, numbers.last().copied().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> ParsedReport {
        parse(&mut text.as_bytes(), &ParseOptions { root: Some("/repo".into()) }).unwrap()
    }

    #[test]
    fn points_directives_and_yaml() {
        let report = parse_str(
            "TAP version 14\n1..4\nok 1 - adds\nnot ok 2 - subtracts\n  ---\n  message: 'expected 1, got 2'\n  at:\n    file: /repo/test/math.js\n    line: 12\n  stack: |-\n    at sub (math.js:3)\n    at test (math.js:12)\n  ...\nok 3 - later # SKIP not ready\nnot ok 4 - wish \\# hash # TODO someday\n",
        );
        let c = &report.cases;
        assert_eq!(c.len(), 4);
        assert_eq!((c[0].name.as_str(), c[0].status), ("adds", CaseStatus::Passed));
        assert_eq!(c[1].status, CaseStatus::Failed);
        assert_eq!(c[1].message(), Some("expected 1, got 2"));
        assert_eq!((c[1].file.as_deref(), c[1].line), (Some("test/math.js"), Some(12)));
        assert_eq!(c[1].details().as_deref(), Some("at sub (math.js:3)\nat test (math.js:12)"));
        assert_eq!((c[2].status, c[2].message()), (CaseStatus::Skipped, Some("not ready")));
        assert_eq!((c[3].name.as_str(), c[3].status), ("wish # hash", CaseStatus::Skipped));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn subtests_are_suites_and_leaves_are_cases() {
        let text = "TAP version 13\n# Subtest: outer\n    # Subtest: inner a\n    ok 1 - inner a\n    # Subtest: inner b\n    not ok 2 - inner b\n      ---\n      location: '/repo/t.js:7:3'\n      error: |-\n        boom\n        \n        more\n      ...\n    1..2\nnot ok 1 - outer\n  ---\n  type: 'suite'\n  ...\n# Subtest: top\nok 2 - top\n1..2\n";
        let report = parse_str(text);
        let c = &report.cases;
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!((c[0].classname.as_deref(), c[0].name.as_str()), (Some("outer"), "inner a"));
        assert_eq!((c[1].file.as_deref(), c[1].line, c[1].message()), (Some("t.js"), Some(7), Some("boom")));
        assert_eq!(c[1].details().as_deref(), Some("boom\n\nmore"));
        assert_eq!((c[2].classname.as_deref(), c[2].name.as_str()), (None, "top"));
    }

    #[test]
    fn failing_parent_without_failing_children_is_kept() {
        let text = "# Subtest: suite\n    ok 1 - a\n    1..1\nnot ok 1 - suite\n  ---\n  error: 'before hook failed'\n  ...\n1..1\n";
        let c = parse_str(text).cases;
        assert_eq!(c.len(), 2);
        assert_eq!((c[1].name.as_str(), c[1].status), ("suite", CaseStatus::Failed));
    }

    #[test]
    fn plan_mismatch_warns_and_bail_out_is_an_error_case() {
        let report = parse_str("1..3\nok 1 - a\nok 2 - b\n");
        assert_eq!(report.warnings.len(), 1);
        assert!(report.warnings[0].contains("1..3"), "{:?}", report.warnings);
        // Fewer points than planned is a failure, as in prove ("Bad plan"), not a pass.
        let missing = report.cases.last().unwrap();
        assert_eq!(missing.status, CaseStatus::Error);
        assert!(missing.message().unwrap().contains("1 never ran"), "{missing:?}");
        // More than planned: a warning only.
        let report = parse_str("1..1\nok 1 - a\nok 2 - b\n");
        assert_eq!((report.cases.len(), report.warnings.len()), (2, 1));
        // Numbers repeated or skipped, or a second plan: an error even when the count matches.
        for (tap, name, says) in [
            ("1..3\nok 1 - a\nok 2 - b\nok 2 - c\n", "[tests out of sequence]", "test point 3 is numbered 2"),
            ("1..2\nok 1 - a\nok 1 - a\n", "[tests out of sequence]", "test point 2 is numbered 1"),
            ("1..2\nok 1 - a\nok 2 - b\n1..3\n", "[more than one plan]", "lines 1 and 4"),
        ] {
            let last = parse_str(tap).cases.pop().unwrap();
            assert_eq!((last.name.as_str(), last.status), (name, CaseStatus::Error), "{tap}");
            assert!(last.message().unwrap().contains(says), "{tap}: {:?}", last.message());
        }
        // Unnumbered points, and numbers in order, are fine.
        for tap in ["1..2\nok - a\nok - b\n", "1..2\nok 1 - a\nnot ok 2 - b\n"] {
            assert!(parse_str(tap).cases.iter().all(|c| !c.name.starts_with('[')), "{tap}");
        }
        let report = parse_str("1..3\nok 1 - a\nBail out! database down\nok 2 - never read\n");
        assert_eq!(report.cases.len(), 2);
        assert_eq!((report.cases[1].status, report.cases[1].message()), (CaseStatus::Error, Some("database down")));
    }

    #[test]
    fn a_subtest_plan_with_fewer_or_more_points_is_an_error_case() {
        // /work/probe-B/import/sub-plan.tap: planned 1..3, two points, and the parent says ok.
        let fewer = "TAP version 14\n# Subtest: grp\n    1..3\n    ok 1 - x\n    ok 2 - y\nok 1 - grp\n1..1\n";
        let report = parse_str(fewer);
        let last = report.cases.last().unwrap();
        assert_eq!((last.name.as_str(), last.status), ("[subtest plan not met] grp", CaseStatus::Error));
        assert_eq!(
            last.message(),
            Some(
                "subtest `grp`: its plan (line 3) says 1..3 but 2 test points were reported: 1 never ran or its output stopped early"
            )
        );
        // More than planned, a plan after the points, and a nested subtest's plan (its parent's
        // own plan counts its direct children only).
        let more = "# Subtest: outer\n    # Subtest: inner\n        ok 1 - a\n        ok 2 - b\n        1..1\n    \
                    ok 1 - inner\n    1..1\nok 1 - outer\n1..1\n";
        let names: Vec<(String, Option<String>)> = parse_str(more)
            .cases
            .iter()
            .filter(|c| c.name.starts_with('['))
            .map(|c| (c.name.to_string(), c.classname.as_deref().map(str::to_string)))
            .collect();
        assert_eq!(names, [("[subtest plan not met] inner".to_string(), Some("outer".to_string()))]);
        // A subtest planning 1..2 whose points never came, and plans that hold: no such case.
        let none_came = "# Subtest: grp\n    1..2\nnot ok 1 - grp\n1..1\n";
        assert!(parse_str(none_came).cases.iter().any(|c| c.name.as_str() == "[subtest plan not met] grp"));
        for tap in [
            "# Subtest: grp\n    ok 1 - x\n    not ok 2 - y\n    1..2\nnot ok 1 - grp\n1..1\n",
            "TAP version 14\n# Subtest: grp\n    1..0 # SKIP nothing\nok 1 - grp\n1..1\n",
            "1..2\nok 1 - a\nok 2 - b\n",
        ] {
            assert!(parse_str(tap).cases.iter().all(|c| !c.name.starts_with('[')), "{tap}");
        }
    }

    #[test]
    fn a_stream_that_stops_mid_test_is_cut_short() {
        let cut = |text: &str| {
            let report = parse_str(text);
            let last = report.cases.last().map(|c| (c.name.clone(), c.status));
            assert_eq!(last, Some((crate::collect::CUT_SHORT_CASE.into(), CaseStatus::Error)), "{text}");
            assert_eq!(report.errors.len(), 1, "{text}");
            report.errors[0].clone()
        };
        let error = cut("TAP version 13\nok 1 - a\nnot ok 2 - b\n  ---\n  message: 'x'\n");
        assert!(error.contains("inside the YAML block of `b`"), "{error}");
        let error = cut("TAP version 14\nok 1 - a\n# Subtest: parent\n    ok 1 - child\n");
        assert!(error.contains("inside subtest `parent`"), "{error}");
        let error = cut("TAP version 13\nok 1 - a\nok 2 - b\n");
        assert!(error.contains("no plan"), "{error}");
        // Complete streams, plan first or last, and a bail-out, are not cut short.
        for text in ["1..1\nok 1 - a\n", "ok 1 - a\n1..1\n", "1..2\nok 1 - a\nBail out! down\n"] {
            assert!(parse_str(text).errors.is_empty(), "{text}");
        }
    }

    #[test]
    fn a_huge_yaml_block_is_not_held_whole() {
        let body = "    more stack\n".repeat(100_000);
        let text = format!("1..1\nnot ok 1 - big\n  ---\n  message: 'boom'\n  stack: |-\n{body}  ...\n");
        let report = parse_str(&text);
        let case = &report.cases[0];
        assert_eq!(case.message(), Some("boom"));
        assert!(case.details().as_deref().is_some_and(|d| d.len() <= DETAILS_CAP + 100), "details too long");
        assert!(report.errors.is_empty());
    }

    #[test]
    fn not_tap_is_an_error_and_sniffing_is_strict() {
        assert!(parse(&mut "hello\nworld\n".as_bytes(), &ParseOptions::default()).is_err());
        assert!(Tap.sniff(b"TAP version 13\n"));
        assert!(Tap.sniff(b"\n1..0 # skip all\n"));
        assert!(!Tap.sniff(b"{\"tests\": []}"));
        assert!(!Tap.sniff(b"okay then\n"));
    }

    #[test]
    fn locations_split_into_file_and_line() {
        assert_eq!(split_location("/p/a.js:21:5"), ("/p/a.js", Some(21)));
        assert_eq!(split_location("/p/a.js:21"), ("/p/a.js", Some(21)));
        assert_eq!(split_location("/p/a.js"), ("/p/a.js", None));
    }
}
