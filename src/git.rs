//! Git facts about the code under test (commit, branch, dirty), read with the `git` command.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::model::GitInfo;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let mut command = Command::new("git");
    // Read after the tests ran, in a checkout they could have configured (`core.fsmonitor` runs a
    // command): git gets no secret either.
    for name in crate::secrets::withheld() {
        command.env_remove(name);
    }
    let output = command.args(args).current_dir(dir).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Commit, branch and dirty flag of the checkout containing `dir`; `None` outside git.
pub(crate) fn info(dir: &Path) -> Option<GitInfo> {
    let commit = git(dir, &["rev-parse", "HEAD"])?;
    let branch = git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD");
    let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(GitInfo { commit: Some(commit), branch, dirty })
}
