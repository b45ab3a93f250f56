//! `results.json`: the result model itself, the input of `fcorr report`, `compare` and baselines.

use super::{ReportEnv, Reporter};
use crate::model::Run;

/// The run as pretty-printed JSON.
pub struct ResultsJson;

impl Reporter for ResultsJson {
    fn name(&self) -> &'static str {
        "json"
    }

    fn file_name(&self) -> &'static str {
        "results.json"
    }

    fn render(&self, run: &Run, _env: &ReportEnv) -> Result<Vec<u8>, String> {
        let mut bytes = serde_json::to_vec_pretty(run).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
