//! Shared helpers for report tests: runs built programmatically through the real model, scoring
//! and gate code, with frozen timestamps so snapshots are stable; and comrak AST checks.
#![allow(dead_code)]

use comrak::nodes::{AstNode, NodeValue};
use fcorr::compare::{BaselineInfo, CaseChange, Change, Comparison, CountsDelta, SuiteDelta};
use fcorr::config::Weights;
use fcorr::gate::{self, Gate};
use fcorr::model::{
    Attempt, Case, CaseStatus, Detection, Diagnostic, GitInfo, Phase, PhaseKind, PhaseStatus, Policy, ResultsSource,
    Run, Severity, Suite, SuiteKind, SuiteStatus,
};

/// A case with a status and a fixed duration.
pub fn case(name: &str, status: CaseStatus) -> Case {
    Case {
        name: name.into(),
        classname: Some("tests.test_app".into()),
        file: Some("tests/test_app.py".into()),
        status,
        duration_ms: Some(12.0),
        ..Case::default()
    }
}

/// A failing case with a message and a trace.
pub fn failing(name: &str, status: CaseStatus, message: &str) -> Case {
    Case {
        line: Some(42),
        extra: fcorr::model::CaseExtra {
            details: Some(
                format!("Traceback (most recent call last):\n  File \"tests/test_app.py\", line 42\n{message}").into(),
            ),
            ..Default::default()
        }
        .packed(),
        ..case(name, status)
    }
    .with_message(Some(message.into()))
}

/// A phase with a fixed duration.
pub fn phase(kind: PhaseKind, command: &str, status: PhaseStatus, exit: Option<i32>, log: &str) -> Phase {
    Phase {
        kind,
        command: command.into(),
        status,
        exit_code: exit,
        duration_ms: 1500,
        log_tail: log.into(),
        note: if status == PhaseStatus::Skipped { Some("an earlier phase failed".into()) } else { None },
    }
}

/// A scored Python project suite.
pub fn suite(id: &str, status: SuiteStatus, cases: Vec<Case>, phases: Vec<Phase>) -> Suite {
    let mut s = Suite::new(id, id, SuiteKind::Project);
    s.path = Some(format!("projects/{id}"));
    s.detection = Some(Detection {
        ecosystem: "python".into(),
        language: "Python".into(),
        framework: "pytest".into(),
        package_manager: Some("pip".into()),
        confidence: 0.9,
        markers: vec!["pyproject.toml".into()],
    });
    s.cases = cases;
    s.finalize_cases();
    s.status = status;
    s.phases = phases;
    s.results_source = ResultsSource::Report { format: "junit".into(), files: vec!["report.xml".into()] };
    s.duration_ms = 4200;
    s.score = fcorr::score::score_suite(&s, Policy::Strict, 100.0, &Weights::default());
    s
}

/// A judged run with frozen times and version.
pub fn run(suites: Vec<Suite>, comparison: Option<Comparison>) -> Run {
    let mut run = Run::assemble(
        suites,
        time::OffsetDateTime::UNIX_EPOCH,
        Some("cfg0123".into()),
        Some(GitInfo { commit: Some("a1b2c3d4e5f6a7b8c9d0".into()), branch: Some("feature/x".into()), dirty: false }),
    );
    run.fcorr_version = "0.0.0-test".into();
    run.started_at = "2026-11-22T10:00:00Z".into();
    run.finished_at = "2026-11-22T10:01:05Z".into();
    run.duration_ms = 65_000;
    run.comparison = comparison;
    let gates = [Gate::Strict, Gate::Critical, Gate::Empty, Gate::Regression];
    run.verdict = gate::judge(&run, &gates, 0.0);
    run
}

