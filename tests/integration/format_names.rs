//! Report-format names are written once, as the `NAME` constant of their parser in
//! `src/collect/`: every other module (the ecosystems declaring the reports a phase writes, the
//! runners, the commands) refers to that constant, so a renamed or new format cannot drift.
//! This scans `src/` outside `collect/` (comments and `#[cfg(test)] mod tests` left out) for a
//! quoted parser name.

use std::path::{Path, PathBuf};

/// Quoted names that are something else: (file, name, what it is there).
const NOT_A_PARSER: &[(&str, &str, &str)] = &[
    ("src/config.rs", "junit", "the junit.xml output format (`--format junit`)"),
    ("src/config.rs", "ctrf", "the ctrf.json output format (`--format ctrf`)"),
    ("src/ecosystems/rust/mod.rs", "junit", "the `[profile.*.junit]` table of nextest's config"),
    ("src/fuzzing.rs", "tap", "a file extension the sniffer target tries"),
    ("src/fuzzing.rs", "trx", "a file extension the sniffer target tries"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code before its unit tests, with comment lines emptied.
fn code_before_tests(text: &str) -> String {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
    // Comment lines are kept empty, so line numbers stay the file's.
    code.lines().map(|line| if line.trim_start().starts_with("//") { "" } else { line }).collect::<Vec<_>>().join("\n")
}

/// `(file, line, name)` of every quoted parser name in `src/` outside `src/collect/`.
fn literal_names(root: &Path, names: &[&str]) -> Vec<(String, usize, String)> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if rel.starts_with("src/collect/") {
            continue;
        }
        let code = code_before_tests(&std::fs::read_to_string(&file).unwrap());
        for (i, line) in code.lines().enumerate() {
            for name in names {
                let allowed = NOT_A_PARSER.iter().any(|(f, n, _)| *f == rel && n == name);
                if !allowed && line.contains(&format!("\"{name}\"")) {
                    found.push((rel.clone(), i + 1, name.to_string()));
                }
            }
        }
    }
    found
}

#[test]
fn report_format_names_are_written_only_by_their_parser() {
    // FORMAT_NAMES_ROOT checks another checkout (say, main before the constants) by the same rule.
    let root =
        std::env::var_os("FORMAT_NAMES_ROOT").map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let root = root.as_path();
    let parsers = fcorr::collect::PARSERS;
    let names: Vec<&str> = parsers.iter().map(|p| p.format()).collect();
    let found = literal_names(root, &names);
    assert!(
        found.is_empty(),
        "report-format names written outside their parser (use `crate::collect::<format>::NAME`):\n{}",
        found.iter().map(|(f, l, n)| format!("  {f}:{l}: \"{n}\"")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_scan_finds_a_quoted_name_and_skips_comments_and_tests() {
    let code = "fn a() { x(\"junit\") }\n// \"tap\" in a comment\n#[cfg(test)]\nmod tests { \"ctrf\" }\n";
    let kept = code_before_tests(code);
    assert!(kept.contains("\"junit\"") && !kept.contains("\"tap\"") && !kept.contains("\"ctrf\""), "{kept}");
}
