//! Typed events the executor emits while a run is under way.
//!
//! Consumers (the terminal progress display, plain CI lines, tests) implement [`EventSink`];
//! the executor never prints anything itself.

use crate::model::{Detection, Phase, PhaseKind, Suite};

/// Something that happened during a run.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run starts with this many suites.
    RunStarted {
        suites: usize,
        jobs: usize,
    },
    SuiteStarted {
        suite_id: String,
        name: String,
    },
    Detected {
        suite_id: String,
        detection: Detection,
    },
    PhaseStarted {
        suite_id: String,
        phase: PhaseKind,
        command: String,
    },
    PhaseFinished {
        suite_id: String,
        phase: Phase,
    },
    /// The suite is fully collected and scored.
    SuiteFinished {
        suite: Box<Suite>,
    },
    /// Something worth telling the user that is not a suite result.
    Warning {
        suite_id: Option<String>,
        message: String,
    },
}

/// Receives events; called from worker threads.
pub trait EventSink: Send + Sync {
    /// Handles one event.
    fn emit(&self, event: Event);
}

/// Discards every event.
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: Event) {}
}
