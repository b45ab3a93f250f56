//! `fcorr detect [PATH]`: which ecosystem and framework a project is, the markers and confidence
//! behind it, why the winner won, and a dry run: for each suite `fcorr run PATH` would make (the
//! project, or each member of a workspace), the exact install, build and test commands, and what
//! it would leave out. Without a path: each project suite of ./fcorr.toml when there is one, else
//! the current directory.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use crate::ecosystems::{self, Ecosystem, PhasePlan, ProjectContext, ProjectFiles};
use crate::errors::FcorrError;
use crate::execute::process::CommandSpec;
use crate::model::{Detection, LeftOut};

/// Arguments of `fcorr detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// Project directory (default: the project suites of ./fcorr.toml, else the current directory).
    pub path: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Consider only this runner (python, node, go, rust, java, command).
    #[arg(long)]
    pub runner: Option<String>,
}

/// One suite `fcorr run` would make, and what it would run.
#[derive(Debug, Serialize)]
struct PlannedSuite {
    /// Its directory relative to the detected path (`.` for the path itself).
    path: String,
    detection: Option<Detection>,
    /// Why it cannot run as detected (it would be an error suite).
    problem: Option<String>,
    phases: Vec<PlannedPhase>,
}

/// One phase of a dry run.
#[derive(Debug, Serialize)]
struct PlannedPhase {
    kind: &'static str,
    /// Each command as it would run, with its directory relative to the detected path.
    commands: Vec<PlannedCommand>,
    /// Why the phase would not run (`dependencies up to date`...).
    skip: Option<String>,
    note: Option<String>,
}

#[derive(Debug, Serialize)]
struct PlannedCommand {
    command: String,
    /// Directory it runs in, relative to the detected path.
    dir: String,
}

/// Runs detection and prints the result; exit 0 when something was detected in every project,
/// 2 otherwise.
pub fn execute(args: DetectArgs) -> Result<i32, FcorrError> {
    let paths = match &args.path {
        Some(path) => vec![path.clone()],
        None => default_paths()?,
    };
    let mut code = 0;
    for path in &paths {
        // A member that is a suite of its own is shown there, as `fcorr run` runs it there.
        let others: Vec<&Path> = paths.iter().filter(|p| *p != path).map(PathBuf::as_path).collect();
        code = code.max(detect_one(path, &others, &args)?);
    }
    Ok(code)
}

/// The project directories of ./fcorr.toml (or ./.github/fcorr.toml), else `.`.
fn default_paths() -> Result<Vec<PathBuf>, FcorrError> {
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let Some(file) = crate::pipeline::find_config(None, &[], false, &cwd) else { return Ok(vec![PathBuf::from(".")]) };
    let config = crate::config::Config::load(&file, &crate::kinds::KINDS)?;
    let paths: Vec<PathBuf> = config
        .suites
        .iter()
        .filter(|s| s.kind == "project")
        .map(|s| config.base_dir.join(s.path.as_deref().unwrap_or(Path::new("."))))
        .collect();
    Ok(if paths.is_empty() { vec![PathBuf::from(".")] } else { paths })
}

/// Detection in one directory, printed (its members that are among `others`, suites of their
/// own, left to them); 0 when something was detected, 2 otherwise.
fn detect_one(path: &Path, others: &[&Path], args: &DetectArgs) -> Result<i32, FcorrError> {
    let files = ProjectFiles::scan(path)
        .map_err(|e| FcorrError::usage_because(format!("{}: cannot read the project", path.display()), e))?;
    let report = ecosystems::detect_best(&files, args.runner.as_deref(), None);
    let layout = ecosystems::layout(&files, args.runner.as_deref(), None);
    let work = scratch_dir()?;
    let mut suites = Vec::new();
    let mut left_out = layout.left_out.clone();
    let mut source = None;
    for (ecosystem, members) in &layout.projects {
        // A root that is several projects runs each ecosystem's as a suite of its own.
        let runner = if layout.projects.len() > 1 { Some(*ecosystem) } else { args.runner.as_deref() };
        if !members.members_only || members.run.is_empty() {
            suites.push(dry_run(&files, ".", runner, work.path(), None));
        }
        for dir in members.run.iter().filter(|dir| !others.contains(&path.join(dir).as_path())) {
            suites.push(dry_run(&files.below(dir), dir, runner, work.path(), None));
        }
        left_out.extend(members.left_out.iter().cloned());
        source = source.or(members.source.clone());
    }
    if layout.projects.is_empty() {
        suites.push(dry_run(&files, ".", args.runner.as_deref(), work.path(), None));
    }
    // Other ecosystems' projects below with tests of their own run as suites of their own.
    for dir in layout.below.iter().filter(|dir| !others.contains(&path.join(dir).as_path())) {
        // A project of its own, not a workspace member: it installs in its own directory.
        let own = ProjectFiles { workspace: None, ..files.below(dir) };
        suites.push(dry_run(&own, dir, None, work.path(), Some(&files.root)));
    }
    if args.json {
        let candidates: Vec<serde_json::Value> = report
            .candidates
            .iter()
            .map(|c| serde_json::json!({ "detection": c.detection, "problem": c.problem }))
            .collect();
        let value = serde_json::json!({
            "path": path,
            "best": report.best.as_ref().map(|c| &c.detection),
            "problem": report.best.as_ref().and_then(|c| c.problem.clone()),
            "candidates": candidates,
            "explanation": report.explanation,
            "files_scanned": files.files.len(),
            "truncated": report.truncated,
            "workspace": source,
            "suites": suites,
            "left_out": left_out,
        });
        // A json! value always serialises.
        outln_raw!("{}", serde_json::to_string_pretty(&value).expect("json value"));
    } else {
        let root_runs = suites.iter().any(|s| s.path == ".");
        match &report.best {
            Some(best) if !root_runs => {
                // The root is only a workspace: its own framework guess would mislead.
                let d = &best.detection;
                let source = source.as_deref().unwrap_or("workspace");
                outln!("{}: {} workspace root ({source}); its members run as suites", path.display(), d.language);
                if let Some(pm) = &d.package_manager {
                    outln!("  package manager: {pm}");
                }
                outln!("  markers: {}", d.markers.join(", "));
            }
            Some(best) => {
                let d = &best.detection;
                outln!("{}: {} / {} (confidence {:.2})", path.display(), d.language, d.framework, d.confidence);
                if let Some(pm) = &d.package_manager {
                    outln!("  package manager: {pm}");
                }
                outln!("  markers: {}", d.markers.join(", "));
                if let Some(problem) = best.problem.as_ref().filter(|_| root_runs) {
                    outln!("  problem: {problem}");
                }
            }
            None => outln!("{}: nothing detected", path.display()),
        }
        if report.candidates.len() > 1 {
            outln!("  other candidates:");
            for c in report.candidates.iter().skip(1) {
                outln!("    {} / {} ({:.2})", c.detection.language, c.detection.framework, c.detection.confidence);
            }
        }
        outln!("  why: {}", report.explanation);
        if report.truncated {
            outln!("  note: the project has more files than detection lists; only the first were considered");
        }
        print_dry_run(&suites, &left_out);
    }
    Ok(if report.best.is_some() { 0 } else { 2 })
}

