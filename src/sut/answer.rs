//! Reading what a system answered: `{"output": …, "usage": {…}}` or plain text, usage under the
//! names different tools give it, and the capped raw text kept for reports.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Usage;

/// Bytes of a raw answer kept for reports (head only; the rest is counted, not kept).
pub(crate) const RAW_CAP: usize = 4 * 1024;

/// Answers larger than this (a command's stdout, an HTTP body) are an error, not an answer, and
/// are never read whole into memory.
pub(crate) const MAX_ANSWER: u64 = 16 * 1024 * 1024;

/// How to read a system's text answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AnswerFormat {
    /// A JSON object with an `output` member when the text starts with `{`, else plain text.
    #[default]
    Auto,
    /// Always a JSON object with an `output` member.
    Json,
    /// Always plain text (a JSON-looking answer is just text).
    Text,
}

/// A usable answer before timing and attempts are added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reply {
    pub output: Value,
    pub raw: String,
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// Why an answer was unusable; `raw` is the capped text as received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Malformed {
    pub message: String,
    pub raw: String,
}

/// Reads a text answer (a command's stdout, an HTTP body) in the given format.
pub(crate) fn parse(bytes: &[u8], format: AnswerFormat) -> Result<Reply, Malformed> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(Malformed {
            message: "the answer is not UTF-8 text".into(),
            raw: cap(&String::from_utf8_lossy(bytes)),
        });
    };
    let raw = cap(text);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Malformed { message: "the answer is empty".into(), raw });
    }
    let envelope = match format {
        AnswerFormat::Text => None,
        AnswerFormat::Json => Some(serde_json::from_str::<Value>(trimmed).map_err(|e| Malformed {
            message: format!(
                "the answer does not parse as JSON ({e}); expected {{\"output\": …, \"usage\": {{…}}}} \
                 (set `answer = \"text\"` if the answer is plain text)"
            ),
            raw: raw.clone(),
        })?),
        // Text that merely starts with `{` (a shell brace group `{ ls; pwd; }`, a `{Paris}`) is
        // text: only JSON that parses into an object holding an envelope field is an envelope.
        // Broken JSON (`{"output": "Paris"` cut short, `{"outp`) stays an error, though: judged
        // as text, it could contain the very answer it failed to deliver.
        AnswerFormat::Auto if trimmed.starts_with('{') => match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => Some(value)
                .filter(|v| v.as_object().is_some_and(|o| ENVELOPE_FIELDS.iter().any(|f| o.contains_key(*f)))),
            Err(e) if trimmed[1..].trim_start().starts_with('"') || names_an_envelope_field(trimmed) => {
                return Err(Malformed {
                    message: format!(
                        "the answer looks like JSON but does not parse ({e}); expected \
                         {{\"output\": …, \"usage\": {{…}}}} (set `answer = \"text\"` if the answer is plain text)"
                    ),
                    raw,
                });
            }
            Err(_) => None,
        },
        AnswerFormat::Auto => None,
    };
    let Some(value) = envelope else {
        return Ok(Reply { output: Value::String(trimmed.to_string()), raw, usage: None });
    };
    let Value::Object(mut object) = value else {
        return Err(Malformed { message: "the JSON answer is not an object with an `output` member".into(), raw });
    };
    if let Some(error) = object.get("error").and_then(reported_error) {
        return Err(Malformed { message: format!("the system reported an error: {error}"), raw });
    }
    let Some(output) = object.remove("output") else {
        return Err(Malformed { message: "the JSON answer has no `output` member".into(), raw });
    };
    if let Some(refusal) = no_answer(&output) {
        return Err(Malformed { message: format!("the JSON answer's `output` is {refusal}"), raw });
    }
    let usage = match object.get("usage").map(usage_checked).transpose() {
        Ok(usage) => usage.flatten(),
        Err(message) => return Err(Malformed { message, raw }),
    };
    Ok(Reply { output, raw, usage })
}

/// The members that make a JSON object an answer envelope (`{"output": …, "usage": …}`, or
/// `{"error": …}` for a failure) rather than an answer that happens to be JSON.
const ENVELOPE_FIELDS: &[&str] = &["output", "usage", "error"];

/// True when `text` holds an envelope field as a JSON key (`"output":`, `"usage" :`).
fn names_an_envelope_field(text: &str) -> bool {
    ENVELOPE_FIELDS.iter().any(|field| {
        let key = format!("\"{field}\"");
        text.match_indices(&key).any(|(at, _)| text[at + key.len()..].trim_start().starts_with(':'))
    })
}

