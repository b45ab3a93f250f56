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
    /// Keep memory flat however many cases the inputs hold: each input's cases go to a temporary
    /// file in the output directory as it is read, and every report reads them back from there
    /// (see "Streaming mode" in docs/import.md). A `--baseline` is compared case by case as
    /// they are read back.
    #[arg(long)]
    pub stream: bool,
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
    let out_dir = args.judge.out_dir(&cwd);
    shared::note_reports_on_stop("merging", &out_dir);
    // Like `fcorr ci`: a baseline file named that cannot be read stops here; a missing artifact
    // (`github`) is a warning.
    let baseline = shared::BaselineSource::open(Source::parse(args.baseline.as_deref().unwrap_or("none")))?;
    let _writing = report::in_progress::begin(&out_dir, "merge")?;
    let read = |(path, label): (PathBuf, String)| {
        let run = report::load_results(&path);
        progress.step(1);
        progress.cases(run.as_ref().map_or(0, |r| r.suites.iter().map(|s| s.cases.len() as u64).sum()));
        if let Err(message) = &run {
            errln!("fcorr: error: {message} (merged as an error suite `{label}`)");
        }
        Input { path, label, run }
    };
    let (mut run, parts_past) = if args.stream {
        let uses = stream_pass_one(&paths)?;
        let mut spill = crate::spill::Spill::create_in(&out_dir).map_err(spill_error)?;
        let mut merger = Merger::new(uses);
        for input in paths.into_iter().zip(labels) {
            merger.add(read(input), Some(&mut spill)).map_err(spill_error)?;
        }
        progress.stage("merging and judging", None);
        let (run, past) = merger.finish()?;
        crate::commands::shared::warn_not_kept(spill.not_kept());
        (run, past)
    } else {
        let inputs: Vec<Input> = paths.into_iter().zip(labels).map(read).collect();
        progress.stage("merging and judging", None);
        merge(inputs)?
    };
    let ctx = if baseline.is_github() { shared::github_context(None) } else { None };
    let base = baseline.resolve(ctx.as_ref(), &args.artifact_name, DEFAULT_DEPTH);
    // The merged baseline's history is this merged run's past, else the parts' pasts, each
    // without the part's own outcome, so nothing counts twice.
    let tolerance = defaults.gate.regression_tolerance;
    let base = base.map(|b| (b.run, b.info));
    crate::pipeline::conclude(&mut run, base, parts_past, &defaults.report.timing(), |run| {
        gate::judge(run, &gates, tolerance)
    });
    if args.stream {
        crate::spill::keep_slowest(&mut run)
            .map_err(|e| spill_error(crate::spill::SpillError::reading(&out_dir, e)))?;
    }

    progress.stage("writing reports", None);
    let (written, _) = report::write_required(&run, &ReportEnv::default(), &out_dir, &args.judge.format)?;
    // The bar is cleared before the table is printed.
    drop(progress);
    args.judge.print(&run, &written);
    Ok(run.verdict.outcome.exit_code())
}

/// Pass one of a streaming merge: which suite ids several inputs share (they get their input's
/// label), from each input's suite ids alone, so no input's cases are held beside another's.
/// `--rerun-failed` parts are refused: laying them over a suite on disk is not supported yet.
fn stream_pass_one(paths: &[PathBuf]) -> Result<HashMap<String, usize>, FcorrError> {
    #[derive(serde::Deserialize)]
    struct Ids {
        suites: Vec<Id>,
    }
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
        #[serde(default)]
        shard: Option<String>,
        #[serde(default)]
        rerun_of: Option<String>,
    }
    let mut uses = HashMap::new();
    for path in paths {
        // An input that cannot be read is reported when it is read for good, as an error suite.
        let Ok(ids) = crate::report::read_results_as::<Ids>(path) else { continue };
        if let Some(rerun) = ids.suites.iter().find(|s| s.rerun_of.is_some()) {
            return Err(FcorrError::Usage(format!(
                "{}: suite `{}` is a --rerun-failed run; --stream does not lay reruns over their suite yet: merge without --stream",
                path.display(),
                rerun.id
            )));
        }
        count_uses(&mut uses, ids.suites.iter().map(|s| (s.id.as_str(), s.shard.is_some())));
    }
    Ok(uses)
}

