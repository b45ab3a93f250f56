//! The `http` adapter: POST a JSON body built from a template to a URL and pick the answer out of
//! the JSON response with a JSON pointer. Also the HTTP plumbing the `openai` adapter shares:
//! one blocking client that never follows a redirect (configured headers hold keys and must not
//! reach another origin), and failures classified as transient (connection refused, 429, 5xx) or not.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{ConnectProxyConnector, Connector, RustlsConnector};

use super::SutRequest;
use super::answer::{self, AnswerFormat, Reply};
use super::config::SutConfigError;
use super::guard::{Backend, Failure};

// Response bodies larger than this are an error, not an answer (and never fill memory).
use super::answer::MAX_ANSWER as MAX_BODY;

/// `[suite.sut]` with `type = "http"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct HttpConfig {
    /// `{env:NAME}` in it is replaced by that environment variable (a key in the query string).
    pub url: String,
    /// JSON body template: a string `"{case}"` becomes the whole case, `{prompt}` and `{id}` are
    /// replaced inside strings. Default: the case itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// JSON pointer to the answer, e.g. `/choices/0/text`. Default: the `output` member of a
    /// `{"output": …}` response, else the whole response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// JSON pointer to a usage object (default `/usage`, when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// Extra headers; `{env:NAME}` in a value is replaced by that environment variable, so
    /// tokens stay out of the file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// An HTTP SUT ready to call.
pub(crate) struct HttpSut {
    config: HttpConfig,
    client: Client,
    /// The URL with its `{env:NAME}` references filled in (`config.url`, as written, is what
    /// messages show).
    url: String,
    headers: Vec<(String, String)>,
}

impl HttpSut {
    pub(crate) fn new(config: HttpConfig, timeout: Duration) -> Result<HttpSut, SutConfigError> {
        check_url("url", &config.url)?;
        for pointer in [&config.answer, &config.usage].into_iter().flatten() {
            if !pointer.is_empty() && !pointer.starts_with('/') {
                let message = format!("`{pointer}` is not a JSON pointer (it starts with `/`, e.g. `/answer/text`)");
                return Err(SutConfigError::Invalid { key: "answer", message });
            }
        }
        let headers = config
            .headers
            .iter()
            .map(|(name, value)| Ok((name.clone(), expand_env("headers", value)?)))
            .collect::<Result<_, SutConfigError>>()?;
        let url = expand_env("url", &config.url)?;
        Ok(HttpSut { client: Client::new(timeout), url, config, headers })
    }
}

/// Replaces each `{env:NAME}` with the variable's value; an unset variable is an error naming
/// `key`. The names are the ones the config check registers as secrets (`crate::secrets`).
fn expand_env(key: &'static str, value: &str) -> Result<String, SutConfigError> {
    let mut out = value.to_string();
    for var in crate::secrets::env_refs(value) {
        let found = std::env::var(var).map_err(|_| SutConfigError::MissingEnv { key, var: var.to_string() })?;
        out = out.replacen(&format!("{{env:{var}}}"), &found, 1);
    }
    Ok(out)
}

/// Rejects URLs ureq could not call, at configuration time.
pub(crate) fn check_url(key: &'static str, url: &str) -> Result<(), SutConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(SutConfigError::Invalid { key, message: format!("`{url}` is not an http:// or https:// URL") })
    }
}

/// Fills a body template from a request.
fn fill(template: &Value, request: &SutRequest) -> Value {
    match template {
        Value::String(s) if s == "{case}" => request.case.clone(),
        Value::String(s) => Value::String(super::fill_placeholders(s, request, str::to_string)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, request)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), fill(v, request))).collect()),
        other => other.clone(),
    }
}

