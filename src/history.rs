//! History without a server: each run's `results.json` carries the last [`KEEP`] outcomes of
//! every case and the last [`KEEP`] run-level points, read from the baseline and extended by one.
//! From them come flake rates, newly flaky tests and "failing since" for tests that stay red.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

pub(crate) use crate::model::history::{FailingCase, FlakyCase, History, KEEP, LISTED, RunPoint};
use crate::model::{CaseId, CaseStatus, Run};

/// The letter recorded for an outcome.
pub(crate) fn letter(status: CaseStatus) -> char {
    match status {
        CaseStatus::Passed => 'p',
        CaseStatus::Failed => 'f',
        CaseStatus::Error => 'e',
        CaseStatus::Timeout => 't',
        CaseStatus::Skipped => 's',
        CaseStatus::Flaky => 'F',
    }
}

fn known_letter(c: char) -> bool {
    matches!(c, 'p' | 'f' | 'e' | 't' | 's' | 'F')
}

fn failing_letter(c: char) -> bool {
    matches!(c, 'f' | 'e' | 't')
}

/// What the runs before this one left: run points and each case's letters, by case id.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Past {
    pub runs: Vec<RunPoint>,
    pub cases: HashMap<CaseId, Letters>,
}

/// A case's outcome letters, oldest first, at most [`KEEP`], held inline: a baseline of
/// 100,000 cases would otherwise hold a string (and an allocation) per case.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Letters {
    len: u8,
    bytes: [u8; KEEP],
}

