//! Annotations: the most important failures as file/line markers, emitted as workflow commands
//! (`::error file=…::…`, 10 of each level per step) and as Checks API annotations.
//!
//! Paths are made relative to the repository root (`GITHUB_WORKSPACE`), with an optional prefix
//! added or stripped (`[github] path-prefix`), so markers land on the right file.

use std::collections::HashMap;

use crate::model::{CaseStatus, Run, Severity};
use crate::text::truncate_bytes;

/// GitHub shows at most this many workflow-command annotations per level and step.
pub const PER_LEVEL_LIMIT: usize = 10;

/// Lines of a stack trace kept in an annotation; the rest is in the reports.
const DETAIL_LINES: usize = 20;

/// Annotation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Notice,
}

impl Level {
    /// Workflow command name.
    pub fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }

    /// Checks API `annotation_level`.
    pub fn check_level(self) -> &'static str {
        match self {
            Level::Error => "failure",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// One annotation, independent of how it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub level: Level,
    /// Repository-relative, `/`-separated.
    pub path: Option<String>,
    pub line: Option<u32>,
    pub title: String,
    pub message: String,
}

// Path resolution is shared with the reports' code links, which must agree with annotations.
pub use crate::report::links::PathMapper;

/// Every annotation worth showing, most important first: critical failures, other failing cases,
/// suites that could not be measured and build errors, then flaky cases and warnings.
pub fn collect(run: &Run, mapper: &PathMapper) -> Vec<Annotation> {
    let mut ranked: Vec<(u8, Annotation)> = Vec::new();
    for suite in &run.suites {
        for case in &suite.cases {
            let level = match case.status {
                s if s.is_failure() => Level::Error,
                CaseStatus::Flaky => Level::Warning,
                _ => continue,
            };
            let rank = match (case.extra().critical || suite.critical, level) {
                (true, Level::Error) => 0,
                (false, Level::Error) if case.status == CaseStatus::Failed => 1,
                (false, Level::Error) => 2,
                _ => 5,
            };
            let mut message = case.message().map(str::to_string).unwrap_or_else(|| case.status.label().to_string());
            if let Some(details) = case.details().as_deref().map(str::trim).filter(|d| !d.is_empty()) {
                // Tools often repeat the message as the first line of the trace.
                let details: String = details.lines().take(DETAIL_LINES).collect::<Vec<_>>().join("\n");
                if details.starts_with(message.trim()) {
                    message = details;
                } else if !message.contains(&details) {
                    message = format!("{message}\n{details}");
                }
            }
            if case.status == CaseStatus::Flaky {
                message = format!(
                    "passed after {} retr{}: {message}",
                    case.extra().retries,
                    if case.extra().retries == 1 { "y" } else { "ies" }
                );
            }
            let critical = if case.extra().critical { "critical " } else { "" };
            ranked.push((
                rank,
                Annotation {
                    level,
                    path: case.file.as_deref().map(|f| mapper.map(suite, f)),
                    line: case.line,
                    title: truncate_bytes(
                        &format!("{}: {critical}{} {}", suite.name, case.status.label(), case.name),
                        250,
                    ),
                    message: truncate_bytes(&message, 4000),
                },
            ));
        }
        if let Some(error) = &suite.error {
            let mut message = error.message.clone();
            if let Some(hint) = &error.hint {
                message.push_str(&format!("\nhint: {hint}"));
            }
            ranked.push((
                if suite.critical { 0 } else { 3 },
                Annotation {
                    level: Level::Error,
                    path: None,
                    line: None,
                    title: truncate_bytes(&format!("{}: {}", suite.name, suite.status.label()), 250),
                    message: truncate_bytes(&message, 4000),
                },
            ));
        }
        for diagnostic in &suite.diagnostics {
            let (level, rank) = match diagnostic.severity {
                Severity::Error => (Level::Error, 3),
                Severity::Warning => (Level::Warning, 6),
                Severity::Notice => (Level::Notice, 7),
            };
            ranked.push((
                rank,
                Annotation {
                    level,
                    path: diagnostic.file.as_deref().map(|f| mapper.map(suite, f)),
                    line: diagnostic.line,
                    title: truncate_bytes(&format!("{}: {}", suite.name, diagnostic.source), 250),
                    message: truncate_bytes(&diagnostic.message, 4000),
                },
            ));
        }
    }
    for warning in &run.warnings {
        let annotation = Annotation {
            level: Level::Warning,
            path: None,
            line: None,
            title: "fcorr".into(),
            message: truncate_bytes(warning, 4000),
        };
        ranked.push((4, annotation));
    }
    // Stable: within a rank, the order of suites and cases is kept.
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.into_iter().map(|(_, a)| a).collect()
}

