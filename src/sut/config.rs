//! `[suite.sut]`: which adapter answers (`type = "command" | "http" | "openai"`), its settings,
//! and the call settings every adapter shares (timeout, retries, pacing, concurrency, cache,
//! prices). Eval, bank and benchmark runners embed [`SutConfig`] and call [`SutConfig::build`].

use std::path::PathBuf;
use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::Sut;
use super::cache::AnswerCache;
use super::command::{CommandConfig, CommandSut};
use super::guard::{CallPolicy, Guarded};
use super::http::{HttpConfig, HttpSut};
use super::openai::{OpenAiConfig, OpenAiSut};
use crate::execute::process::{self, LogSink};

/// A system under test as configured: the adapter and the shared call settings, side by side
/// in one TOML table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SutConfig {
    pub adapter: AdapterConfig,
    pub calls: CallsConfig,
}

/// The adapter and its own settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AdapterConfig {
    Command(CommandConfig),
    Http(HttpConfig),
    Openai(OpenAiConfig),
}

impl AdapterConfig {
    fn type_name(&self) -> &'static str {
        match self {
            AdapterConfig::Command(_) => "command",
            AdapterConfig::Http(_) => "http",
            AdapterConfig::Openai(_) => "openai",
        }
    }

    fn settings(&self) -> Result<Value, serde_json::Error> {
        match self {
            AdapterConfig::Command(c) => serde_json::to_value(c),
            AdapterConfig::Http(c) => serde_json::to_value(c),
            AdapterConfig::Openai(c) => serde_json::to_value(c),
        }
    }
}

/// Settings every adapter shares. Times are in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct CallsConfig {
    /// Per-call timeout (default 30).
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// Retries after the first attempt, on transient errors only (default 2).
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// First backoff delay, doubled on each retry (default 0.5).
    #[serde(default = "default_backoff")]
    pub backoff: f64,
    /// Longest `retry-after` worth waiting for (default 60); longer fails the call.
    #[serde(default = "default_max_retry_wait")]
    pub max_retry_wait: f64,
    /// Minimum gap between the starts of two calls, across all workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_gap: Option<f64>,
    /// At most this many call starts per second, across all workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_second: Option<f64>,
    /// Calls in flight at once (default: as many as the runner's workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// Keep answers keyed by (adapter settings, case input) and reuse them (default false).
    #[serde(default)]
    pub cache: bool,
    /// Where cached answers live (default `$FCORR_CACHE_DIR/sut-answers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_dir: Option<PathBuf>,
    /// Dollars per 1,000 input tokens, to estimate cost when the system does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_1k_in: Option<f64>,
    /// Dollars per 1,000 output tokens (default: `cost-per-1k-in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_1k_out: Option<f64>,
}

/// The [`CallsConfig`] keys, told apart from adapter keys when the table is split.
const CALL_KEYS: &[&str] = &[
    "timeout",
    "retries",
    "backoff",
    "max-retry-wait",
    "min-gap",
    "calls-per-second",
    "concurrency",
    "cache",
    "cache-dir",
    "cost-per-1k-in",
    "cost-per-1k-out",
];

fn default_timeout() -> f64 {
    30.0
}
fn default_retries() -> u32 {
    2
}
fn default_backoff() -> f64 {
    0.5
}
fn default_max_retry_wait() -> f64 {
    60.0
}

impl Default for CallsConfig {
    fn default() -> CallsConfig {
        // Deserializing an empty table applies exactly the documented defaults.
        serde_json::from_value(Value::Object(Map::new())).unwrap_or(CallsConfig {
            timeout: default_timeout(),
            retries: default_retries(),
            backoff: default_backoff(),
            max_retry_wait: default_max_retry_wait(),
            min_gap: None,
            calls_per_second: None,
            concurrency: None,
            cache: false,
            cache_dir: None,
            cost_per_1k_in: None,
            cost_per_1k_out: None,
        })
    }
}

/// What building a system needs from the run around it.
#[derive(Clone)]
pub(crate) struct SutContext {
    /// Directory of the configuration file: relative paths start here.
    pub base_dir: PathBuf,
    /// Default cache directory (`cache-dir` overrides it).
    pub cache_dir: PathBuf,
    /// `--no-cache`: neither read nor write cached answers.
    pub no_cache: bool,
    /// Where command output goes in full (the suite's log); default: discarded.
    pub log: Option<LogSink>,
}

impl SutContext {
    /// A context for a configuration in `base_dir`, caching under fcorr's cache directory.
    pub(crate) fn new(base_dir: impl Into<PathBuf>) -> SutContext {
        SutContext {
            base_dir: base_dir.into(),
            cache_dir: crate::execute::cache_dir().join("sut-answers"),
            no_cache: false,
            log: None,
        }
    }
}

