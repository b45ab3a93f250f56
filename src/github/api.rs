//! A thin GitHub REST client on octocrab, async end to end (transport in `super::transport`:
//! proxy and certificates of the company network): relative routes against `GITHUB_API_URL`
//! (GitHub Enterprise Server too), the API version header, pagination by `Link`, bounded
//! rate-limit waits for idempotent requests, and errors that keep the status and GitHub's message
//! so callers can name a missing permission. fcorr's own response types (not octocrab's models)
//! read the answers, so a field GitHub leaves out never fails a lookup.

use std::time::Duration;

use http::{HeaderMap, Method};
use http_body_util::{BodyExt, Limited};
use octocrab::{OctoBody, Octocrab};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::limits::{Cut, Limits, StopCheck};
use super::transport::TransportError;

/// GitHub REST API version fcorr is written against.
pub const API_VERSION: &str = "2022-11-28";

/// The most a response body may be (artifact zips included) before fcorr gives up on it.
pub const MAX_BODY_BYTES: usize = 512 * 1024 * 1024;

/// Longest wait for the answer's head (connection, tunnel, TLS and redirects included). The API
/// answers in a second or two; a call unanswered this long is not retried (the phase's other
/// calls need the time, see `super::limits`).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest wait for the whole body once the head is in (artifact zips are the large ones).
const BODY_TIMEOUT: Duration = Duration::from_secs(120);