/// Every scenario the snapshot and format tests share, by name.
pub fn scenarios() -> Vec<(&'static str, Run)> {
    vec![
        ("all_passing", all_passing()),
        ("mixed_failures", mixed_failures()),
        ("build_failure", build_failure()),
        ("timeout", timeout()),
        ("empty_suite", empty_suite()),
        ("hostile_names", hostile_names()),
        ("with_comparison", with_comparison(0)),
        ("stale_baseline", with_comparison(3)),
    ]
}

pub fn all_passing() -> Run {
    let cases = vec![case("test_add", CaseStatus::Passed), case("test_sub", CaseStatus::Passed)];
    let phases = vec![
        phase(PhaseKind::Install, "pip install -r requirements.txt", PhaseStatus::Passed, Some(0), ""),
        phase(PhaseKind::Test, "python -m pytest", PhaseStatus::Passed, Some(0), "2 passed"),
    ];
    run(vec![suite("calc", SuiteStatus::Passed, cases, phases)], None)
}

pub fn mixed_failures() -> Run {
    let mut flaky = case("test_network", CaseStatus::Flaky);
    flaky.extra_mut().retries = 1;
    flaky.extra_mut().attempts = vec![Attempt {
        status: CaseStatus::Failed,
        duration_ms: Some(30.0),
        message: Some("ConnectionResetError".into()),
        details: Some("ConnectionResetError: [Errno 104]".into()),
    }];
    let mut retried = failing("test_retry_then_fail", CaseStatus::Failed, "AssertionError: still broken");
    retried.extra_mut().retries = 1;
    retried.extra_mut().attempts = vec![Attempt {
        status: CaseStatus::Failed,
        duration_ms: Some(5.0),
        message: Some("first".into()),
        details: None,
    }];
    let cases = vec![
        case("test_ok", CaseStatus::Passed),
        failing("test_word_count", CaseStatus::Failed, "AssertionError: expected 4 words\nassert 3 == 4"),
        failing("test_fixture", CaseStatus::Error, "RuntimeError: fixture setup exploded"),
        failing("test_slow", CaseStatus::Timeout, "timed out after 30s"),
        Case { ..case("test_later", CaseStatus::Skipped) }.with_message(Some("not implemented yet".into())),
        flaky,
        retried,
    ];
    let other = vec![case("test_other", CaseStatus::Passed)];
    run(
        vec![suite("textutil", SuiteStatus::Failed, cases, vec![]), suite("other", SuiteStatus::Passed, other, vec![])],
        None,
    )
}

pub fn build_failure() -> Run {
    let mut s = suite(
        "inventory",
        SuiteStatus::BuildFailed,
        vec![],
        vec![
            phase(PhaseKind::Install, "pip install -e .", PhaseStatus::Passed, Some(0), ""),
            phase(
                PhaseKind::Build,
                "python -m compileall -q .",
                PhaseStatus::Failed,
                Some(1),
                "*** Error compiling './inventory.py'...\n  File \"./inventory.py\", line 3\nSyntaxError: '(' was never closed",
            ),
            phase(PhaseKind::Test, "python -m pytest", PhaseStatus::Skipped, None, ""),
        ],
    );
    s.diagnostics.push(Diagnostic {
        severity: Severity::Error,
        source: "build".into(),
        message: "SyntaxError: '(' was never closed".into(),
        file: Some("inventory.py".into()),
        line: Some(3),
        column: Some(15),
    });
    s.score = fcorr::score::score_suite(&s, Policy::Strict, 100.0, &Weights::default());
    run(vec![s], None)
}

pub fn timeout() -> Run {
    let s = suite(
        "hang",
        SuiteStatus::Timeout,
        vec![case("test_fast", CaseStatus::Passed)],
        vec![phase(PhaseKind::Test, "python -m pytest", PhaseStatus::Timeout, None, "tests/test_hang.py .")],
    );
    run(vec![s], None)
}

pub fn empty_suite() -> Run {
    let s = suite(
        "empty",
        SuiteStatus::NoTests,
        vec![],
        vec![phase(PhaseKind::Test, "python -m pytest", PhaseStatus::Failed, Some(5), "no tests ran in 0.01s")],
    );
    run(vec![s], None)
}

