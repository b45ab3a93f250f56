//! The conventions docs/architecture.md states for the source tree (#22 pt 6): one module-file
//! style, the names that used to clash defined once, comments that say the rule instead of citing
//! a "seed 00N" document, and the node ecosystem and the project runner's loop kept small.

use std::path::{Path, PathBuf};

use super::module_graph::rust_files;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display().to_string()
}

/// Every directory under `dir`, itself included.
fn dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries.into_iter().filter(|p| p.is_dir()) {
        dirs(&path, out);
    }
}

#[test]
fn a_module_with_submodules_is_a_folder_with_mod_rs() {
    let mut all = Vec::new();
    dirs(&src(), &mut all);
    let both: Vec<String> = all
        .iter()
        // insta keeps its snapshots in `snapshots/` beside the file that has them: not a module.
        .filter(|d| d.file_name().is_some_and(|n| n != "snapshots"))
        .filter(|d| d.with_extension("rs").is_file())
        .map(|d| format!("{} beside {}/", relative(&d.with_extension("rs")), relative(d)))
        .collect();
    assert!(both.is_empty(), "move each to <name>/mod.rs (git mv, nothing else): {both:#?}");
}

#[test]
fn the_names_that_clashed_are_defined_once() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for name in ["Outcome", "PlanContext"] {
        let pattern =
            regex::Regex::new(&format!(r"(?m)^\s*(pub(\([a-z]+\))? )?(struct|enum|trait|type) {name}\b")).unwrap();
        let defined: Vec<String> = files
            .iter()
            .filter(|f| pattern.is_match(&std::fs::read_to_string(f).unwrap()))
            .map(|f| relative(f))
            .collect();
        assert!(defined.len() <= 1, "`{name}` is defined in {defined:?}: give each a name that says what it is");
    }
}

#[test]
fn comments_say_the_rule_not_a_seed_document() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let seed = regex::Regex::new(r"(?i)\bseed[ -]?00\d").unwrap();
    let cited: Vec<String> = files
        .iter()
        // The eval kind's comments are being rewritten with its graders (#23).
        .filter(|f| !f.starts_with(src().join("kinds/eval")))
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines()
                .enumerate()
                .filter(|(_, line)| seed.is_match(line))
                .map(|(i, line)| format!("{}:{}: {}", relative(f), i + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(cited.is_empty(), "say the behaviour (the numbers, the rule), not the document: {cited:#?}");
}

/// Lines of a file before its `#[cfg(test)]` module.
fn code_lines(text: &str) -> usize {
    text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count()
}

#[test]
fn the_node_ecosystem_and_the_project_loop_stay_small() {
    let node = src().join("ecosystems/node");
    let mut files = Vec::new();
    rust_files(&node, &mut files);
    files.push(node.with_extension("rs"));
    for file in files.iter().filter(|f| f.is_file()) {
        let lines = code_lines(&std::fs::read_to_string(file).unwrap());
        assert!(lines <= 400, "{} has {lines} lines of code: split it by concern", relative(file));
    }
    // Functions in the project runner's loop: from `fn` to the closing brace at its indent.
    let run = std::fs::read_to_string(src().join("kinds/project/run.rs")).unwrap();
    let lines: Vec<&str> = run.lines().collect();
    for (start, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let head = line.trim_start();
        let head = head.strip_prefix("pub(crate) ").or_else(|| head.strip_prefix("pub(super) ")).unwrap_or(head);
        if !head.starts_with("fn ") || line.trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        let end = lines[start..].iter().position(|l| *l == close).map_or(lines.len(), |n| start + n);
        let name = head[3..].split(['(', '<']).next().unwrap_or_default();
        assert!(end - start < 80, "src/kinds/project/run.rs: `{name}` is {} lines: name its steps", end - start + 1);
    }
}
