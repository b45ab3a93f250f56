//! Retries for the node frameworks: the planned framework command narrowed to the failed tests
//! with the framework's own name filter, anchored to the full name (jest and vitest also get the
//! failed tests' files).

use crate::ecosystems::{PhasePlan, Rerun};
use crate::model::{Case, PhaseKind};

/// The test phase rerunning `failed`; `None` for a script that runs the framework several times
/// (its cases are grouped per run) or a command fcorr does not recognise.
pub(super) fn rerun(test: &PhasePlan, failed: &[&Case]) -> Option<Rerun> {
    let [command] = test.commands.as_slice() else { return None };
    let tool = if command.program == "node" { "node" } else { command.args.get(1)?.as_str() };
    let mut selected = Vec::new();
    let mut names = Vec::new();
    let mut files: Vec<&str> = Vec::new();
    let mut every_file_known = true;
    for (i, case) in failed.iter().enumerate() {
        // A file that failed to load is a case named after the file: not a test to run again.
        if case.name.is_empty() || case.file.as_deref() == Some(case.name.as_str()) {
            continue;
        }
        selected.push(i);
        let title = match &case.classname {
            Some(path) => case.name.strip_prefix(&format!("{path} > ")).unwrap_or(&case.name),
            None => case.name.as_str(),
        };
        let mut full: Vec<&str> = case.classname.as_deref().map(|p| p.split(" > ").collect()).unwrap_or_default();
        full.push(title);
        names.push(escape(&full.join(" ")));
        if tool == "node" && full.len() > 1 {
            // Older node matches the pattern against each test's own name, newer against the
            // full name: both are anchored alternatives.
            names.push(escape(title));
        }
        match case.file.as_deref() {
            Some(file) if !files.contains(&file) => files.push(file),
            Some(_) => {}
            None => every_file_known = false,
        }
    }
    if !every_file_known {
        files.clear();
    }
    names.dedup();
    let pattern = format!("^({})$", names.join("|"));
    let mut command = command.clone();
    match tool {
        "jest" => {
            command.args.extend(["--testNamePattern".to_string(), pattern]);
            // Positional arguments are path regexes.
            command.args.extend(files.iter().map(|f| escape(f)));
        }
        "vitest" => {
            command.args.extend(["--testNamePattern".to_string(), pattern]);
            // Positional arguments are path filters (substrings).
            command.args.extend(files.iter().map(|f| f.to_string()));
        }
        "mocha" => command.args.extend(["--grep".to_string(), pattern]),
        // Node options must come before file arguments, or they are passed to the tests.
        "node" if command.args.first().is_some_and(|a| a == "--test") => {
            command.args.insert(1, format!("--test-name-pattern={pattern}"));
        }
        _ => return None,
    }
    let phase = PhasePlan::run(PhaseKind::Test, vec![command]).with_reports(test.reports.clone());
    Some(Rerun { phase, selected })
}

/// A literal for a JavaScript regular expression.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.*+?()[]{}|/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execute::process::CommandSpec;

    fn case(name: &str, classname: Option<&str>, file: &str) -> Case {
        Case { name: name.into(), classname: classname.map(Into::into), file: Some(file.into()), ..Case::default() }
    }

    #[test]
    fn jest_selects_by_anchored_full_name_and_file() {
        let test =
            PhasePlan::run(PhaseKind::Test, vec![CommandSpec::new("npx", &["--no-install", "jest", "--ci"], "/p")]);
        let a = case("cart > total (x+1)", Some("cart"), "src/cart.test.js");
        let broken = case("src/bad.test.js", None, "src/bad.test.js");
        let rerun = rerun(&test, &[&a, &broken]).unwrap();
        assert_eq!(rerun.selected, vec![0]);
        let args = &rerun.phase.commands[0].args;
        assert_eq!(
            args[3..],
            ["--testNamePattern", r"^(cart total \(x\+1\))$", r"src\/cart\.test\.js"].map(String::from)
        );
    }

    #[test]
    fn node_test_puts_the_pattern_before_the_files() {
        let test = PhasePlan::run(
            PhaseKind::Test,
            vec![CommandSpec::new("node", &["--test", "--test-reporter=spec", "test/a.js"], "/p")],
        );
        let a = case("suite > it works", Some("suite"), "test/a.js");
        let args = rerun(&test, &[&a]).unwrap().phase.commands[0].args.clone();
        assert_eq!(args[1], "--test-name-pattern=^(suite it works|it works)$");
        assert_eq!(args.last().map(String::as_str), Some("test/a.js"));
    }
}
