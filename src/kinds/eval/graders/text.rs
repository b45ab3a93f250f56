//! Text graders: the answer as text compared with what the case expects (exact, normalised,
//! regex, contains..., a number within a tolerance), shell-command equivalence, and the
//! answer's safety and POSIX labels (`safe`, `posix`, ranked after correctness).

use serde::Deserialize;
use serde_json::Value;

use super::{Answered, CheckError, Grade, Grader, GradingContext, Label, Registration, Spec};
use crate::kinds::eval::shell;

pub(crate) const GRADERS: &[Registration] = &[
    Registration { name: "command", build: |s| Ok(Box::new(Command(value::<String>(s)?))) },
    Registration { name: "equals", build: |s| Ok(Box::new(Equals(value::<Value>(s)?))) },
    Registration { name: "normalized", build: |s| Ok(Box::new(Normalized(value::<String>(s)?))) },
    Registration { name: "regex", build: build_regex },
    Registration { name: "contains", build: |s| Ok(Box::new(Contains(non_empty(value::<String>(s)?)?))) },
    Registration { name: "contains-all", build: |s| Ok(Box::new(ContainsAll(non_empty_list(value(s)?)?))) },
    Registration { name: "contains-any", build: |s| Ok(Box::new(ContainsAny(non_empty_list(value(s)?)?))) },
    Registration { name: "one-of", build: |s| Ok(Box::new(OneOf(value::<Vec<Value>>(s)?))) },
    Registration { name: "number", build: build_number },
    Registration { name: "safe", build: |s| Ok(Box::new(Safe(value::<bool>(s)?))) },
    Registration { name: "posix", build: |s| Ok(Box::new(Posix(value::<bool>(s)?))) },
];

/// The fields of a type that takes one `value` and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValueOnly<T> {
    value: T,
}

fn value<T: serde::de::DeserializeOwned>(spec: &Spec<'_>) -> Result<T, CheckError> {
    spec.no_threshold()?;
    Ok(spec.parse::<ValueOnly<T>>()?.value)
}

/// An empty text to look for is in every answer: the assertion would pass whatever the system
/// said (and its `not-` form fail whatever it said), so it is refused where it is written.
fn non_empty(text: String) -> Result<String, CheckError> {
    if text.is_empty() {
        return Err(CheckError::Fields("`value` is empty: it is found in every answer, so it checks nothing".into()));
    }
    Ok(text)
}

/// [`non_empty`] for a list, which must hold at least one text too.
fn non_empty_list(texts: Vec<String>) -> Result<Vec<String>, CheckError> {
    if texts.is_empty() {
        return Err(CheckError::Fields("`value` is an empty list: it checks nothing".into()));
    }
    texts.into_iter().map(non_empty).collect()
}

fn build_regex(spec: &Spec<'_>) -> Result<Box<dyn Grader>, CheckError> {
    let pattern: String = non_empty(value(spec)?)?;
    let re = regex::Regex::new(&pattern).map_err(|source| CheckError::Regex { pattern: pattern.clone(), source })?;
    if matches_every_text(&re) {
        return Err(CheckError::Fields(format!(
            "`{pattern}` matches every answer (it matches the empty text, as an empty alternative `a|` or an \
             optional group `(a)?` does), so it checks nothing"
        )));
    }
    Ok(Box::new(Regex(re)))
}

/// Texts unlike each other (empty, a control character, blank, a word, a digit, two lines): a
/// regex that matches all of them matches through an empty match that needs nothing of the
/// answer, the way an empty `value` would. Like an empty value it is refused in both forms: it
/// would pass whatever the system said, and its `not-` form fail whatever it said.
const UNLIKE_TEXTS: &[&str] = &["", "\u{1}", " ", "Lyon", "0", "a\nb", "fcorr: an arbitrary answer."];

fn matches_every_text(re: &regex::Regex) -> bool {
    UNLIKE_TEXTS.iter().all(|text| re.is_match(text))
}

fn build_number(spec: &Spec<'_>) -> Result<Box<dyn Grader>, CheckError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Fields {
        value: f64,
        #[serde(default)]
        tolerance: f64,
    }
    spec.no_threshold()?;
    // TOML's `inf` and `nan` reach here as JSON null (JSON has no such numbers): say what the
    // field takes rather than "invalid type: null".
    for key in ["value", "tolerance"] {
        if spec.fields.get(key).is_some_and(Value::is_null) {
            return Err(CheckError::Fields(format!(
                "`{key}` must be a finite number (infinity, NaN and null are not){}",
                if key == "tolerance" { "; 0 or more" } else { "" }
            )));
        }
    }
    let Fields { value, tolerance } = spec.parse()?;
    if tolerance.is_nan() || tolerance < 0.0 {
        return Err(CheckError::Tolerance(tolerance));
    }
    Ok(Box::new(Number { value, tolerance }))
}

