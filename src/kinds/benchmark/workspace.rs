//! One scratch git repository per task: its repository's base state (cloned from a git source
//! at the task's commit, or copied from plain files and committed) is made once per run and
//! copied for each task, patched (`git apply`, then `--3way`, then `patch -p1`), and diffed
//! against its base so the change an executor made can be reported as a patch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::execute::process::{self, CommandOutcome, CommandSpec, Exit, LogSink};

/// Time any one git or patch command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a scratch repository could not be made or changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(super) struct WorkspaceError(pub String);

fn run(program: &str, args: &[&str], cwd: &Path, log: &LogSink) -> CommandOutcome {
    let mut spec = CommandSpec::new(program, args, cwd);
    // The scratch commit needs an identity, whatever the machine's git configuration says.
    spec.env = vec![
        ("GIT_AUTHOR_NAME".into(), "fcorr".into()),
        ("GIT_AUTHOR_EMAIL".into(), "fcorr@localhost".into()),
        ("GIT_COMMITTER_NAME".into(), "fcorr".into()),
        ("GIT_COMMITTER_EMAIL".into(), "fcorr@localhost".into()),
    ];
    process::run(&spec, GIT_TIMEOUT, Duration::from_secs(2), log)
}

fn check(outcome: CommandOutcome, what: &str) -> Result<CommandOutcome, WorkspaceError> {
    if outcome.exit.success() {
        Ok(outcome)
    } else {
        // `Exit`'s words ("exit code 128"), as every log and message of fcorr says how a command ended.
        Err(WorkspaceError(format!("{what} failed ({}): {}", outcome.exit, outcome.output.trim())))
    }
}

/// A base once made: its directory and its [`fingerprint`].
type Made = Result<(PathBuf, u64), WorkspaceError>;
type Base = (usize, Arc<OnceLock<Made>>);

/// Every entry's path, type, size, permissions, inode and times under `dir`, hashed. Any write,
/// new file, rename or `chmod` in the tree changes it: a change always moves the status-change
/// time (ctime), which no unprivileged process can set back. Metadata only, so it costs a
/// directory walk, not a read of every file.
fn fingerprint(dir: &Path) -> std::io::Result<u64> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    fn walk(dir: &Path, hasher: &mut std::collections::hash_map::DefaultHasher) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let meta = entry.path().symlink_metadata()?;
            entry.file_name().hash(hasher);
            (meta.mode(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec())
                .hash(hasher);
            if meta.is_dir() {
                walk(&entry.path(), hasher)?;
            }
        }
        Ok(())
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::symlink_metadata(dir).map(|m| std::os::unix::fs::MetadataExt::ctime_nsec(&m).hash(&mut hasher))?;
    walk(dir, &mut hasher)?;
    Ok(hasher.finish())
}

/// The base repositories of one run, one per (repository, commit), each made by the first task
/// that needs it; every task gets a copy. Making one took 3–4 git processes (`git init`, `add`,
/// `commit` and the `maintenance` it starts, or a clone and a checkout), most of a task's
/// overhead on a small repository.
#[derive(Debug)]
pub(crate) struct Bases {
    dir: PathBuf,
    /// (repository, commit) → (its directory's number, the base once made).
    made: Mutex<HashMap<(String, Option<String>), Base>>,
}

impl Bases {
    /// Bases kept under `dir` (removed with [`Bases::remove`]).
    pub(crate) fn new(dir: PathBuf) -> Bases {
        Bases { dir, made: Mutex::new(HashMap::new()) }
    }

