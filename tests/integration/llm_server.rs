//! fcorr's `openai` adapter against real OpenAI-compatible server programs from PyPI on loopback
//! (#23 pt 10): stubllm answers chat completions from the YAML fixtures in
//! `tests/fixtures/llm-server/` (fixed usage, HTTP errors, latency), mock-ai-api answers
//! `/v1/embeddings`. `scripts/llm-server.sh` installs both (scripts/test.sh runs it first).
//! Hand-written loopback mocks remain only in `src/sut/openai.rs`/`http.rs` unit tests, for what
//! these servers cannot produce: a body that is not JSON, a reset connection, `Retry-After`, and
//! redirects.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{fcorr, repo};
use fcorr::model::{Case, CaseStatus, Run};
use serde_json::Value;

/// The directory holding the servers' commands, installed on first use; `None` (the test says
/// why and does nothing) outside CI when they cannot be installed, e.g. with no PyPI.
fn server_bin(test: &str) -> Option<PathBuf> {
    let output = Command::new("bash").arg(repo().join("scripts/llm-server.sh")).output().unwrap();
    if output.status.success() {
        return Some(PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    }
    let why = String::from_utf8_lossy(&output.stderr);
    assert!(std::env::var_os("CI").is_none(), "{test}: CI is set but scripts/llm-server.sh failed:\n{why}");
    eprintln!("{test}: SKIPPED: scripts/llm-server.sh could not install the servers:\n{why}");
    None
}

/// A free loopback port (the server binds it a moment later; nothing else here races for it).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A server process on loopback, killed when dropped.
pub struct LlmServer {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl LlmServer {
    /// Starts `program args…` (with `{port}` replaced) and waits until its port accepts.
    fn start(bin: &Path, program: &str, args: &[&str]) -> LlmServer {
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let args: Vec<String> = args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
        let child = Command::new(bin.join(program))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(dir.path().join("server.err")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program}: {e}"));
        let mut server = LlmServer { child, port, log, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("{program} exited ({status}) before listening:\n{}", server.logs());
            }
            assert!(Instant::now() < deadline, "{program} not listening on {port} after 60 s:\n{}", server.logs());
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// stubllm serving every fixture file in `tests/fixtures/llm-server/<dir>`.
    pub fn stubllm(bin: &Path, dir: &str) -> LlmServer {
        let fixtures = repo().join("tests/fixtures/llm-server").join(dir);
        let fixtures = fixtures.to_str().unwrap();
        LlmServer::start(
            bin,
            "stubllm",
            &["serve", "--port", "{port}", "--fixture-dir", fixtures, "--log-level", "warning"],
        )
    }

    /// mock-ai-api's OpenAI app, served by uvicorn as its `mock-ai-api` launcher does — but
    /// directly, one process: the launcher starts two uvicorn children (OpenAI and Anthropic)
    /// that outlive it when it is killed.
    pub fn mock_ai_api(bin: &Path) -> LlmServer {
        let args = [
            "-m",
            "uvicorn",
            "app.openai_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
            "--log-level",
            "warning",
        ];
        LlmServer::start(bin, "python", &args)
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn logs(&self) -> String {
        let err = self.log.with_file_name("server.err");
        format!(
            "{}{}",
            std::fs::read_to_string(&self.log).unwrap_or_default(),
            std::fs::read_to_string(err).unwrap_or_default()
        )
    }

    /// stubllm's own count of the calls each fixture answered.
    fn fixture_calls(&self) -> Value {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        use std::io::{Read, Write};
        write!(stream, "GET /_stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let body = &text[text.find("\r\n\r\n").expect("an HTTP answer") + 4..];
        serde_json::from_str::<Value>(body).unwrap()["fixture_call_counts"].clone()
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `fcorr.toml` and `cases.toml` into `dir` and runs the suite; returns the run.
fn run_eval(dir: &Path, config: &str, cases: &str, env: &[(&str, &str)]) -> (Run, String) {
    std::fs::write(dir.join("fcorr.toml"), config).unwrap();
    std::fs::write(dir.join("cases.toml"), cases).unwrap();
    let out = dir.join("out");
    let mut cmd = fcorr();
    cmd.args(["run", "--config"]).arg(dir.join("fcorr.toml")).arg("--out").arg(&out);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let results = std::fs::read_to_string(out.join("results.json"))
        .unwrap_or_else(|e| panic!("no results.json ({e}); stderr:\n{stderr}"));
    (serde_json::from_str(&results).unwrap(), stderr)
}

fn case<'a>(run: &'a Run, name: &str) -> &'a Case {
    run.suites[0].cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("case {name}"))
}

const CASES: &str = r#"
[[test_cases]]
id = "france"
prompt = "What is the capital of France?"
expected = "Paris"

[[test_cases]]
id = "spain"
prompt = "What is the capital of Spain?"
expected = "Madrid"

[[test_cases]]
id = "bad-request"
prompt = "Summarise this book [status 400]"
expected = "x"

[[test_cases]]
id = "overloaded-once"
prompt = "Capital of Italy? [status 503 once]"
expected = "Rome"

[[test_cases]]
id = "always-500"
prompt = "Anything [status 500]"
expected = "x"

[[test_cases]]
id = "slow"
prompt = "Take your time [slow]"
expected = "too late"

[[test_cases]]
id = "tool-call"
prompt = "Weather in Oslo? [tool call]"
expected = "x"

[[test_cases]]
id = "no-fixture"
prompt = "Something no fixture expects"
expected = "x"
"#;

#[test]
fn openai_adapter_against_a_real_server_answers_costs_and_errors() {
    let Some(bin) = server_bin("openai_adapter_against_a_real_server_answers_costs_and_errors") else { return };
    let server = LlmServer::stubllm(&bin, "chat");
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[[suite]]
name = "capitals"
kind = "eval"
dataset = "cases.toml"
policy = "pass-rate"

[suite.sut]
type = "openai"
base-url = "{}"
model = "stub-small"
system = "Answer in one word."
temperature = 0
timeout = 1
backoff = 0.05
cost-per-1k-in = 0.5
cost-per-1k-out = 1.5
"#,
        server.base_url()
    );
    let (run, stderr) = run_eval(dir.path(), &config, CASES, &[]);
    let status = |name: &str| case(&run, name).status;
    let reason = |name: &str| case(&run, name).extra().eval().reasons[0].code.clone();
    let message = |name: &str| case(&run, name).message().map(str::to_string).unwrap_or_default();

    // The server's answer and its usage: 1200 tokens in at $0.5/1K, 300 out at $1.5/1K.
    assert_eq!(status("france"), CaseStatus::Passed, "stderr:\n{stderr}");
    let usage = case(&run, "france").extra().eval().usage.clone().expect("usage");
    assert_eq!((usage.tokens, usage.tokens_in, usage.tokens_out, usage.llm_calls), (1500, Some(1200), Some(300), 1));
    let cost = usage.cost_usd.expect("a cost from the per-1K prices");
    assert!((cost - (1.2 * 0.5 + 0.3 * 1.5)).abs() < 1e-9, "cost {cost}");

    // A wrong answer is `incorrect`, and the answer is kept.
    assert_eq!(reason("spain"), "incorrect");
    assert!(case(&run, "spain").output().as_deref().unwrap_or("").contains("Barcelona"));

    // A 4xx is final, with the server's own message; a 503 then 200 is one retry; a 500 every
    // time is retried twice (the default) and then a backend error.
    assert_eq!(reason("bad-request"), "backend-error");
    assert!(message("bad-request").contains("400"), "{}", message("bad-request"));
    assert!(message("bad-request").contains("maximum context length"), "{}", message("bad-request"));
    assert_eq!(status("overloaded-once"), CaseStatus::Passed, "{}", message("overloaded-once"));
    assert_eq!(reason("always-500"), "backend-error");
    assert!(message("always-500").contains("500"), "{}", message("always-500"));
    let calls = server.fixture_calls();
    assert_eq!(calls["bad-request"], 1, "{calls}");
    assert_eq!(calls["overloaded-once"], 2, "{calls}");
    assert_eq!(calls["always-500"], 3, "{calls}");

    // 4 s of server latency against a 1 s timeout.
    assert_eq!(status("slow"), CaseStatus::Timeout);
    assert_eq!(reason("slow"), "timeout");

    // A completion with tool calls and `content: null` has no text to judge.
    assert_eq!(reason("tool-call"), "backend-error");
    assert!(message("tool-call").contains("choices[0].message.content"), "{}", message("tool-call"));

    // stubllm's "no fixture matched" text is an answer like any other: wrong.
    assert_eq!(reason("no-fixture"), "incorrect");

    // The suite's usage is the sum of the answered calls.
    let suite_usage = run.suites[0].usage.clone().expect("suite usage");
    assert!(suite_usage.tokens >= 1500 + 12 + 8, "{suite_usage:?}");
}

#[test]
fn openai_api_key_reaches_a_real_server_as_a_bearer_token() {
    let Some(bin) = server_bin("openai_api_key_reaches_a_real_server_as_a_bearer_token") else { return };
    let server = LlmServer::stubllm(&bin, "chat");
    let dir = tempfile::tempdir().unwrap();
    let cases = "[[test_cases]]\nid = \"whoami\"\nprompt = \"who am I?\"\nexpected = \"authorized\"\n";
    let config = |key_env: &str| {
        format!(
            "[[suite]]\nname = \"auth\"\nkind = \"eval\"\ndataset = \"cases.toml\"\n\n[suite.sut]\ntype = \"openai\"\nbase-url = \"{}\"\nmodel = \"m\"\n{key_env}",
            server.base_url()
        )
    };
    // With the key: the fixture that requires the header answers.
    let (run, stderr) = run_eval(
        dir.path(),
        &config("api-key-env = \"FCORR_TEST_LLM_KEY\"\n"),
        cases,
        &[("FCORR_TEST_LLM_KEY", "sk-fcorr-test")],
    );
    assert_eq!(case(&run, "whoami").status, CaseStatus::Passed, "stderr:\n{stderr}");
    // Without it: the server's 401, final, its message kept.
    let (run, _) = run_eval(dir.path(), &config(""), cases, &[]);
    let whoami = case(&run, "whoami");
    assert_eq!(whoami.extra().eval().reasons[0].code, "backend-error");
    let message = whoami.message().map(str::to_string).unwrap_or_default();
    assert!(message.contains("401") && message.contains("Incorrect API key"), "{message}");
}

/// The assertion outcomes fcorr recorded on a case (`{type, pass, score, weight, reason?}`).
fn outcomes(results: &Value, name: &str) -> Vec<Value> {
    let cases = results["suites"][0]["cases"].as_array().expect("cases");
    let case = cases.iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("case {name}"));
    case["assertions"].as_array().cloned().unwrap_or_else(|| panic!("no assertions on {name}: {case}"))
}

fn outcome<'a>(list: &'a [Value], kind: &str) -> &'a Value {
    list.iter().find(|o| o["type"] == kind).unwrap_or_else(|| panic!("no {kind} outcome in {list:?}"))
}

