//! Where a `cargo test` target's source lives in a Cargo workspace.
//!
//! cargo names each target relative to its member crate (`Running unittests src/lib.rs`), so in
//! a workspace every member's `src/lib.rs` looks the same. This finds the member crates under the
//! suite's root once, then places each target in its crate: by crate name for unit tests, by the
//! one member holding that file (or the crate whose unit tests ran just before) otherwise. The
//! answer depends only on the tree, so case ids stay the same from run to run.

use std::collections::HashMap;
use std::path::Path;

/// Directories deeper than this below the root are not searched for member crates.
const MAX_DEPTH: usize = 5;

/// The member crates of the workspace at a suite's root.
#[derive(Debug, Default)]
pub(super) struct Members {
    root: Option<std::path::PathBuf>,
    /// Crate name as rustc spells it (`-` → `_`) → member directory, relative and `/`-separated.
    by_crate: HashMap<String, String>,
    dirs: Vec<String>,
    /// The member whose unit tests ran last; cargo runs a package's targets together.
    current: Option<String>,
}

impl Members {
    /// Finds the crates below `root` (not `root` itself); none when `root` is unknown.
    pub(super) fn find(root: Option<&Path>) -> Members {
        let Some(root) = root else { return Members::default() };
        let mut members = Members { root: Some(root.to_path_buf()), ..Members::default() };
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
    pub(super) fn locate(&mut self, file: &str, bin: &str, unit_tests: bool) -> String {
        let Some(root) = self.root.clone() else { return file.to_string() };
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

/// `[package] name` of a manifest; none for a virtual manifest or one that does not parse.
fn package_name(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
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

        let mut members = Members::find(Some(root));
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
        let mut members = Members::find(Some(root));
        assert_eq!(members.locate("src/lib.rs", "helper", true), "helper/src/lib.rs");
        assert_eq!(members.locate("src/lib.rs", "app", true), "src/lib.rs");
        write(root, "tests/api.rs", "");
        assert_eq!(members.locate("tests/api.rs", "api", false), "tests/api.rs");
    }

    #[test]
    fn a_single_package_keeps_its_paths() {
        let tmp = tempfile::tempdir().unwrap();
        package(tmp.path(), ".", "solo");
        let mut members = Members::find(Some(tmp.path()));
        assert_eq!(members.locate("src/lib.rs", "solo", true), "src/lib.rs");
        assert_eq!(Members::find(None).locate("src/lib.rs", "solo", true), "src/lib.rs");
    }
}
