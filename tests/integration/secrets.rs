//! Secrets fcorr.toml names (`api-key-env`, `{env:NAME}` in an HTTP system's URL and headers)
//! and redirects of HTTP systems under test, with real processes: a real pytest project and
//! scripts that print their environment, command, HTTP and OpenAI-style systems under test that
//! echo what they received (a hostile server), loopback servers and the wiremock GitHub API.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::support::github::{self, requests};

/// The secrets of these tests, as (variable, value). The first has the characters that JSON,
/// XML and HTML spell differently, so an escaped copy cannot slip through either.
const SECRETS: &[(&str, &str)] = &[
    ("FCORR_IT_API_TOKEN", "fcorr\"Api&Token<7731>"),
    ("FCORR_IT_URL_KEY", "fcorrUrlKey-5512"),
    ("FCORR_IT_OPENAI_KEY", "sk-fcorrOpenAiKey-9026"),
];

/// fcorr without the machine's GitHub and runner variables, with the test's secrets set.
fn fcorr(dir: &Path) -> Command {
    let mut cmd = crate::support::fcorr();
    cmd.current_dir(dir);
    for (key, _) in std::env::vars() {
        if key.starts_with("GITHUB_") || key.starts_with("ACTIONS_") || key == "GH_TOKEN" || key == "CI" {
            cmd.env_remove(key);
        }
    }
    for (name, value) in SECRETS {
        cmd.env(name, value);
    }
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every way a value can be written: as is, and escaped for JSON, XML and HTML.
fn spellings(value: &str) -> Vec<String> {
    let json = serde_json::to_string(value).unwrap();
    let xml = value.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    vec![value.to_string(), json[1..json.len() - 1].to_string(), xml, value.replace('"', "&#34;")]
}

/// Panics naming the secret and where it leaked, if any secret is in `content`.
fn assert_no_secret(what: &str, content: &str) {
    for (name, value) in SECRETS {
        for spelling in spellings(value) {
            assert!(!content.contains(&spelling), "{name} leaked into {what} (as `{spelling}`)");
        }
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A system under test that answers with what it received (path, key header, authorization),
/// as `{"output": …}` for the http adapter and as a chat completion for the openai one.
struct Echo;

impl Respond for Echo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("-").to_string();
        let query = request.url.query().map(|q| format!("?{q}")).unwrap_or_default();
        let seen = format!(
            "path={}{query} x-api-key={} authorization={}",
            request.url.path(),
            header("x-api-key"),
            header("authorization")
        );
        ResponseTemplate::new(200)
            .set_body_json(json!({"output": seen, "choices": [{"message": {"role": "assistant", "content": seen}}]}))
    }
}

/// The workspace: a real pytest project that prints its environment (no `pass-env`), a command
/// project that passes one secret back and fails with its environment as the message, and three
/// evals whose systems print or echo the secrets they get.
fn workspace(sut_url: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    std::fs::create_dir_all(dir.join("open")).unwrap();
    // The environment as the failure message (XML-escaped) and on stdout.
    std::fs::write(
        dir.join("open/test.sh"),
        "env > env.txt\nM=$(env | grep FCORR_IT_ | sed -e 's/&/\\&amp;/g' -e 's/\"/\\&quot;/g' -e 's/</\\&lt;/g' -e 's/>/\\&gt;/g' | tr '\\n' ' ')\n\
         env | grep FCORR_IT_\n\
         printf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"t\"><failure message=\"%s\">%s</failure></testcase></testsuite>' \"$M\" \"$M\" > report.xml\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sut.sh"),
        "env | grep FCORR_IT_ >&2\necho \"answer: $(env | grep FCORR_IT_ | tr '\\n' ' ')\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("cases.jsonl"), "{\"id\": \"c1\", \"prompt\": \"say hi\", \"expected\": \"hi\"}\n")
        .unwrap();
    let mut config = format!(
        "[[suite]]\nname = \"pytest\"\npath = \"{}\"\n\n\
         [[suite]]\nname = \"open\"\npath = \"open\"\nrunner = \"command\"\ncommands = {{ test = \"sh test.sh\" }}\n\
         reports = [\"report.xml\"]\npass-env = [\"FCORR_IT_API_TOKEN\"]\n\n",
        crate::support::fixture("py-print-env").display()
    );
    config.push_str(&eval_suite(
        "ask",
        "type = \"command\"\ncommand = \"sh sut.sh\"\ncache = true\ncache-dir = \"answers\"\n\
         pass-env = [\"FCORR_IT_OPENAI_KEY\"]",
    ));
    config.push_str(&eval_suite(
        "remote",
        &format!(
            "type = \"http\"\nurl = \"{sut_url}/ask?key={{env:FCORR_IT_URL_KEY}}\"\n\
             headers = {{ X-Api-Key = \"{{env:FCORR_IT_API_TOKEN}}\" }}\nretries = 0"
        ),
    ));
    config.push_str(&eval_suite(
        "llm",
        &format!(
            "type = \"openai\"\nbase-url = \"{sut_url}/v1\"\nmodel = \"m\"\n\
             api-key-env = \"FCORR_IT_OPENAI_KEY\"\nretries = 0"
        ),
    ));
    std::fs::write(dir.join("fcorr.toml"), config).unwrap();
    ws
}

/// An eval suite of `cases.jsonl` asking the system under test `sut` (its `[suite.sut]` lines).
fn eval_suite(name: &str, sut: &str) -> String {
    format!("[[suite]]\nname = \"{name}\"\nkind = \"eval\"\ndataset = \"cases.jsonl\"\n[suite.sut]\n{sut}\n\n")
}

/// The output files, the answer cache and both streams hold no secret in any spelling.
fn assert_outputs_clean(ws: &Path, out: &Path, output: &Output, skip_stdout_lines: usize) {
    let stdout = text(&output.stdout).lines().skip(skip_stdout_lines).collect::<Vec<_>>().join("\n");
    assert_no_secret("stdout", &stdout);
    assert_no_secret("stderr", &text(&output.stderr));
    let files = files_under(out);
    for name in ["results.json", "junit.xml", "ctrf.json", "summary.md", "comment.md", "report.html"] {
        assert!(files.iter().any(|f| f.ends_with(name)), "{name} was not written");
    }
    assert!(files.iter().any(|f| f.extension().is_some_and(|e| e == "log")), "no suite log");
    let answers = files_under(&ws.join("answers"));
    assert_eq!(answers.len(), 1, "one cached answer");
    for file in files.iter().chain(&answers) {
        assert_no_secret(&file.display().to_string(), &text(&std::fs::read(file).unwrap()));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_secrets_reach_only_the_children_that_ask_and_no_output() {
    let sut = MockServer::start().await;
    Mock::given(method("POST")).respond_with(Echo).mount(&sut).await;
    let ws = workspace(&sut.uri());
    let output = fcorr(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let results = std::fs::read_to_string(ws.path().join("out/results.json")).unwrap();

    // Withheld: the pytest project printed its whole environment (the proof that it is there),
    // and none of the three names is in it.
    assert!(results.contains("FCORR_COMMAND_ID="), "the environment was not printed");
    let pytest: Value = serde_json::from_str(&results).unwrap();
    let pytest = pytest["suites"].as_array().unwrap().iter().find(|s| s["id"] == "pytest").unwrap().to_string();
    assert!(pytest.contains("FCORR_COMMAND_ID=") && !pytest.contains("FCORR_IT_"), "a secret reached pytest");
    // Passed back by name: the command project got its one secret, the command SUT its one.
    let env = std::fs::read_to_string(ws.path().join("open/env.txt")).unwrap();
    assert!(env.contains(&format!("FCORR_IT_API_TOKEN={}", SECRETS[0].1)), "{env}");
    assert!(!env.contains("FCORR_IT_URL_KEY") && !env.contains("FCORR_IT_OPENAI_KEY"), "{env}");
    assert!(results.contains("answer: FCORR_IT_OPENAI_KEY=***"), "the command SUT did not get its key");
    assert!(!results.contains("answer: FCORR_IT_API_TOKEN"), "the command SUT got a key it did not ask for");

    // Sent where configured, and redacted from what the (hostile) server echoed back.
    let seen = sut.received_requests().await.unwrap();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().any(|r| r.url.query() == Some(&format!("key={}", SECRETS[1].1))
        && r.headers.get("x-api-key").is_some_and(|v| v.as_bytes() == SECRETS[0].1.as_bytes())));
    assert!(seen.iter().any(|r| {
        r.headers.get("authorization").is_some_and(|v| v.as_bytes() == format!("Bearer {}", SECRETS[2].1).as_bytes())
    }));
    assert!(results.contains("path=/ask?key=*** x-api-key=*** authorization=-"), "{results}");
    assert!(results.contains("x-api-key=- authorization=Bearer ***"), "{results}");
    // The command project's failure message and output, now `***`.
    assert!(results.contains("FCORR_IT_API_TOKEN=***"), "{results}");

    assert_outputs_clean(ws.path(), &ws.path().join("out"), &output, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn in_actions_secrets_are_masked_first_and_never_posted_to_github() {
    let sut = MockServer::start().await;
    Mock::given(method("POST")).respond_with(Echo).mount(&sut).await;
    let ws = workspace(&sut.uri());
    github::write_pr_event(ws.path());
    let api = MockServer::start().await;
    github::mock_comment_api(&api).await;
    Mock::given(method("POST"))
        .and(path("/repos/org/app/check-runs"))
        .respond_with(
            ResponseTemplate::new(201).set_body_json(json!({"id": 4, "html_url": "https://github.com/org/app/runs/4"})),
        )
        .mount(&api)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/org/app/check-runs/4"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 4, "status": "completed"})))
        .mount(&api)
        .await;

    let mut cmd = fcorr(ws.path());
    cmd.envs(github::env(ws.path(), &api.uri(), "octocat"));
    cmd.args(["ci", "--config", "fcorr.toml", "--baseline", "none", "--comment", "update", "--check-run"]).args([
        "--annotations",
        "--out",
        "out",
    ]);
    let output = cmd.output().unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{}", text(&output.stderr));

    // Before any other line: the token's mask and the fence, then each secret's mask (with the
    // fence lifted around them, or the runner would ignore them).
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "::add-mask::ghs_test", "{stdout}");
    let fence = lines[1].strip_prefix("::stop-commands::").expect("the fence");
    assert_eq!(lines[2], format!("::{fence}::"));
    let mut masks: Vec<String> = SECRETS.iter().map(|(_, v)| format!("::add-mask::{v}")).collect();
    masks.sort();
    let mut printed: Vec<String> = lines[3..6].iter().map(|l| l.to_string()).collect();
    printed.sort();
    assert_eq!(printed, masks, "{stdout}");
    assert!(lines[6].starts_with("::stop-commands::"), "{stdout}");

    // Nothing posted to GitHub holds a secret; the comment did carry the failure (as `***`).
    let bodies: Vec<String> = api
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() != "GET")
        .map(|r| text(&r.body))
        .collect();
    assert!(bodies.len() >= 3, "a check run and a comment were sent: {bodies:?}");
    for body in &bodies {
        assert_no_secret("a request to the GitHub API", body);
    }
    let comment = requests(&api, "POST").await.iter().map(|r| text(&r.body)).find(|b| b.contains("fcorr:")).unwrap();
    assert!(comment.contains("FCORR_IT_API_TOKEN=***"), "{comment}");
    assert_no_secret("the job summary", &std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap());
    assert_no_secret("the step outputs", &std::fs::read_to_string(ws.path().join("github-output.txt")).unwrap());
    assert_outputs_clean(ws.path(), &ws.path().join("out"), &output, 6);
}

#[test]
fn pass_env_may_name_a_configured_secret_but_not_an_unknown_variable() {
    let ws = workspace("http://127.0.0.1:9");
    let config = std::fs::read_to_string(ws.path().join("fcorr.toml")).unwrap();
    let line = config.lines().position(|l| l.contains("pass-env = [\"FCORR_IT_OPENAI_KEY\"]")).unwrap() + 1;
    std::fs::write(ws.path().join("fcorr.toml"), config.replace("\"FCORR_IT_OPENAI_KEY\"]", "\"FCORR_IT_OPENAI_KY\"]"))
        .unwrap();
    let output = fcorr(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "out"]).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("fcorr.toml: line {line},")), "{stderr}");
    assert!(
        stderr.contains("suite ask: `FCORR_IT_OPENAI_KY` in `pass-env` is not a variable fcorr removes"),
        "{stderr}"
    );
    // The list of what can be passed names the configured secrets.
    assert!(stderr.contains("FCORR_IT_API_TOKEN, FCORR_IT_OPENAI_KEY, FCORR_IT_URL_KEY"), "{stderr}");
    assert!(!ws.path().join("out").exists(), "something ran");
}