/// An envelope's `error` member as one line, when it says something went wrong: text, or an
/// object's `message`, or the JSON itself; `null`, `false` and blank text say nothing. A wrapper
/// that returns a fallback `output` beside an `error` did not answer: its output is not judged.
fn reported_error(error: &Value) -> Option<String> {
    let text = match error {
        Value::Null | Value::Bool(false) => return None,
        Value::String(s) => s.clone(),
        Value::Object(o) => o.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_string),
        other => other.to_string(),
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then(|| crate::text::truncate_chars(&line, 301))
}

/// Why `output` says nothing was answered, if it does. Any JSON value is an answer
/// (`{"output": 5}` is the number 5, judged as `5` or as JSON) except these two, which plain text
/// refuses too; the answer cache refuses them as well, so a stored blank is never judged.
pub(crate) fn no_answer(output: &Value) -> Option<&'static str> {
    match output {
        Value::Null => Some("null: no answer was given"),
        Value::String(s) if s.trim().is_empty() => Some("empty"),
        _ => None,
    }
}

/// Usage from a JSON object, accepting the OpenAI, Anthropic and fcorr spellings; `None` when
/// it names no tokens, calls or cost. A negative figure is an error, not a credit: a negative
/// cost would pass a `cost` assertion and take the other cases' cost off the suite's total.
pub(crate) fn usage_checked(value: &Value) -> Result<Option<Usage>, String> {
    const FIGURES: &[&str] = &[
        "tokens_in",
        "prompt_tokens",
        "input_tokens",
        "tokens_out",
        "completion_tokens",
        "output_tokens",
        "tokens",
        "total_tokens",
        "llm_calls",
        "calls",
        "cost_usd",
        "cost",
    ];
    if let Some((key, n)) =
        FIGURES.iter().find_map(|k| value.get(*k).and_then(Value::as_f64).filter(|n| *n < 0.0).map(|n| (k, n)))
    {
        return Err(format!("the answer's usage `{key}` is {n}: a token count or cost cannot be negative"));
    }
    let number = |keys: &[&str]| keys.iter().find_map(|k| value.get(*k).and_then(Value::as_u64));
    let tokens_in = number(&["tokens_in", "prompt_tokens", "input_tokens"]);
    let tokens_out = number(&["tokens_out", "completion_tokens", "output_tokens"]);
    let total = number(&["tokens", "total_tokens"]);
    let calls = number(&["llm_calls", "calls"]);
    let cost = ["cost_usd", "cost"].iter().find_map(|k| value.get(*k).and_then(Value::as_f64));
    if tokens_in.is_none() && tokens_out.is_none() && total.is_none() && calls.is_none() && cost.is_none() {
        return Ok(None);
    }
    let tokens = total.unwrap_or(tokens_in.unwrap_or(0) + tokens_out.unwrap_or(0));
    Ok(Some(Usage { tokens, llm_calls: calls.unwrap_or(0), cost_usd: cost, tokens_in, tokens_out }))
}

/// [`usage_checked`] for readers that keep going without usage (a benchmark executor's report):
/// a negative figure leaves the usage out rather than lowering a total.
pub(crate) fn usage_from_json(value: &Value) -> Option<Usage> {
    usage_checked(value).ok().flatten()
}

