//! The module graph: dependencies between fcorr's top-level modules point one way.
//!
//! Reads every `src/**/*.rs` (comments, strings and `#[cfg(test)]` code left out), finds the
//! top-level modules each one names through `crate::…` (and `super::` paths that climb to the
//! crate root), and checks them against the graph in `docs/architecture.md`: every edge the code
//! has must be listed there, every listed edge must exist (so the doc stays true), and the graph
//! may have no cycle. An entry marked as known debt (`!name`, an upward edge kept for a while) is
//! itself a problem: the last ones were removed, and none may come back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Edges = BTreeMap<(String, String), Vec<String>>;

/// Source text with comments, string and char literals blanked (newlines kept, so line numbers
/// stay right).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (!ident_char(chars.get(i.wrapping_sub(1))) || chars.get(i.wrapping_sub(1)) == Some(&'b'))
        {
            // A raw string r"…" or r#"…"#: ends at a quote followed by as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i = j + 1;
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&c) = chars.get(i) {
                    blank(&mut out, c);
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{1F600}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            // Anything else, lifetimes included, is code.
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_char(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The code of a file without its `#[cfg(test)] mod … { … }` blocks, and the names of modules
/// it declares as test-only (`#[cfg(test)] mod echo;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(code.len());
    let mut test_modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let item_start = after.len() - item.len();
        let decl = item.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        if let Some(name_and_rest) = decl.strip_prefix("mod ") {
            let name: String = name_and_rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let after_name = name_and_rest[name.len()..].trim_start();
            if after_name.starts_with(';') {
                test_modules.push(name);
                out.push_str(&"\n".repeat(after[..item_start].matches('\n').count()));
                rest = &after[item_start..];
                continue;
            }
            if after_name.starts_with('{') {
                // Skip to the matching brace, keeping the line count.
                let open = after.len() - after_name.len();
                let mut depth = 0;
                let mut end = after.len();
                for (i, c) in after[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                out.push_str(&"\n".repeat(after[..end].matches('\n').count()));
                rest = &after[end..];
                continue;
            }
        }
        // A test-only fn, use or impl: drop the attribute, keep the item (it is rare, and
        // counting it errs on the strict side).
        rest = after;
    }
    out.push_str(rest);
    (out, test_modules)
}

/// Top-level module names a piece of code names through `crate::` (and `super::` chains that
/// climb `depth` levels, to the crate root), with the line of each use.
fn named_modules(code: &str, depth: usize) -> Vec<(String, usize)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let preceded_by_ident = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'$'));
        let root_path = if preceded_by_ident {
            None
        } else if let Some(after) = rest.strip_prefix("crate::") {
            Some(after)
        } else if rest.starts_with("super::") {
            let mut after = rest;
            let mut climbed = 0;
            while let Some(next) = after.strip_prefix("super::") {
                climbed += 1;
                after = next.trim_start();
            }
            (climbed >= depth).then_some(after)
        } else {
            None
        };
        let Some(after) = root_path else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let at = code.len() - after.len();
        let after = after.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            // `crate::{a::X, b, c::{D, E}}`: the first name of each top-level item.
            let mut level = 1;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => level += 1,
                    '}' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    ',' if level == 1 => items.push(std::mem::take(&mut item)),
                    _ if level == 1 => item.push(c),
                    _ => {}
                }
            }
            items.push(item);
            for item in items {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    found.push((name, line_of(at)));
                }
            }
        } else {
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                found.push((name, line_of(at)));
            }
        }
        i = at;
    }
    found
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crate's top-level modules and the edges between them, each with where it is used.
fn code_graph(src: &Path) -> (BTreeSet<String>, Edges) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() || (path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main") {
            modules.insert(name);
        }
    }
    // Files of test-only modules (`#[cfg(test)] mod echo;` in runners/mod.rs → runners/echo.rs).
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    let mut parsed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let (code, test_modules) = without_tests(&code_only(&text));
        let dir = match file.file_name().unwrap().to_str().unwrap() {
            "mod.rs" | "lib.rs" | "main.rs" => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for name in test_modules {
            test_only.insert(dir.join(format!("{name}.rs")));
            test_only.insert(dir.join(&name).join("mod.rs"));
        }
        parsed.push((file.clone(), code));
    }
    let mut edges: Edges = BTreeMap::new();
    for (file, code) in parsed {
        let relative = file.strip_prefix(src).unwrap();
        let parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let top = parts[0].trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" || test_only.iter().any(|t| file.starts_with(t.with_extension(""))) {
            continue;
        }
        if test_only.contains(&file) {
            continue;
        }
        // How many `super::` reach the crate root: src/a.rs and src/a/mod.rs are one level deep.
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod.rs"));
        for (name, line) in named_modules(&code, depth) {
            if name != top && modules.contains(&name) {
                edges.entry((top.clone(), name)).or_default().push(format!("src/{}:{line}", relative.display()));
            }
        }
    }
    (modules, edges)
}