#[test]
fn graders_and_embeddings_against_real_servers() {
    let Some(bin) = server_bin("graders_and_embeddings_against_real_servers") else { return };
    let sut = LlmServer::stubllm(&bin, "chat");
    let grader = LlmServer::stubllm(&bin, "grader");
    let embeddings = LlmServer::mock_ai_api(&bin);
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[[suite]]
name = "graded"
kind = "eval"
dataset = "cases.toml"

[suite.sut]
type = "openai"
base-url = "{}"
model = "stub-small"
backoff = 0.05

[suite.grader]
type = "openai"
base-url = "{}"
model = "grader"
backoff = 0.05

[suite.embeddings]
base-url = "{}"
model = "text-embedding-3-small"
"#,
        sut.base_url(),
        grader.base_url(),
        embeddings.base_url()
    );
    let cases = r#"
[[test_cases]]
id = "france"
prompt = "What is the capital of France?"
assert = [
  { type = "llm-rubric", value = "Names only the capital" },
  { type = "factuality", value = "Paris is the capital of France" },
  { type = "similar", value = "Paris", threshold = 0.99 },
]

[[test_cases]]
id = "spain"
prompt = "What is the capital of Spain?"
assert = [
  { type = "llm-rubric", value = "Names only the capital" },
  { type = "factuality", value = "Madrid is the capital of Spain" },
  { type = "similar", value = "Madrid", threshold = 0.5 },
]

