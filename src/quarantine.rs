//! Quarantine: tests known to be broken or flaky, listed by case id or name glob in
//! `fcorr.toml` (top level, per suite) or a `quarantine-file`. Their failures stay in every
//! report and in the score shown, but no gate (strict, critical, regression, score) counts them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use globset::{Glob, GlobMatcher};

use crate::config::{Config, Weights};
use crate::errors::ConfigError;
use crate::model::{Case, CaseStatus, Counts, Policy, Run, Score, SuiteStatus};

/// One entry: an exact case id, or a glob over the case's names.
#[derive(Debug, Clone)]
enum Entry {
    Id(String),
    Glob(GlobMatcher),
}

impl Entry {
    /// 16 hex digits (and `#n`) is a case id; anything else a glob (`*` crosses `/` and `.`).
    fn parse(text: &str) -> Result<Entry, BadGlob> {
        let hex = text.split('#').next().unwrap_or("");
        if hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Entry::Id(text.to_ascii_lowercase()));
        }
        Glob::new(text)
            .map(|g| Entry::Glob(g.compile_matcher()))
            .map_err(|source| BadGlob { text: text.to_string(), source })
    }

    fn matches(&self, case: &Case) -> bool {
        match self {
            Entry::Id(id) => case.id == *id,
            Entry::Glob(glob) => names(case).iter().any(|n| glob.is_match(n)),
        }
    }
}

/// A quarantine entry that is neither a case id nor a valid glob; the caller turns it into a
/// [`ConfigError`] at the entry's line.
#[derive(Debug, thiserror::Error)]
#[error("`{text}` is not a valid glob: {source}")]
struct BadGlob {
    text: String,
    source: globset::Error,
}

/// The names a glob is tried against: the bare name, and the name qualified by its class
/// (`Class.name`, `Class::name`) and by its file (`file::name`), as tools print them.
fn names(case: &Case) -> Vec<String> {
    let mut names = vec![case.name.to_string()];
    if let Some(class) = &case.classname {
        names.push(format!("{class}.{}", case.name));
        names.push(format!("{class}::{}", case.name));
    }
    if let Some(file) = &case.file {
        names.push(format!("{file}::{}", case.name));
    }
    names
}

/// One suite's own `quarantine` list, as planned (the plan stage knows suite ids).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SuiteList<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub entries: &'a [String],
    /// Line of the suite's `[[suite]]` in the config file (0: unknown).
    pub line: usize,
}

/// Every quarantine entry of a configuration, by where it applies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Quarantine {
    everywhere: Vec<Entry>,
    by_suite: HashMap<String, Vec<Entry>>,
}

impl Quarantine {
    /// Reads the top-level `quarantine`, the `quarantine-file` and each planned suite's own list.
    /// A bad glob or an unreadable file is a configuration error naming the file and line.
    pub(crate) fn load<'a>(
        config: &Config,
        suites: impl IntoIterator<Item = SuiteList<'a>>,
    ) -> Result<Quarantine, ConfigError> {
        let file = config.source.as_deref().unwrap_or(Path::new("fcorr.toml"));
        let mut everywhere = Vec::new();
        for (i, text) in config.quarantine.iter().enumerate() {
            everywhere.push(
                Entry::parse(text.trim())
                    .map_err(|e| ConfigError::new(file, config.spans.at(&format!("quarantine.{i}")), e.to_string()))?,
            );
        }
        if let Some(list) = &config.quarantine_file {
            let path = config.base_dir.join(list);
            let text = crate::fsio::read_text(&path, crate::fsio::QUARANTINE).map_err(|e| {
                ConfigError::new(
                    file,
                    config.spans.at("quarantine-file"),
                    format!("`quarantine-file`: {e} (paths are relative to the config file)"),
                )
            })?;
            for (n, line) in text.lines().enumerate() {
                let line =
                    line.split_once('#').filter(|(_, rest)| !looks_like_id_suffix(rest)).map_or(line, |(l, _)| l);
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                everywhere.push(Entry::parse(line).map_err(|e| ConfigError::new(&path, (n + 1, 1), e.to_string()))?);
            }
        }
        let mut by_suite = HashMap::new();
        for suite in suites.into_iter().filter(|s| !s.entries.is_empty()) {
            let mut entries = Vec::new();
            for text in suite.entries {
                let entry = Entry::parse(text.trim()).map_err(|e| {
                    ConfigError::new(file, (suite.line, 1), format!("suite {}: `quarantine`: {e}", suite.name))
                })?;
                entries.push(entry);
            }
            by_suite.insert(suite.id.to_string(), entries);
        }
        Ok(Quarantine { everywhere, by_suite })
    }

    /// True when nothing is quarantined.
    pub(crate) fn is_empty(&self) -> bool {
        self.everywhere.is_empty() && self.by_suite.is_empty()
    }

    /// Marks every case an entry matches (`Case::quarantined`).
    pub(crate) fn mark(&self, run: &mut Run) {
        if self.is_empty() {
            return;
        }
        for suite in &mut run.suites {
            let own = self.by_suite.get(&suite.id).map(Vec::as_slice).unwrap_or(&[]);
            for case in &mut suite.cases {
                case.extra_mut().quarantined = self.everywhere.iter().chain(own).any(|e| e.matches(case));
            }
        }
    }
}

