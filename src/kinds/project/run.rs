//! The project runner's loop: detect → install → build → test → collect for one suite, with
//! the user's `commands.*` overrides, phase locks and pending markers, then retries
//! ([`super::retry`]). The processes themselves run through [`crate::execute::process`].

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::collect::ReportSpec;
use crate::ecosystems::{self, CollectContext, Ecosystem, PhasePlan, ProjectContext, ProjectFiles};
use crate::events::{Event, EventSink};
use crate::execute::process::{self, CommandOutcome, CommandSpec, Exit, LogSink};
use crate::execute::{ExecContext, apply_collected, interrupted_text, safe_name, signal_text};
use crate::model::{
    Detection, Phase, PhaseKind, PhaseStatus, Severity, Suite, SuiteError, SuiteErrorKind, SuiteStatus,
};
use crate::plan::SuitePlan;
use crate::runners::{failed_suite, new_suite};

use super::ProjectPlan;
use super::retry;

/// Bytes of each phase's output kept in `results.json`.
const PHASE_TAIL_BYTES: usize = 8 * 1024;

/// Runs a project suite: detect → install → build → test → collect (the `project` runner's work).
/// Each step records on `suite` what stops it and returns `None`; the suite is then the result.
pub(crate) fn run_project(plan: &SuitePlan, project: &ProjectPlan, ctx: &ExecContext, sink: &dyn EventSink) -> Suite {
    let mut suite = new_suite(plan);
    let Some((work_dir, log)) = open_work_dir_and_log(plan, ctx, sink, &mut suite) else { return suite };
    let Some((root, files)) = find_project(plan, project, &work_dir, &mut suite) else { return suite };
    let Some((detection, ecosystem)) = detect(plan, project, &files, &mut suite, sink) else { return suite };
    let plan_ctx = ProjectContext {
        root: &root,
        files: &files,
        detection: &detection,
        work_dir: &work_dir,
        cache_dir: &ctx.cache_dir,
        install: project.install,
        run_script_steps: project.run_script_steps,
        build_script: project.build_script,
        dry_run: false,
    };
    let Some(phases) = plan_phases(ecosystem, &plan_ctx, project, &mut suite) else { return suite };
    let runner = PhaseRunner { plan, project, ctx, sink, ecosystem, plan_ctx: &plan_ctx, log: &log };
    let ran = runner.run_all(&phases, &mut suite);
    match ran.test {
        Some(test) => runner.collect_and_retry(test, &mut suite),
        None if ran.blocked.is_none() && suite.error.is_none() && suite.status != SuiteStatus::Cancelled => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::Harness,
                message: "no test phase was planned for this project".into(),
                hint: Some("set `commands.test` in fcorr.toml".into()),
            });
        }
        None => {}
    }
    super::members::drop_left_out_that_ran(&mut suite);
    // Read and collected: what the tools wrote there goes out with the output directory.
    crate::secrets::redact_files_under(&work_dir);
    suite
}

/// Creates the suite's work directory and its log file (`logs/<suite>.log`), whose output the
/// progress display taps for a long phase's last line.
fn open_work_dir_and_log(
    plan: &SuitePlan,
    ctx: &ExecContext,
    sink: &dyn EventSink,
    suite: &mut Suite,
) -> Option<(PathBuf, LogSink)> {
    let name = safe_name(&plan.id);
    let work_dir = ctx.out_dir.join("work").join(&name);
    let log_path = ctx.out_dir.join("logs").join(format!("{name}.log"));
    if let Err(e) = fs::create_dir_all(&work_dir).and_then(|_| fs::create_dir_all(ctx.out_dir.join("logs"))) {
        *suite =
            failed_suite(plan, SuiteErrorKind::Harness, format!("cannot create {}: {e}", work_dir.display()), None);
        return None;
    }
    let log = match File::create(&log_path) {
        Ok(file) => {
            // The tap lets the progress display show the last output line of a long phase.
            let (log, tap) = crate::events::tapped_log(process::capped_file_log(file));
            sink.emit(Event::Output { suite_id: plan.id.clone(), tap });
            log
        }
        Err(e) => {
            let message = format!("cannot create {}: {e}", log_path.display());
            *suite = failed_suite(plan, SuiteErrorKind::Harness, message, None);
            return None;
        }
    };
    suite.log_file = Some(format!("logs/{name}.log"));
    Some((work_dir, log))
}

/// The directory the suite runs in (a scratch copy in samples mode) and its listing, which a
/// workspace member's ecosystem reads with its workspace root.
fn find_project(
    plan: &SuitePlan,
    project: &ProjectPlan,
    work_dir: &Path,
    suite: &mut Suite,
) -> Option<(PathBuf, ProjectFiles)> {
    let root = match prepare_root(plan, project, work_dir) {
        Ok(root) => root,
        Err(error) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(error);
            return None;
        }
    };
    suite.left_out = project.left_out.clone();
    match ProjectFiles::scan(&root) {
        Ok(files) => {
            let files = ProjectFiles { workspace: project.workspace.as_ref().map(|w| w.root.clone()), ..files };
            Some((root, files))
        }
        Err(e) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::Input,
                message: format!("{}: {e}", plan.display_path),
                hint: Some("check the suite's `path`".into()),
            });
            None
        }
    }
}

