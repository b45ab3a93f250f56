//! Reading a `package.json` `test` script the way the shell would run it.
//!
//! A script such as `pnpm lint && vitest run --typecheck` is split on `&&`, `||`, `;` and
//! newlines (outside quotes); `npm run x` / `pnpm x` / `yarn x` steps are expanded into the named
//! script. Each step is either a framework invocation (kept with every flag and its `VAR=value`
//! environment) or another step, which the node runner skips with a note or runs on request.

use serde_json::{Map, Value};

use super::Manifest;
use super::framework::{Framework, framework_args};

/// How deep `npm run other-script` steps are followed (guards against scripts that call each other).
const MAX_DEPTH: usize = 4;

/// One command of a script.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    /// The command as written in the script (after expanding `npm run` references).
    pub text: String,
    /// Leading `VAR=value` assignments (also after `cross-env`).
    pub env: Vec<(String, String)>,
    /// The words after the assignments: program first.
    pub words: Vec<String>,
}

/// A script split into steps; `None` when a step cannot be read as words (pipes, redirections,
/// subshells, `$(...)`, unbalanced quotes): such a script is not replayed at all.
pub(crate) fn steps(script: &str, scripts: &Map<String, Value>) -> Option<Vec<Step>> {
    steps_at(script, scripts, 0)
}

fn steps_at(script: &str, scripts: &Map<String, Value>, depth: usize) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    for text in split_commands(script)? {
        let step = parse_step(&text)?;
        match referenced_script(&step, scripts) {
            Some(inner) if depth < MAX_DEPTH => out.extend(steps_at(inner, scripts, depth + 1)?),
            _ => out.push(step),
        }
    }
    Some(out)
}

/// `npm run NAME`, `npm test`, `pnpm [run] NAME`, `yarn [run] NAME` → the script NAME, when the
/// manifest has it and the step passes no extra arguments.
fn referenced_script<'a>(step: &Step, scripts: &'a Map<String, Value>) -> Option<&'a str> {
    let words: Vec<&str> = step.words.iter().map(String::as_str).collect();
    let name = match words.as_slice() {
        ["npm", "run" | "run-script", name] | ["pnpm" | "yarn", "run", name] => *name,
        ["npm", "test"] | ["npm", "t"] => "test",
        // `pnpm lint` and `yarn lint` run the script when one has that name.
        ["pnpm" | "yarn", name] if !name.starts_with('-') => *name,
        _ => return None,
    };
    scripts.get(name).and_then(Value::as_str)
}

/// Splits on `&&`, `||`, `;` and newlines outside quotes. `None` for a pipe, a redirection, a
/// subshell, a command substitution or a background `&`: the script's meaning depends on the shell.
fn split_commands(script: &str) -> Option<Vec<String>> {
    let mut commands = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            current.push(c);
            if c == q {
                quote = None;
            } else if c == '\\' && q == '"' {
                current.push(chars.next()?);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                current.push(c);
            }
            '\\' => {
                current.push(c);
                current.push(chars.next()?);
            }
            '&' | '|' if chars.peek() == Some(&c) => {
                chars.next();
                commands.push(std::mem::take(&mut current));
            }
            ';' | '\n' => commands.push(std::mem::take(&mut current)),
            '&' | '|' | '<' | '>' | '(' | ')' | '`' | '$' => return None,
            c => current.push(c),
        }
    }
    if quote.is_some() {
        return None;
    }
    commands.push(current);
    Some(commands.into_iter().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
}

fn parse_step(text: &str) -> Option<Step> {
    let mut words = split_words(text)?.into_iter().peekable();
    let mut env = Vec::new();
    while let Some(word) = words.peek() {
        if word == "cross-env" {
            words.next();
        } else if let Some((name, value)) = assignment(word) {
            env.push((name, value));
            words.next();
        } else {
            break;
        }
    }
    Some(Step { text: text.to_string(), env, words: words.collect() })
}