fn spill_error(error: crate::spill::SpillError) -> FcorrError {
    FcorrError::harness_because("fcorr merge --stream stopped", error)
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
fn merge(inputs: Vec<Input>) -> Result<(Run, crate::history::Past), FcorrError> {
    let mut uses: HashMap<String, usize> = HashMap::new();
    for input in &inputs {
        if let Ok(run) = &input.run {
            count_uses(
                &mut uses,
                run.suites.iter().map(|s| (s.id.as_str(), s.shard.is_some() || s.rerun_of.is_some())),
            );
        }
    }
    let mut merger = Merger::new(uses);
    for input in inputs {
        // Without a spill file nothing is written, so nothing can fail.
        let _ = merger.add(input, None);
    }
    merger.finish()
}

/// Counts, per suite id, the inputs that hold it as a whole suite (shard parts of one suite are
/// joined, not told apart): `(id, part)` for each suite of one input.
fn count_uses<'a>(uses: &mut HashMap<String, usize>, suites: impl Iterator<Item = (&'a str, bool)>) {
    for (id, _) in suites.filter(|(_, part)| !part) {
        *uses.entry(id.to_string()).or_default() += 1;
    }
}

/// The merge, one input at a time: with `--stream` each input's cases go to the spill file as
/// soon as it is read, so memory holds one input's cases at most.
struct Merger {
    /// How many inputs hold each suite id (see [`count_uses`]): ids used twice get a label.
    uses: HashMap<String, usize>,
    started: Option<time::OffsetDateTime>,
    finished: Option<time::OffsetDateTime>,
    git: Option<crate::model::GitInfo>,
    config_hashes: Vec<Option<String>>,
    suites: Vec<Suite>,
    shard_parts: Vec<(String, Suite)>,
    shard_plans: Vec<ShardPlan>,
    /// Each sharded input's identity, to check that the shards come from one run.
    shard_sources: Vec<ShardSource>,
    past: crate::history::Past,
    reruns: Vec<Suite>,
    /// Each input a stop signal cut short: `SIGINT in shard 2/3 (label)`.
    interrupted: Vec<String>,
}

impl Merger {
    fn new(uses: HashMap<String, usize>) -> Merger {
        Merger {
            uses,
            started: None,
            finished: None,
            git: None,
            config_hashes: Vec::new(),
            suites: Vec::new(),
            shard_parts: Vec::new(),
            shard_plans: Vec::new(),
            shard_sources: Vec::new(),
            past: crate::history::Past::default(),
            reruns: Vec::new(),
            interrupted: Vec::new(),
        }
    }

    /// Takes in one input; with a spill file, its cases go there (see `Spill::stream_suite`).
    fn add(
        &mut self,
        input: Input,
        mut spill: Option<&mut crate::spill::Spill>,
    ) -> Result<(), crate::spill::SpillError> {
        let run = match input.run {
            Ok(run) => run,
            Err(error) => {
                self.suites.push(unreadable_suite(&input.label, &input.path, error.to_string()));
                return Ok(());
            }
        };
        // Compared as times, not text: fractional seconds vary in length.
        let parse = |t: &str| time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok();
        self.started = self.started.into_iter().chain(parse(&run.started_at)).min();
        self.finished = self.finished.into_iter().chain(parse(&run.finished_at)).max();
        if let Some(plan) = &run.shard {
            self.shard_sources.push(ShardSource {
                path: input.path.clone(),
                shard: plan.shard.clone(),
                inputs: plan.inputs.clone(),
                ci_run: plan.ci_run.clone(),
                commit: run.git.as_ref().and_then(|g| g.commit.clone()),
                config_hash: run.config_hash.clone(),
            });
        }
        // Its cancelled suites come along; so must the signal that cancelled them, and where.
        if let Some(signal) = &run.interrupted {
            let part = match &run.shard {
                Some(plan) => format!("shard {} ({})", plan.shard, input.label),
                None => input.label.clone(),
            };
            self.interrupted.push(format!("{signal} in {part}"));
        }
        self.shard_plans.extend(run.shard.clone());
        let mut part_past = crate::history::Past::before(&run);
        self.git = self.git.take().or(run.git);
        if !self.config_hashes.contains(&run.config_hash) {
            self.config_hashes.push(run.config_hash);
        }
        for mut suite in run.suites {
            if suite.rerun_of.is_some() {
                self.reruns.push(suite);
                continue;
            }
            if suite.shard.is_none() && self.uses.get(&suite.id).copied().unwrap_or(0) > 1 {
                suite.id = format!("{}/{}", input.label, suite.id);
                suite.name = format!("{}/{}", input.label, suite.name);
                // Case ids include the suite id; they must follow it, and so must history.
                let old: Vec<String> = suite.cases.iter().map(|c| c.id.to_string()).collect();
                suite.finalize_cases();
                let new: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
                part_past.rename(&old, &new);
            }
            if let Some(spill) = spill.as_deref_mut() {
                spill.stream_suite(&mut suite)?;
            }
            if suite.shard.is_some() {
                self.shard_parts.push((input.label.clone(), suite));
            } else {
                self.suites.push(suite);
            }
        }
        self.past.join(part_past);
        Ok(())
    }

