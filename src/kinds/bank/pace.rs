//! Pacing: a minimum gap between calls to the system under test (1.25 s between semantic
//! ranking calls, or the API throttles), and progress with an estimated time to finish.

use std::time::{Duration, Instant};

/// Keeps at least `gap` between the end of one call and the start of the next.
#[derive(Debug)]
pub(crate) struct Pacer {
    gap: Duration,
    last_end: Option<Instant>,
}

impl Pacer {
    pub(crate) fn new(gap: Duration) -> Pacer {
        Pacer { gap, last_end: None }
    }

    /// Sleeps until the gap since the previous call has passed; returns how long it slept.
    pub(crate) fn wait(&mut self) -> Duration {
        let Some(end) = self.last_end else { return Duration::ZERO };
        let left = self.gap.saturating_sub(end.elapsed());
        if !left.is_zero() {
            std::thread::sleep(left);
        }
        left
    }

    /// Marks the end of a call.
    pub(crate) fn done(&mut self) {
        self.last_end = Some(Instant::now());
    }
}

/// How far a bank is, and when it should finish.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Progress {
    pub(crate) done: usize,
    pub(crate) total: usize,
    /// The test just finished.
    pub(crate) test_id: String,
    pub(crate) score: Option<u32>,
    /// Estimated time left: the mean time per test so far times the tests left.
    pub(crate) eta: Duration,
}

impl Progress {
    pub(crate) fn new(done: usize, total: usize, elapsed: Duration, test_id: &str, score: Option<u32>) -> Progress {
        let left = total.saturating_sub(done) as u32;
        let eta = if done == 0 { Duration::ZERO } else { elapsed / done as u32 * left };
        Progress { done, total, test_id: test_id.to_string(), score, eta }
    }

    /// `[3/20] V2-GR-003 90 · ETA 21s`.
    pub(crate) fn line(&self) -> String {
        let score = self.score.map_or_else(|| "error".to_string(), |s| s.to_string());
        format!("[{}/{}] {} {} \u{b7} ETA {}s", self.done, self.total, self.test_id, score, self.eta.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_is_mean_time_per_test_times_tests_left() {
        let p = Progress::new(2, 10, Duration::from_secs(5), "V2-1", Some(90));
        assert_eq!(p.eta, Duration::from_secs(20));
        assert_eq!(p.line(), "[2/10] V2-1 90 \u{b7} ETA 20s");
        assert_eq!(Progress::new(10, 10, Duration::from_secs(5), "V2-9", None).eta, Duration::ZERO);
    }

    #[test]
    fn the_first_call_does_not_wait_later_ones_do() {
        let mut pacer = Pacer::new(Duration::from_millis(80));
        assert_eq!(pacer.wait(), Duration::ZERO);
        pacer.done();
        let start = Instant::now();
        pacer.wait();
        assert!(start.elapsed() >= Duration::from_millis(80));
        // A call that took longer than the gap needs no wait after it.
        pacer.done();
        std::thread::sleep(Duration::from_millis(90));
        assert_eq!(pacer.wait(), Duration::ZERO);
    }
}
