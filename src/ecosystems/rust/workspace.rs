//! Where a `cargo test` target's source lives in a Cargo workspace.
//!
//! cargo names each target relative to its member crate (`Running unittests src/lib.rs`), so in
//! a workspace every member's `src/lib.rs` looks the same. This finds the member crates under the
//! suite's root once, then places each target in its crate: by crate name for unit tests, by the
//! one member holding that file (or the crate whose unit tests ran just before) otherwise. The
//! answer depends only on the tree, so case ids stay the same from run to run.

use std::collections::HashMap;
use std::path::Path;

use crate::collect::ParsedReport;

/// Places the cases of a libtest report read for a suite at `root` in their member crates: each
/// target's cases take its placed file, and a failure's line is the printed panic line whose file
/// is that one (cargo prints panic paths from the workspace root). Outside a workspace, nothing
/// changes: the parser already gave the files as cargo printed them.
pub(super) fn place_targets(report: &mut ParsedReport, root: &Path) {
    let mut members = Members::find(root);
    if members.dirs.is_empty() {
        return;
    }
    for target in &report.targets {
        let Some(printed) = target.file.as_deref() else { continue };
        let file = members.locate(printed, &target.name, target.unit_tests);
        // The parser only puts cases of this target in this range; a report that was edited so it
        // does not is left as it is rather than indexed out of bounds.
        let Some(cases) = report.cases.get_mut(target.cases.clone()) else { continue };
        for case in cases.iter_mut() {
            case.file = Some(file.clone().into());
            case.line = None;
        }
        for location in target.printed.iter().filter(|l| l.file == file) {
            if let Some(case) = report.cases.get_mut(location.case).filter(|_| target.cases.contains(&location.case)) {
                case.line = Some(location.line);
            }
        }
    }
}

/// Directories deeper than this below the root are not searched for member crates.
const MAX_DEPTH: usize = 5;

/// The member crates of the workspace at a suite's root.
#[derive(Debug, Default)]
struct Members {
    root: std::path::PathBuf,
    /// Crate name as rustc spells it (`-` → `_`) → member directory, relative and `/`-separated.
    by_crate: HashMap<String, String>,
    dirs: Vec<String>,
    /// Member directory → package name as written in its Cargo.toml.
    names: HashMap<String, String>,
    /// The member whose unit tests ran last; cargo runs a package's targets together.
    current: Option<String>,
}

impl Members {
    /// Finds the crates below `root` (not `root` itself).
    fn find(root: &Path) -> Members {
        let mut members = Members { root: root.to_path_buf(), ..Members::default() };
        let walk = ignore::WalkBuilder::new(root)
            .max_depth(Some(MAX_DEPTH))
            .filter_entry(|e| !matches!(e.file_name().to_str(), Some("target" | "node_modules")))
            .build();
        for entry in walk.flatten() {
            if entry.file_name() != "Cargo.toml" {
                continue;
            }
            let Some(dir) = entry.path().parent().and_then(|d| d.strip_prefix(root).ok()) else { continue };
            let dir = dir.to_string_lossy().replace('\\', "/");
            if let Some(name) = package_name(entry.path()) {
                members.by_crate.insert(name.replace('-', "_"), dir.clone());
                members.names.insert(dir.clone(), name);
            }
            // The root's own package (dir "") only counts when it has a [package].
            if !dir.is_empty() || members.by_crate.values().any(String::is_empty) {
                members.dirs.push(dir);
            }
        }
        members.dirs.sort();
        if members.dirs.iter().all(String::is_empty) {
            members.dirs.clear();
        }
        members
    }

