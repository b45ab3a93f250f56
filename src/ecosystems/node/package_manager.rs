//! The package manager (npm, pnpm, yarn; `packageManager`, else the lockfile) and the install
//! phase it runs, skipped when `node_modules` is newer than package.json and the lockfile.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use sha2::Digest;

use super::{Manifest, PhasePlan, ProjectContext, ProjectFiles, WorkspaceRoot};
use crate::execute::process::{self, CommandSpec, Exit, find_on_path};
use crate::model::PhaseKind;

/// The package manager and the evidence for it.
pub(super) struct PackageManager {
    pub(super) name: &'static str,
    /// The lockfile it installs from, if any.
    pub(super) lockfile: Option<&'static str>,
    pub(super) markers: Vec<String>,
    /// Run through `corepack`: package.json pins the tool (`packageManager`) and it is not on
    /// PATH, but Node's corepack is, and fetches exactly the pinned version.
    pub(super) via_corepack: bool,
    /// The tool on PATH is another version than `packageManager` pins: what will happen, and how
    /// to get the pinned one. Shown as a marker and as the install phase's note.
    pub(super) version_warning: Option<String>,
}

impl PackageManager {
    /// `pnpm ARGS`, or `corepack pnpm ARGS` when the tool comes from corepack.
    pub(super) fn command(&self, args: &[&str], root: &Path) -> CommandSpec {
        if !self.via_corepack {
            return CommandSpec::new(self.name, args, root);
        }
        let mut spec = CommandSpec::new("corepack", &[&[self.name], args].concat(), root);
        // CI has no stdin to answer corepack's "download pnpm?" prompt.
        spec.env.push(("COREPACK_ENABLE_DOWNLOAD_PROMPT".into(), "0".into()));
        spec
    }
}

/// `packageManager` first (corepack's field), then the lockfile; npm when there is neither.
///
/// A pnpm or yarn project whose tool is missing keeps that tool: installing with npm would ignore
/// its lockfile and test other dependency versions than the project pins. When package.json pins
/// it (`"packageManager": "pnpm@9.15.9"`) and corepack (shipped with Node) is on PATH, corepack
/// runs that exact version; otherwise the install fails as "tool missing", and the marker says what
/// to install.
pub(super) fn package_manager(files: &ProjectFiles, manifest: Option<&Manifest>) -> PackageManager {
    let declared = manifest.and_then(|m| m.package_manager.as_deref());
    let from_field = declared.and_then(|d| ["pnpm", "yarn", "npm"].into_iter().find(|pm| d.starts_with(pm)));
    let locks: [(&'static str, &'static str); 4] = [
        ("pnpm", "pnpm-lock.yaml"),
        ("yarn", "yarn.lock"),
        ("npm", "package-lock.json"),
        ("npm", "npm-shrinkwrap.json"),
    ];
    let mut markers = Vec::new();
    let (name, lockfile) = match from_field {
        Some(pm) => {
            markers.push(format!("packageManager: {}", declared.unwrap_or(pm)));
            (pm, locks.iter().find(|(n, f)| *n == pm && files.has(f)).map(|(_, f)| *f))
        }
        None => match locks.iter().find(|(_, f)| files.has(f)) {
            Some((pm, file)) => (*pm, Some(*file)),
            None => ("npm", None),
        },
    };
    match lockfile {
        Some(file) => markers.push(file.to_string()),
        None => markers.push("no lockfile".into()),
    }
    if name != "npm" && find_on_path(name).is_none() {
        if from_field.is_some()
            && let Some(pinned) = declared.filter(|d| d.contains('@'))
            && find_on_path("corepack").is_some()
        {
            markers.push(format!("{pinned} through corepack ({name} is not on PATH)"));
            return PackageManager { name, lockfile, markers, via_corepack: true, version_warning: None };
        }
        markers.push(format!(
            "{name} is not on PATH: install it (`corepack enable {name}` or `npm install -g {name}`); npm would ignore \
             the {name} lockfile"
        ));
        return PackageManager { name, lockfile, markers, via_corepack: false, version_warning: None };
    }
    // Checked only with the manifest read (not for the quick package-manager guess).
    let version_warning = declared
        .filter(|_| from_field.is_some() && manifest.is_some())
        .and_then(|d| version_mismatch(name, d, &files.root));
    markers.extend(version_warning.clone());
    PackageManager { name, lockfile, markers, via_corepack: false, version_warning }
}