impl Letters {
    /// The last [`KEEP`] letters of `text`, which holds known (ASCII) letters only.
    fn of(text: &str) -> Letters {
        let text = &text.as_bytes()[text.len().saturating_sub(KEEP)..];
        let mut bytes = [0; KEEP];
        bytes[..text.len()].copy_from_slice(text);
        Letters { len: text.len() as u8, bytes }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only known letters, all ASCII, are ever stored: the bytes are always UTF-8.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for Letters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl Past {
    /// The past a run continues when `baseline` is the run before it: the baseline's history,
    /// or, for results written before history existed, the baseline's own outcomes. Takes the
    /// baseline: its case ids move into the map and its cases are freed suite by suite.
    pub(crate) fn of_baseline(mut baseline: Run) -> Past {
        // The map is not sized up front: it grows as the baseline's suites are freed.
        let Some(history) = baseline.history.take() else {
            let runs = vec![point(&baseline)];
            let mut cases = HashMap::new();
            for case in baseline.suites.into_iter().flat_map(|s| s.cases) {
                let mut letters = [0; 4];
                cases.insert(case.id, Letters::of(letter(case.status).encode_utf8(&mut letters)));
            }
            return Past { runs, cases };
        };
        let suites = baseline.suites.into_iter().map(|s| {
            // Into a new vector: `collect` would reuse the cases' buffer (160 bytes a case) for the ids.
            let mut ids = Vec::with_capacity(s.cases.len());
            ids.extend(s.cases.into_iter().map(|c| c.id));
            (s.id, ids)
        });
        Past { cases: decode(suites, &history, false, 0), runs: history.runs }
    }

    /// The past a run itself started from: its history without its own entry. `fcorr merge`
    /// joins these, so a matrix cell's outcome is never counted twice.
    pub(crate) fn before(run: &Run) -> Past {
        let Some(history) = &run.history else { return Past::default() };
        let size = run.suites.iter().map(|s| s.cases.len()).sum();
        let suites = run.suites.iter().map(|s| (s.id.clone(), s.cases.iter().map(|c| c.id.clone()).collect()));
        let mut runs = history.runs.clone();
        runs.pop();
        Past { runs, cases: decode(suites, history, true, size) }
    }

    /// Adds another part's past (another shard or matrix cell of the same run). Every part read
    /// the same baseline, so the longest run series is kept, not their sum.
    pub(crate) fn join(&mut self, other: Past) {
        if other.runs.len() > self.runs.len() {
            self.runs = other.runs;
        }
        for (id, letters) in other.cases {
            self.cases.entry(id).or_insert(letters);
        }
    }

    /// Follows cases whose ids changed (`fcorr merge` prefixes a suite shared by several cells).
    pub(crate) fn rename(&mut self, old_ids: &[String], new_ids: &[&str]) {
        let moved: Vec<(CaseId, Letters)> = old_ids
            .iter()
            .zip(new_ids)
            .filter(|(old, new)| old.as_str() != **new)
            .filter_map(|(old, new)| self.cases.remove(old.as_str()).map(|letters| (CaseId::from(*new), letters)))
            .collect();
        self.cases.extend(moved);
    }
}

/// Reads `history.cases` back into letters by case id, for `suites` given as (suite id, its
/// case ids in order). A suite whose token count does not match its cases (an edited or
/// truncated file) is left out with a warning rather than giving its cases someone else's past;
/// unknown letters drop the token. `size`: the map's room to start with.
fn decode(
    suites: impl Iterator<Item = (String, Vec<CaseId>)>,
    history: &History,
    drop_own: bool,
    size: usize,
) -> HashMap<CaseId, Letters> {
    let mut cases = HashMap::with_capacity(size);
    for (suite_id, ids) in suites {
        let Some(text) = history.cases.get(&suite_id) else { continue };
        // `"".split(' ')` yields one empty token: an empty text is no tokens.
        let tokens = if text.is_empty() { 0 } else { text.split(' ').count() };
        if tokens != ids.len() {
            crate::warnings::warn(format!(
                "history of suite `{suite_id}` has {tokens} entries for {} cases; its history starts over",
                ids.len()
            ));
            continue;
        }
        for (id, token) in ids.into_iter().zip(text.split(' ')) {
            if token.is_empty() || !token.chars().all(known_letter) {
                continue;
            }
            let kept = if drop_own { &token[..token.len() - 1] } else { token };
            if !kept.is_empty() {
                cases.insert(id, Letters::of(kept));
            }
        }
    }
    cases
}

/// The run-level point of a run.
pub(crate) fn point(run: &Run) -> RunPoint {
    let totals = &run.totals;
    let ran = totals.ran();
    RunPoint {
        sha: run.git.as_ref().and_then(|g| g.commit.clone()),
        started_at: run.started_at.clone(),
        score: run.score,
        pass_rate: (ran > 0).then(|| (totals.passes() as f64 / ran as f64 * 10_000.0).round() / 10_000.0),
        total: totals.total,
        passed: totals.passes(),
        failed: totals.failures(),
    }
}

/// Sets `run.history`: `past` plus this run, trimmed to [`KEEP`], with the derived lists.
pub(crate) fn record(run: &mut Run, past: Past) {
    let mut runs = past.runs;
    runs.push(point(run));
    let excess = runs.len().saturating_sub(KEEP);
    runs.drain(..excess);

    let mut cases = BTreeMap::new();
    let mut flaky = Vec::new();
    let mut failing = Vec::new();
    let (mut flaky_total, mut failing_total) = (0, 0);
    let mut kept_letters = HashMap::new();
    for suite in &run.suites {
        let kept: HashSet<&str> = match suite.streamed {
            Some(_) => suite.cases.iter().map(|c| c.id.as_str()).collect(),
            None => HashSet::new(),
        };
        let mut text = String::with_capacity(suite.cases.len().max(suite.counts.total as usize) * 4);
        // Every case, streamed ones read back from disk (a part that cannot be read fails the reports).
        for (i, case) in suite.every_case().enumerate() {
            let before = past.cases.get(case.id.as_str()).map(Letters::as_str).unwrap_or("");
            // Letters are ASCII: byte offsets are character offsets.
            let before = &before[before.len().saturating_sub(KEEP - 1)..];
            if i > 0 {
                text.push(' ');
            }
            text.push_str(before);
            text.push(letter(case.status));
            let letters = &text[text.len() - before.len() - 1..];
            if kept.contains(case.id.as_str()) {
                kept_letters.insert(case.id.to_string(), letters.to_string());
            }
            if flake(letters).is_some() {
                flaky_total += 1;
            }
            if let Some((failed, ran)) = flake(letters).filter(|_| flaky.len() < LISTED) {
                flaky.push(FlakyCase {
                    suite_id: suite.id.clone(),
                    case_id: case.id.to_string(),
                    name: case.name.clone().into(),
                    failed,
                    runs: ran,
                    status: case.status,
                    // A first sighting is not "newly" anything: there was no window before it.
                    newly: !before.is_empty() && flake(before).is_none(),
                });
            }
            if red_streak(letters).is_some() {
                failing_total += 1;
            }
            if let Some((streak, start)) = red_streak(letters).filter(|_| failing.len() < LISTED) {
                // Letter `start` of the case lines up with run `start` of the last `len` runs.
                let at = runs.len().checked_sub(letters.len() - start);
                let first = at.and_then(|i| runs.get(i));
                failing.push(FailingCase {
                    suite_id: suite.id.clone(),
                    case_id: case.id.to_string(),
                    name: case.name.clone().into(),
                    runs: streak,
                    since_sha: first.and_then(|r| r.sha.clone()),
                    since: first.map(|r| r.started_at.clone()),
                    before_window: start == 0 && letters.len() == KEEP,
                });
            }
        }
        cases.insert(suite.id.clone(), text);
    }
    run.history = Some(History { runs, cases, flaky, flaky_total, failing, failing_total, kept_letters });
}

/// `(failed, ran)` when the letters show flakiness: a retry that passed (`F`), or an outcome
/// that went from pass to fail and back (or fail, pass, fail) within the window.
pub(crate) fn flake(letters: &str) -> Option<(u32, u32)> {
    let ran: Vec<char> = letters.chars().filter(|c| *c != 's').collect();
    let failed = ran.iter().filter(|c| failing_letter(**c) || **c == 'F').count() as u32;
    let mut flips = 0;
    let mut last: Option<bool> = None;
    for c in ran.iter().filter(|c| **c != 'F') {
        let fail = failing_letter(*c);
        if last.is_some_and(|l| l != fail) {
            flips += 1;
        }
        last = Some(fail);
    }
    (ran.contains(&'F') || flips >= 2).then_some((failed, ran.len() as u32))
}

/// `(runs, index of the first letter)` of the failing streak that ends with this run, when it
/// spans at least two runs that ran. Skips neither break nor lengthen it.
pub(crate) fn red_streak(letters: &str) -> Option<(u32, usize)> {
    let bytes = letters.as_bytes();
    if !bytes.last().is_some_and(|b| failing_letter(*b as char)) {
        return None;
    }
    let mut runs = 0;
    let mut start = bytes.len();
    for (i, b) in bytes.iter().enumerate().rev() {
        match *b as char {
            's' => continue,
            c if failing_letter(c) => {
                runs += 1;
                start = i;
            }
            _ => break,
        }
    }
    (runs >= 2).then_some((runs, start))
}

/// The case has passed the whole window ([`KEEP`] runs in a row): it may leave quarantine.
pub(crate) fn passed_whole_window(letters: &str) -> bool {
    letters.len() >= KEEP && letters.bytes().all(|b| b == b'p')
}

/// The flaky, failing-since and quarantine sections of the comment and job summary, as the
/// templates see them (`history` in the template context; docs/templates.md).
#[derive(Debug, Default, Serialize)]
pub(crate) struct Sections {
    /// Cases flaky in this run (status `flaky`: passed on a retry).
    pub flaky_now: Vec<SectionCase>,
    pub flaky_now_count: usize,
    /// Cases whose recent runs show flakiness but that were not flaky this time.
    pub flaky_history: Vec<SectionCase>,
    pub flaky_history_count: usize,
    /// Cases failing in this run and the runs before it.
    pub failing: Vec<SectionCase>,
    pub failing_count: usize,
    /// Quarantined cases, failing ones first.
    pub quarantined: Vec<SectionCase>,
    pub quarantined_count: usize,
    /// Quarantined cases that failed in this run (reported, not gated).
    pub quarantined_failing: usize,
    /// Runs kept in the history (this one included); 0 without history.
    pub runs: usize,
}

/// One listed case.
#[derive(Debug, Default, Serialize)]
pub(crate) struct SectionCase {
    pub suite: String,
    pub name: String,
    /// kebab-case status in this run.
    pub status: &'static str,
    pub retries: u32,
    /// Runs of the window it failed in (retries that passed included) and runs it ran in.
    pub failed: u32,
    pub ran: u32,
    /// Flaky for the first time in the window.
    pub newly: bool,
    /// Failing streak: runs, and the short commit it started at.
    pub streak: u32,
    pub since_sha: Option<String>,
    pub before_window: bool,
    /// Quarantined and passed the last [`KEEP`] runs in a row: it can leave quarantine.
    pub can_leave: bool,
}

/// Builds the sections, listing at most `max` cases in each (the counts count them all).
pub(crate) fn sections(run: &Run, max: usize) -> Sections {
    let out = Sections { runs: run.history.as_ref().map_or(0, |h| h.runs.len()), ..Sections::default() };
    let listed_anyway = |c: &crate::model::Case| c.status == CaseStatus::Flaky || c.extra().quarantined;
    if at_most_one_plain_letter(run) && !run.suites.iter().flat_map(|s| &s.cases).any(listed_anyway) {
        // Nothing to list: without two runs nothing is flaky or red for long, and no case is
        // flaky now or quarantined. Every report of a first run (every `fcorr import` without a
        // baseline) got here after hashing each case id into a map of letters.
        return out;
    }
    listed(run, max, out)
}

/// [`sections`] from each case's letters, adding to `out`.
fn listed(run: &Run, max: usize, mut out: Sections) -> Sections {
    let short = |sha: &Option<String>| sha.as_deref().map(|s| s.chars().take(7).collect::<String>());
    for suite in &run.suites {
        for (case, letters) in suite.cases.iter().zip(suite_letters(run, suite)) {
            let (failed, ran) = flake(letters).unwrap_or_else(|| {
                let ran: Vec<char> = letters.chars().filter(|c| *c != 's').collect();
                (ran.iter().filter(|c| failing_letter(**c) || **c == 'F').count() as u32, ran.len() as u32)
            });
            let listed = |list: &Vec<SectionCase>| list.len() < max;
            let view = || SectionCase {
                suite: suite.name.clone(),
                name: case.name.clone().into(),
                status: case.status.label(),
                retries: case.extra().retries,
                failed,
                ran,
                newly: letters.len() > 1 && flake(letters).is_some() && flake(&letters[..letters.len() - 1]).is_none(),
                ..SectionCase::default()
            };
            if case.status == CaseStatus::Flaky {
                out.flaky_now_count += 1;
                if listed(&out.flaky_now) {
                    out.flaky_now.push(view());
                }
            } else if flake(letters).is_some() && !case.extra().quarantined {
                out.flaky_history_count += 1;
                if listed(&out.flaky_history) {
                    out.flaky_history.push(view());
                }
            }
            if case.extra().quarantined {
                out.quarantined_count += 1;
                out.quarantined_failing += usize::from(case.status.is_failure());
                if listed(&out.quarantined) {
                    out.quarantined.push(SectionCase { can_leave: passed_whole_window(letters), ..view() });
                }
            } else if let Some((streak, start)) = red_streak(letters) {
                out.failing_count += 1;
                if listed(&out.failing) {
                    let runs = run.history.as_ref().map(|h| h.runs.as_slice()).unwrap_or(&[]);
                    let first = runs.len().checked_sub(letters.len() - start).and_then(|i| runs.get(i));
                    out.failing.push(SectionCase {
                        streak,
                        since_sha: first.and_then(|r| short(&r.sha)),
                        before_window: start == 0 && letters.len() == KEEP,
                        ..view()
                    });
                }
            }
        }
    }
    // Failing quarantined cases first: they are the ones this run's verdict looked past.
    out.quarantined.sort_by_key(|c| !matches!(c.status, "failed" | "error" | "timeout"));
    out
}

/// True when no case has more than one letter of history, and none is `F` (a retry that
/// passed, flaky from one run): then no case's letters show flakiness or a failing streak.
fn at_most_one_plain_letter(run: &Run) -> bool {
    let Some(history) = &run.history else { return true };
    history.cases.values().all(|text| {
        let bytes = text.as_bytes();
        !bytes.contains(&b'F') && bytes.windows(2).all(|pair| pair.contains(&b' '))
    })
}

/// The letters of each case of `suite` from `run.history`, in case order, without end (`""`
/// for a case with none: a suite without a valid entry). Read in place: each Markdown report
/// (written at the same time) once built a map of every case id to its letters (about 4 MiB of
/// the peak at 100,000 cases with a baseline).
fn suite_letters<'a>(run: &'a Run, suite: &'a crate::model::Suite) -> Box<dyn Iterator<Item = &'a str> + 'a> {
    let none = std::iter::repeat("");
    let Some(history) = &run.history else { return Box::new(none) };
    if suite.streamed.is_some() {
        // The kept cases only: their letters are kept by id.
        return Box::new(suite.cases.iter().map(|c| history.kept_letters.get(&*c.id).map_or("", String::as_str)));
    }
    match history.cases.get(&suite.id) {
        Some(text) if text.split(' ').count() == suite.cases.len() => Box::new(text.split(' ').chain(none)),
        _ => Box::new(none),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Case, Suite, SuiteKind};

    #[test]
    fn flakiness_needs_a_retry_or_two_flips() {
        assert_eq!(flake("pppF"), Some((1, 4)));
        assert_eq!(flake("pfp"), Some((1, 3)));
        assert_eq!(flake("fpf"), Some((2, 3)));
        // Broke and stays red; was fixed; skips are not runs.
        assert_eq!(flake("ppff"), None);
        assert_eq!(flake("ffpp"), None);
        assert_eq!(flake("pspsf"), None);
        assert_eq!(flake(""), None);
    }

    #[test]
    fn red_streaks_skip_skips_and_need_two_runs() {
        assert_eq!(red_streak("ppff"), Some((2, 2)));
        assert_eq!(red_streak("pfsf"), Some((2, 1)));
        assert_eq!(red_streak("ppf"), None);
        assert_eq!(red_streak("ffp"), None);
        assert_eq!(red_streak("etf"), Some((3, 0)));
    }

    fn run_of(statuses: &[CaseStatus], quarantined: bool) -> Run {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        for (i, status) in statuses.iter().enumerate() {
            suite.cases.push(Case {
                name: format!("t{i}").into(),
                status: *status,
                extra: crate::model::CaseExtra { quarantined, ..Default::default() }.packed(),
                ..Case::default()
            });
        }
        suite.finalize_cases();
        Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None)
    }