    fn finish(mut self) -> Result<(Run, crate::history::Past), FcorrError> {
        same_run(&self.shard_sources)?;
        self.suites.extend(crate::shard::join(self.shard_parts));
        let missing = missing_shards(&self.shard_plans, &self.suites);
        self.suites.extend(missing);
        // `--rerun-failed` runs land on the suite they reran (same id), in the order given.
        for rerun in self.reruns {
            match self.suites.iter_mut().find(|s| s.id == rerun.id && s.rerun_of.is_none()) {
                Some(original) => crate::kinds::project::retry::overlay(original, rerun),
                None => self.suites.push(rerun),
            }
        }

        let started_at = self.started.unwrap_or_else(time::OffsetDateTime::now_utc);
        let config_hash = match self.config_hashes.as_slice() {
            [one] => one.clone(),
            _ => None,
        };
        let mut run = Run::assemble(self.suites, started_at, config_hash, self.git);
        run.interrupted = (!self.interrupted.is_empty()).then(|| self.interrupted.join(", "));
        if let Some(finished) = self.finished {
            run.finished_at = crate::model::rfc3339(finished);
            run.duration_ms = (finished - started_at).whole_milliseconds().max(0) as u64;
        }
        Ok((run, self.past))
    }
}

/// What identifies the run a shard's results came from.
struct ShardSource {
    path: PathBuf,
    shard: String,
    inputs: Option<String>,
    ci_run: Option<String>,
    commit: Option<String>,
    config_hash: Option<String>,
}

