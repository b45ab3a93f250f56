//! `fcorr merge`: several saved runs (the cells of a matrix, the packages of a monorepo) → one
//! run, scored and judged as a whole, with every report, so one job can post one comment.
//!
//! Suites keep their ids unless two sources share one; then each of those is prefixed with its
//! source's label (the name of the directory holding its results.json), which is the same from
//! run to run, so a merged baseline compares case by case with a merged current run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::commands::run::JudgeArgs;
use crate::commands::shared;
use crate::config::Config;
use crate::errors::FcorrError;
use crate::gate;
use crate::github::baseline::{DEFAULT_DEPTH, Source};
use crate::model::{Run, ShardPlan, ShardedSuite, Suite, SuiteError, SuiteErrorKind, SuiteKind, SuiteStatus};
use crate::progress::{Progress, Unit};
use crate::report::{self, ReportEnv};
use crate::shard::Shard;

/// Arguments of `fcorr merge`.
#[derive(Debug, Args, Clone, Default)]
pub struct MergeArgs {
    /// results.json files, directories holding one, or globs of either (quote globs).
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<String>,
    /// Baseline to compare the merged run with: `github` (the base commit's artifact, named by
    /// --artifact-name), a merged results.json, its directory or a zip, or `none`.
    #[arg(long, value_name = "SOURCE")]
    pub baseline: Option<String>,
    /// Name of the merged run's baseline artifact for `--baseline github`.
    #[arg(long, value_name = "NAME", default_value = "fcorr-results-merged")]
    pub artifact_name: String,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// One input: where it came from, its label, and its run or why it could not be read.
struct Input {
    path: PathBuf,
    label: String,
    run: Result<Run, report::ResultsError>,
}

/// `fcorr merge`.
pub fn execute(args: MergeArgs) -> Result<i32, FcorrError> {
    let defaults = Config::default();
    let gates = args.judge.gates(&defaults)?;
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let paths = expand_results(&args.results, &cwd)?;
    let labels = labels_of(&paths, &cwd);
    // A merge of many large shards shows how far it got, on stderr only.
    let on_terminal = report::terminal::ProgressMode::detect() == report::terminal::ProgressMode::Tty;
    let progress = Progress::start("merging", on_terminal, false);
    progress.stage("reading results", Some((paths.len() as u64, Unit::Files)));
    let inputs: Vec<Input> = paths
        .into_iter()
        .zip(labels)
        .map(|(path, label)| {
            let run = report::load_results(&path);
            progress.step(1);
            progress.cases(run.as_ref().map_or(0, |r| r.suites.iter().map(|s| s.cases.len() as u64).sum()));
            Input { path, label, run }
        })
        .collect();
    progress.stage("merging and judging", None);
    for input in &inputs {
        if let Err(message) = &input.run {
            errln!("fcorr: error: {message} (merged as an error suite `{}`)", input.label);
        }
    }

    let (mut run, parts_past) = merge(inputs);
    // Like `fcorr ci`: a missing or unreadable baseline is a warning, never a failed check.
    let source = Source::parse(args.baseline.as_deref().unwrap_or("none"));
    let ctx = if source == Source::Github { shared::github_context(None) } else { None };
    let base = shared::resolve_baseline(&source, ctx.as_ref(), &args.artifact_name, DEFAULT_DEPTH);
    // The merged baseline's history is this merged run's past, else the parts' pasts, each
    // without the part's own outcome, so nothing counts twice.
    let tolerance = defaults.gate.regression_tolerance;
    let base = base.map(|b| (b.run, b.info));
    crate::pipeline::conclude(&mut run, base, parts_past, &defaults.report.timing(), |run| {
        gate::judge(run, &gates, tolerance)
    });

    let out_dir = args.judge.out_dir(&cwd);
    progress.stage("writing reports", None);
    let (written, _) = report::write_required(&run, &ReportEnv::default(), &out_dir, &args.judge.format)?;
    // The bar is cleared before the table is printed.
    drop(progress);
    args.judge.print(&run, &written);
    Ok(run.verdict.outcome.exit_code())
}

/// Every argument as results.json paths, in order, without repeats. An argument that names
/// nothing is a usage error: a matrix cell that uploaded nothing must not vanish from the view.
fn expand_results(patterns: &[String], cwd: &Path) -> Result<Vec<PathBuf>, FcorrError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for pattern in patterns {
        let direct = cwd.join(pattern);
        // Named directly, a directory without results.json is kept: it becomes an error suite.
        let found: Vec<PathBuf> = if direct.is_dir() {
            vec![direct.join("results.json")]
        } else if direct.is_file() {
            vec![direct]
        } else {
            // `cells/*` also matches each cell's ctrf.json: from a glob, results.json files
            // when there are any, else the JSON files it names (`runs/*.json`).
            // `*` stays in one directory: `cells/*` names the cells, so look inside them too.
            let inside = format!("{}/results.json", pattern.trim_end_matches('/'));
            let json: Vec<PathBuf> = crate::collect::expand(pattern, cwd)
                .into_iter()
                .chain(crate::collect::expand(&inside, cwd))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            let named: Vec<PathBuf> =
                json.iter().filter(|p| p.file_name().is_some_and(|n| n == "results.json")).cloned().collect();
            if named.is_empty() { json } else { named }
        };
        if found.is_empty() {
            return Err(FcorrError::Usage(format!("`{pattern}` matches no results.json (or directory holding one)")));
        }
        for path in found {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    Ok(paths)
}

/// The name of the directory holding a results.json (`cells/ubuntu-python/results.json` →
/// `ubuntu-python`), or the file's stem when it has another name.
fn label_of(path: &Path) -> String {
    let name = if path.file_name().is_some_and(|n| n == "results.json") {
        path.parent().and_then(Path::file_name)
    } else {
        path.file_stem()
    };
    name.map(|n| n.to_string_lossy().into_owned()).filter(|n| !n.is_empty()).unwrap_or_else(|| "results".into())
}

/// A distinct label per input: [`label_of`], or when two inputs share it (`a/fcorr-out` and
/// `b/fcorr-out`), their path from `cwd` without the file name.
fn labels_of(paths: &[PathBuf], cwd: &Path) -> Vec<String> {
    let short: Vec<String> = paths.iter().map(|p| label_of(p)).collect();
    let mut labels: Vec<String> = paths
        .iter()
        .zip(&short)
        .map(|(path, label)| {
            if short.iter().filter(|l| *l == label).count() == 1 {
                return label.clone();
            }
            let dir = if path.file_name().is_some_and(|n| n == "results.json") {
                path.parent().unwrap_or(path).to_path_buf()
            } else {
                path.with_extension("")
            };
            let relative = dir.strip_prefix(cwd).unwrap_or(&dir);
            relative.to_string_lossy().replace('\\', "/")
        })
        .collect();
    // Still equal (the same directory twice through different spellings): number them.
    for i in 1..labels.len() {
        let earlier = labels[..i].iter().filter(|l| **l == labels[i]).count();
        if earlier > 0 {
            labels[i] = format!("{}#{}", labels[i], earlier + 1);
        }
    }
    labels
}

/// One run from several (scores are kept per suite and combined again), and the history the
/// parts started from.
fn merge(inputs: Vec<Input>) -> (Run, crate::history::Past) {
    let mut uses: HashMap<String, usize> = HashMap::new();
    for input in &inputs {
        if let Ok(run) = &input.run {
            // Shard parts of one suite are joined below, not told apart.
            for suite in run.suites.iter().filter(|s| s.shard.is_none() && s.rerun_of.is_none()) {
                *uses.entry(suite.id.clone()).or_default() += 1;
            }
        }
    }
    // Compared as times, not text: fractional seconds vary in length.
    let parse = |t: &str| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok();
    let runs = || inputs.iter().filter_map(|s| s.run.as_ref().ok());
    let started = runs().filter_map(|r| parse(&r.started_at)).min();
    let finished = runs().filter_map(|r| parse(&r.finished_at)).max();
    let mut git = None;
    let mut config_hashes = Vec::new();
    let mut suites = Vec::new();
    let mut shard_parts = Vec::new();
    let mut past = crate::history::Past::default();
    let mut reruns = Vec::new();
    let shard_plans: Vec<ShardPlan> = runs().filter_map(|r| r.shard.clone()).collect();
    for input in inputs {
        match input.run {
            Ok(run) => {
                let mut part_past = crate::history::Past::before(&run);
                git = git.or(run.git);
                if !config_hashes.contains(&run.config_hash) {
                    config_hashes.push(run.config_hash);
                }
                for mut suite in run.suites {
                    if suite.shard.is_some() {
                        shard_parts.push((input.label.clone(), suite));
                        continue;
                    }
                    if suite.rerun_of.is_some() {
                        reruns.push(suite);
                        continue;
                    }
                    if uses.get(&suite.id).copied().unwrap_or(0) > 1 {
                        suite.id = format!("{}/{}", input.label, suite.id);
                        suite.name = format!("{}/{}", input.label, suite.name);
                        // Case ids include the suite id; they must follow it, and so must history.
                        let old: Vec<String> = suite.cases.iter().map(|c| c.id.clone()).collect();
                        suite.finalize_cases();
                        let new: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
                        part_past.rename(&old, &new);
                    }
                    suites.push(suite);
                }
                past.join(part_past);
            }
            Err(error) => suites.push(unreadable_suite(&input.label, &input.path, error.to_string())),
        }
    }
    suites.extend(crate::shard::join(shard_parts));
    let missing = missing_shards(&shard_plans, &suites);
    suites.extend(missing);
    // `--rerun-failed` runs land on the suite they reran (same id), in the order given.
    for rerun in reruns {
        match suites.iter_mut().find(|s| s.id == rerun.id && s.rerun_of.is_none()) {
            Some(original) => crate::kinds::project::retry::overlay(original, rerun),
            None => suites.push(rerun),
        }
    }

    let started_at = started.unwrap_or_else(time::OffsetDateTime::now_utc);
    let config_hash = match config_hashes.as_slice() {
        [one] => one.clone(),
        _ => None,
    };
    let mut run = Run::assemble(suites, started_at, config_hash, git);
    if let Some(finished) = finished {
        run.finished_at = crate::model::rfc3339(finished);
        run.duration_ms = (finished - started_at).whole_milliseconds().max(0) as u64;
    }
    (run, past)
}

/// A source that could not be read stays in the view as an error suite, so the gate sees it.
/// Error suites for what sharded runs planned but no input brought: each whole suite of a shard
/// whose results never arrived (its tests never ran here, so the merge cannot pass on them), or,
/// when a matrix ran every shard several times (OS × shard) and one copy of shard K is missing,
/// one suite naming that shard and what it runs. A shard that runs no whole suite loses
/// nothing of its own (item-split suites name their missing parts when they are joined).
fn missing_shards(plans: &[ShardPlan], present: &[Suite]) -> Vec<Suite> {
    let parsed: Vec<(Shard, &ShardPlan)> = plans.iter().filter_map(|p| Some((p.shard.parse().ok()?, p))).collect();
    let mut totals: Vec<u32> = parsed.iter().map(|(s, _)| s.total).collect();
    totals.sort_unstable();
    totals.dedup();
    let mut missing = Vec::new();
    for total in totals {
        let group: Vec<&(Shard, &ShardPlan)> = parsed.iter().filter(|(s, _)| s.total == total).collect();
        let arrived = |k: u32| group.iter().filter(|(s, _)| s.index == k).count();
        let expected = (1..=total).map(arrived).max().unwrap_or(0);
        let mut planned: Vec<&ShardedSuite> = Vec::new();
        for suite in group.iter().flat_map(|(_, p)| &p.suites) {
            if !planned.iter().any(|s| s.id == suite.id) {
                planned.push(suite);
            }
        }
        for k in 1..=total {
            let got = arrived(k);
            let label = format!("{k}/{total}");
            let owned: Vec<&&ShardedSuite> = planned.iter().filter(|s| s.shard == label).collect();
            if got == expected || owned.is_empty() {
                continue;
            }
            let hint = "merge the results of every shard job: check that the job ran and uploaded its fcorr-out";
            if got == 0 {
                for suite in owned.iter().filter(|s| !present.iter().any(|p| p.id == s.id)) {
                    let mut error = Suite::new(&suite.id, &suite.name, suite.kind);
                    error.status = SuiteStatus::Error;
                    error.shard = None;
                    error.error = Some(SuiteError {
                        kind: SuiteErrorKind::NoResults,
                        message: format!(
                            "shard {label} never arrived: this suite runs there, so its results are missing"
                        ),
                        hint: Some(hint.into()),
                    });
                    missing.push(error);
                }
            } else {
                let id = format!("shard-{k}-of-{total}");
                let names: Vec<&str> = owned.iter().map(|s| s.name.as_str()).collect();
                let mut error = Suite::new(&id, format!("shard {label}"), owned[0].kind);
                error.status = SuiteStatus::Error;
                error.error = Some(SuiteError {
                    kind: SuiteErrorKind::NoResults,
                    message: format!(
                        "shard {label} arrived from {got} of {expected} jobs: the results of {} are missing from the other(s)",
                        names.join(", ")
                    ),
                    hint: Some(hint.into()),
                });
                missing.push(error);
            }
        }
    }
    missing
}

fn unreadable_suite(label: &str, path: &Path, message: String) -> Suite {
    let mut suite = Suite::new(label, label, SuiteKind::Import);
    suite.path = Some(path.display().to_string());
    suite.status = SuiteStatus::Error;
    suite.error = Some(SuiteError {
        kind: SuiteErrorKind::BadReport,
        message,
        hint: Some("check that the job that should have written it ran and uploaded its fcorr-out".into()),
    });
    suite
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard_plan(shard: &str, suites: &[(&str, &str)]) -> ShardPlan {
        let suites = suites
            .iter()
            .map(|(id, shard)| ShardedSuite {
                id: (*id).into(),
                name: (*id).into(),
                kind: SuiteKind::Project,
                shard: (*shard).into(),
            })
            .collect();
        ShardPlan { shard: shard.into(), suites }
    }

    #[test]
    fn a_missing_shard_names_its_suites_and_a_missing_matrix_copy_names_the_shard() {
        let all = [("a", "1/2"), ("b", "2/2"), ("c", "2/2")];
        let present = vec![Suite::new("a", "a", SuiteKind::Project)];
        // Shard 2/2 never arrived: b and c are errors; a ran.
        let missing = missing_shards(&[shard_plan("1/2", &all)], &present);
        let ids: Vec<&str> = missing.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["b", "c"]);
        assert!(missing.iter().all(|s| s.status == SuiteStatus::Error));
        // Every shard arrived: nothing is missing.
        assert!(missing_shards(&[shard_plan("1/2", &all), shard_plan("2/2", &all)], &present).is_empty());
        // OS × shard: 1/2 arrived twice, 2/2 once: one suite names shard 2/2 and what it runs.
        let plans = [shard_plan("1/2", &all), shard_plan("2/2", &all), shard_plan("1/2", &all)];
        let missing = missing_shards(&plans, &present);
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].id, "shard-2-of-2");
        let message = &missing[0].error.as_ref().unwrap().message;
        assert!(message.contains("arrived from 1 of 2 jobs") && message.contains("b, c"), "{message}");
        // A shard that runs no whole suite loses nothing of its own.
        assert!(missing_shards(&[shard_plan("1/2", &[("a", "1/2")])], &present).is_empty());
    }

    #[test]
    fn labels_are_the_cell_directory_and_stay_distinct() {
        let cwd = Path::new("/w");
        let paths: Vec<PathBuf> = [
            "/w/cells/ubuntu/results.json",
            "/w/a/fcorr-out/results.json",
            "/w/b/fcorr-out/results.json",
            "/w/runs/nightly.json",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(labels_of(&paths, cwd), ["ubuntu", "a/fcorr-out", "b/fcorr-out", "nightly"]);
        let twice = vec![PathBuf::from("/w/x/results.json"), PathBuf::from("/w/x/results.json")];
        assert_eq!(labels_of(&twice, cwd), ["x", "x#2"]);
    }

    #[test]
    fn shard_parts_join_while_matrix_cells_stay_apart() {
        use crate::model::{Case, CaseStatus, Policy};
        // Shards 1/2 and 2/2 each run half of `bench`; the whole `app` suite ran in shard 1 only.
        // Two unsharded matrix cells both ran `lint`.
        let passed = |id: &str, kind: SuiteKind, shard: Option<&str>, cases: &[&str]| {
            let mut suite = Suite::new(id, id, kind);
            suite.score.policy = Policy::PassRate;
            suite.cases = cases
                .iter()
                .map(|c| Case { name: c.to_string(), status: CaseStatus::Passed, ..Case::default() })
                .collect();
            suite.status = SuiteStatus::Passed;
            suite.shard = shard.map(String::from);
            suite.split_by_item = kind == SuiteKind::Benchmark && shard.is_some();
            suite
        };
        let input = |label: &str, suites: Vec<Suite>| {
            let run = Run::assemble(suites, time::OffsetDateTime::now_utc(), None, None);
            Input { path: PathBuf::from(format!("{label}/results.json")), label: label.into(), run: Ok(run) }
        };
        let (run, _) = merge(vec![
            input(
                "s1",
                vec![
                    passed("bench", SuiteKind::Benchmark, Some("1/2"), &["a"]),
                    passed("app", SuiteKind::Project, Some("1/2"), &["t"]),
                ],
            ),
            input("s2", vec![passed("bench", SuiteKind::Benchmark, Some("2/2"), &["b"])]),
            input("linux", vec![passed("lint", SuiteKind::Project, None, &["l"])]),
            input("mac", vec![passed("lint", SuiteKind::Project, None, &["l"])]),
        ]);
        let ids: Vec<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["linux/lint", "mac/lint", "bench", "app"]);
        let bench = &run.suites[2];
        assert_eq!((bench.counts.total, bench.counts.passed, bench.shard.as_deref()), (2, 2, None));
        assert_eq!(bench.cases.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    }
}
