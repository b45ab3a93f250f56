//! The test phase: each framework run the `test` script makes, with the machine-readable reporter
//! fcorr adds, and collecting those reports as one case group per run.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::framework::Framework;
use super::script::{FrameworkRun, ScriptPlan};
use super::{CollectContext, Collected, NodePlanError, PhasePlan, ProjectContext, locations, package_major};
use crate::collect::ReportSpec;
use crate::execute::process::CommandSpec;
use crate::model::PhaseKind;

/// The file in the work directory naming each framework run's report and case group.
pub(super) const GROUPS_FILE: &str = "fcorr-node-runs.json";

pub(super) fn test_phase(
    ctx: &ProjectContext<'_>,
    framework: Framework,
    script: &ScriptPlan,
) -> Result<PhasePlan, NodePlanError> {
    let default_run = [FrameworkRun { env: Vec::new(), args: Vec::new(), label: framework.label().into() }];
    let runs: &[FrameworkRun] = if script.runs.is_empty() { &default_run } else { &script.runs };
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    let mut groups = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        // One run keeps the historical report name; several get one report each.
        let suffix = if runs.len() == 1 { String::new() } else { format!("-{}", i + 1) };
        let (mut command, report) = framework_command(ctx, framework, &run.args, &suffix)?;
        command.env.extend(run.env.iter().cloned());
        // A report left by an earlier run in a reused output directory must not pass for this one's.
        if let Err(source) = std::fs::remove_file(&report.pattern)
            && source.kind() != std::io::ErrorKind::NotFound
        {
            return Err(NodePlanError::StaleReport { path: PathBuf::from(&report.pattern), source });
        }
        groups.push(serde_json::json!({ "report": report.pattern, "label": run.label }));
        commands.push(command);
        reports.push(report);
    }
    let groups_path = ctx.work_dir.join(GROUPS_FILE);
    let text = if runs.len() > 1 { serde_json::Value::Array(groups).to_string() } else { "[]".into() };
    std::fs::write(&groups_path, text).map_err(|source| NodePlanError::Write { path: groups_path, source })?;
    Ok(PhasePlan::run(PhaseKind::Test, commands).with_reports(reports).with_note(script.note(ctx.run_script_steps)))
}

/// The command running the framework once with fcorr's reporter flags, and its report.
pub(super) fn framework_command(
    ctx: &ProjectContext<'_>,
    framework: Framework,
    user: &[String],
    suffix: &str,
) -> Result<(CommandSpec, ReportSpec), NodePlanError> {
    let user: Vec<&str> = user.iter().map(String::as_str).collect();
    let work = ctx.work_dir;
    Ok(match framework {
        Framework::Jest => {
            let out = work.join(format!("jest{suffix}.json"));
            let out_flag = format!("--outputFile={}", out.display());
            let mut args = vec!["--no-install", "jest"];
            args.extend(&user);
            args.extend(["--ci", "--json", "--testLocationInResults", out_flag.as_str()]);
            (CommandSpec::new("npx", &args, ctx.root), ReportSpec::file(&out, crate::collect::jest_json::NAME))
        }
        Framework::Vitest => {
            let out = work.join(format!("vitest{suffix}.json"));
            let out_flag = format!("--outputFile.json={}", out.display());
            let mut args = vec!["--no-install", "vitest", "run"];
            args.extend(&user);
            if !user.iter().any(|a| a.starts_with("--reporter")) {
                // Keep the usual console output in the log next to the JSON file.
                args.push("--reporter=default");
            }
            args.extend(["--reporter=json", out_flag.as_str()]);
            // `--includeTaskLocation` depends on the installed vitest: added by `refine_phase`.
            (CommandSpec::new("npx", &args, ctx.root), ReportSpec::file(&out, crate::collect::jest_json::NAME))
        }
        Framework::Mocha => {
            let out = work.join(format!("mocha{suffix}.json"));
            let reporter = work.join("fcorr-mocha-reporter.cjs");
            if let Err(source) = std::fs::write(&reporter, MOCHA_REPORTER) {
                return Err(NodePlanError::Write { path: reporter, source });
            }
            let reporter = reporter.display().to_string();
            let output = format!("output={}", out.display());
            let mut args = vec!["--no-install", "mocha"];
            args.extend(&user);
            args.extend(["--reporter", reporter.as_str(), "--reporter-option", output.as_str()]);
            (CommandSpec::new("npx", &args, ctx.root), ReportSpec::file(&out, crate::collect::mocha_json::NAME))
        }
        Framework::NodeTest => {
            let out = work.join(format!("node-test{suffix}.xml"));
            let destination = format!("--test-reporter-destination={}", out.display());
            let reporter = work.join(locations::REPORTER_FILE);
            if let Err(source) = std::fs::write(&reporter, locations::REPORTER) {
                return Err(NodePlanError::Write { path: reporter, source });
            }
            let sidecar = work.join(locations::REPORT);
            if let Err(source) = std::fs::remove_file(&sidecar)
                && source.kind() != std::io::ErrorKind::NotFound
            {
                return Err(NodePlanError::StaleReport { path: sidecar, source });
            }
            let locations_reporter = format!("--test-reporter={}", reporter.display());
            let locations_destination = format!("--test-reporter-destination={}", sidecar.display());
            // Node options must come before file arguments, or they are passed to the tests.
            let mut args = vec![
                "--test",
                "--test-reporter=spec",
                "--test-reporter-destination=stdout",
                "--test-reporter=junit",
                destination.as_str(),
                locations_reporter.as_str(),
                locations_destination.as_str(),
            ];
            args.extend(&user);
            (CommandSpec::new("node", &args, ctx.root), ReportSpec::file(&out, crate::collect::junit::NODE_NAME))
        }
    })
}