impl Backend for HttpSut {
    fn attempt(&self, request: &SutRequest, _timeout: Duration) -> Result<Reply, Failure> {
        let body = self.config.body.as_ref().map_or_else(|| request.case.clone(), |t| fill(t, request));
        let text = self.client.post_json(&self.url, &self.config.url, &self.headers, &body)?;
        let Some(pointer) = &self.config.answer else {
            return answer::parse(text.as_bytes(), AnswerFormat::Auto).map_err(|bad| Failure::Permanent {
                message: format!("{}: {}", self.config.url, bad.message),
                raw: Some(bad.raw),
            });
        };
        let json: Value = serde_json::from_str(&text).map_err(|e| Failure::Permanent {
            message: format!("{} answered something that is not JSON: {e}", self.config.url),
            raw: Some(answer::cap(&text)),
        })?;
        let output = json.pointer(pointer).cloned().ok_or_else(|| Failure::Permanent {
            message: format!("{}: the response has nothing at `{pointer}`", self.config.url),
            raw: Some(answer::cap(&text)),
        })?;
        let usage = json
            .pointer(self.config.usage.as_deref().unwrap_or("/usage"))
            .map(answer::usage_checked)
            .transpose()
            .map_err(|message| Failure::Permanent {
                message: format!("{}: {message}", self.config.url),
                raw: Some(answer::cap(&text)),
            })?
            .flatten();
        Ok(Reply { output, raw: answer::cap(&text), usage })
    }

    fn identity(&self) -> Value {
        serde_json::json!({"type": "http", "config": self.config})
    }
}

/// A blocking HTTP client with fcorr's network settings (`crate::net`: proxy variables, system
/// certificates).
pub(crate) struct Client {
    agent: ureq::Agent,
}

impl Client {
    pub(crate) fn new(timeout: Duration) -> Client {
        let config = crate::net::agent_config(crate::net::Redirects::Never)
            .timeout_global(Some(timeout))
            // Statuses are classified here (429 and 5xx retried), not turned into errors.
            .http_status_as_error(false)
            .build();
        // ureq's default chain (CONNECT proxy, TCP, rustls) with TCP that asks for immediate
        // acknowledgements while an answer is awaited (`super::tcp`: no 40 ms stall on servers
        // that write headers and body apart).
        let connector =
            ().chain(ConnectProxyConnector::default()).chain(super::tcp::QuickAckTcp).chain(RustlsConnector::default());
        Client { agent: ureq::Agent::with_parts(config, connector, DefaultResolver::default()) }
    }

    /// POSTs `body` to `url` and returns the response text of a 2xx answer; `shown` is the URL
    /// as configured (before `{env:NAME}` is filled in), for messages. A redirect is never
    /// followed: it is a permanent failure naming where it pointed.
    pub(crate) fn post_json(
        &self,
        url: &str,
        shown: &str,
        headers: &[(String, String)],
        body: &Value,
    ) -> Result<String, Failure> {
        let mut request = self.agent.post(url).content_type("application/json");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response = request.send(body.to_string()).map_err(|e| classify(shown, e))?;
        let status = response.status().as_u16();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let retry_after = header("retry-after").and_then(|v| parse_retry_after(&v, time::OffsetDateTime::now_utc()));
        let location = header("location");
        let text =
            response.body_mut().with_config().limit(MAX_BODY).read_to_string().map_err(|e| classify(shown, e))?;
        let raw = Some(answer::cap(&text));
        let why = error_detail(&text);
        match status {
            200..=299 => Ok(text),
            300..=399 => Err(Failure::Permanent { message: redirect_message(url, shown, status, location), raw }),
            429 => Err(Failure::Transient {
                message: format!("HTTP 429 (rate limited) from {shown}{why}"),
                raw,
                retry_after,
            }),
            500..=599 => {
                Err(Failure::Transient { message: format!("HTTP {status} from {shown}{why}"), raw, retry_after })
            }
            _ => Err(Failure::Permanent { message: format!("HTTP {status} from {shown}{why}"), raw }),
        }
    }
}

/// `": <message>"` from an error body in the shape OpenAI-compatible servers (and most JSON APIs)
/// answer — `{"error": {"message": …}}`, `{"error": "…"}` or `{"message": …}` — so the case's
/// message says why the server refused (a context overflow, a bad key), not only the status;
/// empty for any other body (the raw body is kept with the failure either way).
fn error_detail(text: &str) -> String {
    let Ok(json) = serde_json::from_str::<Value>(text) else { return String::new() };
    let message = ["/error/message", "/error", "/message", "/detail"]
        .iter()
        .find_map(|pointer| json.pointer(pointer).and_then(Value::as_str))
        .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    if message.is_empty() {
        return String::new();
    }
    // One line, at most 300 characters (cut on a character boundary).
    match message.char_indices().nth(300) {
        Some((cut, _)) => format!(": {}…", &message[..cut]),
        None => format!(": {message}"),
    }
}