    /// The root-relative path of target source `file` (as cargo prints it) run by binary `bin`.
    fn locate(&mut self, file: &str, bin: &str, unit_tests: bool) -> String {
        let root = self.root.clone();
        if self.dirs.is_empty() || Path::new(file).is_absolute() {
            return file.to_string();
        }
        let in_dir = |dir: &str| if dir.is_empty() { file.to_string() } else { format!("{dir}/{file}") };
        if unit_tests && let Some(dir) = self.by_crate.get(bin).filter(|d| root.join(in_dir(d)).is_file()) {
            self.current = Some(dir.clone());
            return in_dir(dir);
        }
        let holders: Vec<&str> =
            self.dirs.iter().map(String::as_str).filter(|d| root.join(in_dir(d)).is_file()).collect();
        let chosen = match holders.as_slice() {
            [one] => Some(one.to_string()),
            _ => self.current.clone().filter(|c| holders.contains(&c.as_str())),
        };
        match chosen {
            Some(dir) => {
                if unit_tests {
                    self.current = Some(dir.clone());
                }
                in_dir(&dir)
            }
            None => file.to_string(),
        }
    }
}

/// The package holding `file` (a path relative to the workspace root, as cases carry it) and the
/// file's path inside that package: `crates/core/tests/it.rs` → (`core`, `tests/it.rs`). `None`
/// outside any package below `root`.
pub(super) fn package_of(root: &Path, file: &str) -> Option<(String, String)> {
    let members = Members::find(root);
    let mut named: Vec<(&String, &String)> = members.names.iter().collect();
    // The deepest directory first: a member nested inside another package's tree is its own.
    named.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.len()));
    named.into_iter().find_map(|(dir, name)| {
        let inside = if dir.is_empty() { Some(file) } else { file.strip_prefix(dir.as_str())?.strip_prefix('/') };
        Some((name.clone(), inside?.to_string()))
    })
}

/// `[package] name` of a manifest; none for a virtual manifest or one that does not parse.
fn package_name(manifest: &Path) -> Option<String> {
    let text = crate::fsio::read_text(manifest, crate::fsio::PROJECT_FILE).ok()?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    table.get("package")?.get("name")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn package(root: &Path, dir: &str, name: &str) {
        write(root, &format!("{dir}/Cargo.toml"), &format!("[package]\nname = \"{name}\"\n"));
        write(root, &format!("{dir}/src/lib.rs"), "");
    }

    #[test]
    fn places_each_target_in_its_member() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n");
        package(root, "crates/alpha-core", "alpha-core");
        package(root, "crates/beta", "beta");
        write(root, "crates/alpha-core/tests/it.rs", "");
        write(root, "crates/beta/tests/it.rs", "");
        write(root, "crates/beta/tests/only_beta.rs", "");
        write(root, "target/debug/build/x/Cargo.toml", "[package]\nname = \"x\"\n");

        let mut members = Members::find(root);
        assert_eq!(members.dirs, vec!["crates/alpha-core", "crates/beta"]);
        assert_eq!(members.locate("src/lib.rs", "alpha_core", true), "crates/alpha-core/src/lib.rs");
        // Two members have tests/it.rs: the one whose unit tests ran just before.
        assert_eq!(members.locate("tests/it.rs", "it", false), "crates/alpha-core/tests/it.rs");
        assert_eq!(members.locate("src/lib.rs", "beta", true), "crates/beta/src/lib.rs");
        assert_eq!(members.locate("tests/it.rs", "it", false), "crates/beta/tests/it.rs");
        // Only one member has it: that one, whatever ran before.
        members.current = None;
        assert_eq!(members.locate("tests/only_beta.rs", "only_beta", false), "crates/beta/tests/only_beta.rs");
        // Unknown files and absolute paths are left as cargo printed them.
        assert_eq!(members.locate("tests/nowhere.rs", "nowhere", false), "tests/nowhere.rs");
        assert_eq!(members.locate("/abs/src/lib.rs", "alpha_core", true), "/abs/src/lib.rs");
    }

    #[test]
    fn a_root_package_with_members_keeps_its_own_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "Cargo.toml", "[package]\nname = \"app\"\n[workspace]\nmembers = [\"helper\"]\n");
        write(root, "src/lib.rs", "");
        package(root, "helper", "helper");
        let mut members = Members::find(root);
        assert_eq!(members.locate("src/lib.rs", "helper", true), "helper/src/lib.rs");
        assert_eq!(members.locate("src/lib.rs", "app", true), "src/lib.rs");
        write(root, "tests/api.rs", "");
        assert_eq!(members.locate("tests/api.rs", "api", false), "tests/api.rs");
    }

    // Shaped like `cargo test --no-fail-fast 2>&1` on tests/fixtures/rust-workspace (Rust 1.95),
    // with alpha's unit tests emptied and a panic in another member's file added.
    const WORKSPACE_OUTPUT: &str = "     Running unittests src/lib.rs (target/debug/deps/alpha-0a1b2c3d4e5f6789)

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/it.rs (target/debug/deps/it-00fbb4f91c8b2162)