    #[test]
    fn history_is_trimmed_to_the_window_and_a_quarantined_case_can_leave_after_it() {
        let mut run = run_of(&[CaseStatus::Passed], true);
        record(&mut run, Past::default());
        for _ in 0..KEEP + 5 {
            let past = Past::of_baseline(run.clone());
            let mut next = run_of(&[CaseStatus::Passed], true);
            record(&mut next, past);
            run = next;
        }
        let history = run.history.as_ref().unwrap();
        assert_eq!(history.runs.len(), KEEP);
        assert_eq!(history.cases["s"], "p".repeat(KEEP));
        let sections = sections(&run, 10);
        assert_eq!(sections.quarantined_count, 1);
        assert!(sections.quarantined[0].can_leave);
        assert_eq!(sections.runs, KEEP);
    }

    #[test]
    fn sections_without_two_runs_list_what_the_letters_would() {
        use CaseStatus::*;
        let full = |run: &Run| {
            let out = Sections { runs: run.history.as_ref().map_or(0, |h| h.runs.len()), ..Sections::default() };
            serde_json::to_value(listed(run, 10, out)).unwrap()
        };
        let mut cases = Vec::new();
        for statuses in [vec![Passed, Failed, Skipped], vec![Passed, Flaky, Error], vec![Timeout, Failed]] {
            for quarantined in [false, true] {
                let first = run_of(&statuses, quarantined);
                let mut recorded = first.clone();
                record(&mut recorded, Past::default());
                let mut second = run_of(&statuses, quarantined);
                record(&mut second, Past::of_baseline(recorded.clone()));
                // An edited file: a lone `F` for a case that is not flaky now.
                let mut edited = recorded.clone();
                edited.history.as_mut().unwrap().cases.insert("s".into(), vec!["F"; statuses.len()].join(" "));
                cases.extend([first, recorded, second, edited]);
            }
        }
        for run in &cases {
            assert_eq!(serde_json::to_value(sections(run, 10)).unwrap(), full(run), "{:?}", run.history);
        }
        // The streak of the second run is listed, the first run's failures are not.
        assert_eq!(sections(&cases[2], 10).failing_count, 1);
        assert_eq!(sections(&cases[1], 10).failing_count, 0);
    }

