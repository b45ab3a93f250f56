//! The `openai` adapter: any OpenAI-compatible chat-completions server (hosted APIs, llama.cpp,
//! vLLM, Ollama). The prompt is the user message; the answer is the first choice's content;
//! `usage.prompt_tokens`/`completion_tokens` become the case's tokens in and out.
//!
//! Also the `/embeddings` call behind the eval `similar` grader ([`EmbeddingsConfig`]): one text
//! in, its vector out, through the same retries, timeout and answer cache as a SUT call.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::answer::{self, Reply};
use super::cache::AnswerCache;
use super::config::SutConfigError;
use super::guard::{Backend, CallPolicy, Failure, Guarded};
use super::http::{Client, check_url};
use super::{Sut, SutRequest};
use crate::model::Usage;

/// `[suite.sut]` with `type = "openai"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct OpenAiConfig {
    /// Up to and including the version, e.g. `http://127.0.0.1:8080/v1` (default OpenAI's).
    #[serde(default = "default_base_url")]
    pub base_url: String,
    pub model: String,
    /// System prompt, sent before the case's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Name of the environment variable holding the API key (the key itself never goes in the
    /// file). Unset: no `Authorization` header, as local servers expect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

fn default_base_url() -> String {
    "https://api.openai.com/v1".into()
}

/// A chat-completions SUT ready to call.
pub(crate) struct OpenAiSut {
    config: OpenAiConfig,
    url: String,
    client: Client,
    headers: Vec<(String, String)>,
}

impl OpenAiSut {
    pub(crate) fn new(config: OpenAiConfig, timeout: Duration) -> Result<OpenAiSut, SutConfigError> {
        check_url("base-url", &config.base_url)?;
        if config.model.trim().is_empty() {
            return Err(SutConfigError::Invalid { key: "model", message: "must name a model".into() });
        }
        let headers = auth_headers(config.api_key_env.as_deref())?;
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        Ok(OpenAiSut { client: Client::new(timeout), url, config, headers })
    }

    fn body(&self, request: &SutRequest) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &self.config.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.push(json!({"role": "user", "content": request.prompt}));
        let mut body = json!({"model": self.config.model, "messages": messages});
        if let Some(t) = self.config.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(n) = self.config.max_tokens {
            body["max_tokens"] = json!(n);
        }
        body
    }
}

/// The `Authorization` header from the variable `api-key-env` names (none when it names none).
fn auth_headers(api_key_env: Option<&str>) -> Result<Vec<(String, String)>, SutConfigError> {
    let Some(var) = api_key_env else { return Ok(Vec::new()) };
    let key =
        std::env::var(var).map_err(|_| SutConfigError::MissingEnv { key: "api-key-env", var: var.to_string() })?;
    Ok(vec![("Authorization".to_string(), format!("Bearer {key}"))])
}

/// Posts `body` and reads the reply as JSON: the JSON, its capped text, and how to report a
/// reply without what was expected (`what`: "a completion", "embeddings").
fn post_for_json<'a>(
    client: &Client,
    url: &'a str,
    headers: &[(String, String)],
    body: &Value,
    what: &'a str,
) -> Result<(Value, String, impl Fn(&str) -> Failure + 'a), Failure> {
    let text = client.post_json(url, url, headers, body)?;
    let raw = answer::cap(&text);
    let kept = raw.clone();
    let malformed = move |detail: &str| Failure::Permanent {
        message: format!("{url} answered malformed {what}: {detail}"),
        raw: Some(kept.clone()),
    };
    let json: Value = serde_json::from_str(&text).map_err(|e| malformed(&format!("not JSON ({e})")))?;
    Ok((json, raw, malformed))
}

impl Backend for OpenAiSut {
    fn attempt(&self, request: &SutRequest, _timeout: Duration) -> Result<Reply, Failure> {
        let (json, raw, malformed) =
            post_for_json(&self.client, &self.url, &self.headers, &self.body(request), "a completion")?;
        let content = json
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("no text at choices[0].message.content"))?;
        let tokens_in = json.pointer("/usage/prompt_tokens").and_then(Value::as_u64);
        let tokens_out = json.pointer("/usage/completion_tokens").and_then(Value::as_u64);
        let total = json.pointer("/usage/total_tokens").and_then(Value::as_u64);
        let usage = Usage {
            tokens: total.unwrap_or(tokens_in.unwrap_or(0) + tokens_out.unwrap_or(0)),
            llm_calls: 1,
            cost_usd: None,
            tokens_in,
            tokens_out,
        };
        Ok(Reply { output: Value::String(content.to_string()), raw, usage: Some(usage) })
    }

    fn identity(&self) -> Value {
        json!({"type": "openai", "config": self.config})
    }
}

