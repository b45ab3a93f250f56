//! What every adapter gets for free: the answer cache, bounded concurrency, a rate limit shared
//! by all workers, and retries with exponential backoff on transient failures only.
//!
//! An adapter implements [`Backend`] (one attempt, classified); [`Guarded`] wraps it into a [`Sut`].

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::answer::Reply;
use super::cache::AnswerCache;
use super::{Sut, SutAnswer, SutError, SutRequest};
use crate::execute::process;

/// One way of reaching a system: makes a single attempt and says how it failed.
pub(crate) trait Backend: Send + Sync {
    /// One call, no retries; must give up after `timeout`.
    fn attempt(&self, request: &SutRequest, timeout: Duration) -> Result<Reply, Failure>;
    /// What decides the answer (the adapter's settings, no secrets): part of the cache key.
    fn identity(&self) -> Value;
}

/// Why one attempt failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// Worth retrying: connection refused, 429, 5xx. `retry_after` is the server's request.
    Transient { message: String, raw: Option<String>, retry_after: Option<Duration> },
    /// Retrying would give the same answer: bad status, malformed answer, non-zero exit.
    Permanent { message: String, raw: Option<String> },
    /// The attempt outlived its timeout (and, for a command, its process group was killed).
    Timeout,
    /// The user pressed Ctrl-C.
    Cancelled,
}

/// Retry, pacing and concurrency settings of one system.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallPolicy {
    pub timeout: Duration,
    /// Retries after the first attempt, transient failures only.
    pub retries: u32,
    /// First backoff delay; doubled on each retry.
    pub backoff: Duration,
    /// A `retry-after` longer than this is not waited for: the call fails.
    pub max_retry_wait: Duration,
    /// Minimum time between the starts of two calls, across all workers.
    pub min_gap: Duration,
    /// Calls in flight at once; `None` leaves it to the runner's workers.
    pub concurrency: Option<usize>,
    /// Dollars per 1,000 input and output tokens, when known.
    pub cost_per_1k_in: Option<f64>,
    pub cost_per_1k_out: Option<f64>,
}

impl Default for CallPolicy {
    fn default() -> CallPolicy {
        CallPolicy {
            timeout: Duration::from_secs(30),
            retries: 2,
            backoff: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(60),
            min_gap: Duration::ZERO,
            concurrency: None,
            cost_per_1k_in: None,
            cost_per_1k_out: None,
        }
    }
}

/// A backend with the cache, limits and retries around it.
pub(crate) struct Guarded<B> {
    backend: B,
    policy: CallPolicy,
    cache: Option<AnswerCache>,
    pacer: Pacer,
    slots: Option<Slots>,
}

impl<B: Backend> Guarded<B> {
    pub(crate) fn new(backend: B, policy: CallPolicy, cache: Option<AnswerCache>) -> Guarded<B> {
        let slots = policy.concurrency.map(Slots::new);
        Guarded { backend, pacer: Pacer::new(policy.min_gap), policy, cache, slots }
    }

    fn answer(&self, request: &SutRequest) -> Result<SutAnswer, SutError> {
        let _slot = self.slots.as_ref().map(Slots::acquire);
        let mut attempt = 0;
        loop {
            attempt += 1;
            if process::is_cancelled() {
                return Err(SutError::Cancelled);
            }
            self.pacer.wait()?;
            let started = Instant::now();
            let failure = match self.backend.attempt(request, self.policy.timeout) {
                Ok(reply) => return Ok(self.finish(reply, started.elapsed(), attempt)),
                Err(failure) => failure,
            };
            match failure {
                Failure::Timeout => return Err(SutError::Timeout { after: self.policy.timeout }),
                Failure::Cancelled => return Err(SutError::Cancelled),
                Failure::Permanent { message, raw } => return Err(SutError::Backend { message, raw }),
                Failure::Transient { message, raw, retry_after } => {
                    if attempt > self.policy.retries {
                        let message = format!("{message} (gave up after {attempt} attempts)");
                        return Err(SutError::Backend { message, raw });
                    }
                    let delay = match retry_after {
                        Some(wait) if wait > self.policy.max_retry_wait => {
                            let message = format!(
                                "{message}; the server asked to retry after {}s, more than max-retry-wait ({}s)",
                                wait.as_secs_f64(),
                                self.policy.max_retry_wait.as_secs_f64()
                            );
                            return Err(SutError::Backend { message, raw });
                        }
                        Some(wait) => {
                            // A 429 speaks for the server, not for this worker: hold every worker.
                            self.pacer.hold_until(Instant::now() + wait);
                            wait
                        }
                        None => backoff(self.policy.backoff, attempt, &request.id),
                    };
                    sleep_cancellable(delay)?;
                }
            }
        }
    }

