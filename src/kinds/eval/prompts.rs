//! Prompt templates (`prompts = [{ name, template | file }]`): one dataset asked through several
//! prompts. Each is a minijinja template over the case's `vars` plus `id` and `prompt`; undefined
//! variables are errors (strict), and every error names the template's file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior};
use serde::{Deserialize, Serialize};

use super::dataset::TestCase;

/// One `prompts` entry as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct PromptConfig {
    /// Names the prompt in case ids (`france[terse]`), the `prompt` field and the grid.
    pub name: String,
    /// The template inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The template in a file, relative to the config file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
}

/// Where a template's text came from, for error positions.
#[derive(Debug, Clone)]
enum Origin {
    /// Inline in the config file; `line` is the line its text starts on (0: unknown).
    Inline { line: usize },
    /// A template file, as written in the config (`prompts/verbose.j2`).
    File { shown: String },
}

/// The suite's prompts, compiled once and rendered per case.
#[derive(Debug)]
pub(crate) struct Prompts {
    env: Environment<'static>,
    list: Vec<(String, Origin)>,
}

/// A template that does not compile or render, with where it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("prompt `{prompt}`: {}{message}", at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default())]
pub(crate) struct PromptError {
    /// Index of the prompt among the suite's `prompts`.
    pub index: usize,
    pub prompt: String,
    /// `file:line` for a template file; none for an inline template (see `config_line`).
    pub at: Option<String>,
    /// For an inline template: the config file's line of the problem, when known.
    pub config_line: Option<usize>,
    pub message: String,
}

/// Characters a prompt or SUT name may not hold: they delimit names in case ids
/// (`france[terse]@small`) and gate words (`score<80@small`, lists split at commas).
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("the name is empty".into());
    }
    name.chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '@' | '[' | ']' | ',' | '<' | '>'))
        .map(|c| format!("`{name}`: a name may not contain {c:?}"))
}

impl Prompts {
    /// Reads and compiles the templates; `inline_line(i)` is the config line where prompt `i`'s
    /// inline text starts (0 when unknown). Files are read relative to `base_dir`.
    pub(crate) fn compile(
        configs: &[PromptConfig],
        base_dir: &Path,
        inline_line: &dyn Fn(usize) -> usize,
    ) -> Result<Prompts, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // Prompts are plain text: nothing is HTML-escaped, whatever a file is called.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        let mut list = Vec::with_capacity(configs.len());
        let mut names = std::collections::HashSet::new();
        for (index, config) in configs.iter().enumerate() {
            let fail = |message: String| PromptError {
                index,
                prompt: config.name.clone(),
                at: None,
                config_line: None,
                message,
            };
            if let Some(problem) = name_problem(&config.name) {
                return Err(fail(problem));
            }
            if !names.insert(config.name.as_str()) {
                return Err(fail("two prompts have this name; names must be unique".into()));
            }
            let (source, origin) = match (&config.template, &config.file) {
                (Some(text), None) => (text.clone(), Origin::Inline { line: inline_line(index) }),
                (None, Some(file)) => {
                    let shown = file.to_string_lossy().replace('\\', "/");
                    let text = crate::fsio::read_text(&base_dir.join(file), crate::fsio::DATASET)
                        .map_err(|e| fail(format!("{shown}: {}", e.problem)))?;
                    (text, Origin::File { shown })
                }
                _ => return Err(fail("give exactly one of `template` (inline) or `file`".into())),
            };
            if let Err(e) = env.add_template_owned(config.name.clone(), source) {
                return Err(locate(index, &config.name, &origin, &e, None));
            }
            list.push((config.name.clone(), origin));
        }
        Ok(Prompts { env, list })
    }

    /// The prompts' names, in order; empty when the suite declares none (each case's own
    /// `prompt` is asked).
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|(name, _)| name.as_str())
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// The text prompt `index` asks for `case`: its vars, `id` and `prompt` filled in.
    pub(crate) fn render(&self, index: usize, case: &TestCase) -> Result<String, PromptError> {
        let Some((name, origin)) = self.list.get(index) else {
            return Ok(case.prompt.clone());
        };
        let mut context: BTreeMap<&str, serde_json::Value> =
            case.vars.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        context.insert("id", case.id.clone().into());
        context.insert("prompt", case.prompt.clone().into());
        let rendered = self.env.get_template(name).and_then(|t| t.render(minijinja::value::Serde(&context)));
        rendered.map_err(|e| {
            let missing = self.missing(name, &context);
            locate(index, name, origin, &e, Some((&case.id, missing)))
        })
    }

    /// Variables the template uses that `context` lacks, for a clearer "undefined" message.
    fn missing(&self, name: &str, context: &BTreeMap<&str, serde_json::Value>) -> Vec<String> {
        let Ok(template) = self.env.get_template(name) else { return Vec::new() };
        let mut missing: Vec<String> =
            template.undeclared_variables(false).into_iter().filter(|v| !context.contains_key(v.as_str())).collect();
        missing.sort();
        missing
    }
}