/// Why a redirect was not followed. To another origin: the configured headers (API keys) and
/// the case would go to a host nobody configured, so the answer is refused, naming that origin.
/// To the same origin: still not followed (a POST redirected with 301/302 arrives as a GET
/// without its body; each call would cost two round trips), naming the address to configure.
fn redirect_message(url: &str, shown: &str, status: u16, location: Option<String>) -> String {
    let Some(location) = location.filter(|l| !l.trim().is_empty()) else {
        return format!("HTTP {status} from {shown}: a redirect without a Location");
    };
    let from = origin(url);
    let to = if let Some(rest) = location.strip_prefix("//") {
        // Scheme-relative: the request's scheme, another host.
        origin(&format!("{}://{rest}", scheme(url)))
    } else if location.starts_with('/') || !location.contains(':') {
        // A relative Location stays on the same origin.
        from.clone()
    } else {
        // Absolute; one that does not parse counts as another origin.
        origin(&location)
    };
    match (from, to) {
        (Some(from), Some(to)) if from == to => format!(
            "HTTP {status} from {shown}: a redirect to {location} on the same origin, which fcorr does not follow; \
             set the URL to the address that answers"
        ),
        (_, to) => format!(
            "HTTP {status} from {shown}: a redirect to another origin ({}); fcorr does not follow it, so the \
             configured headers and the case are never sent there",
            to.unwrap_or(location)
        ),
    }
}

/// `http` or `https`, lower-cased.
fn scheme(url: &str) -> String {
    url.split_once("://").map_or("http", |(s, _)| s).to_ascii_lowercase()
}

/// `scheme://host:port` of an absolute URL, the port made explicit (RFC 6454); `None` when it
/// does not parse.
fn origin(url: &str) -> Option<String> {
    let uri: http::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let host = uri.host()?.to_ascii_lowercase();
    let port = uri.port_u16().or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    })?;
    Some(format!("{scheme}://{host}:{port}"))
}

/// Which client errors are worth a retry: a refused or reset connection may be a server still
/// starting or restarting; a bad URL or TLS failure will not fix itself.
fn classify(url: &str, error: ureq::Error) -> Failure {
    use std::io::ErrorKind;
    match &error {
        ureq::Error::Timeout(_) => Failure::Timeout,
        ureq::Error::Io(e) if e.kind() == ErrorKind::TimedOut => Failure::Timeout,
        ureq::Error::Io(e)
            if matches!(
                e.kind(),
                ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
            ) =>
        {
            Failure::Transient { message: format!("cannot reach {url}: {error}"), raw: None, retry_after: None }
        }
        ureq::Error::ConnectionFailed => {
            Failure::Transient { message: format!("cannot reach {url}: {error}"), raw: None, retry_after: None }
        }
        _ => Failure::Permanent { message: format!("request to {url} failed: {error}"), raw: None },
    }
}

