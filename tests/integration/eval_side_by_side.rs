//! Several systems and prompts side by side (issue #23 points 7–9), end to end with the real
//! fcorr binary and real command SUTs (`tests/fixtures/eval-side-by-side`: a Python script and a
//! shell script), a CSV dataset and prompt templates inline and in a file.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{copy_project, fcorr, fixture};
use fcorr::model::{CaseStatus, Run};

/// A private copy of the fixture, so a test can change its files.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    copy_project(&fixture("eval-side-by-side"), &ws);
    (dir, ws)
}

/// `fcorr run --config <ws>/fcorr.toml --out <ws>/out` with extra arguments.
fn run_in(ws: &Path, extra: &[&str]) -> Output {
    fcorr()
        .args(["run", "--config"])
        .arg(ws.join("fcorr.toml"))
        .arg("--out")
        .arg(ws.join("out"))
        .args(extra)
        .output()
        .unwrap()
}

fn results(ws: &Path) -> Run {
    serde_json::from_str(&std::fs::read_to_string(ws.join("out/results.json")).unwrap()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every case of the dataset is asked of both systems through both prompts: 3 × 2 × 2 result
/// cases, named `<id>[<prompt>]@<sut>`, each with its system and prompt as typed fields.
#[test]
fn every_case_is_asked_of_every_system_through_every_prompt() {
    let (_dir, ws) = workspace();
    let output = run_in(&ws, &[]);
    assert_eq!(output.status.code(), Some(1), "three cases fail the strict gate:\n{}", stderr(&output));
    let run = results(&ws);
    let suite = &run.suites[0];
    let mut names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    let mut expected: Vec<String> = Vec::new();
    for id in ["au", "fr", "jp"] {
        for prompt in ["terse", "verbose"] {
            for sut in ["large", "small"] {
                expected.push(format!("{id}[{prompt}]@{sut}"));
            }
        }
    }
    expected.sort();
    assert_eq!(names, expected);
    for case in &suite.cases {
        let (rest, sut) = case.name.split_once('@').unwrap();
        assert_eq!(case.extra().eval().sut.as_deref(), Some(sut), "{}", case.name);
        let prompt = rest.split_once('[').unwrap().1.trim_end_matches(']');
        assert_eq!(case.extra().eval().prompt.as_deref(), Some(prompt), "{}", case.name);
    }
    let status = |name: &str| suite.cases.iter().find(|c| c.name == name).unwrap().status;
    assert_eq!(status("au[terse]@small"), CaseStatus::Failed, "small says Sydney");
    assert_eq!(status("au[terse]@large"), CaseStatus::Passed);
    assert_eq!(status("jp[verbose]@large"), CaseStatus::Failed, "a sentence, not one word");
    assert_eq!(status("jp[terse]@large"), CaseStatus::Passed);
    // The rendered prompt is what the system was asked.
    let details = suite.cases.iter().find(|c| c.name == "fr[verbose]@small").unwrap().details().unwrap();
    assert!(details.contains("prompt: Please tell me, in a full sentence,\nthe capital city of France."), "{details}");
    // The grid: per system × prompt, pass rate and score, tokens and cost where the system
    // reported usage (small: 5 words + 1 token per terse answer, at $0.5 per 1K), and the two
    // cases the columns disagree on, in the terminal and in summary.md.
    let summary = std::fs::read_to_string(ws.join("out/summary.md")).unwrap();
    for row in [
        "| small · terse | 2/3 | 66.67% | 66.67 |",
        "| large · terse | 3/3 | 100% | 100 |",
        "| small · verbose | 2/3 | 66.67% | 66.67 |",
        "| large · verbose | 2/3 | 66.67% | 66.67 |",
        "<details><summary>2 of 3 cases disagree</summary>",
        "| jp | `passed` | `passed` | `passed` | `incorrect` |",
        "| au | `incorrect` | `passed` | `incorrect` | `passed` |",
    ] {
        assert!(summary.contains(row), "{row} in\n{summary}");
    }
    assert!(summary.contains(" | 18 | $0.009 |"), "small · terse: 18 tokens, $0.009\n{summary}");
    assert!(!summary.contains("| fr |"), "fr passes everywhere: no disagreement");
    let terminal = String::from_utf8_lossy(&output.stdout);
    assert!(terminal.contains("2 of 3 cases disagree: jp, au"), "{terminal}");
    assert!(terminal.contains("small · verbose"), "{terminal}");

    // Ids are stable: a second run gives the same ones.
    let first: Vec<String> = suite.cases.iter().map(|c| c.id.to_string()).collect();
    run_in(&ws, &[]);
    let again: Vec<String> = results(&ws).suites[0].cases.iter().map(|c| c.id.to_string()).collect();
    assert_eq!(first, again);
}

/// One prompt and one system keep the ids a plain dataset always had (`<id>`), so old
/// baselines still match.
#[test]
fn one_prompt_and_one_system_keep_plain_ids() {
    let (_dir, ws) = workspace();
    std::fs::write(
        ws.join("fcorr.toml"),
        "[[suite]]\nname = \"capitals\"\nkind = \"eval\"\ndataset = \"capitals.csv\"\nprompts = [{ name = \"terse\", template = \"Capital of {{ country }}? One word.\" }]\n\n[suite.sut]\ntype = \"command\"\ncommand = \"sh large.sh {id}\"\nstdin = \"prompt\"\n",
    )
    .unwrap();
    let output = run_in(&ws, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = results(&ws);
    let names: Vec<&str> = run.suites[0].cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fr", "jp", "au"]);
    assert!(
        run.suites[0]
            .cases
            .iter()
            .all(|c| c.extra().eval().sut.is_none() && c.extra().eval().prompt.as_deref() == Some("terse"))
    );
}

/// A CSV dataset with a BOM, quoted cells holding commas, doubled quotes and a newline, and
/// columns that become vars, run end to end.
#[test]
fn a_csv_dataset_with_quotes_newlines_and_a_bom_runs() {
    let (_dir, ws) = workspace();
    std::fs::write(
        ws.join("capitals.csv"),
        "\u{feff}id,country,expected,category\r\nfr,\"France\",Paris,\"europe, west\"\r\njp,Japan,Tokyo,\"asia\"\r\nau,\"Australia\",\"Canberra\",\"oceania\nand \"\"down under\"\"\"\r\n",
    )
    .unwrap();
    let output = run_in(&ws, &["--fail-on", "none"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let suite = &results(&ws).suites[0];
    assert_eq!(suite.cases.len(), 12);
    let case = suite.cases.iter().find(|c| c.name == "au[terse]@large").unwrap();
    assert_eq!(case.status, CaseStatus::Passed);
    assert_eq!(case.extra().eval().tags.get("category").map(String::as_str), Some("oceania\nand \"down under\""));
    assert_eq!(
        suite
            .cases
            .iter()
            .find(|c| c.name == "fr[terse]@small")
            .unwrap()
            .extra()
            .eval()
            .tags
            .get("category")
            .map(String::as_str),
        Some("europe, west")
    );
    // A record with too few cells is an input error naming the file and its line.
    std::fs::write(
        ws.join("capitals.csv"),
        "id,country,expected\nfr,France,Paris\njp,\"Ja\npan\"\nau,Australia,Canberra\n",
    )
    .unwrap();
    let output = run_in(&ws, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = results(&ws).suites[0].error.clone().unwrap().message;
    assert!(message.contains("capitals.csv:3:") && message.contains("2 cells, the header 3"), "{message}");
}

/// Template errors are configuration errors (exit 2, nothing asked) naming the file and line:
/// an undefined variable in a template file, a syntax error in an inline template.
#[test]
fn template_errors_name_the_file_and_line() {
    let (_dir, ws) = workspace();
    std::fs::write(
        ws.join("prompts/verbose.j2"),
        "Please tell me, in a full sentence,\nthe capital of {{ contry }}.\n",
    )
    .unwrap();
    let output = run_in(&ws, &[]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("prompts/verbose.j2:2: undefined variable `contry`") && err.contains("case `fr`"), "{err}");
    assert!(!ws.join("out/results.json").exists(), "nothing ran: {err}");

    std::fs::write(ws.join("prompts/verbose.j2"), "Please {{ country }}\n").unwrap();
    let config = std::fs::read_to_string(ws.join("fcorr.toml")).unwrap();
    let broken =
        config.replace("template = \"Capital of {{ country }}? One word.\"", "template = \"Capital of {{ country\"");
    std::fs::write(ws.join("fcorr.toml"), &broken).unwrap();
    let line = broken.lines().position(|l| l.contains("{{ country\"")).unwrap() + 1;
    let output = run_in(&ws, &[]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains(&format!("fcorr.toml: line {line}")) && err.contains("prompt `terse`"), "{err}");
    assert!(err.contains("syntax error"), "{err}");
}

/// The grid in the summary and the comment, snapshotted with times fixed.
#[test]
fn the_markdown_grid_is_snapshotted() {
    let (_dir, ws) = workspace();
    run_in(&ws, &[]);
    let mut run = results(&ws);
    for suite in &mut run.suites {
        suite.duration_ms = 1000;
        for case in &mut suite.cases {
            case.duration_ms = Some(if case.extra().eval().sut.as_deref() == Some("small") { 40.0 } else { 5.0 });
        }
    }
    let run = crate::report_support::run(run.suites, None);
    let env = fcorr::report::ReportEnv::default();
    let summary = fcorr::report::markdown::render_summary(&run, &env).unwrap();
    let comment = fcorr::report::markdown::render_comment(&run, &env).unwrap();
    for md in [&summary, &comment] {
        crate::report_support::check_markdown(md);
    }
    insta::assert_snapshot!("grid_summary", eval_section(&summary));
    insta::assert_snapshot!("grid_comment", eval_section(&comment));
}

/// The eval section: from its heading to the next heading that is not part of it.
fn eval_section(md: &str) -> String {
    let start = md.find("#### 🧪").expect("an eval section");
    let rest = &md[start..];
    let end = rest[1..].find("\n#").map(|i| i + 2).unwrap_or(rest.len());
    rest[..end].to_string()
}

/// `--fail-on "score<N@sut"` judges one system's cases only: small (4 of 6) fails `score<70`,
/// large (5 of 6) passes it, and the verdict names small alone.
#[test]
fn a_gate_can_target_one_system() {
    let (_dir, ws) = workspace();
    let output = run_in(&ws, &["--fail-on", "score<70@large"]);
    assert_eq!(output.status.code(), Some(0), "large scores 83.33:\n{}", stderr(&output));
    let output = run_in(&ws, &["--fail-on", "score<70@small,score<70@large"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let verdict = results(&ws).verdict;
    let messages: Vec<&str> = verdict.reasons.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        messages,
        ["score of system `small` 66.67 (policy pass-rate over its 6 cases) is below 70"],
        "{verdict:?}"
    );
    // A system no case was asked of is never a pass.
    let output = run_in(&ws, &["--fail-on", "score<70@medium"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(results(&ws).verdict.reasons[0].message.contains("no case was asked of a system named `medium`"));
}

/// Each system is compared with itself: large regressed on `fr` (both prompts), small did
/// not change, and the comparison names large's cases only.
#[test]
fn baselines_compare_each_system_with_itself() {
    let (_dir, ws) = workspace();
    run_in(&ws, &["--fail-on", "none"]);
    std::fs::rename(ws.join("out"), ws.join("baseline")).unwrap();
    let script = std::fs::read_to_string(ws.join("large.sh")).unwrap();
    std::fs::write(ws.join("large.sh"), script.replace("fr) answer=Paris", "fr) answer=Lyon")).unwrap();
    run_in(&ws, &["--fail-on", "none"]);
    let output = fcorr()
        .args(["compare", "--json", "--baseline"])
        .arg(ws.join("baseline"))
        .arg(ws.join("out"))
        .output()
        .unwrap();
    let comparison: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&output.stdout), stderr(&output)));
    let mut new_failures: Vec<&str> = comparison["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"] == "new-failure")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    new_failures.sort();
    assert_eq!(new_failures, ["fr[terse]@large", "fr[verbose]@large"], "{comparison:#}");
}