/// `{env:NAME}` in a project's `env` is not filled in: passing `{env:FCORR_IT_API_TOKEN}` on as
/// written (the token itself withheld) was silent; it is a configuration error at its line.
#[test]
fn an_env_reference_in_a_projects_env_is_a_config_error_not_a_literal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("test_p.py"), "def test_p():\n    pass\n").unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        "[[suite]]\nname = \"p\"\npath = \".\"\nenv = { DB_URL = \"postgres://app:{env:FCORR_IT_API_TOKEN}@db/app\" }\n",
    )
    .unwrap();
    let output = fcorr(dir.path()).args(["run", "--out", "out"]).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("fcorr.toml: line 4,"), "{stderr}");
    assert!(stderr.contains("suite p: `{env:FCORR_IT_API_TOKEN}` in env.DB_URL is not expanded"), "{stderr}");
    assert!(!stderr.contains(SECRETS[0].1) && !text(&output.stdout).contains(SECRETS[0].1));
    assert!(!dir.path().join("out").exists(), "something ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_sut_redirect_is_never_followed_and_the_other_origin_gets_nothing() {
    // Two loopback servers on different ports: two origins. The first redirects to the second
    // (answers `stolen`, which a followed redirect would score as right); it also redirects
    // within itself.
    let elsewhere = MockServer::start().await;
    Mock::given(path("/collect"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"output": "stolen"})))
        .mount(&elsewhere)
        .await;
    let first = MockServer::start().await;
    Mock::given(path("/ask"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", format!("{}/collect", elsewhere.uri())))
        .mount(&first)
        .await;
    Mock::given(path("/old"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", "/new"))
        .mount(&first)
        .await;
    Mock::given(path("/new")).respond_with(Echo).mount(&first).await;

    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("cases.jsonl"), "{\"id\": \"c1\", \"prompt\": \"p\", \"expected\": \"stolen\"}\n")
        .unwrap();
    let mut config = String::new();
    for (name, route) in [("cross", "/ask"), ("same", "/old")] {
        let sut = format!(
            "type = \"http\"\nurl = \"{}{route}\"\nheaders = {{ X-Api-Key = \"{{env:FCORR_IT_URL_KEY}}\" }}\nretries = 0",
            first.uri()
        );
        config.push_str(&eval_suite(name, &sut));
    }
    std::fs::write(ws.path().join("fcorr.toml"), config).unwrap();
    let output = fcorr(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "out", "--json"]).output().unwrap();
    let (run, code) = crate::support::parse_run(&output);
    assert_eq!(code, 1, "{}", text(&output.stderr));

    assert!(elsewhere.received_requests().await.unwrap().is_empty(), "the other origin was called");
    let reason = |suite: &str| {
        let suite = run.suites.iter().find(|s| s.id == suite).unwrap();
        suite.cases[0].extra().eval().reasons[0].clone()
    };
    let cross = reason("cross");
    assert_eq!(cross.code, "backend-error", "{cross:?}");
    let message = cross.message.unwrap_or_default();
    let target = elsewhere.uri().replace("http://", "");
    assert!(
        message.contains(&format!("HTTP 302 from {}/ask: a redirect to another origin (http://{target})", first.uri())),
        "{message}"
    );
    let same = reason("same");
    assert_eq!(same.code, "backend-error", "{same:?}");
    let message = same.message.unwrap_or_default();
    assert!(message.contains("HTTP 307") && message.contains("a redirect to /new on the same origin"), "{message}");
    let paths: Vec<String> =
        first.received_requests().await.unwrap().iter().map(|r| r.url.path().to_string()).collect();
    assert_eq!(paths.len(), 2, "each redirect answered once, nothing followed: {paths:?}");
    assert!(!paths.contains(&"/new".to_string()), "{paths:?}");
}

#[test]
fn git_read_after_the_tests_runs_without_secrets() {
    // fcorr reads commit, branch and dirty state of the checkout after the suites ran; a test
    // can configure that checkout, and `core.fsmonitor` makes `git status` run a command.
    let ws = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", text(&status.stderr));
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "start"]);
    std::fs::create_dir_all(ws.path().join("app")).unwrap();
    std::fs::write(
        ws.path().join("app/test.sh"),
        "git config core.fsmonitor \"env > $PWD/../hook-env.txt; true #\"\n\
         printf '<testsuite tests=\"1\"><testcase classname=\"c\" name=\"t\"/></testsuite>' > report.xml\n",
    )
    .unwrap();
    let mut config = "[[suite]]\nname = \"app\"\npath = \"app\"\nrunner = \"command\"\n\
                      commands = { test = \"sh test.sh\" }\nreports = [\"report.xml\"]\n\n"
        .to_string();
    config.push_str(&eval_suite(
        "llm",
        "type = \"openai\"\nbase-url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
                                        api-key-env = \"FCORR_IT_OPENAI_KEY\"\nretries = 0",
    ));
    std::fs::write(ws.path().join("cases.jsonl"), "{\"id\": \"c1\", \"prompt\": \"p\", \"expected\": \"x\"}\n")
        .unwrap();
    std::fs::write(ws.path().join("fcorr.toml"), config).unwrap();
    let output = fcorr(ws.path())
        .env("GITHUB_TOKEN", "ghs_fcorrGitHookToken381")
        .args(["run", "--config", "fcorr.toml", "--out", "out"])
        .output()
        .unwrap();
    assert!(ws.path().join("out/results.json").is_file(), "{}", text(&output.stderr));
    let seen = std::fs::read_to_string(ws.path().join("hook-env.txt")).expect("git ran the test's hook");
    assert!(seen.contains("PATH="), "{seen}");
    assert!(!seen.contains("ghs_fcorrGitHookToken381"), "the GitHub token reached git's hook");
    // The one secret this config names; the test's other variables are plain ones here.
    assert!(!seen.contains(SECRETS[2].1), "the configured key reached git's hook");
    assert!(seen.contains(SECRETS[0].1), "an unnamed variable is withheld too: {seen}");
}