    /// Makes `scratch` a git repository holding the task's base state. The base lies in the
    /// output directory, within an executor's reach: it is checked unchanged before and after
    /// each copy, and when something changed it the copy is made from the source instead (the
    /// `Ok(true)` case, which the task reports).
    pub(crate) fn prepare(
        &self,
        repo: &str,
        base_dir: &Path,
        commit: Option<&str>,
        scratch: &Path,
        log: &LogSink,
    ) -> Result<bool, WorkspaceError> {
        let key = (base_dir.join(repo).to_string_lossy().into_owned(), commit.map(str::to_string));
        let (n, cell) = {
            let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
            let n = made.len();
            made.entry(key).or_insert_with(|| (n, Arc::new(OnceLock::new()))).clone()
        };
        // Other tasks of the same repository wait here while the first one makes it.
        let made = cell.get_or_init(|| {
            let base = self.dir.join(n.to_string());
            prepare(repo, base_dir, commit, &base, log)?;
            let print =
                fingerprint(&base).map_err(|e| WorkspaceError(format!("cannot read {}: {e}", base.display())))?;
            Ok((base, print))
        });
        let (base, print) = made.as_ref().map_err(Clone::clone)?;
        let unchanged = || fingerprint(base).is_ok_and(|now| now == *print);
        let _ = std::fs::remove_dir_all(scratch);
        if unchanged() {
            copy_repository(base, scratch)
                .map_err(|e| WorkspaceError(format!("cannot copy {} to {}: {e}", base.display(), scratch.display())))?;
            if unchanged() {
                return Ok(false);
            }
        }
        prepare(repo, base_dir, commit, scratch, log).map(|_| true)
    }

    /// Deletes the bases once every task has its copy.
    pub(crate) fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Copies a repository, `.git` and symbolic links included (the copy's index still describes
/// the files: git re-reads any whose timestamps changed).
fn copy_repository(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_repository(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Makes `scratch` a git repository holding the task's base state.
pub(crate) fn prepare(
    repo: &str,
    base_dir: &Path,
    commit: Option<&str>,
    scratch: &Path,
    log: &LogSink,
) -> Result<(), WorkspaceError> {
    let _ = std::fs::remove_dir_all(scratch);
    let parent = scratch.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent).map_err(|e| WorkspaceError(format!("cannot create {}: {e}", parent.display())))?;
    let local = base_dir.join(repo);
    let scratch_text = scratch.to_string_lossy().into_owned();
    let is_git = local.join(".git").exists() || !local.is_dir();
    if is_git {
        let source = if local.exists() { local.to_string_lossy().into_owned() } else { repo.to_string() };
        check(run("git", &["clone", "--quiet", "--no-hardlinks", &source, &scratch_text], parent, log), "git clone")
            .map_err(|e| WorkspaceError(format!("repo `{repo}`: {e}")))?;
        if let Some(commit) = commit {
            check(run("git", &["checkout", "--quiet", "--detach", commit], scratch, log), "git checkout")
                .map_err(|e| WorkspaceError(format!("repo `{repo}` at {commit}: {e}")))?;
        }
        return Ok(());
    }
    if commit.is_some() {
        return Err(WorkspaceError(format!("repo `{repo}` is not a git repository, so it has no commit to check out")));
    }
    crate::kinds::project::copy_tree(&local, scratch)
        .map_err(|e| WorkspaceError(format!("cannot copy {}: {e}", local.display())))?;
    // No template (its sample hooks are a dozen files to copy), and no automatic maintenance
    // process after the commit.
    check(run("git", &["init", "--quiet", "--template="], scratch, log), "git init")?;
    check(run("git", &["add", "-A"], scratch, log), "git add")?;
    check(
        run(
            "git",
            &[
                "-c",
                "commit.gpgsign=false",
                "-c",
                "maintenance.auto=false",
                "-c",
                "gc.auto=0",
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                "fcorr: task base",
            ],
            scratch,
            log,
        ),
        "git commit",
    )?;
    Ok(())
}

/// Applies a patch file; returns the method that worked.
pub(crate) fn apply_patch(scratch: &Path, patch: &Path, log: &LogSink) -> Result<&'static str, WorkspaceError> {
    let file = patch.to_string_lossy().into_owned();
    let attempts: [(&'static str, &str, Vec<&str>); 3] = [
        ("git apply", "git", vec!["apply", "--whitespace=nowarn", &file]),
        ("git apply --3way", "git", vec!["apply", "--3way", "--whitespace=nowarn", &file]),
        ("patch -p1", "patch", vec!["-p1", "--forward", "--batch", "-i", &file]),
    ];
    let mut failures = Vec::new();
    for (name, program, args) in attempts {
        let outcome = run(program, &args, scratch, log);
        if outcome.exit.success() {
            return Ok(name);
        }
        failures.push(format!("{name}: {}", first_line(&outcome)));
        // A failed three-way apply can leave conflict markers; the next method starts clean.
        let _ = run("git", &["checkout", "--quiet", "--", "."], scratch, log);
    }
    Err(WorkspaceError(format!("the patch does not apply ({})", failures.join("; "))))
}

/// Writes `patch` to `file` (kept as evidence) and applies it like [`apply_patch`].
pub(crate) fn apply_text(
    scratch: &Path,
    file: &Path,
    patch: &str,
    log: &LogSink,
) -> Result<&'static str, WorkspaceError> {
    std::fs::write(file, patch).map_err(|e| WorkspaceError(format!("cannot write {}: {e}", file.display())))?;
    apply_patch(scratch, file, log)
}

fn first_line(outcome: &CommandOutcome) -> String {
    match &outcome.exit {
        Exit::SpawnFailed { message, .. } => message.clone(),
        _ => outcome.output.lines().find(|l| !l.trim().is_empty()).unwrap_or("no output").trim().to_string(),
    }
}

/// The commit a fresh copy is at: its base. Recorded before the executor runs, because an
/// executor may commit its change (moving HEAD), which must not hide it from the diff.
pub(crate) fn head(scratch: &Path, log: &LogSink) -> Result<String, WorkspaceError> {
    let outcome = check(run("git", &["rev-parse", "--verify", "HEAD"], scratch, log), "git rev-parse HEAD")?;
    let sha = outcome.output.trim();
    if sha.len() >= 40 && sha.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(sha.to_string())
    } else {
        Err(WorkspaceError(format!("git rev-parse HEAD printed no commit: {sha}")))
    }
}

/// The change in `scratch` since its `base` commit, new files included (and staged, which
/// [`restore`] relies on).
pub(crate) fn diff(scratch: &Path, base: &str, out_file: &Path, log: &LogSink) -> Result<String, WorkspaceError> {
    check(run("git", &["add", "-A"], scratch, log), "git add")?;
    let mut spec = CommandSpec::new("git", &["diff", "--cached", "--binary", base], scratch);
    spec.stdout_file = Some(out_file.to_path_buf());
    check(process::run(&spec, GIT_TIMEOUT, Duration::from_secs(2), log), "git diff")?;
    std::fs::read(out_file)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| WorkspaceError(format!("cannot read {}: {e}", out_file.display())))
}

