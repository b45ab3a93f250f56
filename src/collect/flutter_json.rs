//! `flutter test --machine`: the events of Dart's JSON reporter protocol (read by
//! [`super::dart_json`]), written by flutter_tools. Chosen by name (`flutter-json`), or on sight
//! when the first lines mention Flutter; otherwise it reads as `dart-json`, the same way.

use std::io::BufRead;

use super::{ParseOptions, ParsedReport, ReportParser, dart_json};
use crate::errors::ParseError;

/// The format's name (`--format-in`, `report-format`, a phase's declared reports): the one
/// place it is written.
pub(crate) const NAME: &str = "flutter-json";

/// `flutter test --machine`.
pub struct FlutterJson;

impl ReportParser for FlutterJson {
    fn format(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["flutter", "flutter-machine"]
    }

    fn sniff(&self, head: &[u8]) -> bool {
        dart_json::starts_like_the_protocol(head)
            && (memchr::memmem::find(head, b"package:flutter").is_some()
                || memchr::memmem::find(head, b"EXCEPTION CAUGHT BY FLUTTER").is_some())
    }

    fn parse(&self, input: &mut dyn BufRead, options: &ParseOptions) -> Result<ParsedReport, ParseError> {
        dart_json::read(input, options, "flutter test")
            .map_err(|e| ParseError::new(self.format(), e.message).at_line(e.line))
    }
}
