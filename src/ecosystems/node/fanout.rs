//! Workspace fan-outs in a root's `test` script: `npm test --workspaces`, `pnpm -r test`, `yarn
//! workspaces run test`, `lerna run test`, `turbo run test`, `nx run-many -t test`. Such a step
//! runs the members' own `test` scripts (fcorr runs each member as a suite instead), and its
//! filters (`--filter '!legacy'`, `--ignore`, `-w`) say which members.

use globset::{Glob, GlobMatcher};

use super::script::Step;

/// One fan-out step of a script.
#[derive(Debug, Clone)]
pub(super) struct FanOut {
    /// The step as written in the script.
    pub text: String,
    /// The members it selects; `None` when it runs every member, or filters in a way fcorr does
    /// not read (`--filter ...dep`, `--since`): then every member runs, which fails closed.
    filter: Option<Filter>,
}

/// Member selectors: a member runs when an `include` selects it (or there is none) and no
/// `exclude` does.
#[derive(Debug, Clone, Default)]
struct Filter {
    include: Vec<Selector>,
    exclude: Vec<Selector>,
}

/// Selects members by package name or directory (both globs).
#[derive(Debug, Clone)]
enum Selector {
    Name(GlobMatcher),
    Dir(GlobMatcher),
    /// npm's `-w`: a name, a member's directory, or a directory holding members.
    NameOrDir(String),
}

impl Selector {
    fn selects(&self, dir: &str, name: Option<&str>) -> bool {
        match self {
            Selector::Name(glob) => name.is_some_and(|n| glob.is_match(n)),
            Selector::Dir(glob) => glob.is_match(dir),
            Selector::NameOrDir(text) => {
                let text = text.trim_start_matches("./").trim_end_matches('/');
                name == Some(text) || dir == text || dir.starts_with(&format!("{text}/"))
            }
        }
    }
}

impl FanOut {
    /// True when the step runs the member at `dir` (relative to the root) whose package is `name`.
    pub(super) fn selects(&self, dir: &str, name: Option<&str>) -> bool {
        let Some(filter) = &self.filter else { return true };
        (filter.include.is_empty() || filter.include.iter().any(|s| s.selects(dir, name)))
            && !filter.exclude.iter().any(|s| s.selects(dir, name))
    }
}

/// The step as a fan-out of the members' `test` scripts; `None` for any other step (a fan-out of
/// another script, `pnpm -r build`, is not the members' tests).
pub(super) fn fan_out(step: &Step) -> Option<FanOut> {
    let words = tool_words(&step.words);
    let (tool, rest) = words.split_first()?;
    let parsed = match *tool {
        "npm" => npm(rest),
        "pnpm" => pnpm(rest),
        "yarn" => yarn(rest),
        "lerna" => lerna(rest),
        "turbo" => turbo(rest),
        "nx" => nx(rest),
        _ => None,
    }?;
    Some(FanOut { text: step.text.clone(), filter: parsed.filter() })
}

/// The words naming the tool, without a launcher (`npx`, `pnpm exec`, `yarn turbo`).
fn tool_words(words: &[String]) -> Vec<&str> {
    let mut words: Vec<&str> = words.iter().map(String::as_str).collect();
    let skip = match words.as_slice() {
        ["npx", ..] => 1 + words[1..].iter().take_while(|w| w.starts_with('-')).count(),
        ["npm" | "pnpm" | "yarn", "exec" | "x" | "dlx", ..] => 2,
        ["pnpm" | "yarn", "turbo" | "lerna" | "nx", ..] => 1,
        _ => 0,
    };
    words.drain(..skip.min(words.len()));
    if words.first() == Some(&"--") {
        words.remove(0);
    }
    words
}

/// What a fan-out command says: the positional words and its member selectors as written.
#[derive(Debug, Default)]
struct Parsed<'a> {
    positional: Vec<&'a str>,
    include: Vec<Selector>,
    exclude: Vec<Selector>,
    /// A selector or flag fcorr does not read: every member runs.
    unread: bool,
    /// A flag that makes the command run in the workspaces (`-r`, `--workspaces`).
    fans_out: bool,
}

