//! `fcorr merge` end to end: matrix cells written by the real binary (`fcorr import` of report
//! fixtures) merged into one run, with colliding suites prefixed, a missing cell kept visible,
//! and a merged baseline compared case by case.

use std::path::Path;
use std::process::Command;

use assert_cmd::prelude::*;
use fcorr::compare::Change;
use fcorr::model::{Run, RunOutcome, SuiteStatus};

use crate::support::repo;

fn fcorr(cwd: &Path) -> Command {
    let mut cmd = crate::support::fcorr();
    cmd.current_dir(cwd).env("NO_COLOR", "1");
    cmd
}

fn read_run(path: &Path) -> Run {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A cell: `fcorr import` of one fixture report as suite `name` into `dir/cells/<cell>`.
fn cell(dir: &Path, cell: &str, report: &str, name: &str) -> Run {
    let report = repo().join("tests/fixtures/reports/junit").join(report);
    let out = format!("cells/{cell}");
    fcorr(dir).arg("import").arg(&report).args(["--name", name, "--out", &out, "--format", "json"]).assert().code(1);
    read_run(&dir.join(&out).join("results.json"))
}

#[test]
fn cells_merge_into_one_run_with_colliding_suites_prefixed() {
    let dir = tempfile::tempdir().unwrap();
    let ubuntu = cell(dir.path(), "ubuntu", "jest-junit.xml", "web");
    cell(dir.path(), "windows", "jest-junit.xml", "web");
    let api = cell(dir.path(), "go", "gotestsum.xml", "api");

    let assert = fcorr(dir.path()).args(["merge", "cells/*", "--out", "merged"]).assert().code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let merged = read_run(&dir.path().join("merged/results.json"));
    let ids: Vec<&str> = merged.suites.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["api", "ubuntu/web", "windows/web"], "{stdout}");
    assert_eq!(merged.totals.total, api.totals.total + 2 * ubuntu.totals.total);
    assert_eq!(merged.verdict.outcome, RunOutcome::Fail);
    for name in ["junit.xml", "ctrf.json", "summary.md", "comment.md", "report.html"] {
        assert!(dir.path().join("merged").join(name).is_file(), "{name} written");
    }
    assert!(stdout.contains("windows/web"), "{stdout}");

    // A suite no other cell shares keeps its id and its case ids; prefixed suites get new,
    // distinct case ids.
    let api_merged = &merged.suites[0];
    let ids_of = |s: &fcorr::model::Suite| s.cases.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids_of(api_merged), ids_of(&api.suites[0]));
    let (u, w) = (ids_of(&merged.suites[1]), ids_of(&merged.suites[2]));
    assert!(u.iter().all(|id| !w.contains(id)), "{u:?} vs {w:?}");
    assert!(u.iter().all(|id| !ids_of(&ubuntu.suites[0]).contains(id)));
}

#[test]
fn a_cell_without_results_stays_in_the_view_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    cell(dir.path(), "ok", "gotestsum.xml", "api");
    std::fs::create_dir_all(dir.path().join("cells/crashed")).unwrap();
    let assert = fcorr(dir.path())
        .args(["merge", "cells/ok", "cells/crashed", "--fail-on", "critical", "--out", "merged"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("cells/crashed/results.json") && stderr.contains("crashed"), "{stderr}");
    let merged = read_run(&dir.path().join("merged/results.json"));
    let crashed = merged.suites.iter().find(|s| s.id == "crashed").unwrap();
    assert_eq!(crashed.status, SuiteStatus::Error);
    assert!(merged.verdict.reasons.iter().any(|r| r.gate == "error"), "{:?}", merged.verdict.reasons);

    fcorr(dir.path()).args(["merge", "cells/nothing-*"]).assert().code(2);
}

