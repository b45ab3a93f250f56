//! Links to code and per-test time in the Markdown reports (snapshots, with hostile file names),
//! and the `timing` object of results.json written by the real binary from imported JUnit files.

use std::path::Path;

use crate::report_support::*;
use fcorr::model::{CaseStatus, Run, SuiteStatus, TimingSettings};
use fcorr::report::ReportEnv;
use fcorr::report::links::{CodeLinks, PathMapper};
use fcorr::report::markdown::{render_comment, render_summary};
use fcorr::timing;
use serde_json::Value;

const HEAD: &str = "4c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d";

/// Twelve timed cases under `services/api` in the workspace `/ws`; the hostile ones fail.
fn timed_run(scale: f64) -> Run {
    let mut cases = Vec::new();
    for (i, name) in HOSTILE.iter().enumerate() {
        let mut c = if i % 2 == 0 { failing(name, CaseStatus::Failed, "boom") } else { case(name, CaseStatus::Passed) };
        // Names that break Markdown, URLs and paths, one per case.
        c.file = Some(
            [
                "tests/a b|c.py",
                "tests/x)](javascript:alert(1)).py",
                "../../../etc/passwd",
                "/ws/services/api/tests/abs#frag?.py",
                "/elsewhere/out.py",
                "tests/ümlaut`tick`.py",
                "tests/<b>.py",
                "tests/%41.py",
            ][i]
                .into(),
        );
        c.duration_ms = Some((i as f64 + 1.0) * 100.0 * if i == 1 || i == 6 { scale } else { 1.0 });
        cases.push(c);
    }
    for i in 0..4 {
        let mut c = case(&format!("test_plain_{i}"), CaseStatus::Passed);
        c.duration_ms = Some(5.0 + i as f64 * if i == 3 { scale } else { 1.0 });
        cases.push(c);
    }
    let mut s = suite("api", SuiteStatus::Failed, cases, vec![]);
    s.path = Some("services/api".into());
    run(vec![s], None)
}

fn linked_env() -> ReportEnv {
    let paths = PathMapper { base: "/ws".into(), workspace: Some("/ws".into()), ..PathMapper::default() };
    ReportEnv {
        repository: Some("acme/app".into()),
        links: CodeLinks::new("https://github.com", "acme/app", HEAD, paths)
            .map(|l| l.with_check_run(Some("https://github.com/acme/app/runs/77"))),
        ..ReportEnv::default()
    }
}

#[test]
fn comment_and_summary_link_code_and_list_slow_tests() {
    let base = timed_run(1.0);
    // Two hostile cases 4x slower (well over 100 ms), one plain case 4x slower but by 30 ms (noise).
    let mut now = timed_run(4.0);
    timing::attach(&mut now, Some(&base), &TimingSettings::default());
    let env = linked_env();
    let summary = render_summary(&now, &env).unwrap();
    let comment = render_comment(&now, &env).unwrap();
    insta::assert_snapshot!("links_summary", summary);
    insta::assert_snapshot!("links_comment", comment);
    for md in [&summary, &comment] {
        check_markdown(md);
        let blob = format!("https://github.com/acme/app/blob/{HEAD}/");
        assert!(md.contains(&format!("({blob}services/api/tests/a%20b%7Cc.py#L42)")), "escaped, suite-relative\n{md}");
        assert!(
            md.contains(&format!("({blob}services/api/tests/abs%23frag%3F.py)")),
            "absolute in the workspace\n{md}"
        );
        assert!(md.contains(&format!("({blob}services/api/tests/x%29%5D%28javascript%3Aalert%281%29%29.py)")));
        // What GitHub will parse: every link goes to the commit's files or the check run, and
        // each link's text is the location's code span, whatever the file name holds.
        for (url, text) in links_of(md) {
            assert!(url.starts_with(&blob) || url == "https://github.com/acme/app/runs/77", "{url}");
            assert!(text == "annotation" || text.starts_with("tests/") || text.starts_with("/ws/"), "{text}");
        }
        assert!(!md.contains("etc/passwd)") && !md.contains("out.py)"), "no link outside the repository\n{md}");
        assert!(md.contains("`../../../etc/passwd:42`"), "plain text stays\n{md}");
        assert!(md.contains("([annotation](https://github.com/acme/app/runs/77))"));
    }
    assert!(summary.contains("**🐢 Slower than the baseline (2)**"), "{summary}");
    assert!(comment.contains("<details><summary>⏱️ Test time: 2 slower than the baseline</summary>"), "{comment}");
}

#[test]
fn without_github_context_locations_stay_plain_text() {
    let mut now = timed_run(1.0);
    timing::attach(&mut now, None, &TimingSettings::default());
    let summary = render_summary(&now, &ReportEnv::default()).unwrap();
    assert!(links_of(&summary).is_empty(), "{summary}");
    assert!(summary.contains("**⏱️ Slowest tests**") && !summary.contains("Slower than the baseline"));
}

/// Destination and text of every link comrak (GitHub's parser) finds in `md`.
fn links_of(md: &str) -> Vec<(String, String)> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    root.descendants()
        .filter_map(|n| match &n.data().value {
            comrak::nodes::NodeValue::Link(link) => Some((link.url.clone(), text_of(n))),
            _ => None,
        })
        .collect()
}

fn junit(cases: &[(&str, f64)]) -> String {
    let body: String = cases
        .iter()
        .map(|(name, secs)| format!("<testcase classname=\"t.T\" name=\"{name}\" time=\"{secs}\"/>"))
        .collect();
    format!("<testsuites><testsuite name=\"t\" tests=\"{}\">{body}</testsuite></testsuites>", cases.len())
}