/// Puts the files under `paths` (files or directories, relative to the copy) back as they are
/// at `base`: changed or deleted ones are checked out again, added ones removed. Returns the
/// files that had changed. Call after [`diff`], which staged every change (so files the
/// executor added are seen too). `list_file` receives git's list.
pub(crate) fn restore(
    scratch: &Path,
    base: &str,
    paths: &[String],
    list_file: &Path,
    log: &LogSink,
) -> Result<Vec<String>, WorkspaceError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    // `literal`: a test file named `t[1].py` is that file, not a glob.
    let specs: Vec<String> = paths.iter().map(|p| format!(":(top,literal){p}")).collect();
    let mut args = vec!["diff", "--cached", "--no-renames", "--name-status", "-z", base, "--"];
    args.extend(specs.iter().map(String::as_str));
    let mut spec = CommandSpec::new("git", &args, scratch);
    spec.stdout_file = Some(list_file.to_path_buf());
    check(process::run(&spec, GIT_TIMEOUT, Duration::from_secs(2), log), "git diff --name-status")?;
    let listed =
        std::fs::read(list_file).map_err(|e| WorkspaceError(format!("cannot read {}: {e}", list_file.display())))?;
    let mut fields = listed.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).into_owned());
    let (mut changed, mut added) = (Vec::new(), Vec::new());
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        if status.starts_with('A') { added.push(path) } else { changed.push(path) }
    }
    if !changed.is_empty() {
        let specs: Vec<String> = changed.iter().map(|p| format!(":(top,literal){p}")).collect();
        let mut args = vec!["checkout", "--quiet", base, "--"];
        args.extend(specs.iter().map(String::as_str));
        check(run("git", &args, scratch, log), "git checkout (restoring test files)")?;
    }
    for path in &added {
        let file = scratch.join(path);
        std::fs::remove_file(&file).map_err(|e| WorkspaceError(format!("cannot remove {}: {e}", file.display())))?;
    }
    let mut all: Vec<String> = changed.into_iter().chain(added).collect();
    all.sort();
    Ok(all)
}