/// The graph documented in docs/architecture.md: the fenced block after the line
/// `<!-- module-graph -->`, one `module: dependency dependency…` per line, `!dependency` for a
/// known back edge (debt).
fn documented_graph(doc: &str) -> Result<BTreeMap<String, Vec<(String, bool)>>, String> {
    let start = doc.find("<!-- module-graph -->").ok_or("docs/architecture.md has no `<!-- module-graph -->` block")?;
    let block = &doc[start..];
    let open = block.find("```").ok_or("the module-graph block has no code fence")?;
    let body = &block[open..];
    let body = &body[body.find('\n').ok_or("unterminated module-graph block")? + 1..];
    let body = &body[..body.find("```").ok_or("unterminated module-graph block")?];
    let mut graph = BTreeMap::new();
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (module, deps) = line.split_once(':').ok_or_else(|| format!("module-graph line without `:`: {line}"))?;
        let deps = deps
            .split_whitespace()
            .map(|d| match d.strip_prefix('!') {
                Some(d) => (d.to_string(), true),
                None => (d.to_string(), false),
            })
            .collect();
        if graph.insert(module.trim().to_string(), deps).is_some() {
            return Err(format!("module-graph lists `{}` twice", module.trim()));
        }
    }
    Ok(graph)
}

/// A cycle in `graph`, as the modules on it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|p| p == next).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, state, path) {
                        return Some(cycle);
                    }
                }
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str())
            && let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

/// Everything wrong with `edges` against the documented graph, one message per problem.
fn problems(modules: &BTreeSet<String>, edges: &Edges, doc: &BTreeMap<String, Vec<(String, bool)>>) -> Vec<String> {
    let mut problems = Vec::new();
    for module in modules {
        if !doc.contains_key(module) {
            problems.push(format!("module `{module}` has no line in docs/architecture.md's module graph"));
        }
    }
    for module in doc.keys() {
        if !modules.contains(module) {
            problems
                .push(format!("docs/architecture.md's module graph lists `{module}`, which is not a module in src/"));
        }
    }
    let allowed: BTreeMap<(String, String), bool> = doc
        .iter()
        .flat_map(|(from, deps)| deps.iter().map(move |(to, debt)| ((from.clone(), to.clone()), *debt)))
        .collect();
    for ((from, to), uses) in edges {
        if !allowed.contains_key(&(from.clone(), to.clone())) {
            problems.push(format!(
                "`{from}` uses `{to}` ({}), which the module graph in docs/architecture.md does not allow",
                uses.join(", ")
            ));
        }
    }
    for ((from, to), _) in allowed.iter().filter(|(_, debt)| **debt) {
        problems.push(format!(
            "docs/architecture.md's module graph marks `{from}: !{to}` as known debt, and upward edges are not \
             allowed: move the code, or hand `{from}` what it needs from `{to}`, so the edge points down"
        ));
    }
    for (from, to) in allowed.keys() {
        if !edges.contains_key(&(from.clone(), to.clone())) {
            problems.push(format!(
                "docs/architecture.md's module graph lists `{from}: {to}`, but no code in src/{from} uses `{to}`: remove it"
            ));
        }
    }
    // The code's edges must not form a cycle.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    if let Some(cycle) = find_cycle(&graph) {
        let uses: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let at = edges.get(&(w[0].clone(), w[1].clone())).map(|u| u[0].as_str()).unwrap_or("?");
                format!("{} -> {} ({at})", w[0], w[1])
            })
            .collect();
        problems.push(format!("dependency cycle between top-level modules: {}", uses.join(", ")));
    }
    problems
}

