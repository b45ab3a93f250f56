//! The project runner's loop: detect → install → build → test → collect for one suite, with
//! the user's `commands.*` overrides, phase locks and pending markers, then retries
//! ([`super::retry`]). The processes themselves run through [`crate::execute::process`].

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::collect::ReportSpec;
use crate::ecosystems::{self, CollectContext, PhasePlan, PlanContext, ProjectFiles};
use crate::events::{Event, EventSink};
use crate::execute::process::{self, CommandSpec, Exit, LogSink, Outcome};
use crate::execute::{ExecContext, apply_collected, safe_name, signal_text};
use crate::model::{Phase, PhaseKind, PhaseStatus, Severity, Suite, SuiteError, SuiteErrorKind, SuiteStatus};
use crate::plan::SuitePlan;
use crate::runners::{failed_suite, new_suite};

use super::ProjectPlan;
use super::retry;

/// Bytes of each phase's output kept in `results.json`.
const PHASE_TAIL_BYTES: usize = 8 * 1024;

/// Runs a project suite: detect → install → build → test → collect (the `project` runner's work).
pub(crate) fn run_project(plan: &SuitePlan, project: &ProjectPlan, ctx: &ExecContext, sink: &dyn EventSink) -> Suite {
    let mut suite = new_suite(plan);
    let name = safe_name(&plan.id);
    let work_dir = ctx.out_dir.join("work").join(&name);
    let log_path = ctx.out_dir.join("logs").join(format!("{name}.log"));
    if let Err(e) = fs::create_dir_all(&work_dir).and_then(|_| fs::create_dir_all(ctx.out_dir.join("logs"))) {
        return failed_suite(plan, SuiteErrorKind::Harness, format!("cannot create {}: {e}", work_dir.display()), None);
    }
    let log = match File::create(&log_path) {
        Ok(file) => {
            // The tap lets the progress display show the last output line of a long phase.
            let (log, tap) = crate::events::tapped_log(process::capped_file_log(file));
            sink.emit(Event::Output { suite_id: plan.id.clone(), tap });
            log
        }
        Err(e) => {
            return failed_suite(
                plan,
                SuiteErrorKind::Harness,
                format!("cannot create {}: {e}", log_path.display()),
                None,
            );
        }
    };
    suite.log_file = Some(format!("logs/{name}.log"));

    let root = match prepare_root(plan, project, &work_dir) {
        Ok(root) => root,
        Err(error) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(error);
            return suite;
        }
    };
    suite.left_out = project.left_out.clone();
    let files = match ProjectFiles::scan(&root) {
        Ok(files) => ProjectFiles { workspace: project.workspace.as_ref().map(|w| w.root.clone()), ..files },
        Err(e) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::Input,
                message: format!("{}: {e}", plan.display_path),
                hint: Some("check the suite's `path`".into()),
            });
            return suite;
        }
    };

    let forced = project.ecosystem.as_deref().or_else(|| {
        // Only a test command and no runner: the user describes the project fully.
        project.commands.test.as_ref().map(|_| "command")
    });
    let report = ecosystems::detect_best(&files, forced, project.framework.as_deref());
    let Some(candidate) = report.best else {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError {
            kind: SuiteErrorKind::Input,
            message: format!("{}: no project detected: {}", plan.display_path, report.explanation),
            hint: None,
        });
        return suite;
    };
    sink.emit(Event::Detected { suite_id: plan.id.clone(), detection: candidate.detection.clone() });
    suite.detection = Some(candidate.detection.clone());
    if let Some(problem) = candidate.problem {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError { kind: SuiteErrorKind::Input, message: problem, hint: None });
        return suite;
    }
    let Some(ecosystem) = ecosystems::by_name(&candidate.detection.ecosystem) else {
        return failed_suite(
            plan,
            SuiteErrorKind::Harness,
            format!("unknown runner `{}`", candidate.detection.ecosystem),
            None,
        );
    };
    let plan_ctx = PlanContext {
        root: &root,
        files: &files,
        detection: &candidate.detection,
        work_dir: &work_dir,
        cache_dir: &ctx.cache_dir,
        install: project.install,
        run_script_steps: project.run_script_steps,
        build_script: project.build_script,
        dry_run: false,
    };
    let mut phases = match ecosystem.plan(&plan_ctx) {
        Ok(phases) => phases,
        Err(e) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError { kind: SuiteErrorKind::Input, message: e.to_string(), hint: None });
            return suite;
        }
    };
    apply_overrides(&mut phases, project, &root);

    let mut test_reports: Vec<ReportSpec> = Vec::new();
    let mut stdout_file: Option<PathBuf> = None;
    let mut blocked: Option<&'static str> = None;
    let mut last_test_outcome: Option<Outcome> = None;
    let mut test_phase: Option<(PhasePlan, Duration)> = None;
    // `--rerun-failed`: the ids of the earlier run's cases this run selected.
    let mut rerun_ids: Option<Vec<String>> = None;
    let mut unnarrowed: Option<PhasePlan> = None;

    // A checking build phase (`tsc --noEmit`) runs alongside the tests when the test phase will run.
    let test_runs = phases.iter().any(|p| p.kind == PhaseKind::Test && p.skip.is_none());
    let log = &log;
    std::thread::scope(|scope| {
        let mut alongside: Option<std::thread::ScopedJoinHandle<'_, (Phase, Outcome)>> = None;
        for phase_plan in &phases {
            let kind = phase_plan.kind;
            if let Some(reason) = blocked {
                let phase = skipped_phase(phase_plan, reason.to_string());
                sink.emit(Event::PhaseFinished { suite_id: plan.id.clone(), phase: phase.clone() });
                suite.phases.push(phase);
                continue;
            }
            if let Some(reason) = &phase_plan.skip {
                let phase = skipped_phase(phase_plan, reason.clone());
                sink.emit(Event::PhaseFinished { suite_id: plan.id.clone(), phase: phase.clone() });
                suite.phases.push(phase);
                continue;
            }
            if kind == PhaseKind::Install && !project.install {
                let phase = skipped_phase(phase_plan, "--no-install".into());
                suite.phases.push(phase);
                continue;
            }
            // Version-dependent flags are chosen now that the earlier phases (install) have run.
            let mut refined = phase_plan.clone();
            ecosystem.refine_phase(&plan_ctx, &mut refined);
            if let (PhaseKind::Test, Some(only), None) = (kind, &project.rerun_only, &project.commands.test) {
                suite.rerun_of = Some(only.of.clone());
                match retry::narrow_for_rerun(ecosystem.as_ref(), &refined, only) {
                    Ok((narrowed, ids)) => {
                        // Retries narrow the planned phase, not this one (its selection would stay).
                        unnarrowed = Some(std::mem::replace(&mut refined, narrowed));
                        rerun_ids = Some(ids);
                    }
                    Err(why) => retry::note(&mut suite, Severity::Warning, format!("--rerun-failed: {why}")),
                }
            }
            let phase_plan = &refined;
            let timeout = match kind {
                PhaseKind::Install => project.timeouts.install,
                PhaseKind::Build => project.timeouts.build,
                PhaseKind::Test => project.timeouts.test,
            };
            let command_line = phase_plan.commands.iter().map(CommandSpec::display).collect::<Vec<_>>().join(" && ");
            if kind == PhaseKind::Build && phase_plan.alongside_tests && test_runs {
                sink.emit(Event::PhaseStarted {
                    suite_id: plan.id.clone(),
                    phase: kind,
                    command: command_line.clone(),
                });
                let (check, grace) = (phase_plan.clone(), ctx.grace);
                alongside = Some(scope.spawn(move || run_phase(&check, &command_line, timeout, grace, project, log)));
                continue;
            }
            // Members of a workspace share its one install: the first runs it, the others wait and
            // report what it did.
            let mut shared = (kind == PhaseKind::Install)
                .then(|| project.workspace.as_ref().and_then(|w| w.install.as_ref()))
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
                    sink.emit(Event::PhaseStarted {
                        suite_id: plan.id.clone(),
                        phase: kind,
                        command: command_line.clone(),
                    });
                    run_phase(phase_plan, &command_line, timeout, ctx.grace, project, log)
                }
            };
            if let Some(done) = shared.as_deref_mut().filter(|done| done.is_none()) {
                *done = Some((phase.clone(), outcome.clone()));
            }
            drop(shared);
            // The build that ran alongside the tests decides whether their results count.
            if let Some(build) = alongside.take() {
                let not_counted = settle_alongside(build, &mut suite, ecosystem.as_ref(), &root, plan, sink);
                if let Some(reason) = not_counted {
                    blocked = Some(reason);
                    let mut skipped = skipped_phase(
                        phase_plan,
                        format!("{reason}: the tests ran alongside the type check, and their results are not counted"),
                    );
                    skipped.duration_ms = phase.duration_ms;
                    sink.emit(Event::PhaseFinished { suite_id: plan.id.clone(), phase: skipped.clone() });
                    suite.phases.push(skipped);
                    continue;
                }
            }
            sink.emit(Event::PhaseFinished { suite_id: plan.id.clone(), phase: phase.clone() });

            if let Exit::SpawnFailed { message, not_found } = &outcome.exit {
                suite.phases.push(phase);
                suite.status = SuiteStatus::Error;
                suite.error = Some(SuiteError {
                    kind: if *not_found { SuiteErrorKind::ToolMissing } else { SuiteErrorKind::Harness },
                    message: format!("{} phase: {message}", kind.label()),
                    hint: not_found
                        .then(|| "install the tool, or set `commands` for this suite in fcorr.toml".to_string()),
                });
                blocked = Some("an earlier phase could not start");
                continue;
            }
            match (kind, phase.status) {
                (_, PhaseStatus::Cancelled) => {
                    suite.status = SuiteStatus::Cancelled;
                    blocked = Some("cancelled");
                }
                (_, PhaseStatus::Failed) if let Some(message) = ecosystem.rejected_tool_version(&outcome.output) => {
                    // The project refused the installed tool before doing any work: a missing tool
                    // (the right version), not a failing install, build or test.
                    suite.status = SuiteStatus::Error;
                    suite.error = Some(SuiteError {
                        kind: SuiteErrorKind::ToolMissing,
                        message: format!("{} phase: {message}", kind.label()),
                        hint: Some("install the version the project requires (or change its requirement)".into()),
                    });
                    blocked = Some("the project rejected the installed tool version");
                }
                (PhaseKind::Test, PhaseStatus::Failed)
                    if let Some(diagnostics) = ecosystem.build_failure_in_test(&outcome.output, &root) =>
                {
                    // The test command compiles first (one Maven run): a compile error is a build failure.
                    suite.status = SuiteStatus::BuildFailed;
                    suite.diagnostics.extend(diagnostics);
                    if let Some(build) = suite.phases.iter_mut().find(|p| p.kind == PhaseKind::Build) {
                        build.status = PhaseStatus::Failed;
                        build.exit_code = phase.exit_code;
                        build.log_tail = phase.log_tail.clone();
                        build.note = Some("compilation ran inside the test command and failed".into());
                    }
                    blocked = Some("build failed");
                }
                (PhaseKind::Test, _) => {
                    let planned = unnarrowed.take().unwrap_or_else(|| phase_plan.clone());
                    test_phase = Some((planned, timeout.saturating_sub(Duration::from_millis(phase.duration_ms))));
                    test_reports = phase_plan.reports.clone();
                    stdout_file = phase_plan.commands.last().and_then(|c| c.stdout_file.clone());
                    last_test_outcome = Some(outcome);
                }
                (_, PhaseStatus::Timeout) => {
                    suite.status = SuiteStatus::Timeout;
                    blocked = Some("an earlier phase timed out");
                }
                (PhaseKind::Install, PhaseStatus::Failed) => {
                    suite.status = SuiteStatus::InstallFailed;
                    blocked = Some("install failed");
                }
                (PhaseKind::Build, PhaseStatus::Failed) => {
                    suite.status = SuiteStatus::BuildFailed;
                    suite.diagnostics.extend(ecosystem.build_diagnostics(&outcome.output, &root));
                    blocked = Some("build failed");
                }
                _ => {}
            }
            suite.phases.push(phase);
        }
        // A test phase that could not start left the build running alone: its result still counts.
        if let Some(build) = alongside.take() {
            settle_alongside(build, &mut suite, ecosystem.as_ref(), &root, plan, sink);
        }
    });

    if let Some(outcome) = last_test_outcome {
        let collect_ctx =
            CollectContext { root: &root, work_dir: &work_dir, reports: &test_reports, outcome: &outcome };
        let collected = ecosystem.collect(&collect_ctx);
        apply_collected(&mut suite, collected, Some(&outcome));
        flag_cut_stdout_report(&mut suite, &outcome, stdout_file.as_deref());
        if let Some(ids) = &rerun_ids {
            // Tests the name filter left out are reported as skipped by some frameworks (jest,
            // vitest, node): they did not run again, so they are not part of this run.
            suite.cases.retain(|c| c.status != crate::model::CaseStatus::Skipped || ids.contains(&c.id));
            suite.counts = crate::model::Counts::of(&suite.cases);
        }
        // Only fcorr's own test commands can be narrowed; a user's `commands.test` is opaque.
        if let Some((test, budget)) = test_phase.filter(|_| project.commands.test.is_none()) {
            let run = retry::RetryRun {
                ecosystem: ecosystem.as_ref(),
                test: &test,
                root: &root,
                work_dir: &work_dir,
                suite_id: &plan.id,
                budget,
                grace: ctx.grace,
                project,
                log,
                sink,
            };
            retry::retry_failed(&mut suite, &run, project.retries, project.retries_policy);
        }
    } else if blocked.is_none() && suite.error.is_none() && suite.status != SuiteStatus::Cancelled {
        suite.status = SuiteStatus::Error;
        suite.error = Some(SuiteError {
            kind: SuiteErrorKind::Harness,
            message: "no test phase was planned for this project".into(),
            hint: Some("set `commands.test` in fcorr.toml".into()),
        });
    }
    suite
}

