//! The `openai` adapter: any OpenAI-compatible chat-completions server (hosted APIs, llama.cpp,
//! vLLM, Ollama). The prompt is the user message; the answer is the first choice's content;
//! `usage.prompt_tokens`/`completion_tokens` become the case's tokens in and out.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::SutRequest;
use super::answer::{self, Reply};
use super::config::SutConfigError;
use super::guard::{Backend, Failure};
use super::http::{Client, check_url};
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
        let mut headers = Vec::new();
        if let Some(var) = &config.api_key_env {
            let key =
                std::env::var(var).map_err(|_| SutConfigError::MissingEnv { key: "api-key-env", var: var.clone() })?;
            headers.push(("Authorization".to_string(), format!("Bearer {key}")));
        }
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

impl Backend for OpenAiSut {
    fn attempt(&self, request: &SutRequest, _timeout: Duration) -> Result<Reply, Failure> {
        let text = self.client.post_json(&self.url, &self.url, &self.headers, &self.body(request))?;
        let raw = answer::cap(&text);
        let malformed = |what: &str| Failure::Permanent {
            message: format!("{} answered a malformed completion: {what}", self.url),
            raw: Some(raw.clone()),
        };
        let json: Value = serde_json::from_str(&text).map_err(|e| malformed(&format!("not JSON ({e})")))?;
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
}