#[test]
fn a_merged_baseline_compares_case_by_case() {
    let dir = tempfile::tempdir().unwrap();
    cell(dir.path(), "ubuntu", "jest-junit.xml", "web");
    cell(dir.path(), "windows", "jest-junit.xml", "web");
    fcorr(dir.path()).args(["merge", "cells/*", "--out", "base", "--format", "json"]).assert().code(1);

    fcorr(dir.path()).args(["merge", "cells/*", "--out", "merged", "--baseline", "base"]).assert().code(1);
    let merged = read_run(&dir.path().join("merged/results.json"));
    let comparison = merged.comparison.expect("a comparison");
    let failures: usize = merged.suites.iter().map(|s| s.failures().count()).sum();
    assert!(failures > 0);
    assert_eq!(comparison.with_change(Change::StillFailing).count(), failures);
    assert_eq!(comparison.with_change(Change::NewFailure).count(), 0);
    assert_eq!(comparison.with_change(Change::Added).count(), 0);
    assert!(std::fs::read_to_string(dir.path().join("merged/comment.md")).unwrap().contains("Still failing"));

    // A baseline named that is not there is an input error naming it, as in `fcorr ci`.
    let assert =
        fcorr(dir.path()).args(["merge", "cells/*", "--out", "again", "--baseline", "no-such-dir"]).assert().code(2);
    assert!(String::from_utf8_lossy(&assert.get_output().stderr).contains("no-such-dir"));
    assert!(!dir.path().join("again/results.json").exists());
}