/// When `packageManager` pins a version (`pnpm@9.15.9`, maybe `+sha512...`) and the tool on PATH
/// reports another: a warning naming both. A corepack shim on PATH runs the pinned version and
/// reports it, so it never warns.
pub(super) fn version_mismatch(name: &str, declared: &str, root: &Path) -> Option<String> {
    let pinned = declared.split_once('@')?.1.split('+').next()?.trim();
    if pinned.is_empty() {
        return None;
    }
    let found = tool_version(name, root)?;
    (found != pinned).then(|| {
        format!(
            "package.json pins {name}@{pinned} (packageManager) but the {name} on PATH is {found}: installing with \
             {found}; run `corepack enable {name}` to use {pinned}"
        )
    })
}

/// What `program --version` prints (its last line that looks like a version), asked once per
/// program and directory: detection and planning both want it.
pub(super) fn tool_version(program: &str, root: &Path) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// (program, directory) → what it reported.
    type Versions = HashMap<(String, PathBuf), Option<String>>;
    static SEEN: OnceLock<Mutex<Versions>> = OnceLock::new();
    let key = (program.to_string(), root.to_path_buf());
    let seen = SEEN.get_or_init(Default::default);
    if let Some(known) = seen.lock().ok().and_then(|map| map.get(&key).cloned()) {
        return known;
    }
    let mut spec = CommandSpec::new(program, &["--version"], root);
    // Without this, a corepack shim may stop to ask whether to download the pinned version.
    spec.env.push(("COREPACK_ENABLE_DOWNLOAD_PROMPT".into(), "0".into()));
    let timeout = std::time::Duration::from_secs(30);
    let outcome = process::run(&spec, timeout, process::DEFAULT_GRACE, &process::null_log());
    let version = (outcome.exit == Exit::Code(0))
        .then(|| {
            outcome
                .output
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.split('.').count() >= 3 && l.chars().next().is_some_and(|c| c.is_ascii_digit()))
                .map(str::to_string)
        })
        .flatten();
    if let Ok(mut map) = seen.lock() {
        map.insert(key, version.clone());
    }
    version
}

/// The install: at the workspace root for a member (one install serves every member, from the
/// root's lockfile), else at the project's root.
pub(super) fn install_phase(
    ctx: &ProjectContext<'_>,
    workspace: Option<&WorkspaceRoot>,
    manifest: &Manifest,
    pm: &PackageManager,
) -> PhasePlan {
    if !ctx.install {
        return PhasePlan::skipped(PhaseKind::Install, "--no-install");
    }
    // A workspace's other members may need what this one does not declare.
    if manifest.deps.is_empty() && workspace.is_none() {
        return PhasePlan::skipped(PhaseKind::Install, "package.json declares no dependencies");
    }
    let root = workspace.map_or(ctx.root, |w| w.files.root.as_path());
    let pending = pending_install_marker(ctx.cache_dir, root);
    if let Some(reason) = up_to_date(root, pm).filter(|_| !pending.exists()) {
        return PhasePlan::skipped(PhaseKind::Install, reason);
    }
    // `--prefer-offline`: packages already in the package manager's own store (npm's cache,
    // pnpm's content-addressed store, yarn's cache) are used without asking the registry again,
    // so a fresh checkout with a warm store (CI restores it with actions/cache) installs offline.
    // The lockfile still pins every version and integrity hash.
    let args: &[&str] = match (pm.name, pm.lockfile) {
        ("pnpm", Some(_)) => &["install", "--frozen-lockfile", "--prefer-offline"],
        ("pnpm", None) => &["install", "--prefer-offline"],
        ("yarn", Some(_)) => &["install", "--frozen-lockfile", "--prefer-offline"],
        ("yarn", None) => &["install", "--prefer-offline"],
        (_, Some(_)) => &["ci", "--no-audit", "--no-fund", "--prefer-offline"],
        (_, None) => &["install", "--no-audit", "--no-fund", "--prefer-offline"],
    };
    // An interrupted or failed install can leave the package manager's record newer than the
    // lockfile over a broken node_modules; the marker (outside node_modules, which `npm ci`
    // deletes first) stays until an install passes, so the next run installs again.
    PhasePlan::run(PhaseKind::Install, vec![pm.command(args, root)])
        .with_pending_marker(pending)
        .with_note(pm.version_warning.clone())
}