/// The first [`RAW_CAP`] bytes of `text` on a character boundary, with a note of what was cut.
pub(crate) fn cap(text: &str) -> String {
    crate::text::cap_text(text, RAW_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_text_is_the_trimmed_output() {
        let reply = parse(b"  ls -la\n", AnswerFormat::Auto).unwrap();
        assert_eq!(reply.output, json!("ls -la"));
        assert_eq!(reply.usage, None);
    }

    #[test]
    fn json_answer_gives_output_and_usage() {
        let text = br#"{"output": {"cmd": "ls"}, "usage": {"prompt_tokens": 7, "completion_tokens": 3, "calls": 2}}"#;
        let reply = parse(text, AnswerFormat::Auto).unwrap();
        assert_eq!(reply.output, json!({"cmd": "ls"}));
        let usage = reply.usage.unwrap();
        assert_eq!((usage.tokens, usage.tokens_in, usage.tokens_out, usage.llm_calls), (10, Some(7), Some(3), 2));
    }

    #[test]
    fn broken_json_and_missing_output_are_malformed_with_raw_kept() {
        let err = parse(br#"{"output": "ls"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.contains("does not parse"), "{}", err.message);
        assert_eq!(err.raw, r#"{"output": "ls"#);
        let err = parse(br#"{"answer": 1}"#, AnswerFormat::Json).unwrap_err();
        assert!(err.message.contains("no `output`"), "{}", err.message);
        let err = parse(br#"{"usage": {"calls": 1}}"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.contains("no `output`"), "{}", err.message);
        let err = parse(b"ls", AnswerFormat::Json).unwrap_err();
        assert!(err.message.contains("answer = \"text\""), "{}", err.message);
    }

    /// In `auto`, text that starts with `{` is an envelope only when it parses into an object
    /// with an envelope field: a shell brace group, `{Paris}` or a JSON answer of the system's
    /// own shape is the answer as text.
    #[test]
    fn auto_takes_only_a_parsing_envelope_as_json() {
        for text in ["{ ls; pwd; } > out.txt", "{Paris}", r#"{"city": "Paris"}"#, "{ echo \"output\"; }"] {
            assert_eq!(parse(text.as_bytes(), AnswerFormat::Auto).unwrap().output, json!(text), "{text}");
        }
        // A broken envelope is not an answer: as text, it would hold the answer it failed to give.
        for text in [r#"{"output": "Paris""#, r#"{"output": "Paris", "usage": {"cost_usd": NaN}}"#, r#"{"outp"#] {
            let err = parse(text.as_bytes(), AnswerFormat::Auto).unwrap_err();
            assert!(err.message.contains("does not parse"), "{text}: {}", err.message);
        }
    }

    /// An `error` beside a fallback `output` is the system's failure, quoted; a negative usage
    /// figure is refused rather than counted as a credit.
    #[test]
    fn a_reported_error_or_a_negative_usage_is_malformed() {
        let err =
            parse(br#"{"output": "Paris", "error": "model crashed,\n fallback"}"#, AnswerFormat::Auto).unwrap_err();
        assert_eq!(err.message, "the system reported an error: model crashed, fallback");
        let err = parse(br#"{"output": "x", "error": {"message": "quota"}}"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.ends_with(": quota"), "{}", err.message);
        for quiet in ["null", "false", "\"\""] {
            let text = format!(r#"{{"output": "Paris", "error": {quiet}}}"#);
            assert_eq!(parse(text.as_bytes(), AnswerFormat::Auto).unwrap().output, json!("Paris"), "{quiet}");
        }
        let err = parse(br#"{"output": "Paris", "usage": {"cost_usd": -5}}"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.contains("`cost_usd` is -5"), "{}", err.message);
        let err = parse(br#"{"output": "Paris", "usage": {"tokens_in": -1}}"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.contains("`tokens_in` is -1"), "{}", err.message);
    }

    #[test]
    fn any_json_output_is_the_answer_but_null_or_blank_is_refused_saying_why() {
        assert_eq!(parse(br#"{"output": 5}"#, AnswerFormat::Auto).unwrap().output, json!(5));
        assert_eq!(parse(br#"{"output": [1, true]}"#, AnswerFormat::Json).unwrap().output, json!([1, true]));
        let err = parse(br#"{"output": null}"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.contains("`output` is null"), "{}", err.message);
        let err = parse(br#"{"output": "  "}"#, AnswerFormat::Auto).unwrap_err();
        assert!(err.message.contains("`output` is empty"), "{}", err.message);
    }

    #[test]
    fn text_format_keeps_json_looking_answers_as_text() {
        let reply = parse(br#"{"a": 1}"#, AnswerFormat::Text).unwrap();
        assert_eq!(reply.output, json!(r#"{"a": 1}"#));
    }

    #[test]
    fn binary_and_empty_answers_are_malformed() {
        assert!(parse(b"\xff\xfe\x00junk", AnswerFormat::Auto).unwrap_err().message.contains("UTF-8"));
        assert!(parse(b" \n", AnswerFormat::Auto).unwrap_err().message.contains("empty"));
    }

    #[test]
    fn cap_cuts_on_a_character_boundary() {
        let text = "é".repeat(RAW_CAP);
        let capped = cap(&text);
        assert!(capped.len() < text.len());
        assert!(capped.contains("bytes truncated"));
        assert!(!capped.contains('\u{FFFD}'));
    }
}