/// Detects the project (or takes the runner the suite names) and records the detection on the
/// suite; a project no ecosystem recognises, or one with a problem, stops the suite.
fn detect(
    plan: &SuitePlan,
    project: &ProjectPlan,
    files: &ProjectFiles,
    suite: &mut Suite,
    sink: &dyn EventSink,
) -> Option<(Detection, &'static dyn Ecosystem)> {
    let forced = project.ecosystem.as_deref().or_else(|| {
        // Only a test command and no runner: the user describes the project fully.
        project.commands.test.as_ref().map(|_| "command")
    });
    let report = ecosystems::detect_best(files, forced, project.framework.as_deref());
    let Some(candidate) = report.best else {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError {
            kind: SuiteErrorKind::Input,
            message: format!("{}: no project detected: {}", plan.display_path, report.explanation),
            hint: None,
        });
        return None;
    };
    sink.emit(Event::Detected { suite_id: plan.id.clone(), detection: candidate.detection.clone() });
    suite.detection = Some(candidate.detection.clone());
    if let Some(problem) = candidate.problem {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError { kind: SuiteErrorKind::Input, message: problem, hint: None });
        return None;
    }
    let Some(ecosystem) = ecosystems::by_name(&candidate.detection.ecosystem) else {
        let message = format!("unknown runner `{}`", candidate.detection.ecosystem);
        *suite = failed_suite(plan, SuiteErrorKind::Harness, message, None);
        return None;
    };
    Some((candidate.detection, ecosystem))
}

/// The ecosystem's phases with the user's `commands.*` and `reports` in place of its own.
fn plan_phases(
    ecosystem: &dyn Ecosystem,
    plan_ctx: &ProjectContext<'_>,
    project: &ProjectPlan,
    suite: &mut Suite,
) -> Option<Vec<PhasePlan>> {
    match ecosystem.plan(plan_ctx) {
        Ok(mut phases) => {
            apply_overrides(&mut phases, project, plan_ctx.root);
            Some(phases)
        }
        Err(e) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError { kind: SuiteErrorKind::Input, message: e.to_string(), hint: None });
            None
        }
    }
}

/// What running one suite's phases needs: the suite, the machinery, and the ecosystem that
/// planned them.
struct PhaseRunner<'a> {
    plan: &'a SuitePlan,
    project: &'a ProjectPlan,
    ctx: &'a ExecContext,
    sink: &'a dyn EventSink,
    ecosystem: &'a dyn Ecosystem,
    plan_ctx: &'a ProjectContext<'a>,
    log: &'a LogSink,
}

/// What the phases left for collecting.
#[derive(Default)]
struct Ran {
    /// Why the phases after a failed one did not run.
    blocked: Option<&'static str>,
    /// The test phase, when it ran (passing, failing, or stopped by its timeout or a stop
    /// signal: what finished before still counts).
    test: Option<TestRun>,
}

/// A test phase that ran: what collecting and retrying its cases need.
struct TestRun {
    /// The phase as planned (before `--rerun-failed` narrowed it): retries narrow this one.
    planned: PhasePlan,
    /// What is left of the test timeout, for retries.
    budget: Duration,
    reports: Vec<ReportSpec>,
    /// The file the last test command's stdout went to (a report on stdout).
    stdout_file: Option<PathBuf>,
    outcome: CommandOutcome,
    /// When the test phase began: a report file last written before it is left from an earlier run.
    started: std::time::SystemTime,
    /// `--rerun-failed`: the ids of the earlier run's cases this run selected.
    rerun_ids: Option<Vec<String>>,
    /// The test command failed to compile part of the project (`build_failure_in_test`): the
    /// suite stays `build-failed`; the cases of the parts it did test are kept, not retried.
    build_failed: bool,
}