/// `fcorr import`, `report` and `merge` hold the GitHub token too: a JUnit file that another step
/// wrote, with the token in a failure (a test that printed its environment), must not carry it
/// into results.json, the reports or the terminal.
#[test]
fn import_report_and_merge_redact_the_token_from_a_report_that_printed_it() {
    const TOKEN: &str = "ghs_fcorrImportToken0417";
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    std::fs::write(
        &junit,
        format!(
            "<?xml version=\"1.0\"?>\n<testsuite name=\"s\" tests=\"2\" failures=\"1\">\n\
             <testcase classname=\"c\" name=\"ok\"/>\n\
             <testcase classname=\"c\" name=\"env\"><failure message=\"GITHUB_TOKEN={TOKEN}\">token {TOKEN} in the trace</failure>\
             <system-out>printed {TOKEN}</system-out></testcase>\n</testsuite>\n"
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let output = fcorr(dir.path()).env("GITHUB_TOKEN", TOKEN).args(args).output().unwrap();
        let printed = format!("{}{}", text(&output.stdout), text(&output.stderr));
        assert!(!printed.contains(TOKEN), "fcorr {args:?} printed the token:\n{printed}");
        output
    };
    let imported = run(&["import", "junit.xml", "--out", "imported", "--fail-on", "none"]);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    run(&["report", "imported/results.json", "--out", "rendered"]);
    run(&["merge", "imported/results.json", "--out", "merged", "--fail-on", "none"]);
    for out in ["imported", "rendered", "merged"] {
        let files = files_under(&dir.path().join(out));
        assert!(files.iter().any(|f| f.ends_with("results.json")) || out == "rendered", "{out}: {files:?}");
        for file in files {
            let content = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            assert!(!content.contains(TOKEN), "the token leaked into {}", file.display());
        }
    }
    let results = std::fs::read_to_string(dir.path().join("imported/results.json")).unwrap();
    assert!(results.contains("***"), "the redacted failure is still reported: {results}");
}

/// The token of the tests below: long enough that pytest's assertion repr shortens it
/// (`'ghp_R3alTok3...rstuvWxyz0123'`), with `+` and `/`, which URLs spell `%2B` and `%2F`.
const REPR_TOKEN: &str = "ghp_R3alTok3nAbcdef+Ghij/klmnopQrstuvWxyz0123";

/// Runs the `py-secret-repr` pytest project with [`REPR_TOKEN`] passed to it; returns what fcorr
/// printed and every file it wrote, as (what, text).
fn run_repr_fixture() -> Vec<(String, String)> {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"repr\"\npath = \"{}\"\npass-env = [\"GITHUB_TOKEN\"]\n",
            crate::support::fixture("py-secret-repr").display()
        ),
    )
    .unwrap();
    let output = fcorr(ws.path())
        .env("GITHUB_TOKEN", REPR_TOKEN)
        .args(["run", "--config", "fcorr.toml", "--out", "out"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let mut seen = vec![("stdout".to_string(), text(&output.stdout)), ("stderr".to_string(), text(&output.stderr))];
    // `out/work/` included: the tool's own raw report there (pytest's JUnit XML, written by
    // pytest) held the whole token until fcorr masked the files it read.
    for file in files_under(&ws.path().join("out")) {
        seen.push((file.display().to_string(), text(&std::fs::read(&file).unwrap())));
    }
    seen
}

/// Panics if any 8 characters of [`REPR_TOKEN`] past its `ghp_` kind, in a row, are in an output,
/// as printed, percent-encoded or upper-cased: pytest's repr shows 25 of the 44 characters, the
/// halves, the URL and the shout all of them.
fn assert_no_token_piece(seen: &[(String, String)]) {
    let encoded = REPR_TOKEN.replace('+', "%2B").replace('/', "%2F");
    for spelling in [REPR_TOKEN.to_string(), encoded, REPR_TOKEN.to_uppercase()] {
        let own: Vec<char> = spelling.chars().skip(4).collect();
        for (what, content) in seen {
            for piece in own.windows(8).map(|w| w.iter().collect::<String>()) {
                assert!(!content.contains(&piece), "`{piece}` of the token leaked into {what}");
            }
        }
    }
}

#[test]
fn a_token_shortened_by_pytest_printed_in_halves_encoded_or_upper_cased_leaks_no_piece() {
    let seen = run_repr_fixture();
    assert_no_token_piece(&seen);
    // The tests ran, and what they showed is there, masked.
    let results = &seen.iter().find(|(what, _)| what.ends_with("results.json")).expect("results.json").1;
    let shown = [
        "assert '***...***' == 'ghp_expectedvalue'",
        "first half: ***",
        "second half: ***",
        "token=***",
        "shouting: ***",
    ];
    for shown in shown {
        assert!(results.contains(shown), "`{shown}` is not in results.json: {results}");
    }
}

/// A test that walks up its process tree to fcorr and tries to read the GitHub token from
/// fcorr's own environment (`/proc/<pid>/environ`), writing what it found to `../seen.txt`.
const STEAL_SH: &str = r#"p=$PPID
: > ../seen.txt
while [ "$p" -gt 1 ]; do
  case "$(tr '\0' ' ' < /proc/$p/cmdline)" in
    *fcorr*\ run\ --config\ fcorr.toml\ *)
      if cat /proc/$p/environ > /dev/null 2>&1; then echo "fcorr environ: readable" >> ../seen.txt
      else echo "fcorr environ: unreadable" >> ../seen.txt; fi
      echo "token lines: $(tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -c '^GITHUB_TOKEN=')" >> ../seen.txt ;;
  esac
  p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2)