/// Waits for the build that ran alongside the tests and records it, before the test phase. When
/// it did not pass, sets the suite's status (and the build's diagnostics) and returns why the
/// tests' results do not count.
fn settle_alongside(
    build: std::thread::ScopedJoinHandle<'_, (Phase, Outcome)>,
    suite: &mut Suite,
    ecosystem: &dyn ecosystems::Ecosystem,
    root: &Path,
    plan: &SuitePlan,
    sink: &dyn EventSink,
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
    sink.emit(Event::PhaseFinished { suite_id: plan.id.clone(), phase: phase.clone() });
    let reason = match (&outcome.exit, phase.status) {
        (Exit::SpawnFailed { message, not_found }, _) => {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: if *not_found { SuiteErrorKind::ToolMissing } else { SuiteErrorKind::Harness },
                message: format!("build phase: {message}"),
                hint: not_found.then(|| "install the tool, or set `commands` for this suite in fcorr.toml".to_string()),
            });
            Some("an earlier phase could not start")
        }
        (_, PhaseStatus::Passed) => None,
        (_, PhaseStatus::Cancelled) => {
            suite.status = SuiteStatus::Cancelled;
            Some("cancelled")
        }
        (_, PhaseStatus::Timeout) => {
            suite.status = SuiteStatus::Timeout;
            Some("the build phase timed out")
        }
        _ => {
            suite.status = SuiteStatus::BuildFailed;
            suite.diagnostics.extend(ecosystem.build_diagnostics(&outcome.output, root));
            Some("build failed")
        }
    };
    suite.phases.push(phase);
    reason
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

pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if ecosystems::NEVER_WALK.contains(&entry.file_name().to_string_lossy().as_ref()) {
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
                commands.push(user);
                let reports = std::mem::take(&mut existing.reports);
                *existing = PhasePlan::run(kind, commands).with_reports(reports);
            }
            None => phases.push(PhasePlan::run(kind, vec![user])),
        }
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
) -> (Phase, Outcome) {
    let started = Instant::now();
    let mut output = String::new();
    let mut last = Outcome { exit: Exit::Code(0), duration: Duration::ZERO, output: String::new(), stdout_file_cut: 0 };
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
fn shell_command_not_found(command: &CommandSpec, outcome: &Outcome) -> Option<String> {
    if command.program != "sh" || outcome.exit != Exit::Code(127) {
        return None;
    }
    let line = outcome.output.lines().rev().find(|l| l.contains("not found"))?;
    Some(format!("`{}`: command not found (sh exit 127: {})", command.display(), line.trim()))
}

/// A test command whose stdout is its report (`go test -json`) printed more than fcorr keeps of
/// it: the results in the cut middle are missing, so the suite cannot pass or fail on the rest.
fn flag_cut_stdout_report(suite: &mut Suite, outcome: &Outcome, file: Option<&Path>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SuiteKind;

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
            Outcome { exit: Exit::Code(0), duration: Duration::ZERO, output: String::new(), stdout_file_cut: 0 };
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