/// Adds vitest's `--includeTaskLocation` to fcorr's own vitest commands when the vitest installed
/// now (after the install phase) is 3 or newer; older versions reject the flag.
pub(super) fn add_task_location(root: &Path, phase: &mut PhasePlan) {
    let ours = |c: &CommandSpec| {
        c.program == "npx"
            && c.args.get(1).is_some_and(|a| a == "vitest")
            && c.args.iter().any(|a| a.starts_with("--outputFile.json="))
            && !c.args.iter().any(|a| a == "--includeTaskLocation")
    };
    if !phase.commands.iter().any(ours) || package_major(root, "vitest").is_none_or(|major| major < 3) {
        return;
    }
    for command in phase.commands.iter_mut().filter(|c| ours(c)) {
        command.args.push("--includeTaskLocation".into());
    }
}

/// Case groups of a script that runs the framework several times: report path → label.
pub(super) fn read_groups(work_dir: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(work_dir.join(GROUPS_FILE)) else { return Vec::new() };
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    items
        .iter()
        .filter_map(|g| Some((g.get("report")?.as_str()?.to_string(), g.get("label")?.as_str()?.to_string())))
        .collect()
}

/// Collects each run's report on its own and names its cases `[label] name`, so the same test run
/// twice (`jest && jest --env edge-runtime`) is two cases with two stable ids, not one overwritten.
pub(super) fn collect_groups(ctx: &CollectContext<'_>, groups: &[(String, String)]) -> Collected {
    let mut all = Collected::nothing();
    let mut files = Vec::new();
    let mut formats: Vec<String> = Vec::new();
    for spec in ctx.reports {
        let one = std::slice::from_ref(spec);
        let mut collected = crate::ecosystems::collect_reports(&CollectContext { reports: one, ..*ctx });
        if let Some((_, label)) = groups.iter().find(|(report, _)| *report == spec.pattern) {
            for case in &mut collected.cases {
                case.name = format!("[{label}] {}", case.name).into();
            }
        }
        all.ran |= collected.ran;
        all.cases.extend(collected.cases);
        all.diagnostics.extend(collected.diagnostics);
        if let crate::model::ResultsSource::Report { format, files: f } = collected.source {
            if !formats.contains(&format) {
                formats.push(format);
            }
            files.extend(f);
        }
    }
    if !files.is_empty() {
        all.source = crate::model::ResultsSource::Report { format: formats.join("+"), files };
    }
    all
}

/// A mocha reporter that writes mocha's JSON layout plus each test's `titlePath` and `type`, and
/// prints one line per test so the log still shows progress.
pub(super) const MOCHA_REPORTER: &str = r#"'use strict';
// Written by fcorr. Mocha's JSON reporter layout plus `titlePath` (the describe path, which mocha's
// own JSON flattens into a space-joined `fullTitle`) and `type` (hook failures are not tests).
const fs = require('fs');

function FcorrMochaJson(runner, options) {
  const opts = (options && (options.reporterOption || options.reporterOptions)) || {};
  const tests = [], passes = [], failures = [], pending = [];
  const errors = new Map();
  const started = new Date();
  let suites = 0;
  const call = (obj, fn, fallback) => (typeof obj[fn] === 'function' ? obj[fn]() : fallback);
  const clean = (t) => {
    const err = errors.get(t);
    return {
      title: t.title,
      fullTitle: call(t, 'fullTitle', t.title),
      titlePath: call(t, 'titlePath', [t.title]),
      file: t.file,
      duration: t.duration,
      currentRetry: call(t, 'currentRetry', 0),
      type: t.type,
      err: err ? { name: err.name, message: String(err.message === undefined ? err : err.message),
                   stack: String(err.stack || '') } : {},
    };
  };
  const log = (mark, t) => { if (opts.output) process.stdout.write(`  ${mark} ${call(t, 'titlePath', [t.title]).join(' > ')}\n`); };
  runner.on('suite', (s) => { if (!s.root) suites += 1; });
  runner.on('pass', (t) => { passes.push(t); log('ok  ', t); });
  runner.on('fail', (t, err) => { errors.set(t, err); failures.push(t); log('FAIL', t); if (err && err.stack && opts.output) process.stdout.write(String(err.stack).replace(/^/gm, '       ') + '\n'); });
  runner.on('pending', (t) => { pending.push(t); log('skip', t); });
  runner.on('test end', (t) => { tests.push(t); });
  runner.once('end', () => {
    const ended = new Date();
    const report = {
      stats: { suites, tests: tests.length, passes: passes.length, pending: pending.length, failures: failures.length,
               start: started.toISOString(), end: ended.toISOString(), duration: ended - started },
      tests: tests.map(clean), pending: pending.map(clean), failures: failures.map(clean), passes: passes.map(clean),
    };
    const text = JSON.stringify(report, null, 2);
    if (opts.output) { fs.writeFileSync(opts.output, text); } else { process.stdout.write(text + '\n'); }
  });
}

module.exports = FcorrMochaJson;
"#;