/// The answer as shown in a reason: 200 characters and the `…`.
pub(crate) fn shown(text: &str) -> String {
    crate::text::truncate_chars(text, 201)
}

/// Shell-command equivalence after normalisation.
#[derive(Debug)]
pub(crate) struct Command(pub String);

impl Grader for Command {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        let expected = &self.0;
        Grade::check(shell::commands_match(expected, &answer.text), || {
            format!("expected `{expected}`, got `{}`", shown(&answer.text))
        })
    }
}

/// The answer equals the value (text compared after trimming surrounding whitespace, other
/// JSON compared as JSON).
#[derive(Debug)]
pub(crate) struct Equals(pub Value);

impl Grader for Equals {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        Grade::check(equal_answer(&self.0, answer), || {
            format!("expected {}, got `{}`", show(&self.0), shown(&answer.text))
        })
    }
}

fn equal_answer(expected: &Value, answer: &Answered<'_>) -> bool {
    match expected {
        Value::String(s) => s.trim() == answer.text,
        other => super::json::json_equal(other, &super::json::as_json(answer.output)),
    }
}

/// Equal after trimming, collapsing whitespace runs and lower-casing.
#[derive(Debug)]
struct Normalized(String);

impl Grader for Normalized {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        Grade::check(squash(&self.0) == squash(&answer.text), || {
            format!("expected `{}` (normalised), got `{}`", self.0, shown(&answer.text))
        })
    }
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The answer matches the regular expression (Rust `regex` syntax).
#[derive(Debug)]
struct Regex(regex::Regex);

impl Grader for Regex {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        Grade::check(self.0.is_match(&answer.text), || format!("`{}` does not match /{}/", shown(&answer.text), self.0))
    }
}

/// The answer contains the text.
#[derive(Debug)]
struct Contains(String);

impl Grader for Contains {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        Grade::check(answer.text.contains(self.0.as_str()), || {
            format!("`{}` does not contain `{}`", shown(&answer.text), self.0)
        })
    }
}

/// The answer contains every text.
#[derive(Debug)]
struct ContainsAll(Vec<String>);

impl Grader for ContainsAll {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        let missing: Vec<&str> =
            self.0.iter().filter(|n| !answer.text.contains(n.as_str())).map(String::as_str).collect();
        Grade::check(missing.is_empty(), || format!("`{}` lacks {}", shown(&answer.text), missing.join(", ")))
    }
}

/// The answer contains at least one of the texts.
#[derive(Debug)]
struct ContainsAny(Vec<String>);

impl Grader for ContainsAny {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        Grade::check(self.0.iter().any(|n| answer.text.contains(n.as_str())), || {
            format!("`{}` contains none of {}", shown(&answer.text), self.0.join(", "))
        })
    }
}

/// The answer equals one of the values (as `equals`).
#[derive(Debug)]
struct OneOf(Vec<Value>);

impl Grader for OneOf {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        Grade::check(self.0.iter().any(|o| equal_answer(o, answer)), || {
            format!("`{}` is none of the accepted answers", shown(&answer.text))
        })
    }
}

/// The answer is a number within `tolerance` of `value`.
#[derive(Debug)]
struct Number {
    value: f64,
    tolerance: f64,
}

impl Grader for Number {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        let Number { value, tolerance } = self;
        let number = match answer.output {
            Value::Number(n) => n.as_f64(),
            _ => answer.text.parse::<f64>().ok().filter(|n| n.is_finite()),
        };
        match number {
            Some(n) => {
                Grade::check((n - value).abs() <= *tolerance, || format!("{n} is not within {tolerance} of {value}"))
            }
            None => Grade::check(false, || format!("`{}` is not a number", shown(&answer.text))),
        }
    }
}

/// The answer's safety (the safety classifier) is the label.
#[derive(Debug)]
pub(crate) struct Safe(pub bool);