running 2 tests
test works_from_outside ... ok
test calls_beta ... FAILED

failures:

---- calls_beta stdout ----

thread 'calls_beta' (2801) panicked at crates/beta-util/src/lib.rs:3:5:
not yet
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    calls_beta

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running unittests src/lib.rs (target/debug/deps/beta_util-1122334455667788)

running 1 test
test tests::capitalizes ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/it.rs (target/debug/deps/it-99fbb4f91c8b2162)

running 2 tests
test works_from_outside ... ok
test keeps_the_rest ... FAILED

failures:

---- keeps_the_rest stdout ----

thread 'keeps_the_rest' (2803) panicked at crates/beta-util/tests/it.rs:9:5:
assertion `left == right` failed
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    keeps_the_rest

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests alpha

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    /// The parser's facts are enough to place cases after parsing: a unit-test binary with no
    /// test still says which member's `tests/it.rs` runs next, and a panic's line counts only
    /// when its file (printed from the workspace root) is the placed file.
    #[test]
    fn parsed_libtest_cases_are_placed_after_parsing() {
        use crate::collect::{ParseOptions, ReportParser, libtest::Libtest};

        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n");
        package(root, "crates/alpha", "alpha");
        package(root, "crates/beta-util", "beta-util");
        write(root, "crates/alpha/tests/it.rs", "");
        write(root, "crates/beta-util/tests/it.rs", "");

        let options = ParseOptions { root: Some(root.to_path_buf()) };
        let mut report = Libtest.parse(&mut WORKSPACE_OUTPUT.as_bytes(), &options).unwrap();
        let located = |report: &ParsedReport| -> Vec<(String, Option<String>, Option<u32>)> {
            report.cases.iter().map(|c| (c.name.to_string(), c.file.as_deref().map(String::from), c.line)).collect()
        };
        let case = |name: &str, file: &str, line: Option<u32>| (name.to_string(), Some(file.to_string()), line);
        // The parser alone: files as cargo printed them, a line only from a panic in that file.
        assert_eq!(
            located(&report),
            vec![
                case("works_from_outside", "tests/it.rs", None),
                case("calls_beta", "tests/it.rs", None),
                case("tests::capitalizes", "src/lib.rs", None),
                case("works_from_outside", "tests/it.rs", None),
                case("keeps_the_rest", "tests/it.rs", None),
            ]
        );
        let names: Vec<(&str, bool, usize)> =
            report.targets.iter().map(|t| (t.name.as_str(), t.unit_tests, t.cases.len())).collect();
        assert_eq!(
            names,
            vec![
                ("alpha", true, 0),
                ("it", false, 2),
                ("beta_util", true, 1),
                ("it", false, 2),
                ("alpha (doc-tests)", false, 0)
            ]
        );

        place_targets(&mut report, root);
        assert_eq!(
            located(&report),
            vec![
                case("works_from_outside", "crates/alpha/tests/it.rs", None),
                // Panicked in beta-util's code: no line in alpha's test file.
                case("calls_beta", "crates/alpha/tests/it.rs", None),
                case("tests::capitalizes", "crates/beta-util/src/lib.rs", None),
                case("works_from_outside", "crates/beta-util/tests/it.rs", None),
                case("keeps_the_rest", "crates/beta-util/tests/it.rs", Some(9)),
            ]
        );
    }

    #[test]
    fn a_single_package_keeps_its_paths() {
        let tmp = tempfile::tempdir().unwrap();
        package(tmp.path(), ".", "solo");
        let mut members = Members::find(tmp.path());
        assert_eq!(members.locate("src/lib.rs", "solo", true), "src/lib.rs");
    }
}