fn import(dir: &Path, file: &str, out: &str) {
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(dir).args(["import", file, "--name", "api", "--out", out, "--json"]).assert().success();
}

#[test]
fn results_json_lists_slowdowns_over_both_thresholds_only() {
    let dir = tempfile::tempdir().unwrap();
    // Baseline: everything fast.
    std::fs::write(
        dir.path().join("base.xml"),
        junit(&[("slower", 0.2), ("much_slower", 0.1), ("noise", 0.01), ("drift", 2.0), ("same", 0.5)]),
    )
    .unwrap();
    // Now: +300 ms (2.5x), +1.9 s (20x), +40 ms (5x: under 100 ms), +0.5 s (1.25x: under 1.5x).
    std::fs::write(
        dir.path().join("now.xml"),
        junit(&[("slower", 0.5), ("much_slower", 2.0), ("noise", 0.05), ("drift", 2.5), ("same", 0.5)]),
    )
    .unwrap();
    import(dir.path(), "base.xml", "base");
    import(dir.path(), "now.xml", "now");
    let results = dir.path().join("now/results.json");
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let slowest: Vec<&str> =
        before["timing"]["slowest"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(slowest, ["drift", "much_slower", "slower", "same", "noise"]);
    assert_eq!(before["timing"]["compared"], false);

    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(dir.path())
        .args(["compare", "--results", "now", "--baseline", "base", "--write"])
        .assert()
        .success();
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let timing = &after["timing"];
    assert_eq!(timing["compared"], true);
    assert_eq!(timing["slowdowns_total"], 2, "{timing:#}");
    let rows: Vec<(&str, f64, f64, f64)> = timing["slowdowns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap(),
                d["before_ms"].as_f64().unwrap(),
                d["after_ms"].as_f64().unwrap(),
                d["factor"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [("much_slower", 100.0, 2000.0, 20.0), ("slower", 200.0, 500.0, 2.5)]);
    assert_eq!(timing["settings"]["slowdown_min_ms"], 100.0);
    // The file still is a valid results.json.
    let run: Run = serde_json::from_value(after).unwrap();
    assert_eq!(run.timing.unwrap().slowdowns.len(), 2);
}

#[test]
fn the_html_page_links_failures_to_the_code() {
    use fcorr::report::Reporter;
    let page = fcorr::report::html::HtmlPage.render(&timed_run(1.0), &linked_env()).unwrap();
    let page = String::from_utf8(page).unwrap();
    // The static list (no script needed); the URL is escaped again for the attribute.
    let href = format!("<a href=\"https://github.com/acme/app/blob/{HEAD}/services/api/tests/a%20b%7Cc.py#L42\">");
    assert!(page.contains(&href), "no link in the failure list");
    assert!(page.contains("<code>../../../etc/passwd:42</code>") && !page.contains("etc/passwd#L42"));
    let plain = fcorr::report::html::HtmlPage.render(&timed_run(1.0), &ReportEnv::default()).unwrap();
    assert!(!String::from_utf8(plain).unwrap().contains("/blob/"));
}

#[test]
fn import_and_report_link_failures_to_the_code_inside_github_actions() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("tests")).unwrap();
    std::fs::write(
        ws.join("report.xml"),
        "<testsuites><testsuite name=\"t\" tests=\"2\">\
         <testcase classname=\"t.T\" name=\"ok\" file=\"tests/test_calc.py\" line=\"3\"/>\
         <testcase classname=\"t.T\" name=\"broken\" file=\"tests/test_calc.py\" line=\"9\">\
         <failure message=\"boom\">assert 1 == 2</failure></testcase>\
         </testsuite></testsuites>",
    )
    .unwrap();
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let actions = [
        ("GITHUB_ACTIONS", "true".to_string()),
        ("GITHUB_REPOSITORY", "org/app".to_string()),
        ("GITHUB_SHA", sha.to_string()),
        ("GITHUB_SERVER_URL", "https://github.com".to_string()),
        ("GITHUB_WORKSPACE", ws.display().to_string()),
    ];
    let link = format!("https://github.com/org/app/blob/{sha}/tests/test_calc.py#L9");
    let summary_links = |out: &str| -> Vec<String> {
        let md = std::fs::read_to_string(ws.join(out).join("summary.md")).unwrap();
        links_of(&md).into_iter().map(|(url, _)| url).collect()
    };

    // Inside Actions: `fcorr import` and then `fcorr report` (re-rendering its results.json).
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(ws).envs(actions.iter().cloned());
    cmd.args(["import", "report.xml", "--out", "in-actions", "--format", "summary"]).assert().code(1);
    let blob = format!("https://github.com/org/app/blob/{sha}/tests/test_calc.py#L");
    let links = summary_links("in-actions");
    assert!(links.contains(&link) && links.iter().all(|l| l.starts_with(&blob)), "import links the failure: {links:?}");
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(ws).envs(actions.iter().cloned());
    cmd.args(["report", "in-actions/results.json", "--out", "re-rendered", "--format", "summary", "-q"])
        .assert()
        .success();
    assert_eq!(summary_links("re-rendered"), links, "report links as import did");

    // On a laptop (no GITHUB_* variables): the same locations stay plain text.
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(ws).args(["import", "report.xml", "--out", "laptop", "--format", "summary"]).assert().code(1);
    assert!(summary_links("laptop").is_empty());
}