/// `[suite.embeddings]`: an OpenAI-compatible `/embeddings` endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct EmbeddingsConfig {
    /// Up to and including the version, e.g. `http://127.0.0.1:8080/v1` (default OpenAI's).
    #[serde(default = "default_base_url")]
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key (unset: no `Authorization` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Seconds per call (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Retries on transient errors (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// Keep vectors in the answer cache (default false), keyed by the endpoint, model and text.
    #[serde(default)]
    pub cache: bool,
}

impl EmbeddingsConfig {
    /// The endpoint ready to call: each call embeds the request's `prompt` and answers its vector
    /// as a JSON array of numbers. `cache_dir` is where cached vectors live when `cache = true`.
    pub(crate) fn build(&self, cache_dir: Option<std::path::PathBuf>) -> Result<Box<dyn Sut>, SutConfigError> {
        check_url("base-url", &self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(SutConfigError::Invalid { key: "model", message: "must name a model".into() });
        }
        let timeout = self.timeout.unwrap_or(30.0);
        if !(timeout.is_finite() && timeout > 0.0 && timeout < 1e9) {
            let message = format!("{timeout} is not a positive number of seconds");
            return Err(SutConfigError::Invalid { key: "timeout", message });
        }
        let timeout = Duration::from_secs_f64(timeout);
        let headers = auth_headers(self.api_key_env.as_deref())?;
        let url = format!("{}/embeddings", self.base_url.trim_end_matches('/'));
        let backend = EmbeddingsBackend { config: self.clone(), url, client: Client::new(timeout), headers };
        let policy = CallPolicy { timeout, retries: self.retries.unwrap_or(2), ..CallPolicy::default() };
        let cache = cache_dir.filter(|_| self.cache).map(AnswerCache::new);
        Ok(Box::new(Guarded::new(backend, policy, cache)))
    }
}

/// One `/embeddings` call per text.
struct EmbeddingsBackend {
    config: EmbeddingsConfig,
    url: String,
    client: Client,
    headers: Vec<(String, String)>,
}

impl Backend for EmbeddingsBackend {
    fn attempt(&self, request: &SutRequest, _timeout: Duration) -> Result<Reply, Failure> {
        let body = json!({"model": self.config.model, "input": [request.prompt]});
        let (json, raw, malformed) = post_for_json(&self.client, &self.url, &self.headers, &body, "embeddings")?;
        let vector = json
            .pointer("/data/0/embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed("no vector at data[0].embedding"))?;
        if vector.is_empty() || !vector.iter().all(|x| x.as_f64().is_some_and(f64::is_finite)) {
            return Err(malformed("data[0].embedding is not a non-empty list of numbers"));
        }
        let usage = json.pointer("/usage").map(answer::usage_checked).transpose().map_err(|m| malformed(&m))?.flatten();
        Ok(Reply { output: Value::Array(vector.clone()), raw, usage })
    }

    fn identity(&self) -> Value {
        json!({"type": "openai-embeddings", "base-url": self.config.base_url, "model": self.config.model})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::guard::{CallPolicy, Guarded};
    use crate::sut::testing::{Reply as Canned, Server};
    use crate::sut::{Sut, SutError};
    use std::time::Instant;

    const COMPLETION: &str = r#"{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ls -la"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}}"#;

    fn request(id: &str) -> SutRequest {
        SutRequest { id: id.into(), prompt: "list all files".into(), case: json!({}) }
    }

    fn config(server: &Server) -> OpenAiConfig {
        OpenAiConfig {
            base_url: server.url("/v1"),
            model: "tiny".into(),
            system: Some("Answer with one shell command.".into()),
            temperature: Some(0.0),
            max_tokens: None,
            api_key_env: None,
        }
    }

    fn policy() -> CallPolicy {
        CallPolicy { timeout: Duration::from_secs(5), backoff: Duration::from_millis(50), ..CallPolicy::default() }
    }

    #[test]
    fn a_500_then_200_is_one_retry_with_usage_recorded() {
        let server = Server::start(vec![Canned::text(500, "overloaded"), Canned::json(200, COMPLETION)]);
        let sut = Guarded::new(OpenAiSut::new(config(&server), Duration::from_secs(5)).unwrap(), policy(), None);
        let answer = sut.call(&request("c1")).unwrap();
        assert_eq!(answer.output, json!("ls -la"));
        assert_eq!(answer.attempts, 2);
        let usage = answer.usage.unwrap();
        assert_eq!((usage.tokens, usage.tokens_in, usage.tokens_out, usage.llm_calls), (16, Some(12), Some(4), 1));
        let seen = server.requests();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].path, "/v1/chat/completions");
        let body: Value = serde_json::from_str(&seen[1].body).unwrap();
        assert_eq!(body["model"], "tiny");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "list all files");
        assert_eq!(body["temperature"], 0.0);
    }

    #[test]
    fn a_429_retry_after_is_honoured() {
        let server = Server::start(vec![
            Canned::json(429, r#"{"error": "slow down"}"#).header("Retry-After", "1"),
            Canned::json(200, COMPLETION),
        ]);
        let sut = Guarded::new(OpenAiSut::new(config(&server), Duration::from_secs(5)).unwrap(), policy(), None);
        assert_eq!(sut.call(&request("c1")).unwrap().attempts, 2);
        let seen = server.requests();
        let gap = seen[1].at - seen[0].at;
        // The backoff alone would be 50 ms; the server asked for a full second.
        assert!(gap >= Duration::from_millis(950), "retried after {gap:?}");
    }

    #[test]
    fn the_rate_limit_spaces_calls_across_workers() {
        let server = Server::start((0..6).map(|_| Canned::json(200, COMPLETION)).collect());
        let policy = CallPolicy { min_gap: Duration::from_millis(150), ..policy() };
        let sut = std::sync::Arc::new(Guarded::new(
            OpenAiSut::new(config(&server), Duration::from_secs(5)).unwrap(),
            policy,
            None,
        ));
        let started = Instant::now();
        let workers: Vec<_> = (0..3)
            .map(|w| {
                let sut = sut.clone();
                std::thread::spawn(move || {
                    for i in 0..2 {
                        sut.call(&request(&format!("w{w}-{i}"))).unwrap();
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        let mut arrivals: Vec<Instant> = server.requests().iter().map(|s| s.at).collect();
        arrivals.sort();
        assert_eq!(arrivals.len(), 6);
        // Starts are spaced exactly; arrivals at the server carry the scheduling jitter of a
        // loaded machine (seen: 25 ms), so each gap gets half the minimum as slack and the whole
        // span must still hold five gaps. Unpaced, three workers would arrive together (gaps ~0).
        for pair in arrivals.windows(2) {
            assert!(pair[1] - pair[0] >= Duration::from_millis(75), "gap {:?}", pair[1] - pair[0]);
        }
        let span = arrivals[5] - arrivals[0];
        assert!(span >= Duration::from_millis(5 * 150 - 30), "span {span:?}");
        assert!(started.elapsed() >= Duration::from_millis(750));
    }

    #[test]
    fn a_malformed_completion_is_a_backend_error_with_raw() {
        let server = Server::start(vec![Canned::json(200, r#"{"choices": []}"#)]);
        let sut = Guarded::new(OpenAiSut::new(config(&server), Duration::from_secs(5)).unwrap(), policy(), None);
        let err = sut.call(&request("c1")).unwrap_err();
        assert!(
            matches!(&err, SutError::Backend { message, raw: Some(raw) } if message.contains("choices[0]") && raw.contains("choices")),
            "{err:?}"
        );
    }

    #[test]
    fn the_key_comes_from_the_named_variable_and_must_be_set() {
        let server = Server::start(vec![Canned::json(200, COMPLETION)]);
        let mut cfg = config(&server);
        cfg.api_key_env = Some("FCORR_TEST_SURELY_UNSET_KEY".into());
        assert!(matches!(OpenAiSut::new(cfg.clone(), Duration::from_secs(5)), Err(SutConfigError::MissingEnv { .. })));
        // HOME is set in every test environment; it stands in for a key here.
        cfg.api_key_env = Some("HOME".into());
        let sut = Guarded::new(OpenAiSut::new(cfg, Duration::from_secs(5)).unwrap(), policy(), None);
        sut.call(&request("c1")).unwrap();
        let auth = server.requests()[0].headers.iter().find(|(n, _)| n == "authorization").cloned();
        assert_eq!(auth.map(|(_, v)| v), Some(format!("Bearer {}", std::env::var("HOME").unwrap())));
    }

    #[test]
    fn embeddings_are_one_call_per_text_with_the_model_named() {
        let server = Server::start(vec![
            Canned::text(503, "warming up"),
            Canned::json(
                200,
                r#"{"data": [{"index": 0, "embedding": [0.5, -1, 2e-3]}], "usage": {"prompt_tokens": 3}}"#,
            ),
            Canned::json(200, r#"{"data": [{"embedding": []}]}"#),
        ]);
        let config = EmbeddingsConfig {
            base_url: server.url("/v1"),
            model: "mini".into(),
            api_key_env: None,
            timeout: Some(5.0),
            retries: Some(1),
            cache: false,
        };
        let embeddings = config.build(None).unwrap();
        let answer = embeddings.call(&request("e1")).unwrap();
        assert_eq!(answer.output, json!([0.5, -1, 2e-3]));
        assert_eq!(answer.attempts, 2, "the 503 was retried");
        let seen = server.requests();
        assert_eq!(seen[1].path, "/v1/embeddings");
        let body: Value = serde_json::from_str(&seen[1].body).unwrap();
        assert_eq!(body, json!({"model": "mini", "input": ["list all files"]}));
        let err = embeddings.call(&request("e2")).unwrap_err();
        assert!(err.to_string().contains("not a non-empty list"), "{err}");
    }
}