#[test]
fn dependencies_point_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (modules, edges) = code_graph(&root.join("src"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let doc = documented_graph(&doc).unwrap_or_else(|e| panic!("{e}"));
    let problems = problems(&modules, &edges, &doc);
    assert!(problems.is_empty(), "{} problem(s) with the module graph:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_scanner_sees_grouped_and_climbing_paths_and_skips_tests_and_text() {
    let text = r##"
use crate::{model::Case, score, report::{a, b}};
// use crate::commented;
/* use crate::blocked; */
const S: &str = "crate::in_string";
const R: &str = r#"crate::in_raw "string""#;
fn f<'a>(x: &'a str) -> char { let _ = crate::gate::judge; '"' }
use super::super::git;
#[cfg(test)]
mod tests {
    use crate::only_in_tests;
}
#[cfg(test)]
mod echo;
fn after() { crate::events::x(); }
"##;
    let (code, test_modules) = without_tests(&code_only(text));
    let names: Vec<(String, usize)> = named_modules(&code, 2);
    let names: Vec<(&str, usize)> = names.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    assert_eq!(names, [("model", 2), ("score", 2), ("report", 2), ("gate", 7), ("git", 8), ("events", 15)]);
    assert_eq!(test_modules, ["echo"]);
    // One level deeper, `super::super` stays inside the module.
    assert!(!named_modules(&code, 3).iter().any(|(n, _)| n == "git"));
}

#[test]
fn a_cycle_or_an_undocumented_edge_fails() {
    let modules: BTreeSet<String> = ["model", "compare", "score"].map(String::from).into();
    let edge = |a: &str, b: &str| ((a.to_string(), b.to_string()), vec![format!("src/{a}.rs:1")]);
    let doc = |text: &str| documented_graph(&format!("<!-- module-graph -->\n```text\n{text}\n```\n")).unwrap();
    let edges: Edges = [edge("compare", "model"), edge("model", "compare")].into();
    let found = problems(&modules, &edges, &doc("model: compare\ncompare: model\nscore:"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("dependency cycle between top-level modules: "), "{found:?}");
    // Marking the back edge as known debt no longer excuses it: the mark is a problem, and so is
    // the cycle.
    let found = problems(&modules, &edges, &doc("model: !compare\ncompare: model\nscore:"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("marks `model: !compare` as known debt"), "{found:?}");
    assert!(found[1].starts_with("dependency cycle between top-level modules: "), "{found:?}");
    // An edge the doc does not list, and a listed edge the code lacks.
    let edges: Edges = [edge("score", "model")].into();
    let found = problems(&modules, &edges, &doc("model:\ncompare: model\nscore:"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("`score` uses `model` (src/score.rs:1)"), "{found:?}");
    assert!(found[1].contains("lists `compare: model`"), "{found:?}");
}

/// Every place outside `kinds/` and `commands/` that names a particular suite kind: a
/// `SuiteKind` variant (`SuiteKind::Eval`) or a kind's module (`crate::kinds::eval`, and where
/// kinds used to live, `crate::runners::project` or a top-level `crate::bank`). Comments,
/// strings and test code are left out. `model`, which defines `SuiteKind` and says what each
/// kind's cases are (`SuiteKind::shape`), and `fuzzing.rs`, whose targets call each kind's file
/// readers, are the exceptions.
fn kind_names(src: &Path) -> Vec<String> {
    // The kinds: the variants of `SuiteKind`, and the modules under src/kinds/.
    // A module with submodules is `model/mod.rs` (docs/architecture.md, Conventions).
    let model =
        std::fs::read_to_string(src.join("model/mod.rs")).or_else(|_| std::fs::read_to_string(src.join("model.rs")));
    let model = model.unwrap();
    let body = &model[model.find("pub enum SuiteKind").expect("the model module defines SuiteKind")..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let mut kinds: BTreeSet<String> = code_only(body)
        .split(',')
        .filter_map(|v| v.split_whitespace().last())
        .filter(|v| v.chars().next().is_some_and(char::is_uppercase))
        .map(str::to_lowercase)
        .collect();
    if let Ok(entries) = std::fs::read_dir(src.join("kinds")) {
        kinds.extend(entries.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into()));
    }
    kinds.insert("echo".into());
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let top = relative.iter().next().unwrap().to_string_lossy().trim_end_matches(".rs").to_string();
        // `fuzzing` is an entry point like the commands: its targets name the readers they fuzz.
        if ["kinds", "commands", "fuzzing", "model", "lib", "main"].contains(&top.as_str()) {
            continue;
        }
        let (code, _) = without_tests(&code_only(&std::fs::read_to_string(&file).unwrap()));
        let line_of = |at: usize| code[..at].matches('\n').count() + 1;
        let mut push =
            |at: usize, what: &str| found.push(format!("src/{}:{}: {what}", relative.display(), line_of(at)));
        for (at, _) in code.match_indices("SuiteKind::") {
            let variant: String = code[at + 11..].chars().take_while(|c| c.is_alphanumeric()).collect();
            if variant.chars().next().is_some_and(char::is_uppercase) {
                push(at, &format!("SuiteKind::{variant}"));
            }
        }
        for (at, _) in code.match_indices("crate::") {
            if at > 0 && (code.as_bytes()[at - 1].is_ascii_alphanumeric() || code.as_bytes()[at - 1] == b'_') {
                continue;
            }
            let path: String = code[at + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '{' | ',' | ' '))
                .collect();
            let segments: Vec<&str> = path.split("::").map(str::trim).collect();
            let first = segments[0];
            let named = if kinds.contains(first) {
                Some(first.to_string())
            } else if first == "kinds" || first == "runners" {
                let next = segments.get(1).copied().unwrap_or_default();
                let items: Vec<&str> = next.trim_start_matches('{').split(',').map(str::trim).collect();
                items.into_iter().find(|item| kinds.contains(*item)).map(|item| format!("{first}::{item}"))
            } else {
                None
            };
            if let Some(named) = named {
                push(at, &format!("crate::{named}"));
            }
        }
    }
    found
}

/// Generic stages name no kind: after planning, what a later stage needs to know of a kind is
/// recorded in the results (or asked of its runner through the seam), so a new kind is one
/// folder under src/kinds/ and nothing else changes.
#[test]
fn only_kinds_and_commands_name_a_suite_kind() {
    // MODULE_GRAPH_SRC checks another tree (say, an older commit's src/) with the same rule.
    let src = std::env::var_os("MODULE_GRAPH_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let found = kind_names(&src);
    assert!(
        found.is_empty(),
        "{} place(s) outside src/kinds/ and src/commands/ name a particular suite kind; give the \
         seam (`SuiteRunner`) a hook or record the fact in the results instead:\n{}",
        found.len(),
        found.join("\n")
    );
}