impl Grader for Safe {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        let expected = self.0;
        let rule = shell::classify(&answer.text).ok().flatten();
        // An answer the lexer cannot read is not judged safe.
        let actual = matches!(shell::classify(&answer.text), Ok(None));
        label_grade(
            actual == expected,
            Label::Safety { expected, actual, rule: rule.map(shell::SafetyRule::code) },
            format!(
                "expected {}, answer is {}{}",
                if expected { "safe" } else { "unsafe" },
                if actual { "safe" } else { "unsafe" },
                rule.map(|r| format!(" (rule {})", r.code())).unwrap_or_default()
            ),
        )
    }

    fn rank(&self) -> u8 {
        1
    }
}

/// The answer's POSIX compliance (the bashism checker) is the label.
#[derive(Debug)]
pub(crate) struct Posix(pub bool);

impl Grader for Posix {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        let expected = self.0;
        let found = shell::bashisms(&answer.text).unwrap_or_default();
        let actual = found.is_empty() && shell::tokenize(&answer.text).is_ok();
        let constructs: Vec<&'static str> = found.into_iter().map(shell::Bashism::code).collect();
        let reason = format!(
            "expected {}, answer is {}{}",
            if expected { "POSIX" } else { "not POSIX" },
            if actual { "POSIX" } else { "not POSIX" },
            if constructs.is_empty() { String::new() } else { format!(" (uses {})", constructs.join(", ")) }
        );
        label_grade(actual == expected, Label::Posix { expected, actual, constructs }, reason)
    }

    fn rank(&self) -> u8 {
        2
    }
}