done
printf '<testsuite tests="1"><testcase classname="c" name="t"/></testsuite>' > report.xml
"#;

/// D5: a test runs as the same user as fcorr, and the kernel lets a process read the environment
/// of another of the same user, unless that one made itself not dumpable. As root, any read
/// succeeds (root can read every process), so the run is made as `nobody` through `setpriv`:
/// fcorr and its test then share a user that is not root, as on a runner.
#[cfg(target_os = "linux")]
#[test]
fn a_test_cannot_read_the_withheld_token_from_fcorrs_environment() {
    let (seen, as_whom) = what_a_test_sees_of_fcorrs_environment(&[("GITHUB_TOKEN", "ghs_fcorrEnvironToken5521")]);
    assert!(
        !seen.contains("fcorr environ: readable") && seen.contains("token lines: 0"),
        "a test run {as_whom} read fcorr's environment: {seen}"
    );
}

/// B11: in Actions, the fence file's path (FCORR_FENCE_FILE, removed from what children inherit)
/// stayed readable in /proc/<fcorr>/environ with no token in the environment, and with it the
/// token that lifts the fence on workflow commands.
#[cfg(target_os = "linux")]
#[test]
fn a_test_cannot_read_the_fence_file_path_from_fcorrs_environment() {
    let fence = std::env::temp_dir().join(format!("fcorr-fence-test-{}", std::process::id()));
    let (seen, as_whom) = what_a_test_sees_of_fcorrs_environment(&[
        ("GITHUB_ACTIONS", "true"),
        ("FCORR_FENCE_FILE", fence.to_str().unwrap()),
    ]);
    let _ = std::fs::remove_file(&fence);
    assert!(!seen.contains("fcorr environ: readable"), "a test run {as_whom} read fcorr's environment: {seen}");
}