impl PhaseRunner<'_> {
    /// Runs the phases in order; one that fails blocks those after it. A checking build phase
    /// (`tsc --noEmit`) runs alongside the tests when the test phase will run.
    fn run_all(&self, phases: &[PhasePlan], suite: &mut Suite) -> Ran {
        let mut ran = Ran::default();
        let mut rerun_ids = None;
        let test_runs = phases.iter().any(|p| p.kind == PhaseKind::Test && p.skip.is_none());
        std::thread::scope(|scope| {
            let mut alongside: Option<std::thread::ScopedJoinHandle<'_, (Phase, CommandOutcome)>> = None;
            for phase_plan in phases {
                if let Some(phase) = self.skipped(phase_plan, ran.blocked) {
                    suite.phases.push(phase);
                    continue;
                }
                let (phase_plan, unnarrowed) = self.refine(phase_plan, suite, &mut rerun_ids);
                let kind = phase_plan.kind;
                let timeout = self.timeout(kind);
                let command_line =
                    phase_plan.commands.iter().map(CommandSpec::display).collect::<Vec<_>>().join(" && ");
                if kind == PhaseKind::Build && phase_plan.alongside_tests && test_runs {
                    self.started(kind, &command_line);
                    let (grace, project, log) = (self.ctx.grace, self.project, self.log);
                    // The tests are the longer path: the check takes what they leave idle.
                    let mut phase_plan = phase_plan;
                    for command in &mut phase_plan.commands {
                        command.background = true;
                    }
                    alongside =
                        Some(scope.spawn(move || run_phase(&phase_plan, &command_line, timeout, grace, project, log)));
                    continue;
                }
                // Before the phase, not after it: a check running alongside the tests is waited
                // for below, after the tests ended.
                let phase_started = std::time::SystemTime::now();
                let (phase, outcome) = self.run_or_share(&phase_plan, &command_line, timeout);
                // The build that ran alongside the tests decides whether their results count.
                if let Some(build) = alongside.take()
                    && let Some(reason) = self.settle_alongside(build, suite)
                {
                    ran.blocked = Some(reason);
                    let mut skipped = skipped_phase(
                        &phase_plan,
                        format!("{reason}: the tests ran alongside the build check, and their results are not counted"),
                    );
                    skipped.duration_ms = phase.duration_ms;
                    self.finished(&skipped);
                    suite.phases.push(skipped);
                    continue;
                }
                self.finished(&phase);
                let planned = unnarrowed.unwrap_or_else(|| phase_plan.clone());
                self.record(phase, (outcome, phase_started), &phase_plan, planned, suite, &mut ran);
            }
            // A test phase that could not start left the build running alone: its result still counts.
            if let Some(build) = alongside.take() {
                self.settle_alongside(build, suite);
            }
        });
        if let Some(test) = &mut ran.test {
            test.rerun_ids = rerun_ids;
        }
        ran
    }

    /// A phase that does not run, recorded as skipped with why: an earlier phase blocked it, its
    /// ecosystem skipped it, or `--no-install`. `None` when it runs.
    fn skipped(&self, phase_plan: &PhasePlan, blocked: Option<&str>) -> Option<Phase> {
        if let Some(reason) = blocked.map(str::to_string).or_else(|| phase_plan.skip.clone()) {
            let phase = skipped_phase(phase_plan, reason);
            self.finished(&phase);
            return Some(phase);
        }
        (phase_plan.kind == PhaseKind::Install && !self.project.install)
            .then(|| skipped_phase(phase_plan, "--no-install".into()))
    }

    /// The phase as it runs, with version-dependent flags chosen now that the earlier phases
    /// (install) have run; under `--rerun-failed`, the test phase narrowed to the earlier run's
    /// cases, returned with the phase as planned (retries narrow that one: the selection would
    /// otherwise stay).
    fn refine(
        &self,
        phase_plan: &PhasePlan,
        suite: &mut Suite,
        rerun_ids: &mut Option<Vec<String>>,
    ) -> (PhasePlan, Option<PhasePlan>) {
        let mut refined = phase_plan.clone();
        self.ecosystem.refine_phase(self.plan_ctx, &mut refined);
        let mut unnarrowed = None;
        if let (PhaseKind::Test, Some(only), None) =
            (refined.kind, &self.project.rerun_only, &self.project.commands.test)
        {
            suite.rerun_of = Some(only.of.clone());
            match retry::narrow_for_rerun(self.ecosystem, &refined, only) {
                Ok((narrowed, ids)) => {
                    unnarrowed = Some(std::mem::replace(&mut refined, narrowed));
                    *rerun_ids = Some(ids);
                }
                Err(why) => retry::note(suite, Severity::Warning, format!("--rerun-failed: {why}")),
            }
        }
        (refined, unnarrowed)
    }

    /// Runs the phase. Members of a workspace share its one install: the first runs it, the
    /// others wait and report what it did.
    fn run_or_share(&self, phase_plan: &PhasePlan, command_line: &str, timeout: Duration) -> (Phase, CommandOutcome) {
        let mut shared = (phase_plan.kind == PhaseKind::Install)
            .then(|| self.project.workspace.as_ref().and_then(|w| w.install.as_ref()))
            .flatten()
            .map(|install| install.lock());
        let (phase, outcome) = match shared.as_deref() {
            Some(Some((phase, outcome))) => {
                let mut phase = phase.clone();
                let note = "one install at the workspace root for every member";
                phase.note = Some(phase.note.map_or_else(|| note.to_string(), |n| format!("{note}; {n}")));
                (phase, outcome.clone())
            }
            _ => {
                self.started(phase_plan.kind, command_line);
                run_phase(phase_plan, command_line, timeout, self.ctx.grace, self.project, self.log)
            }
        };
        if let Some(done) = shared.as_deref_mut().filter(|done| done.is_none()) {
            *done = Some((phase.clone(), outcome.clone()));
        }
        (phase, outcome)
    }

    /// Records a phase that ran and what it means for the suite: one that could not start, was
    /// cancelled, timed out or failed sets the suite's status and blocks the phases after it; a
    /// test phase that ran (even one stopped by a timeout or a stop signal) is kept for collecting (`planned` is it before narrowing;
    /// `started` when it began, so reports older than that are not read as its own).
    fn record(
        &self,
        phase: Phase,
        (outcome, started): (CommandOutcome, std::time::SystemTime),
        phase_plan: &PhasePlan,
        planned: PhasePlan,
        suite: &mut Suite,
        ran: &mut Ran,
    ) {
        let kind = phase_plan.kind;
        let root = self.plan_ctx.root;
        if let Exit::SpawnFailed { message, not_found } = &outcome.exit {
            record_spawn_failure(kind, message, *not_found, suite, ran);
            suite.phases.push(phase);
            return;
        }
        match (kind, phase.status) {
            // A test phase that was stopped is still collected (below): the tests that finished
            // before the signal keep their results, as they do when the phase times out.
            (_, PhaseStatus::Cancelled) if kind != PhaseKind::Test => {
                suite.status = SuiteStatus::Cancelled;
                ran.blocked = Some("cancelled");
            }
            (_, PhaseStatus::Failed) if let Some(message) = self.ecosystem.rejected_tool_version(&outcome.output) => {
                record_rejected_tool(kind, &message, suite, ran);
            }
            (PhaseKind::Test, PhaseStatus::Failed)
                if let Some(diagnostics) = self.ecosystem.build_failure_in_test(&outcome.output, root) =>
            {
                // The test command compiles first (one Maven run): a compile error is a build failure.
                record_build_failure_in_test(&phase, diagnostics, suite);
                ran.blocked = Some("build failed");
                // The same run tested what did compile (`go test` over several packages, `mvn
                // --fail-at-end` over several modules): those results are kept beside it.
                let mut test = self.test_run(&phase, phase_plan, planned, (outcome, started));
                test.build_failed = true;
                ran.test = Some(test);
            }
            (PhaseKind::Test, _) => {
                if phase.status == PhaseStatus::Cancelled {
                    // Set before collecting: the guards keep the cases of a cancelled suite and
                    // judge nothing from an exit fcorr caused itself.
                    suite.status = SuiteStatus::Cancelled;
                }
                ran.test = Some(self.test_run(&phase, phase_plan, planned, (outcome, started)));
            }
            (_, PhaseStatus::Timeout) => {
                suite.status = SuiteStatus::Timeout;
                ran.blocked = Some("an earlier phase timed out");
            }
            (PhaseKind::Install, PhaseStatus::Failed) => {
                suite.status = SuiteStatus::InstallFailed;
                ran.blocked = Some("install failed");
            }
            (PhaseKind::Build, PhaseStatus::Failed) => {
                suite.status = SuiteStatus::BuildFailed;
                suite.diagnostics.extend(self.ecosystem.build_diagnostics(&outcome.output, root));
                ran.blocked = Some("build failed");
            }
            _ => {}
        }
        suite.phases.push(phase);
    }

    /// What collecting and retrying the test phase that ran need.
    fn test_run(
        &self,
        phase: &Phase,
        phase_plan: &PhasePlan,
        planned: PhasePlan,
        (outcome, started): (CommandOutcome, std::time::SystemTime),
    ) -> TestRun {
        TestRun {
            planned,
            budget: self.timeout(phase_plan.kind).saturating_sub(Duration::from_millis(phase.duration_ms)),
            reports: phase_plan.reports.clone(),
            stdout_file: phase_plan.commands.last().and_then(|c| c.stdout_file.clone()),
            started,
            outcome,
            rerun_ids: None,
            build_failed: false,
        }
    }

    /// Collects the test phase's cases through the truthfulness guards, then retries the failed
    /// ones (only fcorr's own test commands can be narrowed; a user's `commands.test` is opaque).
    /// After a build failure inside the test command, only keeps the cases it produced.
    fn collect_and_retry(&self, test: TestRun, suite: &mut Suite) {
        let (root, work_dir) = (self.plan_ctx.root, self.plan_ctx.work_dir);
        let collect_ctx = CollectContext {
            root,
            work_dir,
            reports: &test.reports,
            outcome: &test.outcome,
            started: Some(test.started),
        };
        let mut collected = self.ecosystem.collect(&collect_ctx);
        if test.rerun_ids.is_some() {
            // A rerun runs the failed tests only: what it did not reach was not left out.
            collected.left_out.clear();
        }
        if test.build_failed {
            keep_beside_build_failure(suite, collected);
            flag_cut_stdout_report(suite, &test.outcome, test.stdout_file.as_deref());
            return;
        }
        apply_collected(suite, collected, Some(&test.outcome));
        flag_cut_stdout_report(suite, &test.outcome, test.stdout_file.as_deref());
        if let Some(ids) = &test.rerun_ids {
            // Tests the name filter left out are reported as skipped by some frameworks (jest,
            // vitest, node): they did not run again, so they are not part of this run.
            suite.cases.retain(|c| c.status != crate::model::CaseStatus::Skipped || ids.iter().any(|id| *id == c.id));
            suite.counts = crate::model::Counts::of(&suite.cases);
        }
        if self.project.commands.test.is_some() {
            return;
        }
        let run = retry::RetryRun {
            ecosystem: self.ecosystem,
            test: &test.planned,
            root,
            work_dir,
            suite_id: &self.plan.id,
            budget: test.budget,
            grace: self.ctx.grace,
            project: self.project,
            log: self.log,
            sink: self.sink,
        };
        retry::retry_failed(suite, &run, self.project.retries, self.project.retries_policy);
    }

    fn timeout(&self, kind: PhaseKind) -> Duration {
        match kind {
            PhaseKind::Install => self.project.timeouts.install,
            PhaseKind::Build => self.project.timeouts.build,
            PhaseKind::Test => self.project.timeouts.test,
        }
    }

    fn started(&self, phase: PhaseKind, command: &str) {
        self.sink.emit(Event::PhaseStarted { suite_id: self.plan.id.clone(), phase, command: command.to_string() });
    }

    fn finished(&self, phase: &Phase) {
        self.sink.emit(Event::PhaseFinished { suite_id: self.plan.id.clone(), phase: phase.clone() });
    }

    /// Waits for the build that ran alongside the tests and records it, before the test phase. When
    /// it did not pass, sets the suite's status (and the build's diagnostics) and returns why the
    /// tests' results do not count; a build a stop signal cut short leaves them counted.
    fn settle_alongside(
        &self,
        build: std::thread::ScopedJoinHandle<'_, (Phase, CommandOutcome)>,
        suite: &mut Suite,
    ) -> Option<&'static str> {
        let (phase, outcome) = match build.join() {
            Ok(done) => done,
            Err(_) => {
                // run_phase does not panic; if it ever did, the suite says so rather than pass.
                suite.status = SuiteStatus::Error;
                suite.error = Some(SuiteError {
                    kind: SuiteErrorKind::Harness,
                    message: "the build phase stopped unexpectedly".into(),
                    hint: None,
                });
                return Some("the build phase stopped unexpectedly");
            }
        };
        self.finished(&phase);
        let reason = match (&outcome.exit, phase.status) {
            (Exit::SpawnFailed { message, not_found }, _) => {
                suite.status = SuiteStatus::Error;
                suite.error = Some(SuiteError {
                    kind: if *not_found { SuiteErrorKind::ToolMissing } else { SuiteErrorKind::Harness },
                    message: format!("build phase: {message}"),
                    hint: not_found
                        .then(|| "install the tool, or set `commands` for this suite in fcorr.toml".to_string()),
                });
                Some("an earlier phase could not start")
            }
            (_, PhaseStatus::Passed) => None,
            (_, PhaseStatus::Cancelled) => {
                // Stopped by the signal that stopped the tests, not failed: the suite is
                // cancelled (it never passes), and the tests that finished before the signal
                // are still collected, whichever of the two commands the signal caught first.
                suite.status = SuiteStatus::Cancelled;
                None
            }
            (_, PhaseStatus::Timeout) => {
                suite.status = SuiteStatus::Timeout;
                Some("the build phase timed out")
            }
            _ => {
                suite.status = SuiteStatus::BuildFailed;
                suite.diagnostics.extend(self.ecosystem.build_diagnostics(&outcome.output, self.plan_ctx.root));
                Some("build failed")
            }
        };
        suite.phases.push(phase);
        reason
    }
}