/// A `[suite.sut]` table that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum SutConfigError {
    /// A setting is out of range or contradicts another.
    #[error("[suite.sut] {key}: {message}")]
    Invalid { key: &'static str, message: String },
    /// A secret the configuration names is not in the environment.
    #[error("[suite.sut] {key}: environment variable {var} is not set; export it before running fcorr")]
    MissingEnv { key: &'static str, var: String },
}

impl SutConfig {
    /// Checks the settings and builds the system, shared by the runner's workers.
    pub(crate) fn build(&self, ctx: &SutContext) -> Result<Box<dyn Sut>, SutConfigError> {
        let policy = self.calls.policy()?;
        let cache = (self.calls.cache && !ctx.no_cache).then(|| {
            AnswerCache::new(
                self.calls.cache_dir.as_ref().map_or_else(|| ctx.cache_dir.clone(), |d| ctx.base_dir.join(d)),
            )
        });
        let log = ctx.log.clone().unwrap_or_else(process::null_log);
        Ok(match &self.adapter {
            AdapterConfig::Command(c) => {
                if matches!(&c.command, super::command::CommandLine::Argv(argv) if argv.is_empty()) {
                    return Err(SutConfigError::Invalid { key: "command", message: "the list is empty".into() });
                }
                if let super::command::CommandLine::Shell(script) = &c.command
                    && let Some(placeholder) = super::command::quoted_placeholder(script)
                {
                    return Err(SutConfigError::Invalid {
                        key: "command",
                        message: format!(
                            "{placeholder} is inside quotes in `{script}`: fcorr quotes the value itself, so \
                             these quotes would end fcorr's and let the text run as shell code; write \
                             {placeholder} without quotes around it"
                        ),
                    });
                }
                Box::new(Guarded::new(CommandSut::new(c.clone(), &ctx.base_dir, log), policy, cache))
            }
            AdapterConfig::Http(c) => {
                let timeout = policy.timeout;
                Box::new(Guarded::new(HttpSut::new(c.clone(), timeout)?, policy, cache))
            }
            AdapterConfig::Openai(c) => {
                let timeout = policy.timeout;
                Box::new(Guarded::new(OpenAiSut::new(c.clone(), timeout)?, policy, cache))
            }
        })
    }
}

impl CallsConfig {
    fn policy(&self) -> Result<CallPolicy, SutConfigError> {
        let seconds = |key: &'static str, value: f64, zero_ok: bool| {
            if value.is_finite() && (value > 0.0 || (zero_ok && value == 0.0)) && value < 1e9 {
                Ok(Duration::from_secs_f64(value))
            } else {
                let message =
                    format!("{value} is not a {} number of seconds", if zero_ok { "non-negative" } else { "positive" });
                Err(SutConfigError::Invalid { key, message })
            }
        };
        let mut min_gap = match self.min_gap {
            Some(gap) => seconds("min-gap", gap, true)?,
            None => Duration::ZERO,
        };
        if let Some(rate) = self.calls_per_second {
            // N calls per second is one call start every 1/N seconds: the stricter gap wins.
            min_gap = min_gap.max(seconds("calls-per-second", 1.0 / rate, false).map_err(|_| {
                SutConfigError::Invalid { key: "calls-per-second", message: format!("{rate} is not a positive rate") }
            })?);
        }
        if self.concurrency == Some(0) {
            return Err(SutConfigError::Invalid { key: "concurrency", message: "must be at least 1".into() });
        }
        for (key, price) in [("cost-per-1k-in", self.cost_per_1k_in), ("cost-per-1k-out", self.cost_per_1k_out)] {
            if price.is_some_and(|p| !p.is_finite() || p < 0.0) {
                return Err(SutConfigError::Invalid { key, message: "must be a non-negative price".into() });
            }
        }
        Ok(CallPolicy {
            timeout: seconds("timeout", self.timeout, false)?,
            retries: self.retries,
            backoff: seconds("backoff", self.backoff, true)?,
            max_retry_wait: seconds("max-retry-wait", self.max_retry_wait, true)?,
            min_gap,
            concurrency: self.concurrency,
            cost_per_1k_in: self.cost_per_1k_in,
            cost_per_1k_out: self.cost_per_1k_out,
        })
    }
}

