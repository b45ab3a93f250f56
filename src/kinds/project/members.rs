//! Workspaces planned as one suite per member: a project suite whose root is an npm, pnpm or yarn
//! workspace, or holds nested Go modules, stands for its members' suites ([`expand`]), as the
//! detected ecosystem divides the tree (`Ecosystem::members`); projects of other ecosystems below
//! it with tests of their own are suites of their own (`ecosystems::layout`). Members of a node
//! workspace share one install at the root ([`SharedInstall`]); what is found and not run goes on
//! the first suite.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::ecosystems::{self, Members, ProjectFiles};
use crate::execute::process::CommandOutcome;
use crate::model::{LeftOut, Phase};
use crate::plan::{KindPlan, SuitePlan};

use super::ProjectPlan;

/// A suite that is one member of a workspace planned from its root.
#[derive(Debug, Clone)]
pub(crate) struct Membership {
    /// The workspace root (absolute): its lockfile and install serve the member.
    pub root: PathBuf,
    /// The install every member shares, when one install at the root serves them all.
    pub install: Option<Arc<SharedInstall>>,
}

/// One install phase run for several member suites: the first to get there runs it while the
/// others wait, then they all report what it did.
#[derive(Debug, Default)]
pub(crate) struct SharedInstall {
    done: Mutex<Option<(Phase, CommandOutcome)>>,
}