/// Report files in the copy before its tests run were not written by them (an executor can
/// plant a passing one, even dated in the future): each one matching `patterns` is dated to
/// 1970, so the collector's stale-report check leaves it out unless the tests write it again. A
/// symbolic link is removed instead (dating it would date its target, maybe outside the copy).
/// Returns the files, relative to the copy; a file that can be neither dated nor removed is an
/// error, since it could be read as this run's.
pub(crate) fn date_out_reports(scratch: &Path, patterns: &[String]) -> Result<Vec<String>, WorkspaceError> {
    let root = scratch.canonicalize().map_err(|e| WorkspaceError(format!("cannot read {}: {e}", scratch.display())))?;
    let mut found = Vec::new();
    for pattern in patterns.iter().filter(|p| !p.starts_with('!')) {
        for path in crate::collect::expand_reports(pattern, scratch, None) {
            // Only files in the copy: a pattern may name a path outside it, through `..` or a link.
            let inside = path.parent().and_then(|p| p.canonicalize().ok()).is_some_and(|p| p.starts_with(&root));
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if !inside || found.contains(&path) {
                continue;
            }
            let dated = !meta.is_symlink()
                && std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(std::time::SystemTime::UNIX_EPOCH))
                    .is_ok();
            if !dated {
                std::fs::remove_file(&path)
                    .map_err(|e| WorkspaceError(format!("cannot remove {}: {e}", path.display())))?;
            }
            found.push(path);
        }
    }
    let relative = |p: &PathBuf| {
        let p = p.strip_prefix(scratch).or_else(|_| p.strip_prefix(&root)).unwrap_or(p);
        p.display().to_string()
    };
    Ok(found.iter().map(relative).collect())
}

/// Where a suite's base repositories are made: beside its tasks' directories, under a name no
/// task's can have (`safe_name` trims leading dots).
pub(crate) fn bases_dir(out_dir: &Path, suite_id: &str) -> PathBuf {
    out_dir.join("benchmark").join(dir_name(suite_id)).join(".bases")
}

/// Where a task's files go under the output directory.
pub(crate) fn task_dir(out_dir: &Path, suite_id: &str, task_id: &str) -> PathBuf {
    out_dir.join("benchmark").join(dir_name(suite_id)).join(dir_name(task_id))
}