[[test_cases]]
id = "garbled-grader"
prompt = "What is the capital of France? (politely)"
assert = [{ type = "llm-rubric", value = "Is a polite answer" }]

[[test_cases]]
id = "grader-down"
prompt = "What is the capital of France? (short)"
assert = [{ type = "llm-rubric", value = "Is a short answer" }]
"#;
    let (run, stderr) = run_eval(dir.path(), &config, cases, &[]);
    let results: Value = serde_json::to_value(&run).unwrap();

    // Paris: the grader model says pass (0.9, its reason kept), the reference agrees, and the
    // embedding of the answer equals that of "Paris".
    assert_eq!(
        case(&run, "france").status,
        CaseStatus::Passed,
        "stderr:\n{stderr}\n{}",
        results["suites"][0]["cases"][0]
    );
    let france = outcomes(&results, "france");
    let rubric = outcome(&france, "llm-rubric");
    assert_eq!(rubric["pass"], true);
    assert!((rubric["score"].as_f64().unwrap() - 0.9).abs() < 1e-9, "{rubric}");
    assert!(rubric["reason"].as_str().unwrap_or("").contains("only the city name"), "{rubric}");
    assert_eq!(outcome(&france, "factuality")["pass"], true);
    let similar = outcome(&france, "similar");
    assert_eq!(similar["pass"], true, "{similar}");
    assert!(similar["score"].as_f64().unwrap() > 0.999, "{similar}");

    // Barcelona: all three fail, each with its reason.
    assert_eq!(case(&run, "spain").status, CaseStatus::Failed);
    let spain = outcomes(&results, "spain");
    let rubric = outcome(&spain, "llm-rubric");
    assert_eq!(rubric["pass"], false);
    assert!(rubric["reason"].as_str().unwrap_or("").contains("Barcelona is not the capital"), "{rubric}");
    let fact = outcome(&spain, "factuality");
    assert_eq!(fact["pass"], false);
    assert!(fact["reason"].as_str().unwrap_or("").contains("Madrid"), "{fact}");
    let similar = outcome(&spain, "similar");
    assert_eq!(similar["pass"], false, "{similar}");
    assert!(similar["score"].as_f64().unwrap() < 0.2, "{similar}");

    // A grader that answers prose, or a 500 every time: never a pass.
    for name in ["garbled-grader", "grader-down"] {
        let status = case(&run, name).status;
        assert!(matches!(status, CaseStatus::Error | CaseStatus::Failed), "{name}: {status:?}");
    }
    assert!(case(&run, "grader-down").message().map(str::to_string).unwrap_or_default().contains("500"));
    assert_eq!(grader.fixture_calls()["rubric-down"], 3, "a 5xx from the grader is retried like a SUT's");
}

#[test]
fn similar_against_all_zero_embeddings_is_never_a_pass() {
    let Some(bin) = server_bin("similar_against_all_zero_embeddings_is_never_a_pass") else { return };
    // stubllm answers /v1/embeddings with 1,536 zeros: a cosine with a zero vector is undefined.
    let server = LlmServer::stubllm(&bin, "chat");
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[suite]]\nname = \"zero\"\nkind = \"eval\"\ndataset = \"cases.toml\"\n\n[suite.sut]\ntype = \"openai\"\nbase-url = \"{0}\"\nmodel = \"m\"\n\n[suite.embeddings]\nbase-url = \"{0}\"\nmodel = \"e\"\n",
        server.base_url()
    );
    let cases = "[[test_cases]]\nid = \"france\"\nprompt = \"capital of France\"\nassert = [{ type = \"similar\", value = \"Paris\", threshold = 0.0 }]\n";
    let (run, stderr) = run_eval(dir.path(), &config, cases, &[]);
    let france = case(&run, "france");
    assert_ne!(france.status, CaseStatus::Passed, "stderr:\n{stderr}");
}