/// A response with its body read.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON of type `T`.
    pub fn json<T: DeserializeOwned>(&self, method: &Method, path: &str) -> Result<T, ApiError> {
        serde_json::from_slice(&self.body).map_err(|e| ApiError {
            method: method.to_string(),
            path: path.to_string(),
            status: Some(self.status),
            message: format!("unexpected response body: {e}"),
            retry_after: None,
            abandoned: false,
        })
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A failed request: transport failure (`status: None`) or a non-2xx answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{method} {path}: {}{message}", status.map(|s| format!("HTTP {s}: ")).unwrap_or_default())]
pub struct ApiError {
    pub method: String,
    /// The endpoint (a route under the API base).
    pub path: String,
    pub status: Option<u16>,
    /// GitHub's `message`, or the transport error.
    pub message: String,
    /// How long GitHub asked to wait before trying again (`retry-after`, or until
    /// `x-ratelimit-reset`), when the answer was a rate limit.
    pub retry_after: Option<Duration>,
    /// No answer came in time, or the phase's calls ended (its time ran out, fcorr is
    /// stopping): never retried.
    pub abandoned: bool,
}

impl ApiError {
    /// The token lacks a permission (GitHub says "Resource not accessible by integration").
    pub fn is_forbidden(&self) -> bool {
        self.status == Some(403) && !self.message.to_ascii_lowercase().contains("rate limit")
            || self.message.contains("Resource not accessible by integration")
    }

    /// The request may have been processed although no success came back (5xx, transport).
    pub fn may_have_landed(&self) -> bool {
        self.status.is_none_or(|s| s >= 500)
    }

    /// The warning to print: names the permission when that is the problem.
    pub fn explain(&self, permission: &str) -> String {
        if self.is_forbidden() {
            format!(
                "{self} — the token lacks `{permission}`: add `permissions: {permission}` to the job \
                 (fork pull requests never get it: see the workflow_run recipe in docs/github-action.md)"
            )
        } else {
            self.to_string()
        }
    }
}

/// Why a client cannot be made from the Actions environment (the variable is named).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    #[error("GITHUB_REPOSITORY `{0}` is not owner/name")]
    Repository(String),
    #[error("GITHUB_API_URL `{0}` is not a URL (expected e.g. https://api.github.com)")]
    ApiUrl(String),
    /// The proxy or TLS settings of the machine cannot carry API calls.
    #[error("GitHub API client: {0}")]
    Transport(#[from] TransportError),
}

/// GitHub client for one repository.
pub struct Api {
    client: Octocrab,
    api_url: String,
    pub owner: String,
    pub repo: String,
    /// Longest single wait for a rate limit; a longer reset is not waited for.
    pub max_wait: Duration,
    /// Attempts of an idempotent request (first try included).
    pub max_attempts: u32,
    /// The time all of this client's calls may take together, and what stops them.
    limits: Limits,
}

impl Api {
    /// A client for `owner/repo` at `api_url`. It must be made, and its calls awaited, inside
    /// the tokio runtime that drives them ([`super::runtime`]).
    pub fn new(api_url: &str, token: Option<&str>, repository: &str) -> Result<Api, ClientError> {
        let (owner, repo) =
            repository.split_once('/').ok_or_else(|| ClientError::Repository(repository.to_string()))?;
        let api_url = api_url.trim_end_matches('/');
        let base = match api_url.parse::<http::Uri>() {
            Ok(uri) if uri.scheme().is_some() && uri.host().is_some() => uri,
            _ => return Err(ClientError::ApiUrl(api_url.to_string())),
        };
        Ok(Api {
            client: super::transport::client(base, token, crate::net::Redirects::Follow)?,
            api_url: api_url.to_string(),
            owner: owner.into(),
            repo: repo.into(),
            max_wait: Duration::from_secs(60),
            max_attempts: 3,
            limits: Limits::from_env(),
        })
    }

    /// The client, ending its calls at once when `stop` says fcorr must stop (a stop signal).
    pub fn stop_when(mut self, stop: StopCheck) -> Api {
        self.limits.stop_when(stop);
        self
    }

    /// `/repos/{owner}/{repo}` + `rest`.
    pub fn repo_path(&self, rest: &str) -> String {
        format!("/repos/{}/{}{rest}", self.owner, self.repo)
    }

    /// One request, no retries; any HTTP status is `Ok`. Redirects are followed (artifact
    /// downloads end on blob storage) without the token, which only goes to the API itself:
    /// routes (`/repos/…`) are sent relative, and octocrab adds the token to those alone.
    pub async fn send_once(&self, method: &Method, path: &str, body: Option<&Value>) -> Result<Response, ApiError> {
        let err = |message: String| ApiError {
            method: method.to_string(),
            path: path.to_string(),
            status: None,
            message,
            retry_after: None,
            abandoned: false,
        };
        let abandoned = |message: String| ApiError { abandoned: true, ..err(message) };
        if let Some(why) = self.limits.halted() {
            return Err(abandoned(format!("not sent: {why}")));
        }
        let call = format!("{method} {path}");
        let mut request = http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", API_VERSION)
            .header("user-agent", crate::net::USER_AGENT);
        let payload = match body {
            Some(body) => {
                request = request.header("content-type", "application/json");
                // Comments and check runs are not masked by GitHub: no secret fcorr holds is sent.
                let mut body = body.clone();
                crate::secrets::redact_json(&mut body);
                OctoBody::from(body.to_string())
            }
            None => OctoBody::empty(),
        };
        let request = request.body(payload).map_err(|e| err(format!("cannot build the request for {path}: {e}")))?;
        let response = match self.limits.within(&call, RESPONSE_TIMEOUT, self.client.execute(request)).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => return Err(err(chain(&e))),
            Err(Cut::Timeout(limit)) => return Err(abandoned(format!("no answer within {}s", limit.as_secs()))),
            Err(Cut::Halted(why)) => return Err(abandoned(why)),
        };
        let (parts, body) = response.into_parts();
        let read = |e: String| err(format!("reading the response failed (limit {MAX_BODY_BYTES} bytes): {e}"));
        let body = match self.limits.within(&call, BODY_TIMEOUT, Limited::new(body, MAX_BODY_BYTES).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes().to_vec(),
            Ok(Err(e)) => return Err(read(chain(e.as_ref()))),
            Err(Cut::Timeout(limit)) => {
                return Err(ApiError { abandoned: true, ..read(format!("not complete within {}s", limit.as_secs())) });
            }
            Err(Cut::Halted(why)) => return Err(abandoned(why)),
        };
        Ok(Response { status: parts.status.as_u16(), headers: parts.headers, body })
    }

    /// A request; non-2xx answers become errors. Idempotent requests (all but POST) are retried
    /// after a rate limit (honouring `retry-after` / `x-ratelimit-reset`, each wait at most
    /// `max_wait`): GitHub did not process them. Only GETs are also retried after 5xx or transport
    /// errors, since a PATCH that landed (check-run annotations) would be applied twice. At most
    /// `max_attempts` tries in all, and no wait that would end past the phase's deadline; a call
    /// that got no answer in time is not retried. POST is never retried here: the caller decides.
    pub async fn request(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Response, ApiError> {
        let idempotent = method != Method::POST;
        let safe = method == Method::GET;
        let mut attempt = 1;
        loop {
            let result = self.send_once(&method, path, body).await;
            let wait = match &result {
                Ok(r) if (200..300).contains(&r.status) => None,
                Ok(r) => rate_limit_wait(r).or_else(|| (r.status >= 500 && safe).then(|| backoff(attempt))),
                Err(e) if e.abandoned => None,
                Err(_) => safe.then(|| backoff(attempt)),
            };
            match wait {
                Some(wait)
                    if idempotent && attempt < self.max_attempts && wait <= self.max_wait && self.limits.fits(wait) =>
                {
                    errln!(
                        "fcorr: GitHub API {method} {path}: {}; retrying in {}s",
                        match &result {
                            Ok(r) => format!("HTTP {}", r.status),
                            Err(e) => e.message.clone(),
                        },
                        wait.as_secs()
                    );
                    if !self.limits.pause(&format!("{method} {path}"), wait).await {
                        // fcorr is stopping: the answer in hand is the answer.
                        return result.and_then(|r| into_success(&method, path, r));
                    }
                    attempt += 1;
                }
                _ => return result.and_then(|r| into_success(&method, path, r)),
            }
        }
    }

    /// GET and parse JSON.
    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ApiError> {
        self.request(Method::GET, path, None).await?.json(&Method::GET, path)
    }

    /// Every item of a paginated list (a JSON array per page), following `Link: rel="next"`.
    pub async fn get_all_pages<T: DeserializeOwned>(&self, first: &str) -> Result<Vec<T>, ApiError> {
        let mut items = Vec::new();
        let mut next = Some(first.to_string());
        let mut pages = 0;
        while let Some(path) = next.take() {
            pages += 1;
            let response = self.request(Method::GET, &path, None).await?;
            let mut page: Vec<T> = response.json(&Method::GET, &path)?;
            items.append(&mut page);
            // A hard stop protects against a server that links a page to itself.
            if pages >= 1000 {
                break;
            }
            next = response.header("link").and_then(next_link).map(|url| self.relative(&url));
        }
        Ok(items)
    }

    /// A URL from a `Link` header as a route under the API base, so the token is still sent
    /// (only routes under the API base get it).
    fn relative(&self, url: &str) -> String {
        match url.strip_prefix(&self.api_url) {
            Some(rest) if rest.starts_with('/') => rest.to_string(),
            _ => url.to_string(),
        }
    }
}

/// An error and its sources, as one line (`Service Error: client error (Connect): tcp connect
/// error: Connection refused`), each message said once.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let message = e.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = e.source();
    }
    text
}

