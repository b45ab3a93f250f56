//! `results.json`: the result model itself, the input of `fcorr report`, `compare` and baselines.

use std::io::Write;

use super::{ReportEnv, Reporter};
use crate::errors::RenderError;
use crate::model::Run;

/// The run as pretty-printed JSON.
pub(crate) struct ResultsJson;

impl Reporter for ResultsJson {
    fn format(&self) -> super::Format {
        super::Format::Json
    }

    fn file_name(&self) -> &'static str {
        "results.json"
    }

    fn queue_rank(&self) -> u8 {
        2
    }

    fn write(&self, run: &Run, _env: &ReportEnv, out: &mut dyn Write) -> Result<(), RenderError> {
        super::buffered(out, |w| {
            super::pretty::to_writer(&mut *w, run)?;
            w.write_all(b"\n")
        })
        .map_err(|source| RenderError::Format { format: "results JSON", source })
    }
}
