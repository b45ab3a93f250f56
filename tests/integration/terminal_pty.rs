//! The end-of-run table on a real terminal: `fcorr report` runs in a tmux pane 80 columns wide,
//! and the pane's own text (wrapped lines joined back, as tmux knows them) is read back. Without
//! tmux the test prints why and passes, except under `CI`, where a missing tmux is a failure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use fcorr::model::{Case, CaseStatus, Run};
use unicode_width::UnicodeWidthStr;

/// Three suites whose table is wider than 80 columns, one with a CJK name and a failure.
fn wide_run() -> Run {
    use crate::report_support::{located, project};
    let case = |failing: bool| {
        let file = "tests/deeply/nested/directory/test_module.py";
        let status = if failing { CaseStatus::Failed } else { CaseStatus::Passed };
        Case { ..located("test_with_a_rather_long_name_that_goes_on", file, Some(12), status) }
            .with_message(failing.then(|| format!("AssertionError: {}", "the values differ ".repeat(8))))
    };
    let suites = vec![
        project("python-calculator-service", "Python", "pytest", "pyproject.toml", vec![case(false)], vec![]),
        project("数据处理-测试套件", "TypeScript", "vitest --typecheck", "package.json", vec![case(true)], vec![]),
        project("rust-wordcount-with-a-long-name", "Rust", "cargo test", "Cargo.toml", vec![case(false)], vec![]),
    ];
    crate::report_support::run(suites, None)
}

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux").args(["-L", socket, "-f", "/dev/null"]).args(args).output().expect("tmux runs")
}

/// What the pane shows once `command` has printed `__done__`; wrapped lines are joined.
fn pane_after(socket: &str, command: &str) -> String {
    let started = tmux(socket, &["new-session", "-d", "-x", "80", "-y", "60", "-s", "t", command]);
    assert!(started.status.success(), "tmux: {}", String::from_utf8_lossy(&started.stderr));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let shown = tmux(socket, &["capture-pane", "-p", "-J", "-t", "t"]);
        let text = String::from_utf8_lossy(&shown.stdout).into_owned();
        if text.contains("__done__") || Instant::now() > deadline {
            let _ = tmux(socket, &["kill-server"]);
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_table_fits_an_80_column_terminal_with_a_cjk_suite_name() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "CI is set but tmux is missing (apt-get install tmux)");
        eprintln!("SKIPPED: no tmux on PATH (Debian's `tmux`)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.json");
    std::fs::write(&results, serde_json::to_string(&wide_run()).unwrap()).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("fcorr");
    let quote = |p: &Path| format!("'{}'", p.display());
    let command = format!(
        "env -u COLUMNS -u GITHUB_ACTIONS -u GITHUB_REPOSITORY NO_COLOR=1 {} report {} --out {} --format json; echo __done__; sleep 30",
        quote(&bin),
        quote(&results),
        quote(&dir.path().join("out")),
    );
    let socket = format!("fcorr-test-{}", std::process::id());
    let pane = pane_after(&socket, &command);
    assert!(pane.contains("__done__"), "fcorr did not finish:\n{pane}");
    let table: Vec<&str> = pane.lines().take_while(|l| !l.starts_with("FAIL")).collect();
    for line in &table {
        assert!(line.width() <= 80, "{} columns: {line:?}\n{pane}", line.width());
    }
    let header = table.iter().find(|l| l.starts_with("suite")).expect("a header");
    let cjk = table.iter().find(|l| l.starts_with("数据处理")).expect("the CJK row");
    let column = |line: &str, needle: &str| line[..line.find(needle).unwrap()].width();
    assert_eq!(column(header, "pass/fail/skip"), column(cjk, "0/1/0"), "\n{pane}");
    assert_eq!(column(header, "status"), column(cjk, "failed"), "\n{pane}");
}

/// QA C18: `--color never` did not reach the progress spinners, whose suite name indicatif drew
/// in bold (`ESC[1m`) on a terminal; only `NO_COLOR` turned that off. The run goes through
/// `script`, so stderr is a real terminal and the spinners are drawn.
#[test]
fn color_never_reaches_the_progress_spinners() {
    if Command::new("script").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "`script` (util-linux) is needed on CI");
        eprintln!("skipped: no `script` to give fcorr a terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("app")).unwrap();
    std::fs::write(
        dir.path().join("app/test.sh"),
        "sleep 1\nprintf '<testsuite tests=\"1\"><testcase name=\"t\"/></testsuite>' > report.xml\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"spun\"\npath = \"app\"\nrunner = \"command\"\ncommands = { test = \"sh test.sh\" }\n\
         reports = [\"report.xml\"]\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("fcorr");
    let line = |color: &str| {
        let inner = format!("{} run --config fcorr.toml --out out --color {color}", bin.display());
        let mut cmd = Command::new("script");
        cmd.current_dir(dir.path()).args(["-qec", &inner, "/dev/null"]).env_remove("NO_COLOR").env_remove("CI");
        for key in crate::support::github_vars() {
            cmd.env_remove(key);
        }
        let output = cmd.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    // The spinner is drawn, and bold by default: the check below could not pass by accident.
    assert!(line("always").contains("\u{1b}[1mspun"), "{:?}", line("always"));
    let never = line("never");
    // Cursor moves stay (the spinner redraws in place); no style does.
    assert!(never.contains("spun") && !never.contains("\u{1b}[1m") && !never.contains("\u{1b}[3"), "{never:?}");
}
