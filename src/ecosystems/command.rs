//! The generic `command` runner: install/build/test commands and report files the user configures.
//!
//! It never detects anything on its own; it is chosen by `runner = "command"` or by giving a
//! suite a `commands.test` without a runner. The commands come from the config overrides.

use super::{Candidate, Ecosystem, PhasePlan, ProjectContext, ProjectFiles, ProjectPlanError};
use crate::model::Detection;

/// User-configured commands.
pub(crate) struct CommandRunner;

impl Ecosystem for CommandRunner {
    fn name(&self) -> &'static str {
        "command"
    }

    fn detect(&self, _files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
        // Only reached when forced: detection of other ecosystems skips this runner otherwise.
        Some(Candidate {
            detection: Detection {
                ecosystem: "command".into(),
                language: "any".into(),
                framework: framework.unwrap_or("command").into(),
                package_manager: None,
                confidence: 1.0,
                markers: vec!["fcorr.toml: commands".into()],
            },
            problem: None,
        })
    }

    fn plan(&self, _ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        // The configured `commands.*` replace this empty plan phase by phase.
        Ok(Vec::new())
    }
}
