//! Company networks: `fcorr ci`'s GitHub API calls go through the proxy that `HTTPS_PROXY` (or
//! `https_proxy`) names, except for hosts in `NO_PROXY`; a Dependabot run publishes what needs
//! no write token and never sends a write request.
//!
//! The proxy is a tiny CONNECT proxy on 127.0.0.1 written here; the API is a wiremock server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use wiremock::MockServer;

/// Proxy variables of the machine, removed so only the test's own apply.
const PROXY_VARS: &[&str] =
    &["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"];

/// A CONNECT proxy: records each request line, then relays bytes both ways.
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let record = Arc::clone(&record);
                std::thread::spawn(move || tunnel(client, &record));
            }
        });
        Proxy { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn tunnel(client: TcpStream, record: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    // The rest of the head.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    record.lock().unwrap().push(first.trim_end().to_string());
    let mut client = client;
    let Some(target) = first.strip_prefix("CONNECT ").and_then(|rest| rest.split_whitespace().next()) else {
        let _ = client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
        return;
    };
    let Ok(upstream) = TcpStream::connect(target) else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
        return;
    };
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").unwrap();
    // Bytes the reader buffered past the head belong to the tunnel.
    let buffered = reader.buffer().to_vec();
    let mut up_write = upstream.try_clone().unwrap();
    let mut down_write = client.try_clone().unwrap();
    let mut up_read = upstream;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut up_read, &mut down_write);
    });
    let _ = up_write.write_all(&buffered);
    let mut rest = reader.into_inner();
    let mut buf = [0u8; 8192];
    while let Ok(n) = rest.read(&mut buf) {
        if n == 0 || up_write.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = up_write.shutdown(std::net::Shutdown::Write);
}

/// A pull request workspace: one imported JUnit report with a failure, a non-fork PR event.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("report.xml"),
        r#"<testsuite name="calc" tests="2" failures="1">
  <testcase classname="calc" name="adds" time="0.01"/>
  <testcase classname="calc" name="divides" time="0.01"><failure message="1/0">boom</failure></testcase>
</testsuite>
"#,
    )
    .unwrap();
    std::fs::write(
        ws.path().join("fcorr.toml"),
        "[[suite]]\nname = \"calc\"\nkind = \"import\"\nreports = [\"report.xml\"]\n",
    )
    .unwrap();
    crate::support::github::write_pr_event(ws.path());
    ws
}

/// `fcorr ci` publishing a comment on PR 5, with `env` on top of a clean environment.
fn fcorr_ci(ws: &Path, api: &str, actor: &str, env: &[(&str, String)]) -> std::process::Output {
    fcorr_ci_with(ws, api, actor, env, &[])
}

fn fcorr_ci_with(ws: &Path, api: &str, actor: &str, env: &[(&str, String)], extra: &[&str]) -> std::process::Output {
    let mut cmd = crate::support::fcorr_bin();
    cmd.current_dir(ws).env("FCORR_CACHE_DIR", crate::support::repo().join("target/fcorr-test-cache"));
    for key in PROXY_VARS.iter().chain(&["CI", "GH_TOKEN", "FCORR_ARTIFACT_NAME", "SSL_CERT_FILE", "SSL_CERT_DIR"]) {
        cmd.env_remove(key);
    }
    cmd.envs(crate::support::github::env(ws, api, actor));
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd.args(["ci", "--config", "fcorr.toml", "--baseline", "none", "--comment", "update", "--out", "fcorr-out"]);
    cmd.args(extra);
    cmd.output().unwrap()
}

fn api_host(server: &MockServer) -> String {
    server.uri().trim_start_matches("http://").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn api_calls_go_through_the_https_proxy() {
    for variable in ["HTTPS_PROXY", "https_proxy"] {
        let ws = workspace();
        let server = MockServer::start().await;
        crate::support::github::mock_comment_api(&server).await;
        let proxy = Proxy::start();
        let out =
            fcorr_ci(ws.path(), &server.uri(), "octocat", &[(variable, format!("http://127.0.0.1:{}", proxy.port))]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("created the PR comment"), "{variable}: {stderr}");
        // The API requests (list, then create) went through a tunnel to the API's host (one, kept
        // alive for both).
        let seen = proxy.seen();
        assert!(!seen.is_empty(), "{variable}: {seen:?}");
        assert!(seen.iter().all(|l| *l == format!("CONNECT {} HTTP/1.1", api_host(&server))), "{seen:?}");
        assert_eq!(crate::support::github::writes(&server).await, ["POST /repos/org/app/issues/5/comments"]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_proxy_hosts_are_called_directly() {
    let ws = workspace();
    let server = MockServer::start().await;
    crate::support::github::mock_comment_api(&server).await;
    let proxy = Proxy::start();
    let out = fcorr_ci(
        ws.path(),
        &server.uri(),
        "octocat",
        &[("HTTPS_PROXY", format!("http://127.0.0.1:{}", proxy.port)), ("NO_PROXY", "localhost,127.0.0.1".into())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("created the PR comment"), "{stderr}");
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_ssl_cert_file_is_a_warning_naming_it() {
    let ws = workspace();
    let server = MockServer::start().await;
    crate::support::github::mock_comment_api(&server).await;
    let missing = ws.path().join("no-such-ca.pem");
    let out = fcorr_ci(ws.path(), &server.uri(), "octocat", &[("SSL_CERT_FILE", missing.display().to_string())]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: system certificates") && stderr.contains("no-such-ca.pem"), "{stderr}");
    // The bundled roots still stand; the (plain http) API call is made.
    assert!(stderr.contains("created the PR comment"), "{stderr}");
}

fn outputs(ws: &Path) -> String {
    std::fs::read_to_string(ws.join("github-output.txt")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn dependabot_runs_write_nothing_through_the_api_and_say_why_in_the_summary() {
    let ws = workspace();
    let server = MockServer::start().await;
    crate::support::github::mock_comment_api(&server).await;
    let out = fcorr_ci(ws.path(), &server.uri(), "dependabot[bot]", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("started by Dependabot"), "{stderr}");
    let requests: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| json!({"method": r.method.as_str(), "path": r.url.path()}))
        .collect();
    assert!(requests.is_empty(), "no API call before the first write is skipped: {requests:?}");
    let summary = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    assert!(summary.contains("divides") && summary.contains("started by Dependabot"), "{summary}");
    assert!(outputs(ws.path()).contains("verdict<<"));

    // The workflow granted write access: `--token-can-write` comments after all.
    let ws = workspace();
    let out = fcorr_ci_with(ws.path(), &server.uri(), "dependabot[bot]", &[], &["--token-can-write"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("created the PR comment"), "{stderr}");
    assert_eq!(crate::support::github::writes(&server).await, ["POST /repos/org/app/issues/5/comments"]);
}
