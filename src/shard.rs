//! `--shard K/N`: one of N deterministic slices of the work, so a CI matrix of N jobs runs
//! everything exactly once. Whole suites are assigned by suite id; suites of independent items
//! (benchmark tasks) run in every shard with the items assigned by [`Shard::keeps_item`].
//! `fcorr merge` joins the parts back into one suite.

use std::fmt;
use std::str::FromStr;

use crate::config::Weights;
use crate::gate::Gate;
use crate::model::{
    Counts, Diagnostic, DiagnosticSource, Run, Severity, Suite, SuiteError, SuiteErrorKind, SuiteStatus, Usage, Verdict,
};

/// Shard K of N (1-based, as people and matrices count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub total: u32,
}

/// A `--shard` value that is not `K/N` with 1 ≤ K ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard `{0}`: expected K/N with 1 <= K <= N, e.g. 2/4")]
pub struct ShardError(pub String);

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError(text.to_string());
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let total: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || total == 0 || index > total {
            return Err(bad());
        }
        Ok(Shard { index, total })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

impl Shard {
    /// True when the item with this id belongs to this shard ([`owner`]).
    pub fn keeps(&self, id: &str) -> bool {
        owner(id, self.total) == *self
    }

    /// True when item `item_id` of suite `suite_id` runs in this shard (always, without one).
    /// The suite id is part of the key so two suites' items spread independently.
    pub fn keeps_item(shard: Option<Shard>, suite_id: &str, item_id: &str) -> bool {
        shard.is_none_or(|s| s.keeps(&format!("{suite_id}/{item_id}")))
    }
}

/// The shard of `total` that the item with this id belongs to. The hash (FNV-1a, 64-bit) is
/// fixed here, not taken from the standard library, so every machine and fcorr version agrees.
pub(crate) fn owner(id: &str, total: u32) -> Shard {
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    // `total` ≥ 1 for every parsed shard; `max(1)` keeps a zero from dividing.
    let total = total.max(1);
    Shard { index: (hash % total as u64) as u32 + 1, total }
}

/// The verdict of one shard's run. A shard may hold none of a suite's items, or no test at all
/// (fewer suites than shards): emptiness is judged where the shards are merged (`fcorr merge`),
/// so here the `empty` gate is left out and an item-split suite's empty part is not judged.
/// The run itself keeps that part: merge needs it as proof the shard ran.
pub(crate) fn judge(run: &Run, gates: &[Gate], regression_tolerance: f64) -> Verdict {
    let mut view = run.clone();
    view.suites.retain(|s| !(s.split_by_item && s.status == SuiteStatus::NoTests));
    crate::score::summarize(&mut view);
    let judged: Vec<Gate> = gates.iter().filter(|g| **g != Gate::Empty).cloned().collect();
    let mut verdict = crate::gate::judge(&view, &judged, regression_tolerance);
    if judged.len() < gates.len() {
        verdict.skipped.push("empty: judged when the shards are merged (`fcorr merge`)".into());
    }
    verdict
}

/// Joins the shard parts of each suite (same id) into one suite, in first-seen order, and
/// rescores it; each part comes with the label of the run it came from. An item-split suite
/// missing a shard is an error naming the missing shards: its cases there never ran, so it
/// cannot pass.
///
/// A matrix that also varies something else (OS × shard) runs every shard once per value: parts
/// are then split into sets holding each shard once (in input order, so `linux-1, linux-2,
/// mac-1, mac-2` pair up), and each set becomes its own suite, its id prefixed with the label of
/// its first part, as `fcorr merge` does for colliding matrix cells. Never one suite with every
/// case twice.
pub(crate) fn join(parts: Vec<(String, Suite)>) -> Vec<Suite> {
    let mut groups: Vec<Vec<(String, Suite)>> = Vec::new();
    for part in parts {
        match groups.iter_mut().find(|g| g[0].1.id == part.1.id) {
            Some(group) => group.push(part),
            None => groups.push(vec![part]),
        }
    }
    let mut joined = Vec::new();
    for group in groups {
        let mut sets: Vec<Vec<(String, Suite)>> = Vec::new();
        for (label, part) in group {
            match sets.iter_mut().find(|set| !set.iter().any(|(_, p)| p.shard == part.shard)) {
                Some(set) => set.push((label, part)),
                None => sets.push(vec![(label, part)]),
            }
        }
        let several = sets.len() > 1;
        for set in sets {
            let label = set[0].0.clone();
            let mut suite = join_group(set.into_iter().map(|(_, part)| part).collect());
            if several {
                suite.id = format!("{label}/{}", suite.id);
                suite.name = format!("{label}/{}", suite.name);
            }
            joined.push(suite);
        }
    }
    joined
}

