//! Reading a `package.json` `test` script the way the shell would run it.
//!
//! A script such as `pnpm lint && vitest run --typecheck` is split on `&&`, `||`, `;` and
//! newlines (outside quotes); `npm run x` / `pnpm x` / `yarn x` steps are expanded into the named
//! script. Each step is either a framework invocation (kept with every flag and its `VAR=value`
//! environment) or another step, which the node runner skips with a note or runs on request.

use serde_json::{Map, Value};

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
}
