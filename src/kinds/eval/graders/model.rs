//! Model-graded assertions: `llm-rubric` (does the answer meet a rubric?) and `factuality`
//! (is it consistent with a reference answer?). The grader model is `[suite.grader]`, any SUT
//! adapter; it is asked with a minijinja prompt (built in, or the user's) and must reply with
//! `{"pass": bool, "score": 0..1, "reason": "…"}`, whose reasoning is kept on the case.

use std::path::Path;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::{Answered, CheckError, Grade, Grader, GradingContext, Registration, Spec};
use crate::sut::{Sut, SutConfig, SutContext, SutError, SutRequest};

pub(crate) const GRADERS: &[Registration] = &[
    Registration { name: "llm-rubric", build: |s| build(s, Kind::Rubric) },
    Registration { name: "factuality", build: |s| build(s, Kind::Factuality) },
];

/// The built-in rubric prompt; `rubric-prompt` in `[suite.grader]` replaces it.
pub(crate) const RUBRIC_PROMPT: &str = r#"You are grading the output of an AI system against a rubric.

<rubric>
{{ rubric }}
</rubric>

<question>
{{ prompt }}
</question>

<output>
{{ answer }}
</output>

Decide whether the output meets every requirement of the rubric. Reply with one JSON object and nothing else:
{"reason": "<why, in one or two sentences>", "pass": <true or false>, "score": <a number from 0 to 1>}"#;

/// The built-in closed-QA prompt; `factuality-prompt` in `[suite.grader]` replaces it.
pub(crate) const FACTUALITY_PROMPT: &str = r#"You are comparing a submitted answer to an expert answer on a given question.

<question>
{{ prompt }}
</question>

<expert>
{{ reference }}
</expert>

<submission>
{{ answer }}
</submission>

The submission passes when it is factually consistent with the expert answer: it may be a subset or a superset of it, or word it differently, but it must not contradict it or leave out what the question asks for. Reply with one JSON object and nothing else:
{"reason": "<why, in one or two sentences>", "pass": <true or false>, "score": <a number from 0 to 1>}"#;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Rubric,
    Factuality,
}

impl Kind {
    fn template(self) -> &'static str {
        match self {
            Kind::Rubric => "rubric",
            Kind::Factuality => "factuality",
        }
    }
}

fn build(spec: &Spec<'_>, kind: Kind) -> Result<Box<dyn Grader>, CheckError> {
    let value = spec.optional_value()?;
    let text = match kind {
        Kind::Rubric => value.ok_or_else(|| CheckError::Fields("needs `value`: the rubric".into()))?,
        Kind::Factuality => spec.reference(value)?,
    };
    let threshold = spec.threshold.map(|_| spec.unit_threshold(0.0)).transpose()?;
    Ok(Box::new(ModelGraded { kind, text, threshold }))
}

/// One model-graded assertion: the rubric or the reference answer, and an optional pass mark
/// the grader's score must also reach.
#[derive(Debug)]
struct ModelGraded {
    kind: Kind,
    text: String,
    threshold: Option<f64>,
}

impl Grader for ModelGraded {
    fn grade(&self, answer: &Answered<'_>, ctx: &GradingContext) -> Grade {
        if ctx.offline {
            return Grade::Error("the grader model is not called offline".into());
        }
        let Some(model) = &ctx.grader else {
            return Grade::Error("no [suite.grader] model".into());
        };
        let case = answer.case;
        let expected = case.expected.as_ref().map(super::answer_text);
        let context = json!({
            "rubric": self.text,
            "reference": self.text,
            "answer": answer.text,
            "output": answer.text,
            "prompt": case.prompt,
            "id": case.id,
            "expected": expected,
            "vars": &case.vars,
        });
        let prompt = match model.render(self.kind, &context) {
            Ok(prompt) => prompt,
            Err(e) => return Grade::Error(e),
        };
        let mut request_case = context.clone();
        request_case["grader_prompt"] = Value::String(prompt.clone());
        let request = SutRequest { id: case.id.clone(), prompt, case: request_case };
        let reply = match model.sut.call(&request) {
            Ok(reply) => reply,
            Err(SutError::Timeout { after }) => {
                return Grade::Error(format!("the grader model gave no answer within {}s", after.as_secs_f64()));
            }
            Err(e) => return Grade::Error(format!("the grader model failed: {e}")),
        };
        match read_grade(&reply.output) {
            Ok((pass, score, reason)) => {
                let pass = pass && self.threshold.is_none_or(|t| score >= t);
                Grade::Judged { pass, score, reason, label: None }
            }
            Err(e) => Grade::Error(format!("the grader model answered {e}")),
        }
    }

