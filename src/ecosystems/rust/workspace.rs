//! What `cargo test` covers in a Cargo workspace, and where its targets' sources live.
//!
//! cargo names each target relative to its member crate (`Running unittests src/lib.rs`), so in
//! a workspace every member's `src/lib.rs` looks the same. This finds the member crates under the
//! suite's root once, then places each target in its crate: by crate name for unit tests, by the
//! one member holding that file (or the crate whose unit tests ran just before) otherwise. The
//! answer depends only on the tree, so case ids stay the same from run to run. It also says
//! whether a suite tests the whole workspace or one package, and which tests cargo leaves out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::super::ProjectFiles;
use crate::collect::ParsedReport;
use crate::model::LeftOut;

/// True when the suite's root is a workspace root (its Cargo.toml has `[workspace]`): its suite
/// tests every member. Any other package, a workspace member run as a suite of its own included,
/// is tested alone, as `cargo test` in its directory does.
pub(super) fn tests_workspace(files: &ProjectFiles) -> bool {
    files.read("Cargo.toml").is_some_and(|t| super::has_table(&t, "workspace"))
}

/// Places the cases of a libtest report read for a suite at `root` in their member crates: each
/// target's cases take its placed file, and a failure's line is the printed panic line whose file
/// is that one (cargo prints panic paths from the workspace root). Outside a workspace, nothing
/// changes: the parser already gave the files as cargo printed them.
pub(super) fn place_targets(report: &mut ParsedReport, root: &Path) {
    let mut members = Members::find(root);
    // cargo prints panics from the workspace root, above `root` when the suite is a member.
    let above = path_in_workspace(root);
    if members.dirs.is_empty() && above.is_empty() {
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
        let printed_as = format!("{above}{file}");
        for location in target.printed.iter().filter(|l| l.file == printed_as) {
            if let Some(case) = report.cases.get_mut(location.case).filter(|_| target.cases.contains(&location.case)) {
                case.line = Some(location.line);
            }
        }
    }
}

/// Where `root` lies in the cargo workspace above it (`crates/b/`, slash included), as cargo prints
/// paths from the workspace root; empty when `root` is a workspace root or belongs to none. The
/// workspace is the one `package.workspace` names, else the nearest directory above with a
/// `[workspace]` that does not `exclude` it, as cargo looks for it.
fn path_in_workspace(root: &Path) -> String {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let manifest = |dir: &Path| -> Option<toml::Table> {
        let text = crate::fsio::read_text(&dir.join("Cargo.toml"), crate::fsio::PROJECT_FILE).ok()?;
        toml::from_str(&text).ok()
    };
    let Some(own) = manifest(&root) else { return String::new() };
    if own.get("workspace").is_some() {
        return String::new();
    }
    let inside = |dir: &Path| -> Option<String> {
        let rel = root.strip_prefix(dir).ok()?.to_string_lossy().replace('\\', "/");
        let excluded =
            manifest(dir)?.get("workspace")?.get("exclude").and_then(toml::Value::as_array).is_some_and(|e| {
                e.iter().filter_map(toml::Value::as_str).any(|e| under(&rel, e.trim_end_matches('/')))
            });
        (!excluded && !rel.is_empty()).then(|| format!("{rel}/"))
    };
    if let Some(named) = own.get("package").and_then(|p| p.get("workspace")).and_then(toml::Value::as_str) {
        let dir: PathBuf = root.join(named);
        return std::fs::canonicalize(&dir).ok().and_then(|d| inside(&d)).unwrap_or_default();
    }
    root.ancestors()
        .skip(1)
        .find(|dir| manifest(dir).is_some_and(|m| m.get("workspace").is_some()))
        .and_then(inside)
        .unwrap_or_default()
}

