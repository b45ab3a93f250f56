//! Markdown reports: snapshots of the summary and comment for every scenario, checked with
//! comrak's AST (real tables, closed fences, balanced `<details>`), size budgets on a 100,000-case
//! run, hostile names, custom templates and the HTML page.

use crate::report_support::*;
use fcorr::model::Run;
use fcorr::report::budget::{Budget, open_blocks};
use fcorr::report::markdown::{self, render_comment, render_summary};
use fcorr::report::{ReportEnv, Reporter};

fn env() -> ReportEnv {
    ReportEnv {
        repository: Some("acme/app".into()),
        run_url: Some("https://github.com/acme/app/actions/runs/1".into()),
        ..ReportEnv::default()
    }
}

#[test]
fn snapshots_of_every_scenario() {
    for (name, run) in scenarios() {
        let summary = render_summary(&run, &env()).unwrap();
        let comment = render_comment(&run, &env()).unwrap();
        insta::assert_snapshot!(format!("summary_{name}"), summary);
        insta::assert_snapshot!(format!("comment_{name}"), comment);
        for md in [&summary, &comment] {
            check_reading(&run, md);
            check_markdown(md);
            // The suite table: a header row plus one row per suite.
            let rows = suite_table(md);
            assert_eq!(rows.len(), run.suites.len() + 1, "{name}: suite table rows\n{md}");
            for (row, suite) in rows[1..].iter().zip(&run.suites) {
                assert!(row[1].starts_with(&suite.name), "{name}: suite cell {:?} for {:?}", row[1], suite.name);
                assert_eq!(row.len(), rows[0].len());
            }
        }
    }
}

#[test]
fn the_five_suite_review_run_reads_why_first_and_names_each_failure_once() {
    for baseline in [false, true] {
        let run = five_suites(baseline);
        let comment = render_comment(&run, &env()).unwrap();
        let summary = render_summary(&run, &env()).unwrap();
        for md in [&comment, &summary] {
            check_markdown(md);
            check_reading(&run, md);
            // The banks' own grade says whose it is; the run is CRITICAL.
            assert!(md.contains("the run as a whole is **CRITICAL**"), "{md}");
            // Reasons keep their code spans and show no literal backticks.
            assert!(!md.contains("\\`"), "escaped backticks in:\n{md}");
        }
        assert!(Budget::COMMENT.fits(&comment));
        let rows = suite_table(&comment);
        let gate = |suite: &str| rows.iter().find(|r| r[1].starts_with(suite)).map(|r| r[0].clone()).unwrap();
        // Scores over their thresholds pass their gate, whatever failed inside them.
        assert_eq!(gate("retrieval"), "✅", "{rows:?}");
        assert_eq!(gate("shell-commands · critical case failed"), "❌", "{rows:?}");
        assert_eq!(gate("python-broken · below 100"), "❌", "{rows:?}");
        assert_eq!(rows[0][5], "Score (strict)", "the common policy once, in the header");
        let suffix = if baseline { "" } else { "_no_baseline" };
        insta::assert_snapshot!(format!("comment_five_suites{suffix}"), comment);
        insta::assert_snapshot!(format!("summary_five_suites{suffix}"), summary);
    }
}

#[test]
fn comment_names_the_baseline_or_its_absence() {
    let none = render_comment(&mixed_failures(), &env()).unwrap();
    assert!(none.contains("No baseline to compare with"));
    let fresh = render_comment(&with_comparison(0), &env()).unwrap();
    assert!(fresh.contains("[`0f1e2d3`](https://github.com/acme/app/actions/runs/987654)"), "{fresh}");
    assert!(!fresh.contains("stale baseline"));
    assert!(fresh.contains("(-50 ↓)"), "score delta with arrow");
    // New failures come first in the changes, and are listed once, with the failures.
    let new_failures = fresh.find("**2 new failures**").expect("new failures counted");
    let fixed = fresh.find("1 fixed").expect("fixed counted");
    assert!(new_failures < fixed, "{fresh}");
    assert!(fresh.contains("**🆕 New failures (2)**") && fresh.contains("**✅ Fixed (1)**"), "{fresh}");
    let stale = render_comment(&with_comparison(3), &env()).unwrap();
    assert!(stale.contains("stale baseline**: 3 commits behind"), "{stale}");
    assert!(!fresh.contains("baseline run itself"), "a green baseline run is not called out");
    let mut red = with_comparison(0);
    red.comparison.as_mut().unwrap().baseline.conclusion = Some("failure".into());
    let red = render_comment(&red, &env()).unwrap();
    assert!(red.contains("the baseline run itself ended in `failure`"), "{red}");
}