/// `#` starts a comment in a quarantine file, except in an id's `#n` suffix (`0123…cdef#2`).
fn looks_like_id_suffix(rest: &str) -> bool {
    let digits = rest.trim_end();
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Quarantined cases that failed in this run.
pub(crate) fn failures(run: &Run) -> usize {
    run.suites.iter().flat_map(|s| &s.cases).filter(|c| c.extra().quarantined && c.status.is_failure()).count()
}

/// The run as the gates judge it: quarantined failures count as skipped, suites are scored again
/// under their own policy and threshold, and the comparison forgets their new failures and
/// moves the score delta by what they cost. Borrowed when nothing quarantined failed.
pub(crate) fn gate_view(run: &Run) -> Cow<'_, Run> {
    if failures(run) == 0 {
        return Cow::Borrowed(run);
    }
    let mut view = run.clone();
    for suite in &mut view.suites {
        let mut excused = false;
        for case in suite.cases.iter_mut().filter(|c| c.extra().quarantined && c.status.is_failure()) {
            case.status = CaseStatus::Skipped;
            excused = true;
        }
        if !excused {
            continue;
        }
        suite.counts = Counts::of(&suite.cases);
        // The failing exit status came from the quarantined cases when no other case failed.
        if suite.status == SuiteStatus::Failed && suite.counts.failures() == 0 && suite.counts.ran() > 0 {
            suite.status = SuiteStatus::Passed;
        }
        let weights = weights_of(&suite.score);
        suite.score = crate::score::score_suite(suite, suite.score.policy, suite.score.threshold, &weights);
    }
    crate::score::summarize(&mut view);
    if let Some(comparison) = &mut view.comparison {
        let excused: std::collections::HashSet<(&str, &str)> = run
            .suites
            .iter()
            .flat_map(|s| s.cases.iter().filter(|c| c.extra().quarantined).map(move |c| (s.id.as_str(), c.id.as_str())))
            .collect();
        comparison.cases.retain(|x| {
            x.change != crate::model::comparison::Change::NewFailure
                || !excused.contains(&(x.suite_id.as_str(), x.case_id.as_str()))
        });
        if let (Some(delta), Some(shown), Some(gated)) = (comparison.score_delta, run.score, view.score) {
            comparison.score_delta = Some(crate::score::round2(delta + gated - shown));
        }
    }
    Cow::Owned(view)
}

/// The weights a weighted score was computed with, read back from its components (the default
/// runtime decay when no runtime error revealed it).
fn weights_of(score: &Score) -> Weights {
    let mut weights = Weights::default();
    if score.policy != Policy::Weighted {
        return weights;
    }
    for c in &score.components {
        match c.name.as_str() {
            "build" => weights.build = c.weight,
            "tests" => weights.tests = c.weight,
            "runtime" => {
                weights.runtime = c.weight;
                let errors: Option<f64> =
                    c.detail.as_deref().and_then(|d| d.split_whitespace().next()).and_then(|n| n.parse().ok());
                if let Some(errors) = errors.filter(|e| *e > 0.0)
                    && c.value > 0.0
                {
                    weights.runtime_decay = (1.0 - c.value) / errors;
                }
            }
            _ => {}
        }
    }
    weights
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::BaselineInfo;
    use crate::gate::{self, Gate};
    use crate::model::{RunOutcome, Suite, SuiteKind};

    /// A pass-rate suite of two cases: `a` passes, `b` has `b_status`.
    fn run_with(b_status: CaseStatus, quarantined: bool) -> Run {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        suite.cases.push(Case { name: "a".into(), status: CaseStatus::Passed, ..Case::default() });
        suite.cases.push(Case {
            name: "b".into(),
            status: b_status,
            extra: crate::model::CaseExtra { quarantined, ..Default::default() }.packed(),
            ..Case::default()
        });
        suite.finalize_cases();
        suite.status = if b_status.is_failure() { SuiteStatus::Failed } else { SuiteStatus::Passed };
        suite.score = crate::score::score_suite(&suite, Policy::PassRate, 100.0, &Weights::default());
        Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
    }

    fn info() -> BaselineInfo {
        BaselineInfo {
            source: "file:x".into(),
            commit: None,
            url: None,
            started_at: None,
            commits_behind: 0,
            conclusion: None,
        }
    }

    #[test]
    fn a_quarantined_new_failure_is_no_regression_but_an_unquarantined_one_is() {
        let base = run_with(CaseStatus::Passed, false);
        let gates = [Gate::Strict, Gate::Regression, Gate::ScoreBelow(100.0)];
        for (quarantined, expected) in [(true, RunOutcome::Pass), (false, RunOutcome::Fail)] {
            let mut run = run_with(CaseStatus::Failed, quarantined);
            run.comparison = Some(crate::compare::compare(&run, &base, info()));
            // The score shown keeps the failure either way.
            assert_eq!(run.score, Some(50.0));
            let verdict = gate::judge(&run, &gates, 0.5);
            assert_eq!(verdict.outcome, expected, "{verdict:?}");
        }
    }

    #[test]
    fn weighted_scores_are_rescored_with_their_own_weights() {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        suite.cases.push(Case { name: "a".into(), status: CaseStatus::Failed, ..Case::default() });
        suite.finalize_cases();
        suite.status = SuiteStatus::Failed;
        let weights = Weights { build: 10.0, tests: 80.0, runtime: 10.0, runtime_decay: 0.3 };
        suite.score = crate::score::score_suite(&suite, Policy::Weighted, 90.0, &weights);
        let read = weights_of(&suite.score);
        assert_eq!((read.build, read.tests, read.runtime), (10.0, 80.0, 10.0));
        assert!((read.runtime_decay - 0.3).abs() < 1e-9);
    }
}