fn into_success(method: &Method, path: &str, response: Response) -> Result<Response, ApiError> {
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let message = serde_json::from_slice::<Value>(&response.body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(&response.body).chars().take(200).collect());
    let retry_after = rate_limit_wait(&response);
    Err(ApiError {
        method: method.to_string(),
        path: path.to_string(),
        status: Some(response.status),
        message,
        retry_after,
        abandoned: false,
    })
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(u64::from(attempt.min(5)))
}

/// How long GitHub asks us to wait: `retry-after` seconds, or until `x-ratelimit-reset` when
/// `x-ratelimit-remaining` is 0. Only for 403/429 answers.
pub fn rate_limit_wait(response: &Response) -> Option<Duration> {
    if response.status != 403 && response.status != 429 {
        return None;
    }
    if let Some(secs) = response.header("retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if response.header("x-ratelimit-remaining").map(str::trim) == Some("0") {
        let reset = response.header("x-ratelimit-reset")?.trim().parse::<i64>().ok()?;
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        return Some(Duration::from_secs((reset - now).max(1) as u64));
    }
    // A secondary rate limit without headers: GitHub asks for at least a minute.
    (response.status == 429).then(|| Duration::from_secs(60))
}

/// The `rel="next"` URL of a `Link` header.
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"")
            .then(|| url.trim().trim_start_matches('<').trim_end_matches('>').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    /// The client is async end to end: with the runtime's only blocking thread taken, a call
    /// still completes (the ureq client this replaced waited for that thread, and hung).
    #[test]
    fn api_calls_need_no_blocking_thread() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().max_blocking_threads(1).build().unwrap();
        rt.block_on(async {
            let server = MockServer::start().await;
            Mock::given(method("GET"))
                .and(path("/repos/o/r"))
                .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 1})))
                .mount(&server)
                .await;
            let (release, wait) = std::sync::mpsc::channel::<()>();
            let blocker = tokio::task::spawn_blocking(move || wait.recv_timeout(Duration::from_secs(30)).is_ok());
            let api = Api::new(&server.uri(), Some("ghs_x"), "o/r").unwrap();
            let got = tokio::time::timeout(Duration::from_secs(10), api.get_json::<Value>("/repos/o/r")).await;
            release.send(()).unwrap();
            assert!(blocker.await.unwrap());
            assert_eq!(got.expect("no answer while the blocking pool was busy").unwrap(), json!({"id": 1}));
        });
    }

    #[test]
    fn a_client_outside_its_runtime_is_an_error_not_a_panic() {
        let err = Api::new("https://api.github.com", None, "o/r").err().unwrap();
        assert!(matches!(err, ClientError::Transport(TransportError::NoRuntime)), "{err}");
    }

    /// A redirect (the artifact download's, to blob storage) is followed without the token,
    /// even to the same host; the API routes themselves get it, with the version header.
    #[tokio::test]
    async fn redirects_are_followed_without_the_token() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/repos/o/r/actions/artifacts/1/zip"))
            .respond_with(ResponseTemplate::new(302).insert_header("location", format!("{}/blob/1.zip", server.uri())))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/blob/1.zip"))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(b"PK".to_vec()))
            .mount(&server)
            .await;
        let api = Api::new(&server.uri(), Some("ghs_x"), "o/r").unwrap();
        let response = api.request(Method::GET, "/repos/o/r/actions/artifacts/1/zip", None).await.unwrap();
        assert_eq!(response.body, b"PK");
        let requests = server.received_requests().await.unwrap();
        let auth = |p: &str| requests.iter().find(|r| r.url.path() == p).unwrap().headers.get("authorization").cloned();
        assert_eq!(auth("/repos/o/r/actions/artifacts/1/zip").unwrap(), "Bearer ghs_x");
        assert_eq!(auth("/blob/1.zip"), None);
        assert_eq!(requests[0].headers.get("x-github-api-version").unwrap(), API_VERSION);
        assert!(requests[0].headers.get("user-agent").unwrap().to_str().unwrap().starts_with("fcorr/"));
    }

    /// A GitHub Enterprise Server base keeps its `/api/v3` path; a transport failure is an
    /// error without a status that says what failed.
    #[tokio::test]
    async fn enterprise_bases_keep_their_path_and_failures_say_why() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/v3/repos/o/r"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 2})))
            .mount(&server)
            .await;
        let api = Api::new(&format!("{}/api/v3/", server.uri()), None, "o/r").unwrap();
        assert_eq!(api.get_json::<Value>(&api.repo_path("")).await.unwrap(), json!({"id": 2}));

        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let mut api = Api::new(&url, None, "o/r").unwrap();
        api.max_attempts = 1;
        let err = api.get_json::<Value>("/repos/o/r").await.unwrap_err();
        assert_eq!(err.status, None);
        assert!(err.may_have_landed());
        assert!(err.message.to_lowercase().contains("connect"), "{err}");
    }

    #[test]
    fn finds_the_next_link() {
        let h = r#"<https://api.github.com/repositories/1/issues/2/comments?page=2>; rel="next", <https://api.github.com/repositories/1/issues/2/comments?page=3>; rel="last""#;
        assert_eq!(next_link(h).as_deref(), Some("https://api.github.com/repositories/1/issues/2/comments?page=2"));
        assert_eq!(next_link(r#"<https://x?page=1>; rel="prev""#), None);
    }

    #[test]
    fn a_rate_limited_answer_is_an_error_with_its_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "7".parse().unwrap());
        let body = br#"{"message": "API rate limit exceeded"}"#.to_vec();
        let e = into_success(&Method::GET, "/repos/o/r", Response { status: 429, headers, body }).unwrap_err();
        assert_eq!(e.retry_after, Some(Duration::from_secs(7)));
        assert_eq!(e.to_string(), "GET /repos/o/r: HTTP 429: API rate limit exceeded");
        let e = ApiError { status: None, message: "connection refused".into(), ..e };
        assert_eq!(e.to_string(), "GET /repos/o/r: connection refused");
    }

    #[test]
    fn rate_limit_headers_give_the_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "7".parse().unwrap());
        let r = Response { status: 429, headers, body: Vec::new() };
        assert_eq!(rate_limit_wait(&r), Some(Duration::from_secs(7)));
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-remaining", "0".parse().unwrap());
        let reset = time::OffsetDateTime::now_utc().unix_timestamp() + 30;
        headers.insert("x-ratelimit-reset", reset.to_string().parse().unwrap());
        let r = Response { status: 403, headers, body: Vec::new() };
        let wait = rate_limit_wait(&r).unwrap();
        assert!(wait <= Duration::from_secs(30) && wait >= Duration::from_secs(20), "{wait:?}");
        let r = Response { status: 403, headers: HeaderMap::new(), body: Vec::new() };
        assert_eq!(rate_limit_wait(&r), None);
    }
}