/// In samples mode, copies `expected/` and `tests/` into a scratch root; else the suite's root.
fn prepare_root(plan: &SuitePlan, project: &ProjectPlan, work_dir: &Path) -> Result<PathBuf, SuiteError> {
    if !plan.root.exists() {
        return Err(SuiteError {
            kind: SuiteErrorKind::Input,
            message: match &plan.origin {
                Some(origin) => format!("{}: no such directory (the suite's `path`, {origin})", plan.display_path),
                None => format!("{}: no such directory", plan.display_path),
            },
            hint: Some("check the path (config paths are relative to the config file)".into()),
        });
    }
    if project.copy_from.is_empty() {
        return Ok(plan.root.clone());
    }
    let scratch = work_dir.join("src");
    let _ = fs::remove_dir_all(&scratch);
    for from in &project.copy_from {
        copy_tree(from, &scratch).map_err(|e| SuiteError {
            kind: SuiteErrorKind::Harness,
            message: format!("cannot copy {} into {}: {e}", from.display(), scratch.display()),
            hint: None,
        })?;
    }
    Ok(scratch)
}

/// Directories a project copy leaves out: what the run's own install and build make again
/// (dependencies, virtualenvs, build output, caches). `vendor/` is not among them: vendored Go
/// modules or PHP packages are the project's source, and a copy without them builds other code.
const NOT_COPIED: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".gradle",
    "fcorr-out",
];