#[test]
fn hostile_names_stay_inside_their_cells_and_spans() {
    let run = hostile_names();
    // The summary lists every case; the comment only the failing ones (even indexes).
    let summary = render_summary(&run, &env()).unwrap();
    let comment = render_comment(&run, &env()).unwrap();
    for (md, step) in [(summary, 1), (comment, 2)] {
        check_markdown(&md);
        // The only raw HTML is the templates' own: nothing from a name or message.
        for html in raw_html(&md) {
            let allowed = ["<details", "</details>", "<summary>", "<br>", "<sub>", "</sub>"];
            assert!(allowed.iter().any(|a| html.trim_start().starts_with(a)), "raw HTML from input: {html:?}\n{md}");
            for bad in ["<script", "<!--", "<b>", "<i>"] {
                assert!(!html.contains(bad), "raw HTML from input: {html:?}");
            }
        }
        let spans = code_spans(&md);
        for name in HOSTILE.iter().step_by(step) {
            // Code spans turn newlines into spaces; everything else must survive verbatim.
            let shown = name.replace('\n', " ");
            assert!(spans.iter().any(|s| s == &shown), "{shown:?} not shown verbatim in a code span; spans: {spans:?}");
        }
        // The suite name with a pipe and backticks is one cell, unbroken.
        let rows = suite_table(&md);
        assert_eq!(rows[1][1], "weird|suite `name` <i> · below 100", "{rows:?}");
    }
}

#[test]
fn budgets_hold_for_a_100k_case_run_and_degrade_in_steps() {
    let run = big_run(100_000);
    let summary = render_summary(&run, &env()).unwrap();
    let comment = render_comment(&run, &env()).unwrap();
    assert!(Budget::SUMMARY.fits(&summary), "summary is {} bytes", summary.len());
    assert!(Budget::COMMENT.fits(&comment), "comment is {} chars", comment.chars().count());
    assert!(summary.len() > 100_000, "the summary should use its budget, not collapse: {} bytes", summary.len());
    check_markdown(&summary);
    check_markdown(&comment);
    assert_eq!(open_blocks(&summary), Default::default());
    // 5,000 failures still fit the summary, so it lists failures only; the comment lists the
    // first 100 and counts the rest.
    assert!(summary.contains("Passing cases are not listed"), "summary degraded to failures");
    assert!(summary.contains("test_mod9.py::test_case_009980"), "the last failure is listed");
    assert!(comment.contains("Passing cases are not listed"), "comment degraded to failures");
    assert!(comment.contains("Failing tests (5000)") && comment.contains("… and 4950 more"), "{comment}");
    let head = |text: &str| text.lines().take(24).collect::<Vec<_>>().join("\n");
    insta::assert_snapshot!("summary_100k_head", head(&summary));
    insta::assert_snapshot!("comment_100k_head", head(&comment));
}

#[test]
fn hard_trim_keeps_markdown_well_formed() {
    // A custom template that ignores `detail` and prints long code blocks inside `<details>`:
    // only the hard trim can make it fit, and it must cut inside a block and close it.
    let run = big_run(100);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("summary.md.j2"),
        "# All\n{% for s in suites %}<details><summary>{{ s.name|e }}</summary>\n\n\
         {{ ('frame 😀 ``` é\\n' * 600)|code_block }}\n</details>\n\n{% endfor %}",
    )
    .unwrap();
    let env = ReportEnv { templates: Some(dir.path().into()), ..ReportEnv::default() };
    let budget = Budget { limit: 50_000, unit: fcorr::report::budget::Unit::Chars };
    let md = markdown::render_within(&run, &env, markdown::SUMMARY_TEMPLATE, budget).unwrap();
    assert!(budget.fits(&md), "{} chars", md.chars().count());
    assert!(md.contains("**Report trimmed**"));
    check_markdown(&md);
    assert_eq!(open_blocks(&md), Default::default());
}