/// `NAME=value` with a shell variable name.
fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}

/// Splits a command line into words with shell-like single and double quotes.
pub(crate) fn split_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => current.push(chars.next()?),
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                current.push(chars.next()?);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(current);
    }
    Some(words)
}

/// What the `test` script runs, read step by step.
#[derive(Debug, Default)]
pub(super) struct ScriptPlan {
    /// Each invocation of the framework: its environment and arguments (fcorr's flags removed).
    pub(super) runs: Vec<FrameworkRun>,
    /// Steps before the first framework invocation (lint, tsc...).
    pub(super) before: Vec<Step>,
    /// Other steps after it (coverage upload...).
    pub(super) after: Vec<Step>,
    /// Steps that run the workspace members' tests (`npm test --workspaces`): each member is a
    /// suite of its own instead.
    pub(super) fan_outs: Vec<Step>,
    /// Why the script is not replayed, when it is not.
    pub(super) unreadable: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct FrameworkRun {
    pub(super) env: Vec<(String, String)>,
    pub(super) args: Vec<String>,
    /// The invocation as a person reads it (`jest --env edge-runtime`), naming its case group.
    pub(super) label: String,
}

impl ScriptPlan {
    pub(super) fn read(manifest: &Manifest, framework: Framework) -> ScriptPlan {
        let Some(text) = manifest.script("test").filter(|t| !t.trim().is_empty()) else {
            return ScriptPlan::default();
        };
        let Some(steps) = steps(text, &manifest.scripts) else {
            return ScriptPlan {
                unreadable: Some(format!(
                    "scripts.test `{text}` uses pipes, redirections or substitutions fcorr does not replay; {} runs \
                     with its defaults — set `commands.test` and `reports` to run it exactly",
                    framework.label()
                )),
                ..ScriptPlan::default()
            };
        };
        let mut plan = ScriptPlan::default();
        for step in steps {
            match framework_args(&step.words, framework) {
                Some(args) => {
                    let label = std::iter::once(framework.label().to_string())
                        .chain(args.iter().map(|a| crate::execute::process::shell_quote(a)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    plan.runs.push(FrameworkRun { env: step.env, args, label });
                }
                None if plan.runs.is_empty() => plan.before.push(step),
                None => plan.after.push(step),
            }
        }
        if plan.runs.is_empty() {
            plan.unreadable = Some(format!(
                "scripts.test `{text}` does not call {} directly; it runs with its defaults",
                framework.label()
            ));
            plan.before.clear();
            plan.after.clear();
        }
        plan
    }

    /// Moves the workspace fan-outs (`npm test --workspaces`, `pnpm -r test`) out of the other
    /// steps, for a workspace root: the members they run are suites of their own, so they are not
    /// run in the build phase (`run-script-steps`) nor named as skipped.
    pub(super) fn separate_fan_outs(&mut self) {
        let fan_outs = &mut self.fan_outs;
        for steps in [&mut self.before, &mut self.after] {
            let (fans, others): (Vec<Step>, Vec<Step>) =
                std::mem::take(steps).into_iter().partition(|step| super::fanout::fan_out(step).is_some());
            fan_outs.extend(fans);
            *steps = others;
        }
    }

    /// The note on the test phase: steps not run, several runs, a script not replayed.
    pub(super) fn note(&self, run_steps: bool) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(why) = &self.unreadable {
            parts.push(why.clone());
        }
        let quoted = |steps: &[Step]| steps.iter().map(|s| format!("`{}`", s.text)).collect::<Vec<_>>();
        if !self.fan_outs.is_empty() {
            parts.push(format!(
                "{} run{} the workspace members' tests: each member runs as a suite of its own",
                quoted(&self.fan_outs).join(", "),
                if self.fan_outs.len() == 1 { "s" } else { "" }
            ));
        }
        if !self.before.is_empty() && !run_steps {
            parts.push(format!(
                "skipped script step(s) {} (set `run-script-steps = true` to run them in the build phase)",
                quoted(&self.before).join(", ")
            ));
        }
        if !self.after.is_empty() {
            parts.push(format!("skipped script step(s) after the tests: {}", quoted(&self.after).join(", ")));
        }
        if self.runs.len() > 1 {
            let labels: Vec<String> = self.runs.iter().map(|r| format!("[{}]", r.label)).collect();
            parts.push(format!(
                "scripts.test runs {} {} times; each run's cases are a group named {}",
                self.runs.first().map(|r| r.label.split(' ').next().unwrap_or_default()).unwrap_or_default(),
                self.runs.len(),
                labels.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), Value::String(v.to_string()))).collect()
    }

    fn texts(script: &str, scripts: &Map<String, Value>) -> Vec<String> {
        steps(script, scripts).unwrap().into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn splits_on_and_or_semicolon_and_newline_outside_quotes() {
        let none = Map::new();
        assert_eq!(texts("pnpm lint && vitest run --typecheck", &none), ["pnpm lint", "vitest run --typecheck"]);
        assert_eq!(texts("a; b || c\nd", &none), ["a", "b", "c", "d"]);
        assert_eq!(texts("jest -t 'a && b'", &none), ["jest -t 'a && b'"]);
        assert_eq!(texts("jest && jest --env edge-runtime", &none), ["jest", "jest --env edge-runtime"]);
    }

    #[test]
    fn shell_constructs_make_the_script_unreadable() {
        let none = Map::new();
        for script in ["jest | tee out", "jest > out", "(cd a && jest)", "jest $(cat args)", "jest &", "jest 'x"] {
            assert_eq!(steps(script, &none), None, "{script}");
        }
    }

    #[test]
    fn environment_assignments_are_kept_apart_from_the_words() {
        let step =
            &steps("cross-env NODE_ENV=test NODE_OPTIONS=--experimental-vm-modules jest --ci", &Map::new()).unwrap()[0];
        assert_eq!(
            step.env,
            [("NODE_ENV".into(), "test".into()), ("NODE_OPTIONS".into(), "--experimental-vm-modules".into())]
        );
        assert_eq!(step.words, ["jest", "--ci"]);
        // `--flag=value` is an argument, not an assignment.
        assert_eq!(steps("jest --env=node", &Map::new()).unwrap()[0].env, []);
    }

    #[test]
    fn script_references_are_expanded_once_and_loops_stop() {
        let s = scripts(&[("lint", "eslint ."), ("test:unit", "vitest run --typecheck"), ("loop", "npm run loop")]);
        assert_eq!(
            texts("npm run lint && pnpm test:unit", &s),
            ["eslint .", "vitest run --typecheck"],
            "pnpm NAME and npm run NAME both expand"
        );
        assert_eq!(texts("pnpm run missing", &s), ["pnpm run missing"]);
        assert_eq!(texts("npm run loop", &s), ["npm run loop"]);
        assert_eq!(texts("npm run lint -- --fix", &s), ["npm run lint -- --fix"], "extra arguments: not expanded");
    }

    fn script_args(script: &str, framework: Framework) -> Option<Vec<String>> {
        let manifest = Manifest::parse(&serde_json::json!({ "scripts": { "test": script } }).to_string()).unwrap();
        let plan = ScriptPlan::read(&manifest, framework);
        match plan.runs.as_slice() {
            [only] if plan.before.is_empty() && plan.after.is_empty() => Some(only.args.clone()),
            _ => None,
        }
    }

    #[test]
    fn script_args_keep_extra_flags_and_drop_conflicting_ones() {
        let jest = script_args("NODE_ENV=test jest --runInBand --outputFile out.json --watch src", Framework::Jest);
        assert_eq!(jest.unwrap(), ["--runInBand", "src"]);
        let vitest = script_args("vitest run --reporter=verbose --dir 'my tests'", Framework::Vitest);
        assert_eq!(vitest.unwrap(), ["--reporter=verbose", "--dir", "my tests"]);
        assert_eq!(script_args("node --test dist/", Framework::NodeTest).unwrap(), ["dist/"]);
        assert_eq!(script_args("mocha -R spec 'test/**/*.js'", Framework::Mocha).unwrap(), ["test/**/*.js"]);
        assert_eq!(script_args("npx jest --ci -i", Framework::Jest).unwrap(), ["-i"]);
        assert_eq!(script_args("pnpm exec vitest --typecheck", Framework::Vitest).unwrap(), ["--typecheck"]);
        assert_eq!(script_args("pnpm vitest run --typecheck", Framework::Vitest).unwrap(), ["--typecheck"]);
        assert_eq!(script_args("npm exec jest", Framework::Jest).unwrap(), Vec::<String>::new());
        assert_eq!(script_args("npm run lint && jest", Framework::Jest), None);
        assert_eq!(script_args("react-scripts test", Framework::Jest), None);
        assert_eq!(script_args("jest 'unclosed", Framework::Jest), None);
    }

    #[test]
    fn and_scripts_keep_the_framework_flags_and_name_the_skipped_steps() {
        let manifest = Manifest::parse(
            r#"{"scripts":{"lint":"eslint .","test":"pnpm lint && NODE_OPTIONS=--no-warnings vitest run --typecheck && codecov"}}"#,
        )
        .unwrap();
        let plan = ScriptPlan::read(&manifest, Framework::Vitest);
        assert_eq!(plan.runs.len(), 1);
        assert_eq!(plan.runs[0].args, ["--typecheck"]);
        assert_eq!(plan.runs[0].env, [("NODE_OPTIONS".to_string(), "--no-warnings".to_string())]);
        assert_eq!(plan.before.iter().map(|s| s.text.as_str()).collect::<Vec<_>>(), ["eslint ."]);
        let note = plan.note(false).unwrap();
        assert!(note.contains("skipped script step(s) `eslint .`"), "{note}");
        assert!(note.contains("run-script-steps = true"), "{note}");
        assert!(note.contains("after the tests: `codecov`"), "{note}");
        assert!(!plan.note(true).unwrap().contains("eslint"), "run, so not skipped");
    }

    #[test]
    fn a_script_running_jest_twice_is_two_labelled_runs() {
        let manifest = Manifest::parse(r#"{"scripts":{"test":"jest && jest --env edge-runtime"}}"#).unwrap();
        let plan = ScriptPlan::read(&manifest, Framework::Jest);
        let labels: Vec<&str> = plan.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["jest", "jest --env edge-runtime"]);
        let note = plan.note(false).unwrap();
        assert!(note.contains("runs jest 2 times"), "{note}");
        let unreadable = Manifest::parse(r#"{"scripts":{"test":"jest | tee log"}}"#).unwrap();
        let plan = ScriptPlan::read(&unreadable, Framework::Jest);
        assert!(plan.runs.is_empty());
        assert!(plan.note(false).unwrap().contains("does not replay"), "{:?}", plan.note(false));
    }

    #[test]
    fn fan_outs_are_neither_run_nor_named_as_skipped_steps() {
        let manifest =
            Manifest::parse(r#"{"scripts":{"test":"pnpm -r test && vitest run && npm test -ws && codecov"}}"#).unwrap();
        let mut plan = ScriptPlan::read(&manifest, Framework::Vitest);
        plan.separate_fan_outs();
        let texts = |steps: &[Step]| steps.iter().map(|s| s.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&plan.fan_outs), ["pnpm -r test", "npm test -ws"]);
        assert!(plan.before.is_empty());
        assert_eq!(texts(&plan.after), ["codecov"]);
        let note = plan.note(true).unwrap();
        assert!(note.starts_with("`pnpm -r test`, `npm test -ws` run the workspace members' tests"), "{note}");
        assert!(note.contains("after the tests: `codecov`"), "{note}");
    }
}