/// Where the "install in progress" marker of the project at `root` lives.
pub(super) fn pending_install_marker(cache_dir: &Path, root: &Path) -> PathBuf {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let digest = sha2::Sha256::digest(root.to_string_lossy().as_bytes());
    let name: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    cache_dir.join("node-installs").join(format!("{name}.pending"))
}

/// Why installing again is unnecessary: the package manager's record in `node_modules` is newer
/// than both the lockfile and `package.json`.
pub(super) fn up_to_date(root: &Path, pm: &PackageManager) -> Option<String> {
    let record = match pm.name {
        "pnpm" => "node_modules/.modules.yaml",
        "yarn" => "node_modules/.yarn-integrity",
        _ => "node_modules/.package-lock.json",
    };
    let record_path = root.join(record);
    let installed =
        modified(&record_path).or_else(|| modified(&root.join("node_modules")).filter(|_| pm.name == "yarn"))?;
    let mut sources = vec!["package.json"];
    sources.extend(pm.lockfile);
    for source in &sources {
        if modified(&root.join(source)).is_none_or(|t| t > installed) {
            return None;
        }
    }
    // A member's package.json counts as much as the root's: a dependency changed there (with a
    // lockfile not yet updated, which `npm ci` would refuse) must install again, not run the
    // tests against what node_modules holds from before.
    let members = workspace_manifests(root);
    if members.iter().any(|m| modified(m).is_none_or(|t| t > installed)) {
        return None;
    }
    let members = match members.len() {
        0 => String::new(),
        n => format!(" and the members' {n} package.json file{}", if n == 1 { "" } else { "s" }),
    };
    Some(format!("dependencies up to date ({record} is newer than {}{members})", sources.join(" and ")))
}

/// The `package.json` files of a workspace's members (any in a directory below the root, outside
/// node_modules and hidden directories, four levels deep at most) when `root` declares a
/// workspace; empty otherwise.
fn workspace_manifests(root: &Path) -> Vec<PathBuf> {
    let declares = root.join("pnpm-workspace.yaml").is_file()
        || std::fs::read_to_string(root.join("package.json")).is_ok_and(|t| t.contains("\"workspaces\""));
    if !declares {
        return Vec::new();
    }
    ignore::WalkBuilder::new(root)
        .max_depth(Some(4))
        .hidden(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .flatten()
        .filter(|e| e.depth() > 1 && e.file_name() == "package.json" && e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .collect()
}

pub(super) fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_manifest_newer_than_the_install_installs_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |path: &str, text: &str, age_secs: u64| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            let at = SystemTime::now() - std::time::Duration::from_secs(age_secs);
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(at).unwrap();
        };
        write("package.json", r#"{"workspaces": ["packages/*"]}"#, 300);
        write("package-lock.json", "{}", 300);
        write("packages/a/package.json", r#"{"dependencies": {"is-number": "7.0.0"}}"#, 300);
        write("node_modules/.package-lock.json", "{}", 100);
        write("node_modules/is-number/package.json", "{}", 10);
        let npm = PackageManager {
            name: "npm",
            lockfile: Some("package-lock.json"),
            markers: Vec::new(),
            via_corepack: false,
            version_warning: None,
        };
        let reason = up_to_date(root, &npm).expect("everything older than the install");
        assert!(reason.contains("the members' 1 package.json file"), "{reason}");
        // A member bumps a dependency: install again (node_modules' own package.json files don't count).
        write("packages/a/package.json", r#"{"dependencies": {"is-number": "6.0.0"}}"#, 0);
        assert_eq!(up_to_date(root, &npm), None);
    }
}