impl Parsed<'_> {
    fn filter(self) -> Option<Filter> {
        let none = self.include.is_empty() && self.exclude.is_empty();
        (!self.unread && !none).then_some(Filter { include: self.include, exclude: self.exclude })
    }
}

/// Splits `rest` into positional words and flags; `on_flag(parsed, flag, value)` reads each flag
/// that takes a value (`--flag value` or `--flag=value`), the others set `fans_out` when listed
/// in `fan_flags`. Words after `--` are the script's own arguments.
fn parse<'a>(
    rest: &[&'a str],
    value_flags: &[&str],
    fan_flags: &[&str],
    mut on_flag: impl FnMut(&mut Parsed<'a>, &str, &'a str),
) -> Parsed<'a> {
    let mut parsed = Parsed::default();
    let mut words = rest.iter().copied();
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if !word.starts_with('-') {
            parsed.positional.push(word);
            continue;
        }
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word, None),
        };
        if value_flags.contains(&flag) {
            // A value flag at the end (`lerna run test --since`) still counts.
            on_flag(&mut parsed, flag, inline.or_else(|| words.next()).unwrap_or_default());
        } else if fan_flags.contains(&flag) && inline.is_none_or(|v| v != "false") {
            parsed.fans_out = true;
        }
    }
    parsed
}

/// `npm test --workspaces`, `npm run test -ws`, `npm test -w packages/a`.
fn npm<'a>(rest: &[&'a str]) -> Option<Parsed<'a>> {
    let parsed = parse(rest, &["-w", "--workspace"], &["--workspaces", "-ws", "--ws"], |p, _, value| {
        p.fans_out = true;
        p.include.push(Selector::NameOrDir(value.to_string()));
    });
    let script = match parsed.positional.as_slice() {
        ["test" | "t" | "tst", ..] => "test",
        ["run" | "run-script" | "rum" | "urn", name, ..] => name,
        _ => return None,
    };
    (parsed.fans_out && script == "test").then_some(parsed)
}

/// pnpm's and turbo's `--filter`: `name`, `@scope/*`, `./dir`, `{dir}`, each negated by `!`;
/// graph (`...`, `^`) and git (`[ref]`) selectors are not read.
fn pnpm_filter(parsed: &mut Parsed<'_>, value: &str) {
    let (negated, selector) = match value.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, value),
    };
    let selector = if selector.contains("...") || selector.starts_with('^') || selector.contains('[') {
        None
    } else if let Some(dir) = selector.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        dir_glob(dir)
    } else if selector.starts_with('.') {
        dir_glob(selector)
    } else {
        name_glob(selector)
    };
    match (selector, negated) {
        (Some(selector), true) => parsed.exclude.push(selector),
        (Some(selector), false) => parsed.include.push(selector),
        (None, _) => parsed.unread = true,
    }
}

fn name_glob(pattern: &str) -> Option<Selector> {
    Glob::new(pattern).ok().map(|g| Selector::Name(g.compile_matcher()))
}

fn dir_glob(pattern: &str) -> Option<Selector> {
    let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
    let glob = globset::GlobBuilder::new(pattern).literal_separator(true).build().ok()?;
    Some(Selector::Dir(glob.compile_matcher()))
}

/// `pnpm -r test`, `pnpm --recursive run test`, `pnpm --filter '!legacy' -r test`.
fn pnpm<'a>(rest: &[&'a str]) -> Option<Parsed<'a>> {
    let values = ["--filter", "-F", "--filter-prod", "--workspace-concurrency", "-C", "--dir", "--reporter"];
    let parsed = parse(rest, &values, &["-r", "--recursive"], |p, flag, value| {
        if flag.starts_with("--filter") || flag == "-F" {
            p.fans_out = true;
            pnpm_filter(p, value);
        }
    });
    let script = match parsed.positional.as_slice() {
        ["run", name, ..] => *name,
        [name, ..] => name,
        [] => return None,
    };
    (parsed.fans_out && matches!(script, "test" | "t" | "tst")).then_some(parsed)
}

