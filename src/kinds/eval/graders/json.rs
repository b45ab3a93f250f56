//! Structured-output graders: `is-json`, `json-schema` (JSON Schema, 2020-12 unless the schema's
//! `$schema` names another draft, through the `jsonschema` crate) and `json-equal`, on the whole
//! answer or, with `path`, on the sub-document a JSON Pointer (RFC 6901) names.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::text::shown;
use super::{Answered, CheckError, Grade, Grader, GradingContext, Registration, Spec};

pub(crate) const GRADERS: &[Registration] = &[
    Registration { name: "json-equal", build: build_json_equal },
    Registration { name: "is-json", build: build_is_json },
    Registration { name: "json-schema", build: build_json_schema },
];

/// The answer as JSON: a JSON value as is; a string parsed as JSON when it is JSON (else the
/// string itself).
pub(crate) fn as_json(answer: &Value) -> Value {
    strict_json(answer).unwrap_or_else(|| answer.clone())
}

/// The answer as JSON, or `None` when it is text that does not parse.
fn strict_json(answer: &Value) -> Option<Value> {
    match answer {
        Value::String(s) => serde_json::from_str(s.trim()).ok(),
        other => Some(other.clone()),
    }
}

/// JSON equality with object key order free (serde_json maps already are) and numbers compared
/// by value, so `1` equals `1.0`.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn build_json_equal(spec: &Spec<'_>) -> Result<Box<dyn Grader>, CheckError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Fields {
        value: Value,
        #[serde(default)]
        path: Option<String>,
    }
    spec.no_threshold()?;
    let Fields { value, path } = spec.parse()?;
    if let Some(path) = &path
        && !path.is_empty()
        && !path.starts_with('/')
    {
        return Err(CheckError::Fields(format!(
            "path `{path}` is not a JSON Pointer: it starts with `/` (e.g. `/answer/city`), or is empty for the whole document"
        )));
    }
    Ok(Box::new(JsonEqual { value, path }))
}

/// The answer (or the sub-document at `path`) equals the value as JSON.
#[derive(Debug)]
struct JsonEqual {
    value: Value,
    path: Option<String>,
}

impl Grader for JsonEqual {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        let Some(path) = &self.path else {
            return Grade::check(json_equal(&self.value, &as_json(answer.output)), || {
                format!("expected JSON {}, got `{}`", self.value, shown(&answer.text))
            });
        };
        let Some(document) = strict_json(answer.output) else {
            return Grade::check(false, || format!("`{}` is not JSON", shown(&answer.text)));
        };
        match document.pointer(path) {
            Some(found) => Grade::check(json_equal(&self.value, found), || {
                format!("expected JSON {} at {path}, got {}", self.value, shown(&found.to_string()))
            }),
            None => Grade::check(false, || format!("the answer has nothing at {path}")),
        }
    }
}

fn build_is_json(spec: &Spec<'_>) -> Result<Box<dyn Grader>, CheckError> {
    spec.no_threshold()?;
    if let Some(key) = spec.fields.keys().next() {
        return Err(CheckError::Fields(format!("unknown field `{key}`: is-json takes no fields")));
    }
    Ok(Box::new(IsJson))
}

/// The answer is JSON (a JSON answer, or text that parses as JSON).
#[derive(Debug)]
struct IsJson;

impl Grader for IsJson {
    fn grade(&self, answer: &Answered<'_>, _: &GradingContext) -> Grade {
        match answer.output {
            Value::String(s) => match serde_json::from_str::<Value>(s.trim()) {
                Ok(_) => Grade::check(true, String::new),
                Err(e) => Grade::check(false, || {
                    format!("`{}` is not JSON ({})", shown(&answer.text), crate::text::json_error_text(&e))
                }),
            },
            _ => Grade::check(true, String::new),
        }
    }
}

fn build_json_schema(spec: &Spec<'_>) -> Result<Box<dyn Grader>, CheckError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Fields {
        #[serde(default)]
        value: Option<Value>,
        #[serde(default)]
        file: Option<PathBuf>,
    }
    spec.no_threshold()?;
    let Fields { value, file } = spec.parse()?;
    let grader = match (value, file) {
        (Some(schema), None) => {
            let compiled = OnceLock::new();
            let _ = compiled.set(compile_schema(&schema).map_err(CheckError::Fields)?);
            JsonSchema { file: None, compiled }
        }
        (None, Some(file)) => JsonSchema { file: Some(file), compiled: OnceLock::new() },
        _ => {
            return Err(CheckError::Fields(
                "give the schema as `value = {…}` or `file = \"schema.json\"` (one of them)".into(),
            ));
        }
    };
    Ok(Box::new(grader))
}

fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| format!("invalid JSON Schema: {e}"))
}

/// The answer is valid against a JSON Schema, inline or read from a file (relative to the
/// configuration file) before the first case is asked.
#[derive(Debug)]
struct JsonSchema {
    file: Option<PathBuf>,
    compiled: OnceLock<jsonschema::Validator>,
}

/// Validation errors named in a reason, at most.
const ERRORS_SHOWN: usize = 3;