impl SharedInstall {
    /// Holds the install until the returned guard is dropped; the guard holds the result once a
    /// member has run it.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Option<(Phase, CommandOutcome)>> {
        // A member that panicked while installing left no result: the next one installs again.
        self.done.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The suites a planned project suite stands for: itself, or, when its root is a workspace,
/// its members (and the root too when the ecosystem runs it); when the root is the project of
/// several ecosystems with tests, one suite per ecosystem (`<suite> (python)`, `<suite> (node)`),
/// each divided the same way. What is found and not run (other ecosystems' projects below the
/// root first) goes on the first suite, but for the directories in `planned`, suites of their own;
/// a project of another ecosystem below the root with tests of its own is a suite of its own too.
/// Suites whose commands the user set (`commands.test`), samples and members themselves are not
/// expanded.
pub(super) fn expand(suite: SuitePlan, planned: &[PathBuf]) -> Vec<SuitePlan> {
    let Some(project) = suite.settings.get::<ProjectPlan>() else { return vec![suite] };
    if project.commands.test.is_some() || !project.copy_from.is_empty() || project.workspace.is_some() {
        return vec![suite];
    }
    // A root that cannot be listed is reported when the suite runs.
    let Ok(files) = ProjectFiles::scan(&suite.root) else { return vec![suite] };
    let layout = ecosystems::layout(&files, project.ecosystem.as_deref(), project.framework.as_deref());
    let named = |left: &[LeftOut]| -> Vec<LeftOut> {
        left.iter()
            .filter(|l| !planned.contains(&suite.root.join(&l.path)))
            .map(|l| LeftOut { path: join(&suite.display_path, &l.path), reason: l.reason.clone() })
            .collect()
    };
    let mut left_out = named(&layout.left_out);
    let split = layout.projects.len() > 1;
    let mut out = Vec::new();
    for (ecosystem, members) in &layout.projects {
        let mut project = project.clone();
        let mut root = suite.clone();
        if split {
            // The user named no runner: each suite runs the one it stands for.
            project.ecosystem = Some(ecosystem.to_string());
            root.id = format!("{} ({ecosystem})", suite.id);
            root.name = format!("{} ({ecosystem})", suite.name);
        }
        left_out.extend(named(&members.left_out));
        out.extend(divide(root, project, members, std::mem::take(&mut left_out), &suite));
    }
    if out.is_empty() {
        // Nothing detected: the suite says so when it runs.
        out.push(suite);
        return out;
    }
    for dir in layout.below.iter().filter(|dir| !planned.contains(&suite.root.join(dir))) {
        out.extend(expand(below(&suite, project, dir), planned));
    }
    out
}

/// The suite of a project of another ecosystem with tests of its own at `dir` below the planned
/// suite `base`'s root: detected there afresh, with `base`'s other settings (timeouts, env,
/// retries), as if it had been named on the command line.
fn below(base: &SuitePlan, project: &ProjectPlan, dir: &str) -> SuitePlan {
    let own = ProjectPlan {
        ecosystem: None,
        framework: None,
        workspace: None,
        left_out: Vec::new(),
        reports: Vec::new(),
        ..project.clone()
    };
    suite_at(base, dir, own)
}

/// The suite at `dir` below the planned suite `base`'s root, named from it, running `project`.
fn suite_at(base: &SuitePlan, dir: &str, project: ProjectPlan) -> SuitePlan {
    SuitePlan {
        id: join(&base.id, dir),
        name: join(&base.name, dir),
        display_path: join(&base.display_path, dir),
        root: base.root.join(dir),
        settings: KindPlan::new(project),
        ..base.clone()
    }
}

/// The suites of one ecosystem's project at the root: the root suite `root` (unless only its
/// members run) and one per member, named from the planned suite `base`; `left_out` goes on the
/// first.
fn divide(
    root: SuitePlan,
    mut project: ProjectPlan,
    members: &Members,
    mut left_out: Vec<LeftOut>,
    base: &SuitePlan,
) -> Vec<SuitePlan> {
    if members.run.is_empty() {
        project.left_out = left_out;
        return vec![SuitePlan { settings: KindPlan::new(project), ..root }];
    }
    let shared = members.shared_install.then(|| Arc::new(SharedInstall::default()));
    let mut out = Vec::new();
    if !members.members_only {
        let mut own = project.clone();
        own.left_out = std::mem::take(&mut left_out);
        // A node workspace root that runs its own tests installs with its members, once.
        own.workspace = shared.clone().map(|install| Membership { root: base.root.clone(), install: Some(install) });
        out.push(SuitePlan { settings: KindPlan::new(own), ..root });
    }
    for dir in &members.run {
        let mut member = project.clone();
        member.workspace = Some(Membership { root: base.root.clone(), install: shared.clone() });
        member.left_out = std::mem::take(&mut left_out);
        out.push(suite_at(base, dir, member));
    }
    out
}

/// Drops what planning named as not run when the suite's results hold cases from it: the tool ran
/// it after all (its configuration read otherwise than fcorr read it), and "not run" beside its
/// own failing test would contradict the report. A part holding the suite's own directory stays:
/// every case is below it. Case files are relative to the suite; left-out paths, as the suite's
/// `path`, to where the run started.
pub(super) fn drop_left_out_that_ran(suite: &mut crate::model::Suite) {
    if suite.left_out.is_empty() {
        return;
    }
    let display_path = suite.path.as_deref().unwrap_or(".");
    let files: std::collections::BTreeSet<&str> = suite
        .cases
        .iter()
        .filter_map(|c| c.file.as_deref())
        .filter(|f| !std::path::Path::new(f).is_absolute())
        .collect();
    let ran: Vec<String> = files.into_iter().map(|f| join(display_path, f)).collect();
    let own = display_path.trim_end_matches('/');
    suite.left_out.retain(|l| {
        let dir = l.path.trim_end_matches('/');
        under(own, dir) || !ran.iter().any(|f| under(f, dir))
    });
}

/// True when `path` is `dir` or below it.
fn under(path: &str, dir: &str) -> bool {
    path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// `base/rel`, or `rel` alone when `base` is the current directory.
fn join(base: &str, rel: &str) -> String {
    match base.trim_end_matches('/') {
        "" | "." => rel.to_string(),
        base => format!("{base}/{rel}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_whose_cases_ran_is_not_named_as_not_run() {
        let mut suite = crate::model::Suite::new("s", "s", crate::model::SuiteKind::Project);
        suite.path = Some("repo".into());
        let case = |file: &str| crate::model::Case { file: Some(file.into()), ..crate::model::Case::default() };
        suite.cases = vec![case("libs/sub/tests/test_sub.py"), case("tests/test_root.py")];
        let left = |path: &str| LeftOut { path: path.into(), reason: "r".into() };
        suite.left_out = vec![left("repo/libs/sub"), left("repo/libs/subway"), left("repo"), left("repo/tools")];
        drop_left_out_that_ran(&mut suite);
        let kept: Vec<&str> = suite.left_out.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(kept, ["repo/libs/subway", "repo", "repo/tools"]);
    }

    #[test]
    fn member_names_join_the_root_name() {
        assert_eq!(join(".", "packages/a"), "packages/a");
        assert_eq!(join("web/", "packages/a"), "web/packages/a");
        assert_eq!(join("/abs/repo", "exp"), "/abs/repo/exp");
    }
}