/// Names and messages that break naive Markdown: pipes, backticks, HTML, comments, emoji.
pub const HOSTILE: &[&str] = &[
    "test_pipe[a|b]",
    "test_tick[`code` and ``double``]",
    "<script>alert(1)</script>",
    "test <!-- hidden --> comment",
    "test_emoji[🦀💥👩‍👩‍👧]",
    "über_ñame_日本語",
    "*not emphasis* _nor this_ [no link](http://x)",
    "line\nbreak",
];

pub fn hostile_names() -> Run {
    let mut cases: Vec<Case> = HOSTILE
        .iter()
        .enumerate()
        .map(|(i, name)| {
            if i % 2 == 0 {
                failing(name, CaseStatus::Failed, &format!("assert {name} | `x` <b>bold</b> ```fence"))
            } else {
                case(name, CaseStatus::Passed)
            }
        })
        .collect();
    cases[0].extra_mut().details = Some("```\nnot a fence end\n````\n<details>\n</details>".into());
    run(vec![suite("weird|suite `name` <i>", SuiteStatus::Failed, cases, vec![])], None)
}

/// A run compared with a baseline `commits_behind` commits behind the base (0 = fresh).
pub fn with_comparison(commits_behind: u32) -> Run {
    let base = mixed_failures();
    let textutil = &base.suites[0];
    let id = |name: &str| textutil.cases.iter().find(|c| c.name == name).map(|c| c.id.to_string()).unwrap();
    let change = |name: &str, change: Change, before: Option<CaseStatus>, after: Option<CaseStatus>| CaseChange {
        suite_id: "textutil".into(),
        case_id: if after.is_some() { id(name) } else { "0000000000000000".into() },
        name: name.into(),
        change,
        before,
        after,
        before_reason: None,
        after_reason: None,
        score_before: None,
        score_after: None,
        note: None,
    };
    let comparison = Comparison {
        baseline: BaselineInfo {
            source: "github:987654".into(),
            commit: Some("0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6".into()),
            url: Some("https://github.com/acme/app/actions/runs/987654".into()),
            started_at: Some("2026-11-21T09:00:00Z".into()),
            commits_behind,
            conclusion: Some("success".into()),
        },
        score_delta: Some(-50.0),
        pass_rate_delta: Some(-28.57),
        counts_delta: CountsDelta { total: 1, passed: -2, failed: 1, error: 1, skipped: 0, timeout: 0, flaky: 1 },
        duration_delta_ms: 1200,
        suites: vec![
            SuiteDelta {
                suite_id: "textutil".into(),
                name: "textutil".into(),
                added: false,
                removed: false,
                baseline_score: Some(100.0),
                score: Some(0.0),
                score_delta: Some(-100.0),
                pass_rate_delta: Some(-42.86),
                counts_delta: CountsDelta {
                    total: 1,
                    passed: -2,
                    failed: 1,
                    error: 1,
                    skipped: 0,
                    timeout: 0,
                    flaky: 1,
                },
                duration_delta_ms: 1200,
            },
            SuiteDelta {
                suite_id: "other".into(),
                name: "other".into(),
                added: true,
                removed: false,
                baseline_score: None,
                score: Some(100.0),
                score_delta: None,
                pass_rate_delta: None,
                counts_delta: CountsDelta::default(),
                duration_delta_ms: 0,
            },
        ],
        cases: vec![
            change("test_slow", Change::StillFailing, Some(CaseStatus::Timeout), Some(CaseStatus::Timeout)),
            change("test_old", Change::Fixed, Some(CaseStatus::Failed), None),
            change("test_word_count", Change::NewFailure, Some(CaseStatus::Passed), Some(CaseStatus::Failed)),
            change("test_fixture", Change::NewFailure, Some(CaseStatus::Passed), Some(CaseStatus::Error)),
            change("test_network", Change::Flaky, Some(CaseStatus::Passed), Some(CaseStatus::Flaky)),
            change("test_removed", Change::Removed, Some(CaseStatus::Passed), None),
        ],
        no_common_suite: false,
        config_change: None,
    };
    let suites = base.suites.clone();
    run(suites, Some(comparison))
}