/// `fcorr run --shard K/N` of the bundled benchmark example, both shards, then `fcorr merge`:
/// the same one suite, each task once, as the unsharded run.
#[test]
fn benchmark_shards_run_apart_and_merge_into_the_whole_suite() {
    let dir = tempfile::tempdir().unwrap();
    let config = repo().join("examples/fcorr.toml");
    let run = |out: &str, shard: Option<&str>| {
        let mut cmd = fcorr(dir.path());
        cmd.args(["run", "--config"]).arg(&config);
        cmd.args(["--filter", "calc-bench", "--out", out, "--format", "json", "--fail-on", "none"]);
        if let Some(shard) = shard {
            cmd.args(["--shard", shard]);
        }
        cmd.assert().code(0);
        read_run(&dir.path().join(out).join("results.json"))
    };
    let whole = run("whole", None);
    let mut names = Vec::new();
    for k in 1..=2 {
        let part = run(&format!("cells/s{k}"), Some(&format!("{k}/2")));
        assert_eq!(part.suites.len(), 1);
        assert_eq!(part.suites[0].shard.as_deref(), Some(format!("{k}/2").as_str()));
        names.extend(part.suites[0].cases.iter().map(|c| c.name.clone()));
    }
    names.sort();
    assert_eq!(names, ["fix-add", "fix-div", "fix-mul"]);

    fcorr(dir.path()).args(["merge", "cells/*", "--out", "merged", "--fail-on", "none"]).assert().code(0);
    let merged = read_run(&dir.path().join("merged/results.json"));
    assert_eq!(merged.suites.len(), 1);
    let (m, w) = (&merged.suites[0], &whole.suites[0]);
    assert_eq!((m.id.as_str(), m.shard.as_deref()), ("calc-bench", None));
    assert_eq!((m.counts.total, m.counts.passed, m.counts.failed, m.counts.error), (3, 1, 1, 1));
    assert_eq!(m.counts, w.counts);
    assert_eq!(m.score.value, w.score.value);
    assert_eq!(m.usage.as_ref().map(|u| u.tokens), w.usage.as_ref().map(|u| u.tokens));
    let ids = |s: &fcorr::model::Suite| {
        let mut ids: Vec<String> = s.cases.iter().map(|c| c.id.to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(m), ids(w), "case ids are the same sharded or not, so baselines compare");
}

/// Dataset evals split by case like benchmark tasks: each shard asks its slice, and the merge
/// is the whole dataset with the same case ids and counts as an unsharded run.
#[test]
fn eval_shards_split_the_dataset_and_merge_into_the_whole_suite() {
    let dir = tempfile::tempdir().unwrap();
    let config = repo().join("examples/fcorr.toml");
    let run = |out: &str, shard: Option<&str>| {
        let mut cmd = fcorr(dir.path());
        cmd.args(["run", "--config"]).arg(&config);
        cmd.args(["--filter", "shell-commands", "--out", out, "--format", "json", "--fail-on", "none", "--no-cache"]);
        if let Some(shard) = shard {
            cmd.args(["--shard", shard]);
        }
        cmd.assert().code(0);
        read_run(&dir.path().join(out).join("results.json"))
    };
    let whole = run("whole", None);
    let total = whole.suites[0].counts.total;
    assert!(total >= 30, "{total} cases");
    let mut sizes = Vec::new();
    for k in 1..=3 {
        let part = run(&format!("cells/s{k}"), Some(&format!("{k}/3")));
        assert_eq!(part.suites.len(), 1);
        sizes.push(part.suites[0].counts.total);
    }
    assert_eq!(sizes.iter().sum::<u64>() as usize, total as usize, "every case asked exactly once: {sizes:?}");
    assert!(sizes.iter().all(|&n| (n as usize) < total as usize), "each shard asks a slice: {sizes:?}");

    fcorr(dir.path()).args(["merge", "cells/*", "--out", "merged", "--fail-on", "none"]).assert().code(0);
    let merged = read_run(&dir.path().join("merged/results.json"));
    assert_eq!(merged.suites.len(), 1);
    let (m, w) = (&merged.suites[0], &whole.suites[0]);
    assert_eq!(m.counts, w.counts);
    let ids = |s: &fcorr::model::Suite| {
        let mut ids: Vec<String> = s.cases.iter().map(|c| c.id.to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(m), ids(w));
}

/// With the default gates, a shard that holds none of a suite's tasks passes (emptiness is
/// judged at the merge), the shard that ran the task is judged on it, and the merge passes.
#[test]
fn an_empty_shard_passes_and_the_merge_judges_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let bench = repo().join("examples/benchmark");
    let toml = format!(
        "[[suite]]\nname = \"one\"\nkind = \"benchmark\"\npolicy = \"pass-rate\"\ntasks = \"{}\"\nexecutor = \"{}\"\nids = [\"fix-add\"]\n",
        bench.join("tasks.jsonl").display(),
        bench.join("agent.sh").display()
    );
    std::fs::write(dir.path().join("fcorr.toml"), toml).unwrap();
    let mut statuses = Vec::new();
    for k in 1..=2 {
        let out = format!("cells/s{k}");
        fcorr(dir.path())
            .args(["run", "--shard", &format!("{k}/2"), "--out", &out, "--format", "json"])
            .assert()
            .code(0);
        statuses.push(read_run(&dir.path().join(out).join("results.json")).suites[0].status);
    }
    statuses.sort_by_key(|s| format!("{s:?}"));
    assert_eq!(statuses, [SuiteStatus::NoTests, SuiteStatus::Passed]);
    fcorr(dir.path()).args(["merge", "cells/*", "--out", "merged", "--format", "json"]).assert().code(0);
    let merged = read_run(&dir.path().join("merged/results.json"));
    assert_eq!((merged.suites.len(), merged.totals.total, merged.totals.passed), (1, 1, 1));
    assert_eq!(merged.suites[0].status, SuiteStatus::Passed);
}

/// A CI matrix of `--shard K/N` jobs where one job never uploaded: the merge names every suite
/// that shard runs as an error ("never arrived") instead of passing on the shards that came.
#[test]
fn a_shard_that_never_arrived_is_named_with_the_suites_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let report = repo().join("tests/fixtures/reports/junit/bazel.xml");
    let mut toml = String::new();
    for name in ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"] {
        toml.push_str(&format!(
            "[[suite]]\nname = \"{name}\"\nkind = \"import\"\nreports = [\"{}\"]\npolicy = \"pass-rate\"\nmin-score = 0\n",
            report.display()
        ));
    }
    std::fs::write(dir.path().join("fcorr.toml"), toml).unwrap();
    let mut per_shard = Vec::new();
    for k in 1..=3 {
        let out = format!("cells/s{k}");
        fcorr(dir.path())
            .args(["run", "--shard", &format!("{k}/3"), "--out", &out, "--format", "json", "--fail-on", "none"])
            .assert()
            .code(0);
        let run = read_run(&dir.path().join(&out).join("results.json"));
        let plan = run.shard.clone().expect("a sharded run records its shard plan");
        assert_eq!(plan.suites.len(), 6, "every whole suite of the plan is listed with its shard");
        per_shard.push(run.suites.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
    }
    // The shard that runs the most suites goes missing (the hash spreads six over three shards).
    let lost = (0..3).max_by_key(|&i| per_shard[i].len()).unwrap();
    assert!(!per_shard[lost].is_empty());
    std::fs::remove_dir_all(dir.path().join(format!("cells/s{}", lost + 1))).unwrap();

    let output = fcorr(dir.path()).args(["merge", "cells/*", "--out", "merged", "--format", "json"]).output().unwrap();
    assert_ne!(output.status.code(), Some(0), "a merge missing a shard must not pass");
    let merged = read_run(&dir.path().join("merged/results.json"));
    assert_eq!(merged.suites.len(), 6, "the lost shard's suites are in the merged run, as errors");
    for name in &per_shard[lost] {
        let suite = merged.suites.iter().find(|s| &s.name == name).unwrap();
        assert_eq!(suite.status, SuiteStatus::Error, "{name}");
        let message = &suite.error.as_ref().unwrap().message;
        assert!(message.contains(&format!("shard {}/3 never arrived", lost + 1)), "{message}");
    }
    assert_eq!(merged.verdict.outcome, RunOutcome::Fail);
}

