//! `script` graders: checks in any language. The command gets `{"case": …, "answer": …, "vars":
//! …}` as JSON on stdin and prints `{"pass": bool, "score": 0..1, "reason": "…"}`. It runs as a
//! command SUT does (its own process group, a timeout that kills the group, capped output,
//! a private scratch directory); anything but a grade is an error naming the command.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Answered, CheckError, Grade, Grader, GradingContext, Registration, Spec};
use crate::kinds::eval::dataset::TestCase;
use crate::sut::answer::AnswerFormat;
use crate::sut::command::{CommandConfig, CommandLine, StdinMode};
use crate::sut::config::{AdapterConfig, CallsConfig};
use crate::sut::{Sut, SutConfig, SutContext, SutError, SutRequest};

pub(crate) const GRADERS: &[Registration] = &[Registration { name: "script", build }];

/// Seconds a script may take when the assertion sets no `timeout`.
const DEFAULT_TIMEOUT: f64 = 30.0;

fn build(spec: &Spec<'_>) -> Result<Box<dyn Grader>, CheckError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Fields {
        command: CommandLine,
        #[serde(default)]
        timeout: Option<f64>,
        #[serde(default)]
        env: BTreeMap<String, String>,
    }
    let Fields { command, timeout, env } = spec.parse()?;
    let threshold = spec.threshold.map(|_| spec.unit_threshold(0.0)).transpose()?;
    let shown = match &command {
        CommandLine::Shell(text) => text.clone(),
        CommandLine::Argv(argv) if argv.is_empty() => {
            return Err(CheckError::Fields("`command` is an empty list".into()));
        }
        CommandLine::Argv(argv) => argv.join(" "),
    };
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    if !(timeout.is_finite() && timeout > 0.0 && timeout < 1e9) {
        return Err(CheckError::Fields(format!("timeout {timeout} is not a positive number of seconds")));
    }
    let adapter = AdapterConfig::Command(CommandConfig {
        command,
        stdin: StdinMode::Case,
        cwd: None,
        env,
        // Stdout is the grade, read here; the SUT reader's `{"output": …}` shape does not apply.
        answer: AnswerFormat::Text,
        pass_env: Vec::new(),
    });
    // No retries: a script that fails would fail again; no cache: a grade is not an answer.
    let calls = CallsConfig { timeout, retries: 0, cache: false, ..CallsConfig::default() };
    Ok(Box::new(Script { sut: SutConfig { adapter, calls }, built: OnceLock::new(), shown, threshold }))
}

/// A script grader, run once per answer.
struct Script {
    sut: SutConfig,
    /// The command, built by the first grade and reused by the next ones (the suite's context
    /// does not change between them): one command SUT per script, not one per answer.
    built: OnceLock<Box<dyn Sut>>,
    /// The command as written, for messages.
    shown: String,
    threshold: Option<f64>,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The built command has nothing to show beyond its configuration.
        f.debug_struct("Script").field("sut", &self.sut).field("shown", &self.shown).finish_non_exhaustive()
    }
}

impl Grader for Script {
    fn grade(&self, answer: &Answered<'_>, ctx: &GradingContext) -> Grade {
        if ctx.offline {
            return Grade::Error(format!("script `{}` is not run offline", self.shown));
        }
        let sut = match self.built.get() {
            Some(sut) => sut,
            None => {
                let sut_ctx = SutContext { log: ctx.log.clone(), no_cache: true, ..SutContext::new(&ctx.base_dir) };
                match self.sut.build(&sut_ctx) {
                    // A grade racing this one may have built its own; either is the same command.
                    Ok(sut) => self.built.get_or_init(|| sut),
                    Err(e) => return Grade::Error(format!("script `{}`: {e}", self.shown)),
                }
            }
        };
        let input = json!({"case": case_json(answer.case), "answer": answer.output, "vars": &answer.case.vars});
        let request = SutRequest { id: answer.case.id.clone(), prompt: answer.case.prompt.clone(), case: input };
        let printed = match sut.call(&request) {
            Ok(reply) => reply.output,
            Err(SutError::Timeout { after }) => {
                return Grade::Error(format!(
                    "script `{}` gave no grade within {}s (killed with its process group)",
                    self.shown,
                    after.as_secs_f64()
                ));
            }
            Err(SutError::Cancelled) => return Grade::Error(format!("script `{}` was cancelled", self.shown)),
            Err(SutError::Backend { message, raw }) => {
                let printed =
                    raw.map(|r| format!("; it printed: {}", super::text::shown(r.trim()))).unwrap_or_default();
                return Grade::Error(format!("script `{}`: {message}{printed}", self.shown));
            }
        };
        match super::model::read_grade(&printed) {
            Ok((pass, score, reason)) => {
                let pass = pass && self.threshold.is_none_or(|t| score >= t);
                Grade::Judged { pass, score, reason, label: None }
            }
            Err(e) => Grade::Error(format!("script `{}` printed {e}", self.shown)),
        }
    }

    fn threshold(&self) -> Option<f64> {
        self.threshold
    }
}

/// The case as a script sees it.
fn case_json(case: &TestCase) -> Value {
    let mut object = Map::new();
    object.insert("id".into(), case.id.clone().into());
    object.insert("prompt".into(), case.prompt.clone().into());
    if let Some(expected) = &case.expected {
        object.insert("expected".into(), expected.clone());
    }
    if let Some(command) = &case.expected_command {
        object.insert("expected_command".into(), command.clone().into());
    }
    if let Some(category) = &case.category {
        object.insert("category".into(), category.clone().into());
    }
    if !case.tags.is_empty() {
        object.insert("tags".into(), json!(case.tags));
    }
    Value::Object(object)
}