fn join_group(mut parts: Vec<Suite>) -> Suite {
    let labels: Vec<String> = parts.iter().filter_map(|p| p.shard.clone()).collect();
    let shards: Vec<Shard> = labels.iter().filter_map(|l| l.parse().ok()).collect();
    let label_all = |label: &str, diagnostics: &mut Vec<Diagnostic>| {
        for d in diagnostics {
            d.message = format!("shard {label}: {}", d.message);
        }
    };
    let stated_metrics = parts.iter().flat_map(|p| &p.diagnostics).any(|d| d.source == DiagnosticSource::Benchmark);
    let mut suite = parts.remove(0);
    if let Some(label) = suite.shard.take() {
        label_all(&label, &mut suite.diagnostics);
    }
    for mut part in parts {
        let label = part.shard.clone().unwrap_or_default();
        label_all(&label, &mut part.diagnostics);
        // Streamed parts (`fcorr merge --stream`): their cases on disk follow in shard order too.
        suite.append_cases(part.cases, part.streamed, &part.counts);
        suite.phases.extend(part.phases);
        suite.diagnostics.extend(part.diagnostics);
        suite.duration_ms = suite.duration_ms.max(part.duration_ms);
        suite.usage = add_usage(suite.usage.take(), part.usage);
        // The worst status wins; an empty shard (no tests) says nothing about the others.
        suite.status = worse(suite.status, part.status);
        if suite.error.is_none() {
            suite.error = part.error;
        }
    }
    if suite.split_by_item
        && let Some(total) = shards.first().map(|s| s.total)
    {
        let missing: Vec<String> = (1..=total)
            .filter(|k| !shards.iter().any(|s| s.index == *k && s.total == total))
            .map(|k| format!("{k}/{total}"))
            .collect();
        if !missing.is_empty() {
            suite.status = SuiteStatus::Error;
            suite.error = Some(SuiteError {
                kind: SuiteErrorKind::NoResults,
                message: format!("shard(s) {} of this suite are missing: their cases never ran", missing.join(", ")),
                hint: Some("merge the results of every shard job".into()),
            });
        }
    }
    if !labels.is_empty() {
        suite.diagnostics.push(Diagnostic {
            severity: Severity::Notice,
            source: "merge".into(),
            message: format!("joined from shard(s) {}", labels.join(", ")),
            file: None,
            line: None,
            column: None,
        });
    }
    if suite.streamed.is_none() {
        suite.counts = Counts::of(&suite.cases);
    }
    // Each part stated its own slice's metrics (a notice of the kind that measures them, with
    // the usage); the joined suite states the whole's.
    if let Some(usage) = &suite.usage
        && stated_metrics
    {
        let message = format!("all shards: {}", crate::score::metrics_line(&suite.cases, usage, None));
        let source = DiagnosticSource::Benchmark;
        suite.diagnostics.push(Diagnostic {
            severity: Severity::Notice,
            source,
            message,
            file: None,
            line: None,
            column: None,
        });
    }
    suite.score = crate::score::score_suite(&suite, suite.score.policy, suite.score.threshold, &Weights::default());
    suite
}