/// The fence's token sits in a file of the runner's temporary directory, which a test of the
/// same user can list and read. A test that does, and fails with a message holding the token's
/// closing line and a command, must still not get a command run: every line that reads as a
/// workflow command is printed behind a prefix. Checked by replaying fcorr's stdout the way the
/// runner reads it (one stop state, lines trimmed).
#[test]
fn a_test_that_learns_the_fence_token_still_cannot_issue_workflow_commands() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    let fence = dir.join("runner-temp/fcorr-fence.XXXX");
    std::fs::create_dir_all(fence.parent().unwrap()).unwrap();
    std::fs::create_dir_all(dir.join("app")).unwrap();
    // What a hostile test does: find the fence file, read the token, fail with a message that
    // ends the fence and issues a command.
    std::fs::write(
        dir.join("app/attack.sh"),
        r#"token=$(cat ../runner-temp/fcorr-fence.* | head -1)
printf '<testsuite name="s" tests="1"><testcase classname="c" name="t"><failure message="boom&#10;  ::%s::&#10;::error title=PWNED::fence lifted by a test&#10;##[error]PWNED the old way">boom</failure></testcase></testsuite>\n' "$token" > report.xml
echo "$token" > seen-token.txt
exit 1
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("fcorr.toml"),
        "[[suite]]\nname = \"app\"\npath = \"app\"\nrunner = \"command\"\n\
         commands = { test = \"sh attack.sh\" }\nreports = [\"report.xml\"]\n",
    )
    .unwrap();
    let output = fcorr(dir)
        .env("GITHUB_ACTIONS", "true")
        .env("FCORR_FENCE_FILE", &fence)
        .args(["run", "--config", "fcorr.toml", "--out", "out", "--color", "never"])
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let token = std::fs::read_to_string(dir.join("app/seen-token.txt")).unwrap();
    assert!(token.trim().len() >= 16, "the test did not read the fence token: {token:?}\n{stdout}");
    assert!(stdout.contains("(not a command) ::error title=PWNED"), "{stdout}");
    // Replay as the runner: while stopped, only `::<token>::` matters; otherwise `::name` runs.
    let mut stopped: Option<String> = None;
    let mut ran = Vec::new();
    for line in stdout.lines().map(str::trim) {
        match &stopped {
            Some(token) if line == format!("::{token}::") => stopped = None,
            Some(_) => {}
            None => match line.strip_prefix("::stop-commands::") {
                Some(token) => stopped = Some(token.to_string()),
                None if line.starts_with("::") || line.starts_with("##[") => ran.push(line.to_string()),
                None => {}
            },
        }
    }
    assert!(ran.iter().all(|c| !c.contains("PWNED")), "a test's text ran as a workflow command: {ran:?}\n{stdout}");
}