impl Grader for JsonSchema {
    fn prepare(&self, ctx: &GradingContext) -> Result<(), String> {
        let Some(file) = &self.file else { return Ok(()) };
        if self.compiled.get().is_some() {
            return Ok(());
        }
        let path = ctx.base_dir.join(file);
        let text = crate::fsio::read_text(&path, crate::fsio::DATASET)
            .map_err(|e| format!("schema {}: {}", file.display(), e.problem))?;
        let schema: Value = serde_json::from_str(&text)
            .map_err(|e| format!("schema {}:{}: {}", file.display(), e.line(), crate::text::json_error_text(&e)))?;
        let validator = compile_schema(&schema).map_err(|e| format!("schema {}: {e}", file.display()))?;
        let _ = self.compiled.set(validator);
        Ok(())
    }

    fn grade(&self, answer: &Answered<'_>, ctx: &GradingContext) -> Grade {
        if self.compiled.get().is_none()
            && let Err(e) = self.prepare(ctx)
        {
            return Grade::Error(e);
        }
        let Some(validator) = self.compiled.get() else {
            return Grade::Error("the schema could not be compiled".into());
        };
        let Some(document) = strict_json(answer.output) else {
            return Grade::check(false, || format!("`{}` is not JSON", shown(&answer.text)));
        };
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .take(ERRORS_SHOWN + 1)
            .map(|e| {
                let at = e.instance_path().to_string();
                format!("{}: {e}", if at.is_empty() { "/".to_string() } else { at })
            })
            .collect();
        Grade::check(errors.is_empty(), || {
            let more = if errors.len() > ERRORS_SHOWN { "; …" } else { "" };
            format!("not valid against the schema: {}{more}", errors[..errors.len().min(ERRORS_SHOWN)].join("; "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Judgement, checks_for, judge};
    use super::*;
    use crate::kinds::eval::dataset::TestCase;
    use serde_json::json;

    fn judge_json(toml_text: &str, answer: Value) -> Judgement {
        super::super::judge_toml(toml_text, answer, None).judgement
    }

    #[test]
    fn json_equal_at_a_pointer() {
        let spec = "assert = [{ type = 'json-equal', path = '/answer/city', value = 'Paris' }]";
        assert_eq!(judge_json(spec, json!(r#"{"answer": {"city": "Paris"}, "n": 1}"#)), Judgement::Pass);
        let wrong = judge_json(spec, json!(r#"{"answer": {"city": "Lyon"}}"#));
        assert!(wrong.message().unwrap().contains("at /answer/city"), "{wrong:?}");
        let missing = judge_json(spec, json!(r#"{"answer": {}}"#));
        assert!(missing.message().unwrap().contains("nothing at /answer/city"), "{missing:?}");
        assert!(judge_json(spec, json!("Paris")).message().unwrap().contains("is not JSON"));
        // `~1` is `/` in a key (RFC 6901).
        let escaped = "assert = [{ type = 'json-equal', path = '/a~1b/0', value = 2 }]";
        assert_eq!(judge_json(escaped, json!({"a/b": [2.0]})), Judgement::Pass);
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'json-equal', path = 'a.b', value = 1 }]")
                .unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("JSON Pointer"));
    }

    #[test]
    fn is_json_and_json_schema() {
        assert_eq!(judge_json("assert = [{ type = 'is-json' }]", json!(" [1, 2] ")), Judgement::Pass);
        assert_eq!(judge_json("assert = [{ type = 'is-json' }]", json!({"a": 1})), Judgement::Pass);
        assert_eq!(judge_json("assert = [{ type = 'is-json' }]", json!("{a: 1}")).code(), "incorrect");
        let schema = "assert = [{ type = 'json-schema', value = { type = 'object', required = ['city'], properties = { city = { type = 'string' } } } }]";
        assert_eq!(judge_json(schema, json!(r#"{"city": "Paris"}"#)), Judgement::Pass);
        let bad = judge_json(schema, json!(r#"{"city": 3}"#));
        assert!(bad.message().unwrap().contains("/city"), "{bad:?}");
        assert!(judge_json(schema, json!("{}")).message().unwrap().contains("city"));
        let case: TestCase = toml::from_str(
            "id = 'x'\nprompt = 'p'\nassert = [{ type = 'json-schema', value = { type = 'no-such-type' } }]",
        )
        .unwrap();
        assert!(checks_for(&case).unwrap_err().to_string().contains("invalid JSON Schema"));
    }

    #[test]
    fn a_schema_file_is_read_relative_to_the_config_and_its_problems_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.json"), r#"{"type": "array", "minItems": 2}"#).unwrap();
        let ctx = GradingContext { base_dir: dir.path().to_path_buf(), ..GradingContext::default() };
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'json-schema', file = 's.json' }]").unwrap();
        let checks = checks_for(&case).unwrap();
        super::super::prepare([("x", checks.as_slice())], &ctx).unwrap();
        let judged = |answer: Value| judge(&checks, &Answered::bare(&case, &answer), &ctx, None).judgement;
        assert_eq!(judged(json!("[1, 2]")), Judgement::Pass);
        assert_eq!(judged(json!("[1]")).code(), "incorrect");
        let case: TestCase =
            toml::from_str("id = 'x'\nprompt = 'p'\nassert = [{ type = 'json-schema', file = 'none.json' }]").unwrap();
        let checks = checks_for(&case).unwrap();
        let err = super::super::prepare([("x", checks.as_slice())], &ctx).unwrap_err();
        assert!(err.contains("case `x`") && err.contains("none.json"), "{err}");
    }
}