fn worse(a: SuiteStatus, b: SuiteStatus) -> SuiteStatus {
    let rank = |s: SuiteStatus| match s {
        SuiteStatus::NoTests => 0,
        SuiteStatus::Passed => 1,
        SuiteStatus::Failed => 2,
        SuiteStatus::Timeout => 3,
        SuiteStatus::BuildFailed | SuiteStatus::InstallFailed => 4,
        SuiteStatus::Cancelled => 5,
        SuiteStatus::Error => 6,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn add_usage(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    let add = |x: Option<u64>, y: Option<u64>| {
        if x.is_none() && y.is_none() { None } else { Some(x.unwrap_or(0) + y.unwrap_or(0)) }
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(Usage {
            tokens: a.tokens + b.tokens,
            llm_calls: a.llm_calls + b.llm_calls,
            cost_usd: match (a.cost_usd, b.cost_usd) {
                (None, None) => None,
                (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
            },
            tokens_in: add(a.tokens_in, b.tokens_in),
            tokens_out: add(a.tokens_out, b.tokens_out),
        }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Case, CaseStatus, Policy, RunOutcome, SuiteKind};

    fn part(shard: &str, cases: &[(&str, CaseStatus)], tokens: u64) -> Suite {
        let mut suite = Suite::new("bench", "bench", SuiteKind::Benchmark);
        suite.score.policy = Policy::PassRate;
        suite.cases =
            cases.iter().map(|(n, s)| Case { name: n.to_string().into(), status: *s, ..Case::default() }).collect();
        suite.counts = Counts::of(&suite.cases);
        suite.status = if suite.cases.is_empty() {
            SuiteStatus::NoTests
        } else if suite.counts.failures() > 0 {
            SuiteStatus::Failed
        } else {
            SuiteStatus::Passed
        };
        suite.usage = Some(Usage { tokens, llm_calls: 1, ..Usage::default() });
        suite.shard = Some(shard.into());
        suite.split_by_item = true;
        // As the benchmark runner states its slice's metrics.
        suite.diagnostics.push(Diagnostic {
            severity: Severity::Notice,
            source: DiagnosticSource::Benchmark,
            message: "slice metrics".into(),
            file: None,
            line: None,
            column: None,
        });
        suite
    }

    #[test]
    fn parts_join_into_one_rescored_suite() {
        let joined = join(vec![
            ("s1".into(), part("1/3", &[("a", CaseStatus::Passed)], 100)),
            ("s2".into(), part("2/3", &[("b", CaseStatus::Failed), ("c", CaseStatus::Passed)], 50)),
            ("s3".into(), part("3/3", &[], 0)),
        ]);
        assert_eq!(joined.len(), 1);
        let suite = &joined[0];
        assert_eq!((suite.counts.total, suite.counts.passed), (3, 2));
        assert_eq!(suite.status, SuiteStatus::Failed);
        assert_eq!(suite.usage.as_ref().unwrap().tokens, 150);
        assert!((suite.score.value - 200.0 / 3.0).abs() < 0.01, "{}", suite.score.value);
        assert_eq!(suite.shard, None);
        assert!(suite.diagnostics.iter().any(|d| d.message.contains("joined from shard(s) 1/3, 2/3, 3/3")));
        let whole = suite.diagnostics.iter().find(|d| d.message.starts_with("all shards: ")).unwrap();
        assert!(whole.message.contains("3 task(s): pass rate 66.7% (2/3), average 50 tokens"), "{}", whole.message);
    }

    #[test]
    fn a_matrix_of_os_times_shard_joins_per_os_never_doubling_cases() {
        let cell =
            |label: &str, shard: &str, case: &str| (label.to_string(), part(shard, &[(case, CaseStatus::Passed)], 10));
        let joined = join(vec![
            cell("linux-1", "1/2", "a"),
            cell("linux-2", "2/2", "b"),
            cell("mac-1", "1/2", "a"),
            cell("mac-2", "2/2", "b"),
        ]);
        let seen: Vec<(&str, u64)> = joined.iter().map(|s| (s.id.as_str(), s.counts.total)).collect();
        assert_eq!(seen, [("linux-1/bench", 2), ("mac-1/bench", 2)]);
        assert!(joined.iter().all(|s| s.status == SuiteStatus::Passed), "{joined:#?}");
    }

    #[test]
    fn a_shard_judges_what_it_ran_and_leaves_emptiness_to_the_merge() {
        let gates = [Gate::Strict, Gate::Critical, Gate::Empty];
        let judged = |suites: Vec<Suite>| {
            let run = Run::assemble(suites, time::OffsetDateTime::now_utc(), None, None);
            (crate::gate::judge(&run, &gates, 0.0).outcome, judge(&run, &gates, 0.0).outcome)
        };
        let scored = |mut suite: Suite| {
            suite.score = crate::score::score_suite(&suite, Policy::PassRate, 100.0, &Weights::default());
            suite
        };
        let empty = scored(part("2/2", &[], 0));
        let mut passed = part("2/2", &[("a", CaseStatus::Passed)], 0);
        passed.id = "other".into();
        let passed = scored(passed);
        // Unsharded, an empty suite fails the gates; as a shard's empty part, it is not judged.
        assert_eq!(judged(vec![empty.clone(), passed]), (RunOutcome::Fail, RunOutcome::Pass));
        assert_eq!(judged(vec![empty.clone()]), (RunOutcome::Fail, RunOutcome::Pass));
        // What the shard ran is still judged.
        let failed = scored(part("2/2", &[("b", CaseStatus::Failed)], 0));
        assert_eq!(judged(vec![empty, failed]), (RunOutcome::Fail, RunOutcome::Fail));
    }

    #[test]
    fn a_missing_shard_is_an_error_not_a_smaller_pass() {
        let joined = join(vec![("s1".into(), part("1/2", &[("a", CaseStatus::Passed)], 0))]);
        assert_eq!(joined[0].status, SuiteStatus::Error);
        assert!(joined[0].error.as_ref().unwrap().message.contains("2/2"));
        assert_eq!(joined[0].score.value, 0.0);
    }

    #[test]
    fn parses_k_of_n_and_rejects_the_rest() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard { index: 2, total: 4 });
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_id_lands_in_exactly_one_shard_and_shards_are_balanced() {
        let ids: Vec<String> = (0..1000).map(|i| format!("suite/case-{i}")).collect();
        let shards: Vec<Shard> = (1..=4).map(|k| Shard { index: k, total: 4 }).collect();
        let mut sizes = [0; 4];
        for id in &ids {
            let owners: Vec<usize> = (0..4).filter(|&i| shards[i].keeps(id)).collect();
            assert_eq!(owners.len(), 1, "{id}");
            sizes[owners[0]] += 1;
        }
        assert!(sizes.iter().all(|&n| (200..=300).contains(&n)), "{sizes:?}");
        // Deterministic: the same id, the same shard, on every machine (a fixed value).
        assert!(Shard { index: 1, total: 1 }.keeps("anything"));
        let fixed: Vec<bool> = shards.iter().map(|s| s.keeps("calc-bench/fix-add")).collect();
        assert_eq!(fixed.iter().filter(|&&k| k).count(), 1);
    }
}