/// The directory name of a suite or task id: its `safe_name`, which gets a hash of the id when
/// cleaning it up changed it, and the same hash when it has capital letters, which `safe_name`
/// keeps: on a file system that ignores case (macOS's default) `Foo` and `foo` would share one
/// directory, and one task would be graded on the copy another changed.
fn dir_name(id: &str) -> String {
    let name = crate::execute::safe_name(id);
    if name == id && id.bytes().any(|b| b.is_ascii_uppercase()) {
        return format!("{name}-{}", crate::execute::id_hash(id));
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_files_become_a_repo_a_patch_applies_and_the_diff_shows_it() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("calc.sh"), "add() { echo $(($1 - $2)); }\n").unwrap();
        let scratch = dir.path().join("work/repo");
        let log = process::null_log();
        prepare("src", dir.path(), None, &scratch, &log).unwrap();
        assert!(scratch.join(".git").is_dir());

        let patch = dir.path().join("fix.patch");
        std::fs::write(
            &patch,
            "--- a/calc.sh\n+++ b/calc.sh\n@@ -1 +1 @@\n-add() { echo $(($1 - $2)); }\n+add() { echo $(($1 + $2)); }\n",
        )
        .unwrap();
        assert_eq!(apply_patch(&scratch, &patch, &log).unwrap(), "git apply");
        let diff = diff(&scratch, "HEAD", &dir.path().join("out.patch"), &log).unwrap();
        assert!(diff.contains("+add() { echo $(($1 + $2)); }"), "{diff}");
        // The source directory is untouched.
        assert!(std::fs::read_to_string(src.join("calc.sh")).unwrap().contains("$1 - $2"));
    }

    #[test]
    fn tasks_of_one_repository_get_copies_of_one_base_made_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.sh"), "echo one\n").unwrap();
        let bases = Bases::new(dir.path().join("out/.bases"));
        let log_file = dir.path().join("first.log");
        let first_log = process::capped_file_log(std::fs::File::create(&log_file).unwrap());
        let (one, two) = (dir.path().join("out/t1/repo"), dir.path().join("out/t2/repo"));
        assert!(!bases.prepare("src", dir.path(), None, &one, &first_log).unwrap());
        assert!(!bases.prepare("src", dir.path(), None, &two, &process::null_log()).unwrap());
        // One `git init` for both tasks: the second copied the base.
        drop(first_log);
        let inits = std::fs::read_to_string(&log_file).unwrap().matches("git init").count();
        assert_eq!(inits, 1);
        // Each copy is a repository of its own at the base commit.
        std::fs::write(one.join("a.sh"), "echo two\n").unwrap();
        std::fs::write(one.join("new.sh"), "echo new\n").unwrap();
        let log = process::null_log();
        let changed = diff(&one, "HEAD", &dir.path().join("one.patch"), &log).unwrap();
        assert!(changed.contains("+echo two") && changed.contains("+echo new"), "{changed}");
        assert_eq!(diff(&two, "HEAD", &dir.path().join("two.patch"), &log).unwrap(), "");
        // A base cloned from git can hold symbolic links: copies keep them.
        std::os::unix::fs::symlink("../a.sh", dir.path().join("out/.bases/0/link.sh")).unwrap();
        copy_repository(&dir.path().join("out/.bases/0"), &dir.path().join("copy")).unwrap();
        assert_eq!(std::fs::read_link(dir.path().join("copy/link.sh")).unwrap(), Path::new("../a.sh"));
        let head = |repo: &Path| run("git", &["log", "--format=%s"], repo, &log).output;
        assert_eq!(head(&two).trim(), "fcorr: task base");
        bases.remove();
        assert!(!dir.path().join("out/.bases").exists() && two.join(".git").is_dir());
        // A base that cannot be made is every task's error.
        let missing = bases.prepare("nowhere", dir.path(), Some("abc"), &dir.path().join("x"), &log);
        assert!(missing.unwrap_err().0.contains("nowhere"));
    }

    #[test]
    fn a_patch_that_fits_nothing_names_every_method_tried() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.txt"), "one\n").unwrap();
        let scratch = dir.path().join("repo");
        let log = process::null_log();
        prepare("src", dir.path(), None, &scratch, &log).unwrap();
        let patch = dir.path().join("bad.patch");
        std::fs::write(&patch, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\n+three\n").unwrap();
        let err = apply_patch(&scratch, &patch, &log).unwrap_err().to_string();
        assert!(err.contains("git apply:") && err.contains("--3way") && err.contains("patch -p1"), "{err}");
        assert_eq!(std::fs::read_to_string(scratch.join("a.txt")).unwrap(), "one\n");
    }

    #[test]
    fn a_git_source_is_cloned_at_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let log = process::null_log();
        let origin = dir.path().join("origin");
        prepare_plain(&origin, "v1\n");
        let first = git_head(&origin);
        std::fs::write(origin.join("f.txt"), "v2\n").unwrap();
        run("git", &["commit", "-qam", "v2"], &origin, &log);
        let scratch = dir.path().join("scratch");
        prepare("origin", dir.path(), Some(&first), &scratch, &log).unwrap();
        assert_eq!(std::fs::read_to_string(scratch.join("f.txt")).unwrap(), "v1\n");
        assert!(prepare("nowhere", dir.path(), None, &dir.path().join("x"), &log).is_err());
    }

    fn prepare_plain(path: &Path, content: &str) {
        let log = process::null_log();
        std::fs::create_dir_all(path).unwrap();
        std::fs::write(path.join("f.txt"), content).unwrap();
        run("git", &["init", "-q"], path, &log);
        run("git", &["add", "-A"], path, &log);
        run("git", &["-c", "commit.gpgsign=false", "commit", "-qm", "v1"], path, &log);
    }

    fn git_head(path: &Path) -> String {
        let out = std::process::Command::new("git").args(["rev-parse", "HEAD"]).current_dir(path).output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }
}