/// `yarn workspaces run test` (yarn 1); `yarn workspaces foreach -A [--exclude x] run test`.
fn yarn<'a>(rest: &[&'a str]) -> Option<Parsed<'a>> {
    let (&"workspaces", rest) = rest.split_first()? else { return None };
    let values = ["--include", "--exclude", "--from", "-j", "--jobs"];
    let mut parsed = parse(rest, &values, &[], |p, flag, value| match flag {
        "--include" => p.include.extend(name_glob(value)),
        "--exclude" => p.exclude.extend(name_glob(value)),
        "--from" => p.unread = true,
        _ => {}
    });
    // `--since` takes a value or none: the script is the word after `run`, else the last one.
    let script = match parsed.positional.as_slice() {
        [.., "run", name] | ["foreach", .., name] => *name,
        _ => return None,
    };
    parsed.unread |= rest.iter().any(|w| w.starts_with("--since") || *w == "--no-private");
    (script == "test").then_some(parsed)
}

/// `lerna run test [--scope x] [--ignore y]`.
fn lerna<'a>(rest: &[&'a str]) -> Option<Parsed<'a>> {
    let values = ["--scope", "--ignore", "--concurrency", "--since", "--npm-client"];
    let parsed = parse(rest, &values, &[], |p, flag, value| match flag {
        "--scope" => p.include.extend(name_glob(value)),
        "--ignore" => p.exclude.extend(name_glob(value)),
        "--since" => p.unread = true,
        _ => {}
    });
    matches!(parsed.positional.as_slice(), ["run", "test", ..]).then_some(parsed)
}

/// `turbo run test [lint] [--filter=!legacy]`, `turbo test`.
fn turbo<'a>(rest: &[&'a str]) -> Option<Parsed<'a>> {
    let values = ["--filter", "-F", "--concurrency", "--cache-dir", "--output-logs", "--log-order", "--cache"];
    let parsed = parse(rest, &values, &[], |p, flag, value| {
        if flag == "--filter" || flag == "-F" {
            pnpm_filter(p, value);
        }
    });
    let tasks = match parsed.positional.as_slice() {
        ["run", tasks @ ..] => tasks,
        tasks => tasks,
    };
    tasks.contains(&"test").then_some(parsed)
}