/// Refuses shards that are not parts of one run: a shard from another run (an older artifact,
/// another workflow run) would stand in for this run's shard, and the failures that shard held
/// would vanish from a merged PASS. Each identity (the CI run, the commit, the configuration,
/// the digest of the inputs the items were cut from) must agree wherever two shards record it.
/// Shards written before fcorr recorded the inputs digest are merged with a warning: they cannot
/// be checked.
fn same_run(sources: &[ShardSource]) -> Result<(), FcorrError> {
    type Field = fn(&ShardSource) -> Option<&str>;
    let fields: [(&str, Field); 4] = [
        ("CI run (GITHUB_REPOSITORY/GITHUB_RUN_ID)", |s| s.ci_run.as_deref()),
        ("git commit", |s| s.commit.as_deref()),
        ("configuration hash", |s| s.config_hash.as_deref()),
        ("inputs digest (configuration, datasets and tasks files)", |s| s.inputs.as_deref()),
    ];
    for (what, field) in fields {
        let mut recorded = sources.iter().filter_map(|s| Some((s, field(s)?)));
        let Some((first, value)) = recorded.next() else { continue };
        if let Some((other, differs)) = recorded.find(|(_, v)| v != &value) {
            return Err(FcorrError::Usage(format!(
                "{}: shard {} is not from the same run as shard {} ({}): its {what} is {differs}, not {value}; \
                 merge only the shards of one run (a stale artifact from an earlier run would hide this run's results)",
                other.path.display(),
                other.shard,
                first.shard,
                first.path.display(),
            )));
        }
    }
    for source in sources.iter().filter(|s| s.inputs.is_none()) {
        errln!(
            "fcorr: warning: {}: shard {} records no run identity (written by an older fcorr): \
             cannot check that it belongs to the same run as the other shards",
            source.path.display(),
            source.shard
        );
    }
    Ok(())
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
        ShardPlan { shard: shard.into(), suites, inputs: None, ci_run: None }
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
    fn shards_of_another_ci_run_commit_or_inputs_are_refused() {
        let source = |path: &str, shard: &str, ci_run: Option<&str>, inputs: Option<&str>| ShardSource {
            path: PathBuf::from(path),
            shard: shard.into(),
            inputs: inputs.map(String::from),
            ci_run: ci_run.map(String::from),
            commit: Some("abc".into()),
            config_hash: Some("h".into()),
        };
        let one = [
            source("a/results.json", "1/2", Some("o/r/7"), Some("d")),
            source("b/results.json", "2/2", Some("o/r/7"), Some("d")),
        ];
        assert!(same_run(&one).is_ok());
        let runs = [
            source("a/results.json", "1/2", Some("o/r/7"), Some("d")),
            source("b/results.json", "2/2", Some("o/r/6"), Some("d")),
        ];
        let message = same_run(&runs).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("b/results.json") && message.contains("CI run") && message.contains("o/r/6"),
            "{message}"
        );
        // Outside CI (no run id), the inputs digest still tells the runs apart.
        let inputs =
            [source("a/results.json", "1/2", None, Some("d")), source("b/results.json", "2/2", None, Some("e"))];
        let message = same_run(&inputs).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("inputs digest"), "{message}");
        // Older results without the identity: merged (with a warning).
        let old = [source("a/results.json", "1/2", None, None), source("b/results.json", "2/2", None, Some("d"))];
        assert!(same_run(&old).is_ok());
    }

    /// A shard a stop signal cut short: the merged run says which signal and which shard, and
    /// fails as the shard did. Before, the merge dropped `interrupted` and judged the rest.
    #[test]
    fn a_shards_interruption_is_carried_into_the_merged_verdict() {
        use crate::model::{Case, CaseStatus, GateKind, RunOutcome};
        let shard = |label: &str, k: &str, status: SuiteStatus, interrupted: Option<&str>| {
            let mut suite = Suite::new(label, label, SuiteKind::Project);
            suite.cases = vec![Case { name: "t".into(), status: CaseStatus::Passed, ..Case::default() }];
            suite.finalize_cases();
            suite.status = status;
            let mut run = Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None);
            run.shard = Some(shard_plan(k, &[("app", "1/2"), ("web", "2/2")]));
            run.interrupted = interrupted.map(String::from);
            Input { path: PathBuf::from(format!("{label}/results.json")), label: label.into(), run: Ok(run) }
        };
        let (run, _) = merge(vec![
            shard("app", "1/2", SuiteStatus::Passed, None),
            shard("web", "2/2", SuiteStatus::Cancelled, Some("SIGINT")),
        ])
        .unwrap();
        assert_eq!(run.interrupted.as_deref(), Some("SIGINT in shard 2/2 (web)"));
        // No gate asked for (`--fail-on none`): the interruption alone fails it, named first.
        let verdict = gate::judge(&run, &[], 0.0);
        assert_eq!(verdict.outcome, RunOutcome::Fail);
        assert_eq!(verdict.reasons[0].gate, GateKind::Interrupted);
        assert_eq!(
            verdict.reasons[0].message,
            "fcorr was interrupted by SIGINT in shard 2/2 (web) before the run finished; stopped while running: web"
        );
        let (run, _) = merge(vec![shard("app", "1/2", SuiteStatus::Passed, None)]).unwrap();
        assert_eq!(run.interrupted, None);
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
                .map(|c| Case { name: c.to_string().into(), status: CaseStatus::Passed, ..Case::default() })
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
        ])
        .expect("these inputs record no shard plan, so nothing can disagree");
        let ids: Vec<&str> = run.suites.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["linux/lint", "mac/lint", "bench", "app"]);
        let bench = &run.suites[2];
        assert_eq!((bench.counts.total, bench.counts.passed, bench.shard.as_deref()), (2, 2, None));
        assert_eq!(bench.cases.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    }
}