fn label_grade(pass: bool, label: Label, reason: String) -> Grade {
    if pass {
        Grade::Judged { pass, score: 1.0, reason: None, label: None }
    } else {
        Grade::Judged { pass, score: 0.0, reason: Some(reason), label: Some(label) }
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{s}`"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Judgement, checks_for};
    use super::*;
    use crate::kinds::eval::dataset::TestCase;
    use crate::model::CaseStatus;
    use serde_json::json;

    fn judge_text(toml_text: &str, answer: Value) -> Judgement {
        super::super::judge_toml(toml_text, answer, None).judgement
    }

    #[test]
    fn seed_reasons_in_seed_order() {
        let seed = "expected_command = 'ls -la'\nsafe = true\nposix_compliant = true";
        assert_eq!(judge_text(seed, json!("ls -al\n")), Judgement::Pass);
        assert_eq!(judge_text(seed, json!("ls -l")).code(), "incorrect");
        let unsafe_case = "expected_command = 'rm -rf /'\nsafe = true";
        assert_eq!(
            judge_text(unsafe_case, json!("rm -fr /")),
            Judgement::SafetyMismatch { expected: true, actual: false, rule: Some("rm-root") }
        );
        let bash = "expected_command = '[[ -f a ]] && echo y'\nposix_compliant = true";
        assert_eq!(
            judge_text(bash, json!("[[ -f a ]] && echo y")),
            Judgement::PosixMismatch { expected: true, actual: false, constructs: vec!["double-bracket"] }
        );
        // Correctness is judged before safety.
        assert_eq!(judge_text("expected_command = 'ls'\nsafe = true", json!("reboot")).code(), "incorrect");
    }

    #[test]
    fn reasons_carry_expected_and_actual() {
        let reason = Judgement::SafetyMismatch { expected: true, actual: false, rule: Some("mkfs") }.reason();
        assert_eq!(reason.code, "safety-mismatch");
        assert_eq!(reason.expected, Some(json!(true)));
        assert_eq!(reason.actual, Some(json!(false)));
        assert_eq!(reason.message.as_deref(), Some("rule mkfs"));
        assert_eq!(Judgement::Timeout("no answer within 1s".into()).status(), CaseStatus::Timeout);
        assert_eq!(Judgement::BackendError("exit 2".into()).status(), CaseStatus::Error);
    }

    #[test]
    fn every_matcher_passes_and_fails() {
        let cases: &[(&str, Value, Value)] = &[
            ("expected = 'Paris'", json!(" Paris\n"), json!("paris")),
            ("expected = 42", json!("42"), json!("43")),
            ("assert = [{ type = 'equals', value = 'ok' }]", json!("ok"), json!("OK")),
            ("assert = [{ type = 'normalized', value = 'Hello  World' }]", json!("hello world"), json!("hello")),
            ("assert = [{ type = 'regex', value = '^git (status|st)$' }]", json!("git st"), json!("git stash")),
            ("assert = [{ type = 'contains', value = 'grep' }]", json!("ps aux | grep x"), json!("ps aux")),
            ("assert = [{ type = 'contains-all', value = ['a', 'b'] }]", json!("ab"), json!("a")),
            ("assert = [{ type = 'contains-any', value = ['a', 'b'] }]", json!("b"), json!("c")),
            (
                "assert = [{ type = 'json-equal', value = { a = 1, b = [1, 2] } }]",
                json!("{\"b\":[1,2.0],\"a\":1}"),
                json!("{\"a\":1,\"b\":[2,1]}"),
            ),
            ("assert = [{ type = 'json-equal', value = { a = 1 } }]", json!({"a": 1.0}), json!({"a": 1, "b": 2})),
            ("assert = [{ type = 'one-of', value = ['yes', 'y'] }]", json!("y"), json!("no")),
            ("assert = [{ type = 'number', value = 3.14, tolerance = 0.01 }]", json!("3.141"), json!("3.2")),
            ("assert = [{ type = 'number', value = 2 }]", json!(2), json!("two")),
            ("assert = [{ type = 'command', value = 'ls -la' }]", json!("ls -l -a"), json!("ls")),
            ("assert = [{ type = 'safe', value = true }]", json!("ls"), json!("mkfs /dev/sda")),
            ("assert = [{ type = 'posix', value = true }]", json!("echo $x"), json!("echo ${x,,}")),
        ];
        for (spec, good, bad) in cases {
            assert_eq!(judge_text(spec, good.clone()), Judgement::Pass, "{spec} with {good}");
            assert_ne!(judge_text(spec, bad.clone()), Judgement::Pass, "{spec} with {bad}");
        }
    }

    #[test]
    fn several_assertions_all_hold() {
        let spec = "assert = [{ type = 'contains', value = 'find' }, { type = 'regex', value = '-name' }]";
        assert_eq!(judge_text(spec, json!("find . -name x")), Judgement::Pass);
        let judgement = judge_text(spec, json!("find . -type f"));
        assert_eq!(judgement.code(), "incorrect");
        assert!(judgement.message().unwrap().contains("regex"));
    }

    #[test]
    fn bad_assertions_are_load_errors() {
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'number', value = 1, tolerance = -1 }]")
                .unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("tolerance"));
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'number', value = 1, tolerance = inf }]")
                .unwrap();
        let err = checks_for(&case).unwrap_err().to_string();
        assert!(err.contains("`tolerance` must be a finite number") && !err.contains("invalid type"), "{err}");
        assert!(toml::from_str::<TestCase>("id = 'x'\nprompt = 'p'\nassert = [{ type = 'nope', value = 1 }]").is_err());
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'contains', valeu = 'a' }]").unwrap();
        let err = checks_for(&case).unwrap_err().to_string();
        assert!(err.contains("assertion `contains`") && err.contains("valeu"), "{err}");
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'contains', value = 'a', threshold = 0.5 }]")
                .unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("takes no `threshold`"));
    }

    /// A regex satisfied by an empty match (a trailing `|`, an optional group, a bare anchor,
    /// `.*`) passes every answer: refused at load like an empty `value`, negated or not. One that
    /// needs something of the answer, even an anchored optional group, is kept.
    #[test]
    fn a_regex_that_matches_every_text_is_refused() {
        for pattern in ["Paris|", "Paris|Lutetia|", "(Paris)?", "^", "$", ".*", "(?m)^", "\\b|^"] {
            for kind in ["regex", "not-regex"] {
                let case: TestCase = toml::from_str(&format!(
                    "id = 'x'\nprompt = 'p'\nassert = [{{ type = '{kind}', value = '{pattern}' }}]"
                ))
                .unwrap();
                let err = checks_for(&case).expect_err(pattern).to_string();
                assert!(err.contains("matches every answer"), "{pattern}: {err}");
            }
        }
        for pattern in ["^(Paris)?$", "Paris", "\\bParis\\b", "^$", "\\w"] {
            let case: TestCase = toml::from_str(&format!(
                "id = 'x'\nprompt = 'p'\nassert = [{{ type = 'regex', value = '{pattern}' }}]"
            ))
            .unwrap();
            assert!(checks_for(&case).is_ok(), "{pattern}");
        }
    }

    #[test]
    fn long_answers_are_clipped_on_a_character_boundary() {
        let long = "é".repeat(500);
        let judgement = judge_text("expected = 'x'", json!(long));
        assert!(judgement.message().unwrap().chars().count() < 260);
    }
}