#[test]
fn documented_custom_template_renders() {
    // The example in docs/templates.md, rendered from a templates directory.
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/templates.md")).unwrap();
    let start = docs.find("```jinja\n").expect("docs/templates.md has a ```jinja example") + "```jinja\n".len();
    let end = start + docs[start..].find("\n```").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("comment.md.j2"), &docs[start..end]).unwrap();
    let env = ReportEnv { templates: Some(dir.path().into()), ..env() };
    let md = render_comment(&with_comparison(0), &env).unwrap();
    insta::assert_snapshot!("custom_comment_from_docs", md);
    check_markdown(&md);
    // The summary still comes from the embedded default.
    let summary = render_summary(&with_comparison(0), &env).unwrap();
    assert_eq!(summary, render_summary(&with_comparison(0), &self::env()).unwrap());
}

#[test]
fn template_errors_name_the_template_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("comment.md.j2"), "line one\n{{ run.score | no_such_filter }}\n").unwrap();
    let env = ReportEnv { templates: Some(dir.path().into()), ..ReportEnv::default() };
    let err = render_comment(&all_passing(), &env).unwrap_err().to_string();
    assert!(err.contains("comment.md.j2:2") && err.contains("no_such_filter"), "{err}");
    let missing = ReportEnv { templates: Some("/no/such/dir".into()), ..ReportEnv::default() };
    let err = render_comment(&all_passing(), &missing).unwrap_err().to_string();
    assert!(err.contains("/no/such/dir"), "{err}");
}

#[test]
fn html_page_is_self_contained_and_escapes_names() {
    let mut run: Run = hostile_names();
    // Payloads aimed at every context the page writes: text, attributes, URLs, the data script.
    run.suites[0].cases[0].name = "</script><script>window.pwned=1</script>".into();
    run.suites[0].cases[0].file = Some("\"><img src=x onerror=window.pwned=1>.py".into());
    run.suites[0].phases.push(phase(
        fcorr::model::PhaseKind::Test,
        "pytest '<svg onload=window.pwned=1>'",
        fcorr::model::PhaseStatus::Failed,
        Some(1),
        "</pre><script>window.pwned=1</script>",
    ));
    let env = ReportEnv { run_url: Some("javascript:window.pwned=1".into()), ..env() };
    let html = String::from_utf8(fcorr::report::html::HtmlPage.render(&run, &env).unwrap()).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // fcorr's own script (allowed by hash) and base64 data blocks (the index, a part's list, its
    // details), nothing else.
    let blocks = "<script type=\"application/x-fcorr+base64\" id=\"fcorr-";
    assert_eq!(html.matches("<script>").count(), 1, "one script runs");
    assert_eq!(html.matches("<script").count(), 1 + html.matches(blocks).count(), "no injected scripts");
    assert!(
        html.contains(&format!("{blocks}index\">"))
            && html.contains(&format!("{blocks}p0\">"))
            && html.contains(&format!("{blocks}p0-d0\">")),
        "index, list and detail blocks"
    );
    assert_eq!(html.matches("</script>").count(), html.matches("<script").count(), "no name can close a block early");
    for block in html.split(blocks).skip(1) {
        let data = block.split_once("\">").unwrap().1.split("</script>").next().unwrap();
        assert!(data.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)), "data is bare base64");
    }
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none';"));
    // Names, paths and logs are text everywhere they are written (suite card, no-script list).
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;"));
    assert!(html.contains("weird|suite `name` &lt;i&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src=x onerror=window.pwned=1&gt;.py"));
    assert!(html.contains("pytest &#39;&lt;svg onload=window.pwned=1&gt;&#39;"));
    for raw in ["<img", "<svg onload", "<i>", "javascript:", "onerror=window.pwned=1>"] {
        assert!(!html.contains(raw), "raw payload {raw:?} in the page");
    }
    for external in ["<link", " src=\"", "@import", "url("] {
        assert!(!html.contains(external), "external asset reference {external:?}");
    }
}