/// A sharded eval whose SUT answers `ok`: `cases` cases expecting `ok`, then `failing` more
/// expecting something else, run as shards 1/2 and 2/2 into `<out>/s1` and `<out>/s2`.
fn eval_shards(dir: &Path, out: &str, cases: usize, failing: usize) {
    let sut = dir.join("sut.sh");
    std::fs::write(&sut, "#!/bin/sh\necho ok\n").unwrap();
    std::fs::set_permissions(&sut, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut lines = String::new();
    for i in 0..cases {
        lines.push_str(&format!("{{\"id\": \"c{i}\", \"prompt\": \"p\", \"expected\": \"ok\"}}\n"));
    }
    for i in 0..failing {
        lines.push_str(&format!("{{\"id\": \"new{i}\", \"prompt\": \"p\", \"expected\": \"not ok\"}}\n"));
    }
    std::fs::write(dir.join("cases.jsonl"), lines).unwrap();
    let toml = "[[suite]]\nname = \"ev\"\nkind = \"eval\"\ndataset = \"cases.jsonl\"\npolicy = \"pass-rate\"\n\
                [suite.sut]\ntype = \"command\"\ncommand = \"./sut.sh\"\n";
    std::fs::write(dir.join("fcorr.toml"), toml).unwrap();
    for k in 1..=2 {
        let out = format!("{out}/s{k}");
        fcorr(dir)
            .args(["run", "--shard", &format!("{k}/2"), "--out", &out, "--format", "json", "--fail-on", "none"])
            .args(["--no-cache"])
            .assert()
            .code(0);
    }
}

/// B6: a stale shard (an artifact of an earlier run, cut from an older dataset) must not stand
/// in for this run's shard: the failing cases this run's shard held would vanish from a merged
/// PASS. The merge refuses it, naming the file and what differs; shards written before fcorr
/// recorded a run identity still merge, with a warning that they cannot be checked.
#[test]
fn a_shard_from_another_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    eval_shards(dir, "old", 12, 0);
    eval_shards(dir, "new", 12, 6);
    // The new shard that holds the most failures is the one a stale copy would hide.
    let failed = |k: u32| read_run(&dir.join(format!("new/s{k}/results.json"))).totals.failed;
    let (hidden, kept) = if failed(1) >= failed(2) { (1, 2) } else { (2, 1) };
    assert!(failed(hidden) > 0);

    let output = fcorr(dir)
        .args(["merge", &format!("new/s{kept}"), &format!("old/s{hidden}"), "--out", "merged", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "a stale shard is refused: {stderr}");
    assert!(stderr.contains(&format!("old/s{hidden}/results.json")), "names the stale file: {stderr}");
    assert!(stderr.contains("inputs digest"), "says what differs: {stderr}");
    assert!(stderr.contains("not from the same run"), "{stderr}");

    // The shards of one run merge and fail on the new cases.
    fcorr(dir).args(["merge", "new/s1", "new/s2", "--out", "merged", "--format", "json"]).assert().code(1);

    // Results written before the identity was recorded: merged, with a warning per shard.
    for k in 1..=2 {
        let path = dir.join(format!("new/s{k}/results.json"));
        let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let plan = json["shard"].as_object_mut().unwrap();
        assert!(plan.remove("inputs").is_some(), "a sharded run records its inputs digest");
        std::fs::write(&path, json.to_string()).unwrap();
    }
    let output =
        fcorr(dir).args(["merge", "new/s1", "new/s2", "--out", "merged", "--format", "json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("cannot check that it belongs to the same run").count(), 2, "{stderr}");
}