    fn threshold(&self) -> Option<f64> {
        self.threshold
    }

    fn prepare(&self, ctx: &GradingContext) -> Result<(), String> {
        if ctx.grader.is_none() && !ctx.offline {
            return Err(format!(
                "`{}` needs a grader model: add a [suite.grader] table (any SUT type; see docs/evals.md)",
                if self.kind == Kind::Rubric { "llm-rubric" } else { "factuality" }
            ));
        }
        Ok(())
    }
}

/// A grade as graders (models, scripts) reply it: `{"pass": bool, "score": 0..1, "reason": "…"}`,
/// as a JSON value or as text holding one JSON object (models wrap it in prose or a code fence).
/// `score` defaults to 1 or 0 by `pass`. The error says what is wrong, with the text.
pub(crate) fn read_grade(output: &Value) -> Result<(bool, f64, Option<String>), String> {
    let object = match output {
        Value::Object(_) => output.clone(),
        Value::String(text) => {
            let trimmed = text.trim();
            let parsed = serde_json::from_str::<Value>(trimmed).ok().or_else(|| {
                let (start, end) = (trimmed.find('{')?, trimmed.rfind('}')?);
                serde_json::from_str(trimmed.get(start..=end)?).ok()
            });
            parsed.filter(Value::is_object).ok_or_else(|| not_a_grade(output))?
        }
        _ => return Err(not_a_grade(output)),
    };
    let Some(pass) = object.get("pass").and_then(Value::as_bool) else {
        return Err(format!("a grade without a boolean `pass`: {}", super::text::shown(&object.to_string())));
    };
    let score = match object.get("score") {
        None | Some(Value::Null) => {
            if pass {
                1.0
            } else {
                0.0
            }
        }
        Some(value) => match value.as_f64().filter(|s| (0.0..=1.0).contains(s)) {
            Some(score) => score,
            None => return Err(format!("a score that is not a number from 0 to 1: {value}")),
        },
    };
    let reason = match object.get("reason") {
        Some(Value::String(reason)) => Some(reason.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    Ok((pass, score, reason))
}

fn not_a_grade(output: &Value) -> String {
    let text = match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!(
        "something that is not a grade (expected {{\"pass\": bool, \"score\": 0..1, \"reason\": \"…\"}}): `{}`",
        super::text::shown(text.trim())
    )
}

/// `[suite.grader]`: a system under test's keys (any adapter) plus the prompts it is asked with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GraderConfig {
    pub sut: SutConfig,
    /// A minijinja template (inline when it holds `{{`, else a file beside the configuration).
    pub rubric_prompt: Option<String>,
    pub factuality_prompt: Option<String>,
}

/// The keys of `[suite.grader]` that are not SUT keys.
const PROMPT_KEYS: [&str; 2] = ["rubric-prompt", "factuality-prompt"];

impl<'de> Deserialize<'de> for GraderConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<GraderConfig, D::Error> {
        let mut table = Map::<String, Value>::deserialize(deserializer)?;
        let mut prompt = |key: &str| match table.remove(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(D::Error::custom(format!("grader `{key}` must be a string, not {other}"))),
        };
        let rubric_prompt = prompt(PROMPT_KEYS[0])?;
        let factuality_prompt = prompt(PROMPT_KEYS[1])?;
        // A command grader prints its verdict (`{"pass": …}`) as its whole answer; read as a SUT
        // answer (`auto`), a leading `{` would have to be `{"output": …}`. Text is what a grader
        // means unless it says otherwise.
        if table.get("type").and_then(Value::as_str) == Some("command") && !table.contains_key("answer") {
            table.insert("answer".into(), Value::String("text".into()));
        }
        let sut = SutConfig::deserialize(Value::Object(table)).map_err(|e| D::Error::custom(format!("grader {e}")))?;
        Ok(GraderConfig { sut, rubric_prompt, factuality_prompt })
    }
}

impl Serialize for GraderConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let mut table = match serde_json::to_value(&self.sut).map_err(S::Error::custom)? {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        for (key, value) in PROMPT_KEYS.iter().zip([&self.rubric_prompt, &self.factuality_prompt]) {
            if let Some(value) = value {
                table.insert(key.to_string(), Value::String(value.clone()));
            }
        }
        table.serialize(serializer)
    }
}

/// The grader model, built, with its prompts compiled.
pub(crate) struct GraderModel {
    sut: Box<dyn Sut>,
    prompts: minijinja::Environment<'static>,
}