    fn finish(&self, mut reply: Reply, duration: Duration, attempts: u32) -> SutAnswer {
        if let Some(usage) = reply.usage.as_mut()
            && usage.cost_usd.is_none()
            && (self.policy.cost_per_1k_in.is_some() || self.policy.cost_per_1k_out.is_some())
        {
            let (tokens_in, tokens_out) = match (usage.tokens_in, usage.tokens_out) {
                (None, None) => (usage.tokens, 0),
                (i, o) => (i.unwrap_or(0), o.unwrap_or(0)),
            };
            let price_in = self.policy.cost_per_1k_in.unwrap_or(0.0);
            let price_out = self.policy.cost_per_1k_out.or(self.policy.cost_per_1k_in).unwrap_or(0.0);
            usage.cost_usd = Some(tokens_in as f64 / 1000.0 * price_in + tokens_out as f64 / 1000.0 * price_out);
        }
        SutAnswer { output: reply.output, raw: reply.raw, usage: reply.usage, duration, attempts, cached: false }
    }
}

impl<B: Backend> Sut for Guarded<B> {
    fn call(&self, request: &SutRequest) -> Result<SutAnswer, SutError> {
        self.call_attempt(request, 1)
    }

    fn call_attempt(&self, request: &SutRequest, attempt: u32) -> Result<SutAnswer, SutError> {
        let key = self.cache.as_ref().map(|cache| cache.key(&self.backend.identity(), request, attempt));
        if let (Some(cache), Some(key)) = (&self.cache, &key)
            && let Some(reply) = cache.get(key)
        {
            // No call was made: usage and cost count real calls only (the entry keeps the usage
            // of the call that produced it).
            return Ok(SutAnswer {
                output: reply.output,
                raw: reply.raw,
                usage: None,
                duration: Duration::ZERO,
                attempts: 0,
                cached: true,
            }
            .redacted());
        }
        // Secrets leave here, before the answer is cached, judged or reported.
        let answer = self.answer(request).map(SutAnswer::redacted).map_err(SutError::redacted)?;
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            cache.put(
                key,
                &Reply { output: answer.output.clone(), raw: answer.raw.clone(), usage: answer.usage.clone() },
            );
        }
        Ok(answer)
    }
}

/// `base × 2^(attempt-1)`, plus up to 25% spread taken from the case id so workers retrying at
/// the same moment do not all come back at the same moment.
fn backoff(base: Duration, attempt: u32, id: &str) -> Duration {
    let exp = base.saturating_mul(1u32 << (attempt - 1).min(16));
    let spread = id.bytes().fold(attempt as u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)) % 256;
    exp + exp.mul_f64(spread as f64 / 1024.0)
}