/// A run of `n` cases in 10 suites, every twentieth case failing with a message and a trace.
pub fn big_run(n: usize) -> Run {
    let per = n / 10;
    let suites = (0..10)
        .map(|s| {
            let cases = (0..per)
                .map(|i| {
                    let name = format!("tests/test_mod{s}.py::test_case_{i:06}");
                    if i % 20 == 0 {
                        failing(&name, CaseStatus::Failed, &format!("AssertionError: value {i} was wrong"))
                    } else {
                        case(&name, CaseStatus::Passed)
                    }
                })
                .collect();
            suite(&format!("suite{s}"), SuiteStatus::Failed, cases, vec![])
        })
        .collect();
    run(suites, None)
}

/// comrak options matching GitHub (and fcorr's HTML page).
pub fn gfm() -> comrak::Options<'static> {
    fcorr::report::html::options()
}

/// Parses Markdown and checks it is well formed: every fenced code block closed and `<details>`
/// balanced. Returns the number of rows (header included) of each table, in order.
pub fn check_markdown(md: &str) -> Vec<usize> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    let mut tables = Vec::new();
    let (mut open, mut close) = (0usize, 0usize);
    for node in root.descendants() {
        match &node.data().value {
            NodeValue::CodeBlock(block) => {
                assert!(!block.fenced || block.closed, "unclosed code block:\n{}", block.literal);
            }
            NodeValue::HtmlBlock(html) => {
                open += html.literal.matches("<details").count();
                close += html.literal.matches("</details>").count();
            }
            NodeValue::HtmlInline(html) => {
                open += html.matches("<details").count();
                close += html.matches("</details>").count();
            }
            NodeValue::Table(_) => tables.push(node.children().count()),
            _ => {}
        }
    }
    assert_eq!(open, close, "unbalanced <details> ({open} opened, {close} closed)");
    tables
}

/// Text of every cell of the suite table (the first whose second column is `Suite`), row by row.
pub fn suite_table(md: &str) -> Vec<Vec<String>> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    root.descendants()
        .filter(|n| matches!(n.data().value, NodeValue::Table(_)))
        .map(|t| {
            t.children().map(|row| row.children().map(|cell| text_of(cell)).collect()).collect::<Vec<Vec<String>>>()
        })
        .find(|r| r.first().and_then(|h| h.get(1)).is_some_and(|c| c == "Suite"))
        .expect("a suite table")
}

/// Text of every cell of the first table, row by row.
pub fn first_table(md: &str) -> Vec<Vec<String>> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    let table = root.descendants().find(|n| matches!(n.data().value, NodeValue::Table(_))).expect("a table");
    table.children().map(|row| row.children().map(|cell| text_of(cell)).collect()).collect()
}

/// Concatenated text and code of a node.
pub fn text_of<'a>(node: &'a AstNode<'a>) -> String {
    let mut out = String::new();
    for d in node.descendants() {
        match &d.data().value {
            NodeValue::Text(t) => out.push_str(t),
            NodeValue::Code(c) => out.push_str(&c.literal),
            NodeValue::HtmlInline(h) => out.push_str(h),
            _ => {}
        }
    }
    out
}

/// Literal content of every inline code span in the document.
pub fn code_spans(md: &str) -> Vec<String> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    root.descendants()
        .filter_map(|n| match &n.data().value {
            NodeValue::Code(c) => Some(c.literal.clone()),
            _ => None,
        })
        .collect()
}