impl GraderConfig {
    /// Builds the grader model and compiles its prompts; errors name the key.
    pub(crate) fn build(&self, ctx: &SutContext) -> Result<GraderModel, String> {
        let sut = self.sut.build(ctx).map_err(|e| e.to_string().replacen("[suite.sut]", "[suite.grader]", 1))?;
        let mut prompts = minijinja::Environment::new();
        // A misspelt variable is an error, not an empty string in the prompt.
        prompts.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for (kind, key, given, default) in [
            (Kind::Rubric, PROMPT_KEYS[0], &self.rubric_prompt, RUBRIC_PROMPT),
            (Kind::Factuality, PROMPT_KEYS[1], &self.factuality_prompt, FACTUALITY_PROMPT),
        ] {
            let source = match given {
                None => default.to_string(),
                Some(text) => template_source(text, &ctx.base_dir).map_err(|e| format!("[suite.grader] {key}: {e}"))?,
            };
            prompts
                .add_template_owned(kind.template(), source)
                .map_err(|e| format!("[suite.grader] {key}: {}", template_error(&e)))?;
        }
        Ok(GraderModel { sut, prompts })
    }
}

/// An inline template (it holds `{{`), else the text of the file it names.
fn template_source(text: &str, base_dir: &Path) -> Result<String, String> {
    if text.contains("{{") {
        return Ok(text.to_string());
    }
    let path = base_dir.join(text);
    crate::fsio::read_text(&path, crate::fsio::DATASET)
        .map_err(|e| format!("{text}: {} (an inline template must use `{{{{ … }}}}`)", e.problem))
}

fn template_error(e: &minijinja::Error) -> String {
    match e.line() {
        Some(line) => format!("line {line}: {}", e.detail().unwrap_or(&e.to_string())),
        None => e.to_string(),
    }
}

impl GraderModel {
    fn render(&self, kind: Kind, context: &Value) -> Result<String, String> {
        let template = self.prompts.get_template(kind.template()).map_err(|e| e.to_string())?;
        template
            .render(minijinja::Value::from(minijinja::value::Serde(context)))
            .map_err(|e| format!("the {} prompt: {}", kind.template(), template_error(&e)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_grader_reads_its_verdict_as_text_unless_it_says_otherwise() {
        use crate::sut::answer::AnswerFormat;
        use crate::sut::config::AdapterConfig;
        let format = |toml: &str| {
            let grader: super::GraderConfig = toml::from_str(toml).unwrap();
            match grader.sut.adapter {
                AdapterConfig::Command(c) => c.answer,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(format("type = \"command\"\ncommand = \"python3 g.py\""), AnswerFormat::Text);
        assert_eq!(format("type = \"command\"\ncommand = \"python3 g.py\"\nanswer = \"auto\""), AnswerFormat::Auto);
    }

    use super::*;

    #[test]
    fn grades_are_read_from_json_or_text_around_it() {
        assert_eq!(read_grade(&json!({"pass": true})).unwrap(), (true, 1.0, None));
        let fenced = json!("Sure.\n```json\n{\"reason\": \"names Paris\", \"pass\": false, \"score\": 0.4}\n```");
        assert_eq!(read_grade(&fenced).unwrap(), (false, 0.4, Some("names Paris".into())));
        assert!(read_grade(&json!("yes")).unwrap_err().contains("not a grade"));
        assert!(read_grade(&json!({"score": 1})).unwrap_err().contains("boolean `pass`"));
        assert!(read_grade(&json!({"pass": true, "score": 7})).unwrap_err().contains("0 to 1"));
    }

    #[test]
    fn grader_config_takes_sut_keys_and_prompts() {
        let config: GraderConfig =
            toml::from_str("type = 'command'\ncommand = 'x'\ntimeout = 3\nrubric-prompt = 'Grade {{ answer }}'\n")
                .unwrap();
        assert_eq!(config.rubric_prompt.as_deref(), Some("Grade {{ answer }}"));
        assert_eq!(config.sut.calls.timeout, 3.0);
        let again: GraderConfig = serde_json::from_value(serde_json::to_value(&config).unwrap()).unwrap();
        assert_eq!(again, config);
        let err = toml::from_str::<GraderConfig>("type = 'command'\ncommand = 'x'\nrubric = 1\n").unwrap_err();
        assert!(err.to_string().contains("unknown field `rubric`"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let ctx = SutContext::new(dir.path());
        let bad: GraderConfig =
            toml::from_str("type = 'command'\ncommand = 'x'\nrubric-prompt = '{{ answer'\n").unwrap();
        assert!(bad.build(&ctx).err().unwrap().contains("rubric-prompt"));
        let missing: GraderConfig =
            toml::from_str("type = 'command'\ncommand = 'x'\nfactuality-prompt = 'grader.j2'\n").unwrap();
        assert!(missing.build(&ctx).err().unwrap().contains("grader.j2"));
    }
}