#[test]
fn mermaid_pie_in_the_summary_and_only_on_request_in_the_comment() {
    let run = mixed_failures();
    let pie = "```mermaid\npie showData title ";
    let summary = render_summary(&run, &env()).unwrap();
    assert!(summary.contains(pie), "{summary}");
    check_markdown(&summary);
    assert!(!render_comment(&run, &env()).unwrap().contains(pie), "comments carry no chart by default");
    let asked = ReportEnv { comment_charts: true, ..env() };
    let comment = render_comment(&run, &asked).unwrap();
    assert!(comment.contains(pie), "{comment}");
    assert!(Budget::COMMENT.fits(&comment));
    // `[report] charts = false` turns it off; a run without failures never has one.
    let off = ReportEnv { summary_charts: Some(false), ..env() };
    assert!(!render_summary(&run, &off).unwrap().contains(pie));
    assert!(!render_summary(&all_passing(), &env()).unwrap().contains("```mermaid"));
    // A template can turn it off with the variable, whatever the settings say.
    let dir = tempfile::tempdir().unwrap();
    let own = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/templates/summary.md.j2")).unwrap();
    std::fs::write(dir.path().join("summary.md.j2"), format!("{{% set charts = false %}}{own}")).unwrap();
    let custom = ReportEnv { templates: Some(dir.path().into()), ..env() };
    assert!(!render_summary(&run, &custom).unwrap().contains(pie));
}

#[test]
fn thousands_of_new_failures_still_name_the_first_ones() {
    // 1,000 new failures with long messages: even the failures-only level overflows a comment,
    // so the comment lists a short run of them and counts the rest, rather than none at all.
    let mut run = big_run(20_000);
    let mut base = run.clone();
    for case in base.suites.iter_mut().flat_map(|s| s.cases.iter_mut()) {
        case.status = fcorr::model::CaseStatus::Passed;
    }
    for case in run.suites.iter_mut().flat_map(|s| s.cases.iter_mut()).filter(|c| c.status.is_failure()) {
        case.set_message(Some(format!("{} {}", case.message().unwrap_or(""), "x".repeat(300))));
    }
    let info = fcorr::compare::BaselineInfo { source: "file".into(), ..Default::default() };
    run.comparison = Some(fcorr::compare::compare(&run, &base, info));

    let comment = render_comment(&run, &env()).unwrap();
    assert!(Budget::COMMENT.fits(&comment), "{} chars", comment.chars().count());
    check_markdown(&comment);
    assert!(comment.contains("**🆕 New failures (1000)**"), "{comment}");
    let listed = comment.lines().filter(|l| l.starts_with("- ❌ **suite")).count();
    assert!((10..1000).contains(&listed), "{listed} new failures listed");
    assert!(comment.contains(&format!("- … and {} more: see `results.json`", 1000 - listed)), "{comment}");

    let summary = render_summary(&run, &env()).unwrap();
    assert!(Budget::SUMMARY.fits(&summary));
    assert!(summary.contains("**🆕 New failures (1000)**"));
}

#[test]
fn names_with_blank_lines_cannot_escape_their_summary_and_mentions_do_not_ping() {
    use comrak::nodes::NodeValue;
    use fcorr::model::{CaseStatus, PhaseKind, PhaseStatus, SuiteStatus};
    let hostile = "a\n\n# HEADING\n\n![x](https://host/p.png)\n\n@octocat";
    let mut bad = failing(hostile, CaseStatus::Failed, &format!("{hostile}\n\ncc @octocat"));
    bad.extra_mut().details = Some(hostile.into());
    let phases = vec![phase(PhaseKind::Test, hostile, PhaseStatus::Failed, Some(1), hostile)];
    let run = run(vec![suite(hostile, SuiteStatus::Failed, vec![bad], phases)], None);
    for md in [render_summary(&run, &env()).unwrap(), render_comment(&run, &env()).unwrap()] {
        check_markdown(&md);
        let arena = comrak::Arena::new();
        let root = comrak::parse_document(&arena, &md, &gfm());
        for node in root.descendants() {
            match &node.data().value {
                NodeValue::Heading(_) => {
                    assert!(!text_of(node).starts_with("HEADING"), "a name became a heading:\n{md}")
                }
                NodeValue::Image(_) => panic!("a name became an image:\n{md}"),
                NodeValue::Text(t) => assert!(!t.contains("@octocat"), "a mention that pings: {t:?}\n{md}"),
                NodeValue::HtmlBlock(h) => assert!(!h.literal.contains("@octocat"), "{:?}", h.literal),
                _ => {}
            }
        }
        // Every `<summary>` holds its whole text on one line.
        for line in md.lines().filter(|l| l.contains("<summary>")) {
            assert!(line.contains("</summary>"), "{line:?}\n{md}");
        }
    }
}