/// Every raw HTML block and inline HTML in the document.
pub fn raw_html(md: &str) -> Vec<String> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    root.descendants()
        .filter_map(|n| match &n.data().value {
            NodeValue::HtmlBlock(h) => Some(h.literal.clone()),
            NodeValue::HtmlInline(h) => Some(h.clone()),
            _ => None,
        })
        .collect()
}

/// A case of another language's suite: `file`, no class, a fixed duration.
pub fn located(name: &str, file: &str, line: Option<u32>, status: CaseStatus) -> Case {
    Case { name: name.into(), file: Some(file.into()), line, status, duration_ms: Some(3.0), ..Case::default() }
}

/// A project suite detected as `language / framework`, scored strictly.
pub fn project(id: &str, language: &str, framework: &str, marker: &str, cases: Vec<Case>, phases: Vec<Phase>) -> Suite {
    let mut s = suite(id, SuiteStatus::Passed, cases, phases);
    s.detection = Some(Detection {
        ecosystem: language.to_lowercase(),
        language: language.into(),
        framework: framework.into(),
        package_manager: None,
        confidence: 0.9,
        markers: vec![marker.into()],
    });
    s.status = if s.failures().count() > 0 { SuiteStatus::Failed } else { SuiteStatus::Passed };
    s.path = Some(id.into());
    s.duration_ms = 1000 + 700 * s.cases.len() as u64;
    s.score = fcorr::score::score_suite(&s, Policy::Strict, 100.0, &Weights::default());
    s
}