/// Runs a command suite whose test looks for fcorr among its ancestors and tries to read its
/// environment, with `env` set for fcorr; what the test wrote, and as whom it ran.
#[cfg(target_os = "linux")]
fn what_a_test_sees_of_fcorrs_environment(env: &[(&str, &str)]) -> (String, &'static str) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    const NOBODY: u32 = 65534;
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    std::fs::create_dir_all(dir.join("app")).unwrap();
    std::fs::write(dir.join("app/steal.sh"), STEAL_SH).unwrap();
    std::fs::write(
        dir.join("fcorr.toml"),
        "[[suite]]\nname = \"app\"\npath = \"app\"\nrunner = \"command\"\n\
         commands = { test = \"sh steal.sh\" }\nreports = [\"report.xml\"]\n",
    )
    .unwrap();
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let mut cmd = fcorr(dir);
    if root {
        // `nobody` must be able to write the workspace, and finds its cache and home there.
        for path in [dir.to_path_buf(), dir.join("app"), dir.join("app/steal.sh"), dir.join("fcorr.toml")] {
            std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let program = cmd.get_program().to_owned();
        let mut as_nobody = Command::new("setpriv");
        as_nobody
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups", "--"])
            .arg(program)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("FCORR_CACHE_DIR", dir.join("cache"));
        cmd = as_nobody;
    }
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd
        .args(["run", "--config", "fcorr.toml", "--out", "out"])
        .output()
        .expect("fcorr (as root: through setpriv, which this test needs) starts");
    let seen = std::fs::read_to_string(dir.join("seen.txt"))
        .unwrap_or_else(|_| panic!("the test did not run: {}\n{}", text(&output.stdout), text(&output.stderr)));
    let as_whom = if root { "as nobody, through setpriv" } else { "as this user" };
    assert!(seen.contains("fcorr environ: "), "the test did not find fcorr among its ancestors ({as_whom}): {seen}");
    (seen, as_whom)
}