/// A private scratch work directory for planning (planners write reporters and remove stale
/// reports there), removed when dropped: exclusively created, so no one can plant files in it.
fn scratch_dir() -> Result<tempfile::TempDir, FcorrError> {
    tempfile::Builder::new()
        .prefix("fcorr-detect-")
        .tempdir()
        .map_err(|e| FcorrError::harness_because("cannot create a scratch directory", e))
}

/// Detects and plans the project `files` describes (the path, or a member `dir` of it), as
/// `fcorr run` would with no configuration, without running anything.
/// Commands' directories are shown relative to `shown_from`, else to the workspace root or the
/// project's own.
fn dry_run(
    files: &ProjectFiles,
    dir: &str,
    runner: Option<&str>,
    scratch: &Path,
    shown_from: Option<&Path>,
) -> PlannedSuite {
    let mut suite = PlannedSuite { path: dir.to_string(), detection: None, problem: None, phases: Vec::new() };
    let Some(best) = ecosystems::detect_best(files, runner, None).best else {
        suite.problem = Some("no project detected".into());
        return suite;
    };
    suite.detection = Some(best.detection.clone());
    if best.problem.is_some() {
        suite.problem = best.problem;
        return suite;
    }
    let Some(ecosystem) = ecosystems::by_name(&best.detection.ecosystem) else { return suite };
    let work_dir = scratch.join(dir.replace('/', "_"));
    if let Err(e) = std::fs::create_dir_all(&work_dir) {
        suite.problem = Some(format!("cannot create {}: {e}", work_dir.display()));
        return suite;
    }
    let ctx = ProjectContext {
        root: &files.root,
        files,
        detection: &best.detection,
        work_dir: &work_dir,
        cache_dir: &crate::execute::cache_dir(),
        install: true,
        run_script_steps: false,
        build_script: None,
        dry_run: true,
    };
    match plan_phases(ecosystem, &ctx) {
        Ok(phases) => {
            let base = shown_from.or(files.workspace.as_deref()).unwrap_or(&files.root);
            suite.phases = phases.iter().map(|p| planned_phase(p, base, &work_dir)).collect();
        }
        Err(e) => suite.problem = Some(e),
    }
    suite
}

fn plan_phases(ecosystem: &dyn Ecosystem, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, String> {
    let mut phases = ecosystem.plan(ctx).map_err(|e| e.to_string())?;
    for phase in &mut phases {
        ecosystem.refine_phase(ctx, phase);
    }
    Ok(phases)
}

/// A planned phase as shown: commands with their directories relative to `base`, the scratch
/// work directory written as `<work>` (a real run puts it under the output directory).
fn planned_phase(phase: &PhasePlan, base: &Path, work_dir: &Path) -> PlannedPhase {
    let work = work_dir.display().to_string();
    let command = |c: &CommandSpec| {
        let dir = c.cwd.strip_prefix(base).map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
        PlannedCommand {
            command: c.display().replace(&work, "<work>"),
            dir: if dir.is_empty() { ".".to_string() } else { dir },
        }
    };
    PlannedPhase {
        kind: phase.kind.label(),
        commands: phase.commands.iter().map(command).collect(),
        skip: phase.skip.clone(),
        note: phase.note.clone(),
    }
}

fn print_dry_run(suites: &[PlannedSuite], left_out: &[LeftOut]) {
    outln!("  would run (dry run; `commands.*` in fcorr.toml replace these):");
    for suite in suites {
        let what = suite.detection.as_ref().map(|d| format!("{} / {}", d.language, d.framework)).unwrap_or_default();
        outln!("    {}: {what}", suite.path);
        if let Some(problem) = &suite.problem {
            outln!("      problem: {problem}");
        }
        for phase in &suite.phases {
            match &phase.skip {
                Some(reason) => outln!("      {}: skipped ({reason})", phase.kind),
                None => {
                    for c in &phase.commands {
                        outln!("      {}: {}  (in {})", phase.kind, c.command, c.dir);
                    }
                }
            }
            if let Some(note) = phase.note.as_ref().filter(|_| phase.skip.is_none()) {
                outln!("        note: {note}");
            }
        }
    }
    if !left_out.is_empty() {
        outln!("  not run:");
        for l in left_out {
            outln!("    {}: {}", l.path, l.reason);
        }
    }
}