/// Copies a project tree for a run in a scratch directory, as `cp -a` would for what it keeps:
/// symbolic links stay links (a repository's `bin -> scripts/bin` or a relative config link
/// must work the same in the copy; dropping them made tests fail that pass in the original).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &target)?;
        } else if kind.is_dir() {
            if NOT_COPIED.contains(&entry.file_name().to_string_lossy().as_ref()) {
                continue;
            }
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Replaces planned commands with the user's `commands.*` overrides.
fn apply_overrides(phases: &mut Vec<PhasePlan>, plan: &ProjectPlan, root: &Path) {
    let overrides = [
        (PhaseKind::Install, &plan.commands.install),
        (PhaseKind::Build, &plan.commands.build),
        (PhaseKind::Test, &plan.commands.test),
    ];
    for (kind, script) in overrides {
        let Some(script) = script else { continue };
        let mut user = CommandSpec::shell(script, root);
        match phases.iter_mut().find(|p| p.kind == kind) {
            Some(existing) => {
                // The ecosystem's setup (e.g. the virtualenv) still runs, and the override
                // inherits its environment, so an overridden install lands where tests look.
                user.env = std::mem::take(&mut existing.override_env);
                let mut commands = std::mem::take(&mut existing.override_setup);
                // The setup can tell whether what it prepares was filled by this same script
                // (Python remakes a venv an earlier, different install filled).
                for setup in &mut commands {
                    setup.env.push(("FCORR_INSTALL_OVERRIDE".into(), script.clone()));
                }
                commands.push(user);
                let reports = std::mem::take(&mut existing.reports);
                // The override changes the shared environment the lock guards, as the
                // ecosystem's own commands would.
                let lock = existing.lock.take();
                *existing = PhasePlan::run(kind, commands).with_reports(reports);
                existing.lock = lock;
            }
            None => phases.push(PhasePlan::run(kind, vec![user])),
        }
    }
    // The ecosystem's test command checked the build; the user's may compile nothing.
    if plan.commands.test.is_some()
        && plan.commands.build.is_none()
        && let Some(build) = phases.iter_mut().find(|p| p.kind == PhaseKind::Build && !p.separate_check.is_empty())
    {
        build.commands = std::mem::take(&mut build.separate_check);
        build.skip = None;
    }
    if !plan.reports.is_empty()
        && let Some(test) = phases.iter_mut().find(|p| p.kind == PhaseKind::Test)
    {
        test.reports = plan.reports.clone();
    }
    phases.sort_by_key(|p| p.kind);
}

fn skipped_phase(plan: &PhasePlan, note: String) -> Phase {
    Phase {
        kind: plan.kind,
        command: plan.commands.iter().map(CommandSpec::display).collect::<Vec<_>>().join(" && "),
        status: PhaseStatus::Skipped,
        exit_code: None,
        duration_ms: 0,
        log_tail: String::new(),
        note: Some(note),
    }
}

/// Runs a phase's commands in order within one time budget; stops at the first failure.
pub(super) fn run_phase(
    plan: &PhasePlan,
    command_line: &str,
    timeout: Duration,
    grace: Duration,
    project: &ProjectPlan,
    log: &LogSink,
) -> (Phase, CommandOutcome) {
    let started = Instant::now();
    let mut output = String::new();
    // Until a command runs: a phase with no command planned passes.
    let mut last = CommandOutcome::none_ran();
    // The lock is held until the phase ends (dropping the file releases it).
    let (_held, commands) = match plan.lock.as_deref().map(|path| wait_for_lock(path, timeout, log)).transpose() {
        Ok(held) => (held, &plan.commands[..]),
        Err(exit) => {
            last.exit = exit;
            (None, &[][..])
        }
    };
    if let Some(marker) = &plan.pending_marker {
        // Best effort: without the marker a later run falls back to the package manager's record.
        let _ = marker.parent().map(fs::create_dir_all);
        let _ = fs::write(marker, b"");
    }
    for command in commands {
        let mut command = command.clone();
        command.env.extend(project.env.iter().cloned());
        command.pass_env.extend(project.pass_env.iter().cloned());
        let left = timeout.saturating_sub(started.elapsed());
        let previous = std::mem::replace(&mut last, process::run(&command, left, grace, log));
        if let Some(message) = shell_command_not_found(&command, &last) {
            last.exit = Exit::SpawnFailed { message, not_found: true };
        }
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(&last.output);
        // A later test command that passes must not hide an earlier one's failing exit.
        if !previous.exit.success() && last.exit.success() {
            last.exit = previous.exit;
        }
        // Tests report failures through their exit code; every test command still runs.
        if !last.exit.success() && plan.kind != PhaseKind::Test {
            break;
        }
    }
    if let (Some(marker), true) = (&plan.pending_marker, last.exit.success()) {
        let _ = fs::remove_file(marker);
    }
    let status = match &last.exit {
        Exit::Code(0) => PhaseStatus::Passed,
        Exit::Code(_) | Exit::Signal(_) => PhaseStatus::Failed,
        Exit::TimedOut => PhaseStatus::Timeout,
        Exit::Cancelled => PhaseStatus::Cancelled,
        Exit::SpawnFailed { .. } => PhaseStatus::Error,
    };
    let note = match &last.exit {
        Exit::TimedOut => Some(format!("killed after the {}s timeout", timeout.as_secs())),
        Exit::Cancelled => Some(format!("stopped: {}", interrupted_text())),
        Exit::Signal(signal) => Some(signal_text(*signal)),
        Exit::SpawnFailed { message, .. } => Some(message.clone()),
        _ => plan.note.clone(),
    };
    let phase = Phase {
        kind: plan.kind,
        command: command_line.to_string(),
        status,
        exit_code: last.exit.code(),
        duration_ms: started.elapsed().as_millis() as u64,
        // The tail is shown in Markdown and HTML, where colour codes are noise.
        log_tail: crate::text::tail(&strip_ansi_escapes::strip_str(&output), PHASE_TAIL_BYTES),
        note,
    };
    last.output = output;
    (phase, last)
}

/// Takes the exclusive lock on `path` for a phase, waiting (within the phase's budget) while
/// another fcorr process holds it: two runs sharing a cached virtualenv must not create or
/// install into it at the same time (uv refuses a venv that appeared meanwhile; pip races).
fn wait_for_lock(path: &Path, timeout: Duration, log: &LogSink) -> Result<File, Exit> {
    let note = |text: &str| {
        if let Ok(mut sink) = log.lock() {
            let _ = writeln!(sink, "fcorr: {text}");
        }
    };
    // The directory's own error is the cause (permission denied, a read-only file system);
    // opening the lock file in a directory that could not be made would only say "No such file".
    if let Some(dir) = path.parent()
        && let Err(e) = fs::create_dir_all(dir)
    {
        return Err(Exit::SpawnFailed {
            message: format!("cannot create the cache directory {}: {e}", dir.display()),
            not_found: false,
        });
    }
    let file = fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).map_err(|e| {
        Exit::SpawnFailed { message: format!("cannot open the lock file {}: {e}", path.display()), not_found: false }
    })?;
    let started = Instant::now();
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => {
                return Err(Exit::SpawnFailed {
                    message: format!("cannot lock {}: {e}", path.display()),
                    not_found: false,
                });
            }
        }
        if !said {
            note(&format!("waiting for another fcorr process that holds {}", path.display()));
            said = true;
        }
        if process::is_cancelled() {
            return Err(Exit::Cancelled);
        }
        if started.elapsed() >= timeout {
            return Err(Exit::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `sh -c` exits 127 when the script's command does not exist; that is a missing tool, not a
/// test failure, so it is reported like a program that could not be started (exit 3).
fn shell_command_not_found(command: &CommandSpec, outcome: &CommandOutcome) -> Option<String> {
    if command.program != "sh" || outcome.exit != Exit::Code(127) {
        return None;
    }
    let line = outcome.output.lines().rev().find(|l| l.contains("not found"))?;
    Some(format!("`{}`: command not found (sh exit 127: {})", command.display(), line.trim()))
}

/// A test command whose stdout is its report (`go test -json`) printed more than fcorr keeps of
/// it: the results in the cut middle are missing, so the suite cannot pass or fail on the rest.
fn flag_cut_stdout_report(suite: &mut Suite, outcome: &CommandOutcome, file: Option<&Path>) {
    if outcome.stdout_file_cut == 0 || matches!(suite.status, SuiteStatus::Cancelled | SuiteStatus::Timeout) {
        return;
    }
    suite.status = SuiteStatus::Error;
    suite.error = Some(SuiteError {
        kind: SuiteErrorKind::BadReport,
        message: format!(
            "the test command's report on stdout{} was cut: {} bytes from its middle were dropped (fcorr keeps the \
             first {} MiB and the last {} MiB), so the results there are missing",
            file.map(|f| format!(" ({})", f.display())).unwrap_or_default(),
            outcome.stdout_file_cut,
            process::STDOUT_FILE_HEAD_BYTES >> 20,
            process::LOG_TAIL_BYTES >> 20
        ),
        hint: Some("a test prints without end, or the suite is too big for one report: print less, or split it".into()),
    });
}

/// A test command that compiles first failed compiling: the suite is `build-failed` with the
/// compiler's diagnostics, and the build phase (which the test command stood in for) failed.
fn record_build_failure_in_test(phase: &Phase, diagnostics: Vec<crate::model::Diagnostic>, suite: &mut Suite) {
    suite.status = SuiteStatus::BuildFailed;
    suite.diagnostics.extend(diagnostics);
    if let Some(build) = suite.phases.iter_mut().find(|p| p.kind == PhaseKind::Build) {
        build.status = PhaseStatus::Failed;
        build.exit_code = phase.exit_code;
        build.log_tail = phase.log_tail.clone();
        build.note = Some("compilation ran inside the test command and failed".into());
    }
}

/// The cases a test command produced for the parts of the project that compiled, when another
/// part did not: the suite stays `build-failed` (its status and the compiler's diagnostics are
/// not re-judged), and at least one case says results are missing, so no policy scores the
/// suite on the tests that did run. When no test ran (only cases saying what is missing), the
/// suite stays as it was: the build failure and its diagnostics say it all.
fn keep_beside_build_failure(suite: &mut Suite, collected: ecosystems::Collected) {
    if collected.cases.iter().all(crate::model::Case::marks_incomplete_results) {
        return;
    }
    suite.cases = collected.cases;
    suite.results_source = collected.source;
    suite.diagnostics.extend(collected.diagnostics);
    if !suite.cases.iter().any(crate::model::Case::marks_incomplete_results) {
        let first = suite.diagnostics.iter().find(|d| d.source == "build").map(|d| d.message.clone());
        let message = format!(
            "part of the project did not compile, so its tests did not run{}",
            first.map(|m| format!(": {m}")).unwrap_or_default()
        );
        let case = crate::model::Case {
            name: crate::model::incomplete::BUILD_FAILED_CASE.into(),
            status: crate::model::CaseStatus::Error,
            ..crate::model::Case::default()
        };
        suite.cases.push(case.with_message(Some(message)));
    }
    suite.finalize_cases();
}

/// The project refused the installed tool before doing any work: a missing tool (the right
/// version), not a failing install, build or test.
fn record_rejected_tool(kind: PhaseKind, message: &str, suite: &mut Suite, ran: &mut Ran) {
    suite.status = SuiteStatus::Error;
    suite.error = Some(SuiteError {
        kind: SuiteErrorKind::ToolMissing,
        message: format!("{} phase: {message}", kind.label()),
        hint: Some("install the version the project requires (or change its requirement)".into()),
    });
    ran.blocked = Some("the project rejected the installed tool version");
}

/// A phase whose command could not start: the tool is missing (or fcorr could not spawn it), so
/// the suite is an error and nothing after it runs.
fn record_spawn_failure(kind: PhaseKind, message: &str, not_found: bool, suite: &mut Suite, ran: &mut Ran) {
    suite.status = SuiteStatus::Error;
    suite.error = Some(SuiteError {
        kind: if not_found { SuiteErrorKind::ToolMissing } else { SuiteErrorKind::Harness },
        message: format!("{} phase: {message}", kind.label()),
        hint: not_found.then(|| "install the tool, or set `commands` for this suite in fcorr.toml".to_string()),
    });
    ran.blocked = Some("an earlier phase could not start");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SuiteKind;

    #[test]
    fn cases_kept_beside_a_build_failure_always_say_results_are_missing() {
        use crate::model::{Case, CaseStatus, Diagnostic};
        let case = |name: &str, status| Case { name: name.into(), status, ..Case::default() };
        let collected = |cases: Vec<Case>| ecosystems::Collected { cases, ..ecosystems::Collected::nothing() };
        let failed_build = || {
            let mut suite = Suite::new("s", "s", SuiteKind::Project);
            suite.status = SuiteStatus::BuildFailed;
            suite.diagnostics.push(Diagnostic {
                severity: Severity::Error,
                source: "build".into(),
                message: "cannot find symbol".into(),
                file: None,
                line: None,
                column: None,
            });
            suite
        };
        // Only cases saying what is missing: no test ran, the build failure says it all.
        let mut suite = failed_build();
        keep_beside_build_failure(&mut suite, collected(vec![case("[build failed] a", CaseStatus::Error)]));
        assert!(suite.cases.is_empty());
        // A test ran and nothing says the results are incomplete: a case says it.
        let mut suite = failed_build();
        keep_beside_build_failure(&mut suite, collected(vec![case("ok", CaseStatus::Passed)]));
        let got: Vec<(&str, CaseStatus)> = suite.cases.iter().map(|c| (c.name.as_str(), c.status)).collect();
        assert_eq!(got, [("ok", CaseStatus::Passed), ("[build failed]", CaseStatus::Error)]);
        assert_eq!(
            suite.cases[1].message(),
            Some("part of the project did not compile, so its tests did not run: cannot find symbol")
        );
        assert_eq!((suite.status, suite.counts.passed, suite.counts.error), (SuiteStatus::BuildFailed, 1, 1));
    }

    #[test]
    fn a_project_copy_keeps_vendored_code_and_symbolic_links_and_leaves_installs_out() {
        let from = tempfile::tempdir().unwrap();
        let root = from.path();
        fs::create_dir_all(root.join("vendor/example.com/lib")).unwrap();
        fs::write(root.join("vendor/modules.txt"), "# example.com/lib v1.0.0\n").unwrap();
        fs::write(root.join("vendor/example.com/lib/lib.go"), "package lib\n").unwrap();
        fs::create_dir_all(root.join("scripts")).unwrap();
        fs::write(root.join("scripts/check.sh"), "exit 0\n").unwrap();
        std::os::unix::fs::symlink("scripts/check.sh", root.join("check.sh")).unwrap();
        std::os::unix::fs::symlink("scripts", root.join("bin")).unwrap();
        fs::create_dir_all(root.join("node_modules/left-pad")).unwrap();
        fs::write(root.join("node_modules/left-pad/index.js"), "").unwrap();

        let to = tempfile::tempdir().unwrap();
        let copy = to.path().join("copy");
        copy_tree(root, &copy).unwrap();

        assert_eq!(fs::read_to_string(copy.join("vendor/example.com/lib/lib.go")).unwrap(), "package lib\n");
        assert_eq!(fs::read_link(copy.join("check.sh")).unwrap(), Path::new("scripts/check.sh"));
        assert_eq!(fs::read_to_string(copy.join("check.sh")).unwrap(), "exit 0\n");
        assert!(copy.join("bin").symlink_metadata().unwrap().file_type().is_symlink());
        assert!(copy.join("bin/check.sh").is_file());
        assert!(!copy.join("node_modules").exists(), "installs are made again by the run, not copied");
    }

    fn bare_project() -> ProjectPlan {
        let t = Duration::from_secs(30);
        ProjectPlan {
            ecosystem: None,
            framework: None,
            install: true,
            timeouts: super::super::PhaseTimeouts { install: t, build: t, test: t },
            env: Vec::new(),
            pass_env: Vec::new(),
            commands: Default::default(),
            reports: Vec::new(),
            copy_from: Vec::new(),
            run_script_steps: false,
            retries: 0,
            retries_policy: Default::default(),
            rerun_only: None,
            build_script: None,
            workspace: None,
            left_out: Vec::new(),
        }
    }

    fn phase_of(command: &str, dir: &Path) -> PhasePlan {
        PhasePlan::run(PhaseKind::Install, vec![CommandSpec::new("sh", &["-c", command], dir)])
    }

    #[test]
    fn a_pending_marker_stays_when_the_phase_fails_and_goes_when_it_passes() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("installs/p.pending");
        let project = bare_project();
        let log = process::null_log();
        let seen = dir.path().join("seen");
        // The marker exists while the commands run, and a failure leaves it.
        let failing =
            phase_of(&format!("test -e {} && touch {}; exit 1", marker.display(), seen.display()), dir.path())
                .with_pending_marker(marker.clone());
        let (phase, _) = run_phase(&failing, "x", Duration::from_secs(30), Duration::from_secs(1), &project, &log);
        assert_eq!(phase.status, PhaseStatus::Failed);
        assert!(seen.exists(), "the marker existed during the phase");
        assert!(marker.exists(), "a failed phase leaves its marker");
        let passing = phase_of("true", dir.path()).with_pending_marker(marker.clone());
        let (phase, _) = run_phase(&passing, "x", Duration::from_secs(30), Duration::from_secs(1), &project, &log);
        assert_eq!(phase.status, PhaseStatus::Passed);
        assert!(!marker.exists(), "a passed phase removes its marker");
    }

    #[test]
    fn a_locked_phase_waits_for_the_holder_and_times_out_within_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("venv.lock");
        let holder = File::create(&lock).unwrap();
        holder.lock().unwrap();
        let project = bare_project();
        let log = process::null_log();
        let plan = phase_of("true", dir.path()).with_lock(lock.clone());
        let (phase, _) = run_phase(&plan, "x", Duration::from_millis(300), Duration::from_secs(1), &project, &log);
        assert_eq!(phase.status, PhaseStatus::Timeout, "{phase:?}");
        drop(holder);
        let (phase, _) = run_phase(&plan, "x", Duration::from_secs(30), Duration::from_secs(1), &project, &log);
        assert_eq!(phase.status, PhaseStatus::Passed, "{phase:?}");
    }

    #[test]
    fn a_cut_stdout_report_makes_the_suite_an_error_whatever_it_parsed() {
        let mut suite = Suite::new("s", "s", SuiteKind::Project);
        suite.status = SuiteStatus::Passed;
        let mut cut =
            CommandOutcome { exit: Exit::Code(0), duration: Duration::ZERO, output: String::new(), stdout_file_cut: 0 };
        flag_cut_stdout_report(&mut suite, &cut, Some(Path::new("/w/go-test.json")));
        assert_eq!(suite.status, SuiteStatus::Passed, "nothing was cut");
        cut.stdout_file_cut = 1234;
        flag_cut_stdout_report(&mut suite, &cut, Some(Path::new("/w/go-test.json")));
        assert_eq!(suite.status, SuiteStatus::Error);
        let error = suite.error.unwrap();
        assert_eq!(error.kind, SuiteErrorKind::BadReport);
        assert!(error.message.starts_with("the test command's report on stdout (/w/go-test.json) was cut: 1234 bytes"));
    }
}