impl<'de> Deserialize<'de> for SutConfig {
    /// One flat table: `type` picks the adapter, [`CALL_KEYS`] go to the call settings, the
    /// rest to the adapter, each half rejecting keys it does not know.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SutConfig, D::Error> {
        let table = Map::<String, Value>::deserialize(deserializer)?;
        let mut adapter = Map::new();
        let mut calls = Map::new();
        let mut type_name = None;
        for (key, value) in table {
            if key == "type" {
                type_name = Some(value);
            } else if CALL_KEYS.contains(&key.as_str()) {
                calls.insert(key, value);
            } else {
                adapter.insert(key, value);
            }
        }
        let type_name = match type_name {
            Some(Value::String(name)) => name,
            Some(other) => return Err(D::Error::custom(format!("sut `type` must be a string, not {other}"))),
            None => return Err(D::Error::custom("sut needs `type = \"command\"`, `\"http\"` or `\"openai\"`")),
        };
        let context = |e: serde_json::Error| D::Error::custom(format!("sut (type = \"{type_name}\"): {e}"));
        let adapter = match type_name.as_str() {
            "command" => AdapterConfig::Command(serde_json::from_value(Value::Object(adapter)).map_err(context)?),
            "http" => AdapterConfig::Http(serde_json::from_value(Value::Object(adapter)).map_err(context)?),
            "openai" => AdapterConfig::Openai(serde_json::from_value(Value::Object(adapter)).map_err(context)?),
            other => {
                return Err(D::Error::custom(format!(
                    "unknown sut type `{other}`; expected \"command\", \"http\" or \"openai\""
                )));
            }
        };
        let calls = serde_json::from_value(Value::Object(calls)).map_err(context)?;
        Ok(SutConfig { adapter, calls })
    }
}

impl Serialize for SutConfig {
    /// The same flat table the configuration file holds.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let mut table = Map::new();
        table.insert("type".into(), Value::String(self.adapter.type_name().into()));
        for part in [self.adapter.settings(), serde_json::to_value(&self.calls)] {
            if let Value::Object(map) = part.map_err(S::Error::custom)? {
                table.extend(map);
            }
        }
        table.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::SutRequest;
    use serde_json::json;

    fn parse(text: &str) -> Result<SutConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn a_flat_table_splits_into_adapter_and_call_settings() {
        let config =
            parse("type = \"command\"\ncommand = \"./sut.sh {prompt}\"\ntimeout = 5\nmin-gap = 0.1\n").unwrap();
        assert!(matches!(config.adapter, AdapterConfig::Command(_)));
        assert_eq!(config.calls.timeout, 5.0);
        assert_eq!(config.calls.min_gap, Some(0.1));
        assert_eq!(config.calls.retries, 2);
        // Serializing gives the same flat table back.
        let again: SutConfig = serde_json::from_value(serde_json::to_value(&config).unwrap()).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn unknown_keys_and_types_are_named() {
        let err = parse("type = \"command\"\ncommand = \"x\"\ncomand = \"y\"\n").unwrap_err().to_string();
        assert!(err.contains("unknown field `comand`"), "{err}");
        let err = parse("type = \"grpc\"\n").unwrap_err().to_string();
        assert!(err.contains("unknown sut type `grpc`"), "{err}");
        let err = parse("command = \"x\"\n").unwrap_err().to_string();
        assert!(err.contains("needs `type"), "{err}");
    }

    #[test]
    fn bad_numbers_are_configuration_errors() {
        let ctx = SutContext::new(std::env::temp_dir());
        let build = |text: &str| parse(text).unwrap().build(&ctx).err().map(|e| e.to_string());
        assert!(build("type = \"command\"\ncommand = \"x\"\ntimeout = 0\n").unwrap().contains("timeout"));
        assert!(
            build("type = \"command\"\ncommand = \"x\"\ncalls-per-second = -1\n").unwrap().contains("calls-per-second")
        );
        assert!(build("type = \"command\"\ncommand = \"x\"\nconcurrency = 0\n").unwrap().contains("concurrency"));
        assert!(build("type = \"command\"\ncommand = []\n").unwrap().contains("empty"));
        assert_eq!(build("type = \"command\"\ncommand = \"x\"\n"), None);
    }

    #[test]
    fn calls_per_second_becomes_the_stricter_gap() {
        let config = parse("type = \"command\"\ncommand = \"x\"\nmin-gap = 0.1\ncalls-per-second = 4\n").unwrap();
        assert_eq!(config.calls.policy().unwrap().min_gap, Duration::from_millis(250));
    }

    #[test]
    fn the_cache_answers_a_second_run_and_no_cache_bypasses_it() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("calls");
        let text = format!(
            "type = \"command\"\ncommand = \"echo x >> {} && echo answer-{{id}}\"\ncache = true\ncache-dir = \"answers\"\n",
            counter.display()
        );
        let config = parse(&text).unwrap();
        let mut ctx = SutContext::new(dir.path());
        let request = SutRequest { id: "c1".into(), prompt: "p".into(), case: json!({}) };
        let calls = || std::fs::read_to_string(&counter).map(|t| t.lines().count()).unwrap_or(0);

        let first = config.build(&ctx).unwrap().call(&request).unwrap();
        assert!(!first.cached);
        // A second run builds the system again, as a new fcorr process would.
        let second = config.build(&ctx).unwrap().call(&request).unwrap();
        assert!(second.cached);
        assert_eq!(second.output, first.output);
        assert_eq!(calls(), 1);

        ctx.no_cache = true;
        let third = config.build(&ctx).unwrap().call(&request).unwrap();
        assert!(!third.cached);
        assert_eq!(calls(), 2);
    }
}