/// `Retry-After`: seconds, or an HTTP date (RFC 9110), relative to `now`.
fn parse_retry_after(value: &str, now: time::OffsetDateTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let at = time::PrimitiveDateTime::parse(value, &format).ok()?.assume_utc();
    Some(Duration::try_from(at - now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::guard::{CallPolicy, Guarded};
    use crate::sut::testing::{Reply as Canned, Server};
    use crate::sut::{Sut, SutError};
    use serde_json::json;

    #[test]
    fn a_body_template_fills_each_placeholder_once() {
        let request = SutRequest { id: "c-{prompt}".into(), prompt: "say {id}".into(), case: json!({}) };
        let body = fill(&json!({"q": "{prompt} ({id})", "list": ["{id}"]}), &request);
        assert_eq!(body, json!({"q": "say {id} (c-{prompt})", "list": ["c-{prompt}"]}));
    }

    #[test]
    fn an_error_body_names_why_in_one_line() {
        assert_eq!(error_detail(r#"{"error": {"message": "bad\n key", "type": "x"}}"#), ": bad key");
        assert_eq!(error_detail(r#"{"error": "slow down"}"#), ": slow down");
        assert_eq!(error_detail(r#"{"detail": "Not Found"}"#), ": Not Found");
        assert_eq!(error_detail("<html>502 Bad Gateway</html>"), "");
        assert_eq!(error_detail(r#"{"error": {"code": 3}}"#), "");
        let long = error_detail(&json!({"error": {"message": "é".repeat(400)}}).to_string());
        assert_eq!(long.chars().count(), 2 + 300 + 1);
    }

    fn request() -> SutRequest {
        SutRequest { id: "c7".into(), prompt: "list files".into(), case: json!({"id": "c7", "prompt": "list files"}) }
    }

    fn config(url: String) -> HttpConfig {
        HttpConfig { url, body: None, answer: None, usage: None, headers: BTreeMap::new() }
    }

    fn policy() -> CallPolicy {
        CallPolicy { timeout: Duration::from_secs(5), backoff: Duration::from_millis(20), ..CallPolicy::default() }
    }

    #[test]
    fn body_template_and_answer_pointer() {
        let server =
            Server::start(vec![Canned::json(200, r#"{"data": {"text": "ls"}, "usage": {"total_tokens": 9}}"#)]);
        let mut config = config(server.url("/ask"));
        config.body = Some(json!({"q": "Q: {prompt}", "meta": {"case": "{case}", "n": 1}}));
        config.answer = Some("/data/text".into());
        let sut = Guarded::new(HttpSut::new(config, Duration::from_secs(5)).unwrap(), policy(), None);
        let answer = sut.call(&request()).unwrap();
        assert_eq!(answer.output, json!("ls"));
        assert_eq!(answer.usage.unwrap().tokens, 9);
        let seen = server.requests();
        assert_eq!(seen[0].path, "/ask");
        let body: Value = serde_json::from_str(&seen[0].body).unwrap();
        assert_eq!(body, json!({"q": "Q: list files", "meta": {"case": {"id": "c7", "prompt": "list files"}, "n": 1}}));
    }

    #[test]
    fn a_missing_pointer_or_non_json_body_is_a_backend_error_with_raw() {
        let server = Server::start(vec![Canned::json(200, r#"{"other": 1}"#), Canned::text(200, "<html>oops")]);
        let mut config = config(server.url("/"));
        config.answer = Some("/answer".into());
        let sut = Guarded::new(HttpSut::new(config, Duration::from_secs(5)).unwrap(), policy(), None);
        let err = sut.call(&request()).unwrap_err();
        assert!(
            matches!(&err, SutError::Backend { message, raw: Some(raw) } if message.contains("/answer") && raw.contains("other")),
            "{err:?}"
        );
        let err = sut.call(&request()).unwrap_err();
        assert!(
            matches!(&err, SutError::Backend { message, raw: Some(raw) } if message.contains("not JSON") && raw.contains("<html>")),
            "{err:?}"
        );
    }

    #[test]
    fn a_client_error_is_not_retried() {
        let server = Server::start(vec![Canned::text(400, "bad request"), Canned::text(200, "never")]);
        let sut = Guarded::new(HttpSut::new(config(server.url("/")), Duration::from_secs(5)).unwrap(), policy(), None);
        let err = sut.call(&request()).unwrap_err();
        assert!(err.to_string().contains("HTTP 400"), "{err}");
        assert_eq!(server.requests().len(), 1);
    }

    #[test]
    fn connection_refused_is_retried_then_reported() {
        // Bind and drop a listener: the port is then (almost certainly) closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let sut = Guarded::new(
            HttpSut::new(config(format!("http://127.0.0.1:{port}/")), Duration::from_secs(5)).unwrap(),
            CallPolicy { retries: 1, ..policy() },
            None,
        );
        let err = sut.call(&request()).unwrap_err();
        assert!(err.to_string().contains("cannot reach") && err.to_string().contains("after 2 attempts"), "{err}");
    }

    #[test]
    fn a_slow_server_times_out() {
        let server = Server::start(vec![Canned::json(200, r#"{"output": "late"}"#).delayed(Duration::from_secs(3))]);
        let sut = Guarded::new(
            HttpSut::new(config(server.url("/")), Duration::from_millis(300)).unwrap(),
            CallPolicy { timeout: Duration::from_millis(300), ..policy() },
            None,
        );
        let started = std::time::Instant::now();
        let err = sut.call(&request()).unwrap_err();
        assert!(matches!(err, SutError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn header_secrets_come_from_the_environment() {
        assert!(matches!(
            expand_env("headers", "Bearer {env:FCORR_TEST_SURELY_UNSET}"),
            Err(SutConfigError::MissingEnv { key: "headers", .. })
        ));
        // PATH and HOME are set in every test environment.
        let (path, home) = (std::env::var("PATH").unwrap(), std::env::var("HOME").unwrap());
        assert_eq!(expand_env("url", "x {env:PATH} y {env:HOME}").unwrap(), format!("x {path} y {home}"));
    }

    /// An HTTP SUT at `url` sending a configured secret header, never retrying.
    fn keyed(url: String) -> Guarded<HttpSut> {
        let mut config = config(url);
        // HOME stands in for a key: set in every test environment.
        config.headers.insert("X-Api-Key".into(), "{env:HOME}".into());
        Guarded::new(HttpSut::new(config, Duration::from_secs(5)).unwrap(), CallPolicy { retries: 0, ..policy() }, None)
    }

    #[test]
    fn a_redirect_to_another_origin_is_not_followed_and_the_other_host_gets_nothing() {
        // Two loopback servers on different ports: two origins.
        let elsewhere = Server::start(vec![Canned::json(200, r#"{"output": "stolen"}"#)]);
        for status in [301, 302, 303, 307, 308] {
            let first = Server::start(vec![Canned::text(status, "").header("Location", &elsewhere.url("/collect"))]);
            let err = keyed(first.url("/ask")).call(&request()).unwrap_err();
            let SutError::Backend { message, .. } = &err else { panic!("{err:?}") };
            let target = origin(&elsewhere.url("/")).unwrap();
            assert!(message.contains(&format!("HTTP {status} from")), "{message}");
            assert!(message.contains(&format!("a redirect to another origin ({target})")), "{message}");
            assert_eq!(first.requests().len(), 1, "the redirect is not retried");
        }
        assert!(elsewhere.requests().is_empty(), "the other origin was called: {:?}", elsewhere.requests());
    }

    #[test]
    fn a_redirect_on_the_same_origin_is_not_followed_either_and_says_where_it_pointed() {
        let server = Server::start(vec![
            Canned::text(308, "").header("Location", "/v2/ask"),
            Canned::json(200, r#"{"output": "ok"}"#),
        ]);
        let err = keyed(server.url("/ask")).call(&request()).unwrap_err();
        assert!(
            err.to_string().contains("HTTP 308 from")
                && err.to_string().contains("a redirect to /v2/ask on the same origin"),
            "{err}"
        );
        assert_eq!(server.requests().len(), 1);
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(origin("http://Example.com/x").as_deref(), Some("http://example.com:80"));
        assert_eq!(origin("https://example.com:443/x"), origin("https://example.com/y"));
        assert_ne!(origin("http://127.0.0.1:8080/"), origin("http://127.0.0.1:8081/"));
        let message = redirect_message("https://api.test/v1", "https://api.test/v1", 302, Some("//evil.test/x".into()));
        assert!(message.contains("another origin (https://evil.test:443)"), "{message}");
        let message = redirect_message("https://api.test/v1", "https://api.test/v1", 302, None);
        assert!(message.contains("without a Location"), "{message}");
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let now = time::macros::datetime!(2026-11-23 12:00:00 UTC);
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Mon, 23 Nov 2026 12:00:05 GMT", now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after("Mon, 23 Nov 2026 11:00:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