/// `nx run-many -t test [--exclude a,b] [-p c]`, `nx run-many --target=test`.
fn nx<'a>(rest: &[&'a str]) -> Option<Parsed<'a>> {
    let (&"run-many", rest) = rest.split_first()? else { return None };
    let mut targets = Vec::new();
    let values = ["-t", "--target", "--targets", "-p", "--projects", "--exclude", "--parallel"];
    let parsed = parse(rest, &values, &[], |p, flag, value| {
        let list = value.split(',').map(str::trim).filter(|v| !v.is_empty());
        match flag {
            "-t" | "--target" | "--targets" => targets.extend(list),
            "-p" | "--projects" => p.include.extend(list.filter_map(name_glob)),
            "--exclude" => p.exclude.extend(list.filter_map(name_glob)),
            _ => {}
        }
    });
    // `-t test lint`: the targets after the first are positional words.
    (targets.contains(&"test") || (!targets.is_empty() && parsed.positional.contains(&"test"))).then_some(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(text: &str) -> Step {
        let words = crate::ecosystems::node::script::split_words(text).unwrap();
        Step { text: text.to_string(), env: Vec::new(), words }
    }

    /// Which of the members `a` (packages/a), `legacy` (packages/legacy) and `@x/tools`
    /// (tools/cli) the step runs; `None` when it is no fan-out of the tests.
    fn selected(text: &str) -> Option<Vec<&'static str>> {
        let fan = fan_out(&step(text))?;
        let members = [("packages/a", "a"), ("packages/legacy", "legacy"), ("tools/cli", "@x/tools")];
        Some(members.iter().filter(|(dir, name)| fan.selects(dir, Some(name))).map(|(_, name)| *name).collect())
    }

    const ALL: &[&str] = &["a", "legacy", "@x/tools"];

    #[test]
    fn fan_outs_of_the_members_tests_are_recognised() {
        for text in [
            "npm test --workspaces --if-present",
            "npm test -ws",
            "npm run test --workspaces",
            "npm t --workspaces=true",
            "pnpm -r test",
            "pnpm --recursive run test",
            "pnpm run -r test",
            "pnpm -r --parallel --workspace-concurrency 1 test",
            "yarn workspaces run test",
            "yarn workspaces foreach -A run test",
            "yarn workspaces foreach --all -pt test",
            "lerna run test --stream",
            "npx lerna run test",
            "turbo run test",
            "turbo run lint test --concurrency 2",
            "npx turbo test",
            "yarn turbo run test",
            "nx run-many -t test",
            "npx nx run-many --target=test --parallel 3",
            "nx run-many --targets=lint,test",
        ] {
            assert_eq!(selected(text).as_deref(), Some(ALL), "{text}");
        }
    }

    #[test]
    fn other_steps_are_no_fan_out() {
        for text in [
            "npm test",
            "npm run build --workspaces",
            "npm test --workspaces=false",
            "pnpm -r build",
            "pnpm test",
            "pnpm -r exec jest",
            "yarn workspaces run build",
            "lerna run build",
            "turbo run build lint",
            "nx run-many -t build",
            "node --test",
            "vitest run",
        ] {
            assert!(selected(text).is_none(), "{text}");
        }
    }

    #[test]
    fn filters_select_members_by_name_or_directory() {
        assert_eq!(selected("pnpm -r --filter '!legacy' test").unwrap(), ["a", "@x/tools"]);
        assert_eq!(selected("pnpm -r --filter=!legacy test").unwrap(), ["a", "@x/tools"]);
        assert_eq!(selected("pnpm --filter a test").unwrap(), ["a"]);
        assert_eq!(selected("pnpm -r -F './packages/*' test").unwrap(), ["a", "legacy"]);
        assert_eq!(selected("pnpm -r --filter '{tools/**}' test").unwrap(), ["@x/tools"]);
        assert_eq!(selected("pnpm -r --filter '@x/*' --filter a test").unwrap(), ["a", "@x/tools"]);
        assert_eq!(selected("turbo run test --filter=!legacy").unwrap(), ["a", "@x/tools"]);
        assert_eq!(selected("lerna run test --ignore legacy").unwrap(), ["a", "@x/tools"]);
        assert_eq!(selected("lerna run test --scope '@x/*'").unwrap(), ["@x/tools"]);
        assert_eq!(selected("npm test -w packages/a").unwrap(), ["a"]);
        assert_eq!(selected("npm test --workspace=legacy -w tools").unwrap(), ["legacy", "@x/tools"]);
        assert_eq!(selected("yarn workspaces foreach -A --exclude legacy run test").unwrap(), ["a", "@x/tools"]);
        assert_eq!(selected("nx run-many -t test --exclude legacy,a").unwrap(), ["@x/tools"]);
        assert_eq!(selected("nx run-many -t test -p a").unwrap(), ["a"]);
    }

    #[test]
    fn filters_fcorr_does_not_read_run_every_member() {
        for text in [
            "pnpm -r --filter '...a' test",
            "pnpm -r --filter '[origin/main]' test",
            "turbo run test --filter=a... --filter=!legacy",
            "lerna run test --since main --ignore legacy",
            "yarn workspaces foreach --since --exclude legacy run test",
            "yarn workspaces foreach -A --no-private run test",
        ] {
            assert_eq!(selected(text).as_deref(), Some(ALL), "{text}");
        }
    }
}