/// True when `path` is `dir` or below it (both relative, `/`-separated).
fn under(path: &str, dir: &str) -> bool {
    path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// The directories of the packages below the root (a `Cargo.toml` with `[package]`, not the
/// root's own), relative and `/`-separated.
pub(super) fn packages_below(files: &ProjectFiles) -> Vec<&str> {
    files
        .files
        .iter()
        .filter_map(|f| f.strip_suffix("/Cargo.toml"))
        .filter(|dir| files.read(&format!("{dir}/Cargo.toml")).is_some_and(|t| super::has_table(&t, "package")))
        .collect()
}

/// For a suite that tests one package (no `[workspace]` in its Cargo.toml): every package below
/// it is left out, since `cargo test` there tests that package alone.
pub(super) fn left_out_below_a_package(files: &ProjectFiles) -> Vec<LeftOut> {
    let own = files.read("Cargo.toml").and_then(|t| package_name_of(&t));
    let own = own.map(|name| format!(" (`{name}`)")).unwrap_or_default();
    packages_below(files)
        .into_iter()
        .map(|dir| {
            let workspace = files.read(&format!("{dir}/Cargo.toml")).is_some_and(|t| super::has_table(&t, "workspace"));
            let reason = if workspace {
                "a cargo workspace of its own: `cargo test` in this suite's directory does not test it".to_string()
            } else {
                format!(
                    "a package of its own: `cargo test` in this suite's directory tests only the package there{own}"
                )
            };
            LeftOut { path: dir.to_string(), reason }
        })
        .collect()
}

/// The test targets cargo does not run in the packages this suite tests (the root's own and those
/// below it not in `left_out`), named with the manifest setting that keeps each out: a library
/// with `[lib] test = false` (its unit tests), a `[[test]]` with `test = false`, and a tests/*.rs
/// file that `autotests = false` leaves unbuilt because no `[[test]]` declares it. Only targets
/// with test code are named; each hides tests that never run.
pub(super) fn untested_targets(files: &ProjectFiles, left_out: &[LeftOut]) -> Vec<LeftOut> {
    let mut dirs: Vec<&str> =
        packages_below(files).into_iter().filter(|d| !left_out.iter().any(|l| under(d, &l.path))).collect();
    if files.read("Cargo.toml").is_some_and(|t| super::has_table(&t, "package")) {
        dirs.insert(0, "");
    }
    dirs.into_iter().flat_map(|dir| untested_in(files, dir)).collect()
}

/// The untested targets of the package in `dir` ("" for the root), see [`untested_targets`].
fn untested_in(files: &ProjectFiles, dir: &str) -> Vec<LeftOut> {
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let manifest = format!("{prefix}Cargo.toml");
    let Some(table) = files.read(&manifest).and_then(|t| toml::from_str::<toml::Table>(&t).ok()) else {
        return Vec::new();
    };
    let has_tests = |file: &str| files.read(file).is_some_and(|text| holds_tests(&text));
    let off = |target: &toml::Value| target.get("test").and_then(toml::Value::as_bool) == Some(false);
    let mut out = Vec::new();
    if let Some(lib) = table.get("lib").filter(|l| off(l)) {
        let file = lib.get("path").and_then(toml::Value::as_str).unwrap_or("src/lib.rs");
        // The library's modules: src/ but for the binaries' main.rs and bin/.
        let src = format!("{prefix}src/");
        let unit = |f: &&String| {
            f.strip_prefix(&src).is_some_and(|f| f.ends_with(".rs") && f != "main.rs" && !f.starts_with("bin/"))
        };
        if files.files.iter().filter(unit).any(|f| has_tests(f)) {
            out.push(LeftOut {
                path: format!("{prefix}{}", file.trim_start_matches("./")),
                reason: format!(
                    "`test = false` under [lib] in {manifest}: `cargo test` does not run the library's unit tests"
                ),
            });
        }
    }
    let declared: Vec<&toml::Value> =
        table.get("test").and_then(toml::Value::as_array).map(|a| a.iter().collect()).unwrap_or_default();
    // A [[test]]'s file: its `path`, else tests/<name>.rs or tests/<name>/main.rs.
    let test_file = |t: &toml::Value| -> Option<String> {
        if let Some(path) = t.get("path").and_then(toml::Value::as_str) {
            return Some(path.trim_start_matches("./").to_string());
        }
        let name = t.get("name")?.as_str()?;
        let single = format!("tests/{name}.rs");
        Some(if files.files.contains(&format!("{prefix}{single}")) { single } else { format!("tests/{name}/main.rs") })
    };
    for target in declared.iter().filter(|t| off(t)) {
        let Some(file) = test_file(target) else { continue };
        let name = target.get("name").and_then(toml::Value::as_str).unwrap_or(&file);
        out.push(LeftOut {
            path: format!("{prefix}{file}"),
            reason: format!("`test = false` on the [[test]] `{name}` in {manifest}: `cargo test` does not run it"),
        });
    }
    let autotests = table.get("package").and_then(|p| p.get("autotests")).and_then(toml::Value::as_bool);
    if autotests == Some(false) {
        let declared: Vec<String> = declared.iter().filter_map(|t| test_file(t)).collect();
        for file in files.files.iter().filter_map(|f| f.strip_prefix(&prefix)).filter(|f| auto_test_file(f)) {
            if !declared.iter().any(|d| d == file) && has_tests(&format!("{prefix}{file}")) {
                out.push(LeftOut {
                    path: format!("{prefix}{file}"),
                    reason: format!(
                        "`autotests = false` in {manifest} and no [[test]] declares it: cargo does not build or run it"
                    ),
                });
            }
        }
    }
    out
}

/// A file cargo would find as an integration test by itself: `tests/x.rs` or `tests/x/main.rs`.
fn auto_test_file(file: &str) -> bool {
    let Some(rest) = file.strip_prefix("tests/") else { return false };
    match rest.split_once('/') {
        None => rest.ends_with(".rs"),
        Some((_, main)) => main == "main.rs",
    }
}

/// True when Rust source holds tests (`#[test]`, `#[cfg(test)]`, `#[tokio::test]` and the like).
fn holds_tests(text: &str) -> bool {
    text.contains("#[test]") || text.contains("#[cfg(test)]") || text.contains("::test]") || text.contains("::test(")
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
    package_name_of(&crate::fsio::read_text(manifest, crate::fsio::PROJECT_FILE).ok()?)
}

/// `[package] name` of a manifest's text.
fn package_name_of(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
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

    /// A member run as its own suite: cargo names its targets from the member, as the cases keep
    /// them, and prints panics from the workspace root above it.
    #[test]
    fn a_member_suite_takes_the_lines_cargo_prints_from_the_workspace_root() {
        use crate::collect::{ParseOptions, ReportParser, libtest::Libtest};

        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/own\"]\n");
        package(root, "crates/beta-util", "beta-util");
        package(root, "crates/own", "own");
        write(root, "elsewhere/Cargo.toml", "[package]\nname = \"e\"\nworkspace = \"../crates/..\"\n");
        assert_eq!(path_in_workspace(&root.join("crates/beta-util")), "crates/beta-util/");
        assert_eq!(path_in_workspace(&root.join("elsewhere")), "elsewhere/");
        assert_eq!(path_in_workspace(root), "", "the workspace root itself");
        assert_eq!(path_in_workspace(&root.join("crates/own")), "", "excluded: a workspace of its own");

        let output = "     Running unittests src/lib.rs (target/debug/deps/beta_util-1122334455667788)

running 1 test
test tests::capitalizes ... FAILED

failures:

---- tests::capitalizes stdout ----

thread 'tests::capitalizes' (2801) panicked at crates/beta-util/src/lib.rs:3:5:
not yet


failures:
    tests::capitalizes

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let member = root.join("crates/beta-util");
        let options = ParseOptions { root: Some(member.clone()) };
        let mut report = Libtest.parse(&mut output.as_bytes(), &options).unwrap();
        assert_eq!(report.cases[0].line, None, "the parser alone cannot tell");
        place_targets(&mut report, &member);
        assert_eq!((report.cases[0].file.as_deref(), report.cases[0].line), (Some("src/lib.rs"), Some(3)));
    }

    #[test]
    fn tests_cargo_never_runs_are_named_with_the_setting_that_keeps_them_out() {
        let (_dir, files) = crate::ecosystems::project_of(&[
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nautotests = false\n[lib]\ntest = false\n[[test]]\nname = \"kept\"\n[[test]]\nname = \"off\"\npath = \"tests/off.rs\"\ntest = false\n",
            ),
            ("src/lib.rs", "mod inner;\n"),
            ("src/inner.rs", "#[cfg(test)]\nmod tests { #[test] fn t() {} }\n"),
            ("tests/kept.rs", "#[test] fn k() {}\n"),
            ("tests/off.rs", "#[test] fn o() {}\n"),
            ("tests/loose.rs", "#[test] fn l() {}\n"),
            ("tests/dir/main.rs", "#[tokio::test] async fn d() {}\n"),
            ("tests/common/mod.rs", "#[test] fn helper_module_is_no_target() {}\n"),
            ("tests/helpers.rs", "pub fn no_tests_here() {}\n"),
            ("crates/quiet/Cargo.toml", "[package]\nname = \"quiet\"\n[lib]\ntest = false\n"),
            ("crates/quiet/src/lib.rs", "pub fn no_tests() {}\n"),
            ("crates/gone/Cargo.toml", "[package]\nname = \"gone\"\n[lib]\ntest = false\n"),
            ("crates/gone/src/lib.rs", "#[test] fn g() {}\n"),
        ]);
        let gone = LeftOut { path: "crates/gone".into(), reason: "excluded".into() };
        let named: Vec<(String, String)> =
            untested_targets(&files, &[gone]).into_iter().map(|l| (l.path, l.reason)).collect();
        let paths: Vec<&str> = named.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["src/lib.rs", "tests/off.rs", "tests/dir/main.rs", "tests/loose.rs"], "{named:#?}");
        assert!(named[0].1.starts_with("`test = false` under [lib] in Cargo.toml"), "{}", named[0].1);
        assert!(named[1].1.contains("[[test]] `off`"), "{}", named[1].1);
        assert!(named[3].1.starts_with("`autotests = false` in Cargo.toml"), "{}", named[3].1);

        // A package's suite (no [workspace]) tests that package alone: packages below are left out.
        let below: Vec<String> = left_out_below_a_package(&files).into_iter().map(|l| l.reason).collect();
        assert_eq!(below.len(), 2);
        assert!(below[0].contains("tests only the package there (`app`)"), "{below:?}");
    }

    #[test]
    fn a_single_package_keeps_its_paths() {
        let tmp = tempfile::tempdir().unwrap();
        package(tmp.path(), ".", "solo");
        let mut members = Members::find(tmp.path());
        assert_eq!(members.locate("src/lib.rs", "solo", true), "src/lib.rs");
    }
}