    #[test]
    fn a_history_that_does_not_fit_its_suite_starts_over() {
        let mut base = run_of(&[CaseStatus::Failed, CaseStatus::Passed], false);
        record(&mut base, Past::default());
        base.history.as_mut().unwrap().cases.insert("s".into(), "f".into());
        assert!(Past::of_baseline(base.clone()).cases.is_empty());
        // Unknown letters drop the token only.
        base.history.as_mut().unwrap().cases.insert("s".into(), "x p".into());
        assert_eq!(Past::of_baseline(base.clone()).cases.len(), 1);
    }

    #[test]
    fn derived_lists_are_capped_and_counted_in_full() {
        let statuses = vec![CaseStatus::Flaky; LISTED + 50];
        let mut run = run_of(&statuses, false);
        record(&mut run, Past::default());
        let history = run.history.unwrap();
        assert_eq!((history.flaky.len(), history.flaky_total), (LISTED, (LISTED + 50) as u64));
    }

    #[test]
    fn a_slimmed_baseline_gives_the_past_the_whole_one_gives() {
        let mut base = run_of(&[CaseStatus::Failed, CaseStatus::Passed, CaseStatus::Flaky], false);
        record(&mut base, Past::default());
        let mut next = run_of(&[CaseStatus::Failed, CaseStatus::Failed, CaseStatus::Passed], false);
        record(&mut next, Past::of_baseline(base.clone()));
        let mut old = next.clone();
        old.history = None;
        for run in [next, old] {
            let text = serde_json::to_string(&run).unwrap();
            let whole = Past::of_baseline(crate::report::parse_results(&text).unwrap());
            let slim = Past::of_baseline(crate::report::parse_baseline(&text).unwrap());
            assert_eq!(slim, whole);
            assert_eq!(whole.cases.len(), 3);
        }
    }

    #[test]
    fn before_drops_the_runs_own_entry() {
        let mut base = run_of(&[CaseStatus::Failed], false);
        record(&mut base, Past::default());
        let mut run = run_of(&[CaseStatus::Passed], false);
        record(&mut run, Past::of_baseline(base.clone()));
        let before = Past::before(&run);
        assert_eq!(before.runs.len(), 1);
        assert_eq!(before.cases.values().next().map(Letters::as_str), Some("f"));
    }
}