/// Sleeps, waking early (with `Cancelled`) when the user presses Ctrl-C.
fn sleep_cancellable(delay: Duration) -> Result<(), SutError> {
    let deadline = Instant::now() + delay;
    loop {
        if process::is_cancelled() {
            return Err(SutError::Cancelled);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded data are plain numbers and instants; a panic elsewhere leaves them usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Hands out call start times at least `gap` apart, across threads.
struct Pacer {
    gap: Duration,
    next: Mutex<Option<Instant>>,
}

impl Pacer {
    fn new(gap: Duration) -> Pacer {
        Pacer { gap, next: Mutex::new(None) }
    }

    /// Reserves the next start time and sleeps until it.
    fn wait(&self) -> Result<(), SutError> {
        let start = {
            let mut next = lock(&self.next);
            let now = Instant::now();
            let start = next.map_or(now, |n| n.max(now));
            *next = Some(start + self.gap);
            start
        };
        sleep_cancellable(start.saturating_duration_since(Instant::now()))
    }

    /// No call starts before `until`.
    fn hold_until(&self, until: Instant) {
        let mut next = lock(&self.next);
        *next = Some(next.map_or(until, |n| n.max(until)));
    }
}

/// A counting semaphore: at most `n` calls in flight.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

struct SlotGuard<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Slots {
        Slots { free: Mutex::new(n.max(1)), freed: Condvar::new() }
    }

    fn acquire(&self) -> SlotGuard<'_> {
        let mut free = lock(&self.free);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *free -= 1;
        SlotGuard(self)
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *lock(&self.0.free) += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A backend that fails with the scripted failures, then answers; records start times.
    struct Script {
        failures: Mutex<Vec<Failure>>,
        starts: Mutex<Vec<Instant>>,
        in_flight: AtomicUsize,
        max_in_flight: AtomicUsize,
        hold: Duration,
    }

    impl Script {
        fn new(failures: Vec<Failure>) -> Script {
            Script {
                failures: Mutex::new(failures),
                starts: Mutex::new(Vec::new()),
                in_flight: AtomicUsize::new(0),
                max_in_flight: AtomicUsize::new(0),
                hold: Duration::ZERO,
            }
        }
    }

    impl Backend for Arc<Script> {
        fn attempt(&self, _: &SutRequest, _: Duration) -> Result<Reply, Failure> {
            lock(&self.starts).push(Instant::now());
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(self.hold);
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let mut failures = lock(&self.failures);
            if failures.is_empty() {
                Ok(Reply { output: Value::String("ok".into()), raw: "ok".into(), usage: None })
            } else {
                Err(failures.remove(0))
            }
        }
        fn identity(&self) -> Value {
            Value::Null
        }
    }

    fn request(id: &str) -> SutRequest {
        SutRequest { id: id.into(), prompt: "p".into(), case: Value::Null }
    }

    fn transient() -> Failure {
        Failure::Transient { message: "HTTP 503".into(), raw: None, retry_after: None }
    }

    fn fast() -> CallPolicy {
        CallPolicy { backoff: Duration::from_millis(10), ..CallPolicy::default() }
    }

    #[test]
    fn transient_failures_are_retried_then_answered() {
        let script = Arc::new(Script::new(vec![transient(), transient()]));
        let sut = Guarded::new(script.clone(), fast(), None);
        let answer = sut.call(&request("a")).unwrap();
        assert_eq!(answer.attempts, 3);
        let starts = lock(&script.starts).clone();
        // Exponential: the second wait is at least twice the base.
        assert!(starts[2] - starts[1] >= Duration::from_millis(20), "{:?}", starts[2] - starts[1]);
    }

    #[test]
    fn each_attempt_of_a_repeated_case_is_its_own_call_and_cache_entry() {
        let dir = tempfile::tempdir().unwrap();
        let script = Arc::new(Script::new(vec![]));
        let sut = Guarded::new(script.clone(), fast(), Some(AnswerCache::new(dir.path().to_path_buf())));
        let first = sut.call_attempt(&request("a"), 1).unwrap();
        let second = sut.call_attempt(&request("a"), 2).unwrap();
        assert!(!first.cached && !second.cached);
        assert_eq!(lock(&script.starts).len(), 2, "attempt 2 is a real call, not attempt 1's answer");
        // Asked again (a later run): both from the cache, nothing called.
        assert!(sut.call_attempt(&request("a"), 1).unwrap().cached);
        assert!(sut.call(&request("a")).unwrap().cached, "`call` is attempt 1");
        assert!(sut.call_attempt(&request("a"), 2).unwrap().cached);
        assert_eq!(lock(&script.starts).len(), 2);
    }

    #[test]
    fn retries_stop_at_the_limit_and_say_so() {
        let script = Arc::new(Script::new(vec![transient(), transient(), transient()]));
        let sut = Guarded::new(script.clone(), CallPolicy { retries: 1, ..fast() }, None);
        let err = sut.call(&request("a")).unwrap_err();
        assert!(matches!(&err, SutError::Backend { message, .. } if message.contains("after 2 attempts")), "{err:?}");
        assert_eq!(lock(&script.starts).len(), 2);
    }

    #[test]
    fn permanent_failures_and_timeouts_are_not_retried() {
        let permanent = Failure::Permanent { message: "HTTP 400".into(), raw: Some("bad".into()) };
        let script = Arc::new(Script::new(vec![permanent]));
        let err = Guarded::new(script.clone(), fast(), None).call(&request("a")).unwrap_err();
        assert_eq!(err, SutError::Backend { message: "HTTP 400".into(), raw: Some("bad".into()) });
        assert_eq!(lock(&script.starts).len(), 1);

        let script = Arc::new(Script::new(vec![Failure::Timeout]));
        let err = Guarded::new(script.clone(), fast(), None).call(&request("a")).unwrap_err();
        assert!(matches!(err, SutError::Timeout { .. }));
        assert_eq!(lock(&script.starts).len(), 1);
    }

    #[test]
    fn a_retry_after_beyond_the_maximum_fails_at_once() {
        let failure =
            Failure::Transient { message: "HTTP 429".into(), raw: None, retry_after: Some(Duration::from_secs(3600)) };
        let script = Arc::new(Script::new(vec![failure]));
        let started = Instant::now();
        let err = Guarded::new(script, fast(), None).call(&request("a")).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(err.to_string().contains("max-retry-wait"), "{err}");
    }

    #[test]
    fn concurrency_is_bounded_across_threads() {
        let mut script = Script::new(Vec::new());
        script.hold = Duration::from_millis(30);
        let script = Arc::new(script);
        let sut = Arc::new(Guarded::new(script.clone(), CallPolicy { concurrency: Some(2), ..fast() }, None));
        let workers: Vec<_> = (0..6)
            .map(|i| {
                let sut = sut.clone();
                std::thread::spawn(move || sut.call(&request(&i.to_string())).unwrap())
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert_eq!(script.max_in_flight.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn backoff_doubles_with_bounded_spread() {
        let base = Duration::from_millis(100);
        for attempt in 1..5 {
            let d = backoff(base, attempt, "case-7");
            let exp = base * (1 << (attempt - 1));
            assert!(d >= exp && d <= exp.mul_f64(1.25), "{attempt}: {d:?}");
        }
    }
}