/// Escapes a workflow command's message; bidirectional controls become visible `[U+202E]`, so
/// an annotation shows a name in the order it is stored.
pub fn escape_data(text: &str) -> String {
    crate::text::neutralise_bidi(text).replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// One workflow command line.
pub fn command_line(a: &Annotation) -> String {
    let mut props = Vec::new();
    if let Some(path) = &a.path {
        props.push(format!("file={}", escape_property(path)));
        if let Some(line) = a.line {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!("title={}", escape_property(&a.title)));
    format!("::{} {}::{}", a.level.command(), props.join(","), escape_data(&a.message))
}

/// Workflow command lines within GitHub's per-step limits, and how many annotations were left
/// out. When some were, the last notice slot says so.
pub fn workflow_commands(annotations: &[Annotation]) -> (Vec<String>, usize) {
    let mut lines = Vec::new();
    let mut used: HashMap<&'static str, usize> = HashMap::new();
    let mut left_out = 0;
    for a in annotations {
        let limit = if a.level == Level::Notice { PER_LEVEL_LIMIT - 1 } else { PER_LEVEL_LIMIT };
        let n = used.entry(a.level.command()).or_insert(0);
        if *n < limit {
            *n += 1;
            lines.push(command_line(a));
        } else {
            left_out += 1;
        }
    }
    if left_out > 0 {
        lines.push(command_line(&Annotation {
            level: Level::Notice,
            path: None,
            line: None,
            title: "fcorr".into(),
            message: format!(
                "{left_out} more annotation(s) not shown (GitHub shows {PER_LEVEL_LIMIT} per level and step): see the job summary and results.json"
            ),
        }));
    }
    (lines, left_out)
}

/// Writes `text` (untrusted tool output) to stdout so the runner cannot mistake any of its lines
/// for a workflow command: `::stop-commands::<token>` … `::<token>::`.
pub fn echo_untrusted(out: &mut impl std::io::Write, text: &str) -> std::io::Result<()> {
    let token = super::files::random_token();
    writeln!(out, "::stop-commands::{token}")?;
    // Inside the outer fence this one is inert; what holds is that no line reads as a command.
    let text = crate::text::defuse_workflow_commands(text);
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "::{token}::")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Case, Suite, SuiteKind};

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(escape_data("50% a\r\nb"), "50%25 a%0D%0Ab");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(escape_data("t\u{2067}x"), "t[U+2067]x");
        assert_eq!(escape_property("t\u{202E}x"), "t[U+202E]x");
        let line = command_line(&Annotation {
            level: Level::Error,
            path: Some("src/a,b.py".into()),
            line: Some(3),
            title: "t: x".into(),
            message: "bad\nthing".into(),
        });
        assert_eq!(line, "::error file=src/a%2Cb.py,line=3,title=t%3A x::bad%0Athing");
    }

    #[test]
    fn limits_each_level_and_says_how_many_are_left_out() {
        let a = |level| Annotation { level, path: None, line: None, title: "t".into(), message: "m".into() };
        let mut all: Vec<Annotation> = (0..14).map(|_| a(Level::Error)).collect();
        all.extend((0..3).map(|_| a(Level::Warning)));
        let (lines, left_out) = workflow_commands(&all);
        assert_eq!(left_out, 4);
        assert_eq!(lines.iter().filter(|l| l.starts_with("::error ")).count(), 10);
        assert_eq!(lines.iter().filter(|l| l.starts_with("::warning ")).count(), 3);
        assert!(lines.last().unwrap().starts_with("::notice ") && lines.last().unwrap().contains("4 more"));
    }

    #[test]
    fn paths_are_relative_to_the_workspace_with_a_prefix() {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        suite.path = Some("pkg/./api".into());
        let mut mapper = PathMapper { base: "/ws/sub".into(), workspace: Some("/ws".into()), ..PathMapper::default() };
        assert_eq!(mapper.map(&suite, "tests/t.py"), "sub/pkg/api/tests/t.py");
        mapper.prefix = Some("-sub".into());
        assert_eq!(mapper.map(&suite, "tests/t.py"), "pkg/api/tests/t.py");
        mapper.prefix = Some("mono/".into());
        assert_eq!(mapper.map(&suite, "../x.py"), "mono/sub/pkg/x.py");
    }

    #[test]
    fn critical_failures_come_first() {
        let mut suite = Suite::new("s", "s", SuiteKind::Import);
        suite.cases.push(Case { name: "plain".into(), status: CaseStatus::Failed, ..Case::default() });
        suite.cases.push(Case {
            name: "crit".into(),
            status: CaseStatus::Failed,
            extra: crate::model::CaseExtra { critical: true, ..Default::default() }.packed(),
            ..Case::default()
        });
        suite.finalize_cases();
        let run = Run::assemble(vec![suite], time::OffsetDateTime::now_utc(), None, None);
        let list = collect(&run, &PathMapper::default());
        assert!(list[0].title.contains("crit"));
    }

    #[test]
    fn untrusted_output_is_fenced() {
        let mut out = Vec::new();
        echo_untrusted(&mut out, "::error::fake").unwrap();
        let text = String::from_utf8(out).unwrap();
        let token = text.lines().next().unwrap().strip_prefix("::stop-commands::").unwrap().to_string();
        assert!(text.ends_with(&format!("::{token}::\n")));
    }
}