/// The error with its position: `file:line` for a template file, the config line for inline
/// text (the template's line counted from where the text starts).
fn locate(
    index: usize,
    prompt: &str,
    origin: &Origin,
    e: &minijinja::Error,
    case: Option<(&str, Vec<String>)>,
) -> PromptError {
    let mut message = match (e.kind(), &case) {
        (minijinja::ErrorKind::UndefinedError, Some((_, missing))) if !missing.is_empty() => {
            let names: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
            format!("undefined variable {} (give it in the case's `vars`)", names.join(", "))
        }
        _ => match e.detail() {
            Some(detail) => format!("{}: {detail}", e.kind()),
            None => e.kind().to_string(),
        },
    };
    if let Some((id, _)) = case {
        message.push_str(&format!(" (case `{id}`)"));
    }
    let line = e.line();
    let (at, config_line) = match origin {
        Origin::File { shown } => (Some(line.map_or_else(|| shown.clone(), |l| format!("{shown}:{l}"))), None),
        Origin::Inline { line: 0 } => (None, None),
        Origin::Inline { line: start } => (None, Some(start + line.unwrap_or(1).saturating_sub(1))),
    };
    PromptError { index, prompt: prompt.to_string(), at, config_line, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, vars: &[(&str, &str)]) -> TestCase {
        TestCase {
            id: id.into(),
            prompt: "the case's own".into(),
            vars: vars.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect(),
            ..TestCase::default()
        }
    }

    fn inline(name: &str, text: &str) -> PromptConfig {
        PromptConfig { name: name.into(), template: Some(text.into()), file: None }
    }

    #[test]
    fn renders_vars_id_and_prompt() {
        let prompts = Prompts::compile(
            &[inline("terse", "Capital of {{ country }}? ({{ id }}; {{ prompt }})")],
            Path::new("."),
            &|_| 7,
        )
        .unwrap();
        assert_eq!(prompts.names().collect::<Vec<_>>(), ["terse"]);
        assert_eq!(
            prompts.render(0, &case("fr", &[("country", "France")])).unwrap(),
            "Capital of France? (fr; the case's own)"
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("prompts")).unwrap();
        std::fs::write(dir.path().join("prompts/v.j2"), "Please,\nanswer about {{ country }}\nand {{ cuntry }}.\n")
            .unwrap();
        let file = PromptConfig { name: "verbose".into(), template: None, file: Some("prompts/v.j2".into()) };
        let prompts = Prompts::compile(&[inline("terse", "{{ country }}"), file], dir.path(), &|_| 12).unwrap();
        let err = prompts.render(1, &case("fr", &[("country", "France")])).unwrap_err();
        assert_eq!(err.at.as_deref(), Some("prompts/v.j2:3"), "{err}");
        assert!(err.message.contains("undefined variable `cuntry`") && err.message.contains("case `fr`"), "{err}");
        // Inline: the config line where the text starts, plus the template's own line.
        let err = Prompts::compile(&[inline("bad", "one\ntwo {{ oops(")], dir.path(), &|_| 12).unwrap_err();
        assert_eq!(err.config_line, Some(13), "{err}");
        assert!(err.message.contains("syntax error"), "{err}");
        let err = Prompts::compile(&[inline("a b", "x")], dir.path(), &|_| 0).unwrap_err();
        assert!(err.message.contains("may not contain"), "{err}");
        let err = Prompts::compile(&[inline("a", "x"), inline("a", "y")], dir.path(), &|_| 0).unwrap_err();
        assert!(err.message.contains("unique"), "{err}");
        let none = PromptConfig { name: "n".into(), template: None, file: None };
        assert!(Prompts::compile(&[none], dir.path(), &|_| 0).unwrap_err().message.contains("exactly one"));
    }

    #[test]
    fn nothing_is_html_escaped() {
        let prompts = Prompts::compile(&[inline("p", "{{ q }}")], Path::new("."), &|_| 0).unwrap();
        assert_eq!(prompts.render(0, &case("x", &[("q", "a < b & \"c\"")])).unwrap(), "a < b & \"c\"");
    }
}