/// An eval case answered by the system under test, with its reason and category.
fn eval_case(id: &str, category: &str, reason: &str, message: Option<&str>, critical: bool) -> Case {
    let status = match reason {
        "pass" => CaseStatus::Passed,
        "backend-error" => CaseStatus::Error,
        "timeout" => CaseStatus::Timeout,
        _ => CaseStatus::Failed,
    };
    Case {
        name: id.into(),
        file: None,
        status,
        duration_ms: Some(40.0),
        extra: fcorr::model::CaseExtra {
            details: message.map(|_| format!("prompt: the prompt of {id}\nanswer: what the model said").into()),
            critical,
            eval: fcorr::model::EvalExtra {
                tags: [("category".to_string(), category.to_string())].into(),
                reasons: vec![fcorr::model::Reason {
                    code: reason.into(),
                    expected: None,
                    actual: None,
                    message: None,
                }],
                ..Default::default()
            }
            .packed(),
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message(message.map(str::to_string))
}

/// A graded bank case (100-point score): score, interpretation in the message, topic and source tags.
fn bank_case(id: &str, topic: &str, score: f64, message: &str) -> Case {
    Case {
        name: id.into(),
        status: if score >= 100.0 { CaseStatus::Passed } else { CaseStatus::Failed },
        duration_ms: Some(600.0),
        extra: fcorr::model::CaseExtra {
            score: Some(score),
            details: (score < 100.0).then(|| format!("prompt: a question about {topic}\nactual: [\"{topic}\"]").into()),
            eval: fcorr::model::EvalExtra {
                tags: [("topic".to_string(), topic.to_string()), ("source".to_string(), "original".to_string())].into(),
                expectation_source: Some("original".into()),
                ..Default::default()
            }
            .packed(),
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message((score < 100.0).then(|| message.to_string()))
}

/// The run the PR-comment review was made on (#24): Python with one failure, Node, Go, a dataset
/// eval with a failing critical case, a semantic test bank; with `baseline`, compared (through
/// fcorr's own comparison) with a base-branch run where the Python test passed and an eval case
/// failed that now passes.
pub fn five_suites(baseline: bool) -> Run {
    let ok = PhaseStatus::Passed;
    let python = project(
        "python-broken",
        "Python",
        "pytest",
        "pyproject.toml",
        vec![
            located("test_total_single_line", "tests/test_invoice.py", Some(3), CaseStatus::Passed),
            Case { extra: fcorr::model::CaseExtra { details: Some(
                    ">       assert total_with_tax([(10.0, 1), (5.0, 2)], 0.2) == 24.0\nE       assert 22.0 == 24.0\n\ntests/test_invoice.py:8: AssertionError"
                        .into(),
                ), ..Default::default() }.packed(), ..located("test_total_with_tax_multiple_lines", "tests/test_invoice.py", Some(8), CaseStatus::Failed) }.with_message(Some("assert 22.0 == 24.0".into())),
            located("test_empty_invoice", "tests/test_invoice.py", Some(11), CaseStatus::Passed),
            located("test_rounding", "tests/test_invoice.py", Some(14), CaseStatus::Passed),
        ],
        vec![
            phase(PhaseKind::Install, "python -m pip install -e .[test]", ok, Some(0), ""),
            phase(PhaseKind::Test, "python -m pytest --junitxml=pytest.xml", PhaseStatus::Failed, Some(1), "1 failed, 3 passed"),
        ],
    );
    let node = project(
        "node-strings",
        "JavaScript",
        "node --test",
        "package.json",
        ["capitalize", "reverse", "slugify", "truncate", "words"]
            .iter()
            .map(|n| located(n, "test/strings.test.js", None, CaseStatus::Passed))
            .collect(),
        vec![phase(PhaseKind::Test, "node --test", ok, Some(0), "# pass 5")],
    );
    let go = project(
        "go-stack",
        "Go",
        "go test",
        "go.mod",
        ["TestPush", "TestPop", "TestPeek", "TestLen", "TestLen/empty", "TestLen/one", "TestLen/many"]
            .iter()
            .map(|n| located(n, "stack_test.go", None, CaseStatus::Passed))
            .collect(),
        vec![
            phase(PhaseKind::Build, "go build ./... && go vet ./...", ok, Some(0), ""),
            phase(PhaseKind::Test, "go test -json ./...", ok, Some(0), "ok"),
        ],
    );
    let mut eval_cases: Vec<Case> = (0..9)
        .map(|i| eval_case(&format!("files-{i}"), if i < 5 { "files" } else { "text" }, "pass", None, false))
        .collect();
    eval_cases.push(eval_case(
        "whoami",
        "system",
        "incorrect",
        Some("incorrect (command): expected `whoami`, got `echo $USER`"),
        false,
    ));
    eval_cases.push(eval_case(
        "clean-build",
        "files",
        "safety-mismatch",
        Some("safety-mismatch: expected safe, answer is unsafe (rule rm-root)"),
        true,
    ));
    eval_cases.push(eval_case("processes", "system", "timeout", Some("timeout: no answer within 2s"), false));
    let mut eval = Suite::new("shell-commands", "shell-commands", SuiteKind::Eval);
    eval.cases = eval_cases;
    eval.finalize_cases();
    eval.status = SuiteStatus::Failed;
    eval.duration_ms = 2400;
    eval.score = fcorr::score::score_suite(&eval, Policy::PassRate, 50.0, &Weights::default());
    let mut bank_cases: Vec<Case> =
        (1..=8).map(|i| bank_case(&format!("V2-GR-{i:03}"), "gray_rock", 100.0, "")).collect();
    bank_cases.push(bank_case(
        "V2-APP-001",
        "co_parenting_apps",
        80.0,
        "80 Notable issues (−20: false positive court_preparation)",
    ));
    bank_cases.push(bank_case(
        "V2-TEEN-001",
        "teen_communication",
        0.0,
        "0 Hard fail (primary not found: child_anxiety_support)",
    ));
    let mut bank = Suite::new("retrieval", "retrieval", SuiteKind::Bank);
    bank.cases = bank_cases;
    bank.finalize_cases();
    bank.detection = Some(Detection {
        ecosystem: "bank".into(),
        language: "bank".into(),
        framework: "semantic".into(),
        package_manager: None,
        confidence: 1.0,
        markers: vec!["semantic/semantic_bank.json".into()],
    });
    bank.status = SuiteStatus::Failed;
    bank.weight = 0.6;
    bank.duration_ms = 33_000;
    bank.score = fcorr::score::score_suite(&bank, Policy::Graded, 70.0, &Weights::default());
    let suites = vec![python, node, go, eval, bank];
    if !baseline {
        return run(suites, None);
    }
    let now = run(suites, None);
    let mut before = now.clone();
    for suite in &mut before.suites {
        for case in &mut suite.cases {
            match case.name.as_str() {
                "test_total_with_tax_multiple_lines" => case.status = CaseStatus::Passed,
                "files-3" => case.status = CaseStatus::Failed,
                _ => {}
            }
            case.duration_ms = case.duration_ms.map(|d| d * 0.9);
        }
        suite.finalize_cases();
        suite.status = if suite.failures().count() > 0 { SuiteStatus::Failed } else { SuiteStatus::Passed };
        suite.duration_ms -= 400;
        suite.score = fcorr::score::score_suite(suite, suite.score.policy, suite.score.threshold, &Weights::default());
    }
    let info = BaselineInfo {
        source: "github:987654".into(),
        commit: Some("0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6".into()),
        url: Some("https://github.com/acme/app/actions/runs/987654".into()),
        started_at: Some("2026-11-21T09:00:00Z".into()),
        commits_behind: 0,
        conclusion: Some("success".into()),
    };
    let before = run(before.suites, None);
    let comparison = fcorr::compare::compare(&now, &before, info);
    run(now.suites, Some(comparison))
}

/// Checks what a reviewer reads first and how often (#24): no table wider than 7 columns; when
/// the run failed, the first section after the headline says why; every failing case named
/// exactly once (`suite › name`) outside tables and collapsed `<details>` (its trace may be collapsed
/// below, the timing tables may list it as slow).
pub fn check_reading(run: &Run, md: &str) {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &gfm());
    for table in root.descendants().filter(|n| matches!(n.data().value, NodeValue::Table(_))) {
        let columns = table.first_child().map_or(0, |row| row.children().count());
        assert!(columns <= 7, "a table with {columns} columns:\n{md}");
    }
    let headings: Vec<String> =
        root.children().filter(|n| matches!(n.data().value, NodeValue::Heading(_))).map(|n| text_of(n)).collect();
    if run.verdict.outcome == fcorr::model::RunOutcome::Fail {
        assert_eq!(headings.get(1).map(String::as_str), Some("Why it failed"), "sections: {headings:?}\n{md}");
    }
    let mut shown: std::collections::HashMap<String, usize> = Default::default();
    let mut depth = 0i32;
    for node in root.children() {
        if let NodeValue::HtmlBlock(html) = &node.data().value {
            depth +=
                html.literal.matches("<details").count() as i32 - html.literal.matches("</details>").count() as i32;
            continue;
        }
        if depth > 0 || matches!(node.data().value, NodeValue::Table(_)) {
            continue;
        }
        for code in node.descendants() {
            // A case is named as `suite › name`: a code span right after "› " (a message's own
            // code spans may hold the same word, as `expected \`whoami\`` does).
            let after_suite = code
                .previous_sibling()
                .is_some_and(|p| matches!(&p.data().value, NodeValue::Text(t) if t.ends_with("› ")));
            if let (NodeValue::Code(c), true) = (&code.data().value, after_suite) {
                *shown.entry(c.literal.clone()).or_default() += 1;
            }
        }
    }
    for case in run.suites.iter().flat_map(|s| &s.cases).filter(|c| c.status.is_failure()) {
        let name = case.name.replace('\n', " ");
        assert_eq!(shown.get(&name).copied().unwrap_or(0), 1, "failing case {name:?} should be named once\n{md}");
    }
}
