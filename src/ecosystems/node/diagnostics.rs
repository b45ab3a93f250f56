//! What a failed node install or build says, as fcorr reports it: the `engines` versions the
//! package manager refused, and tsc's `file(line,col): error TSxxxx` lines.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use crate::collect::relativize;
use crate::model::{Diagnostic, Severity};

/// package.json's `engines` refused by the package manager: npm (`engine-strict`) prints
/// `notsup Required: {"node":">=22"}` / `notsup Actual: {"node":"v20.20.2",...}`, pnpm
/// (`engine-strict`) `Your Node version is incompatible...` / `Expected version: >=22` / `Got:
/// v20.20.2`, yarn 1 `The engine "node" is incompatible with this module. Expected version
/// ">=22". Got "20.20.2"`.
pub(super) fn engines_rejection(output: &str) -> Option<String> {
    let say = |tool: &str, required: &str, found: &str| {
        format!("the project requires {tool} {required} (package.json `engines`), found {tool} {found}")
    };
    let after = |line: &str, marker: &str| line.find(marker).map(|i| line[i + marker.len()..].trim().to_string());
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        // npm: one entry per engine the project names.
        if let Some(required) = after(line, "notsup Required:") {
            let actual = lines[i + 1..].iter().find_map(|l| after(l, "notsup Actual:")).unwrap_or_default();
            let required: serde_json::Map<String, Value> = serde_json::from_str(&required).ok()?;
            let actual: serde_json::Map<String, Value> = serde_json::from_str(&actual).unwrap_or_default();
            let parts: Vec<String> = required
                .iter()
                .map(|(tool, range)| {
                    let found = actual.get(tool).and_then(Value::as_str).unwrap_or("none");
                    say(tool, range.as_str().unwrap_or("?"), found)
                })
                .collect();
            return Some(parts.join("; "));
        }
        // pnpm
        if let Some(rest) = after(line, "Your ")
            && let Some((tool, _)) = rest.split_once(" version is incompatible with ")
        {
            let expected = lines[i + 1..].iter().find_map(|l| l.strip_prefix("Expected version:"))?;
            let got = lines[i + 1..].iter().find_map(|l| l.strip_prefix("Got:")).unwrap_or("unknown");
            return Some(say(tool, expected.trim(), got.trim()));
        }
        // yarn 1
        if let Some(rest) = after(line, "The engine \"")
            && let Some((tool, rest)) = rest.split_once('"')
            && rest.contains("is incompatible")
        {
            let quoted: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
            if let [expected, got, ..] = quoted.as_slice() {
                return Some(say(tool, expected, got));
            }
        }
    }
    None
}

/// `file(line,col): error TSxxxx: message` lines from tsc.
pub(super) fn tsc_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        // The pattern is a literal; it compiles.
        regex::Regex::new(r"(?m)^\s*(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.+?)\s*$").expect("valid regex")
    });
    pattern
        .captures_iter(output)
        .take(50)
        .map(|c| Diagnostic {
            severity: if &c[4] == "warning" { Severity::Warning } else { Severity::Error },
            source: "build".into(),
            message: format!("{}: {}", &c[5], &c[6]),
            file: Some(relativize(&c[1], Some(root))),
            line: c[2].parse().ok(),
            column: c[3].parse().ok(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_rejections_of_npm_pnpm_and_yarn_name_both_versions() {
        // Real outputs of npm 11 and pnpm 9 (engine-strict) and yarn 1.22 for engines.node ">=99".
        let npm = "npm error code EBADENGINE\nnpm error notsup Not compatible with your version of node/npm: eng@1.0.0\n\
                   npm error notsup Required: {\"node\":\">=99\"}\n\
                   npm error notsup Actual:   {\"node\":\"v20.20.2\",\"npm\":\"11.19.1\"}\n";
        let pnpm = " ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js version)\n\n\
                    Your Node version is incompatible with \"/tmp/eng\".\n\nExpected version: >=99\nGot: v20.20.2\n";
        let yarn = "error eng@1.0.0: The engine \"node\" is incompatible with this module. Expected version \">=99\". \
                    Got \"20.20.2\"\nerror Found incompatible module.\n";
        let found: Vec<Option<String>> = [npm, pnpm, yarn].into_iter().map(engines_rejection).collect();
        assert_eq!(
            found,
            [
                Some("the project requires node >=99 (package.json `engines`), found node v20.20.2".to_string()),
                Some("the project requires Node >=99 (package.json `engines`), found Node v20.20.2".to_string()),
                Some("the project requires node >=99 (package.json `engines`), found node 20.20.2".to_string()),
            ]
        );
        assert_eq!(engines_rejection("npm error code ERESOLVE\n"), None);
    }

    #[test]
    fn tsc_errors_become_diagnostics_with_relative_paths() {
        let out = "\n> build\n> tsc\n\nsrc/price.ts(8,9): error TS2322: Type 'number' is not assignable to type 'string'.\n\
                   /p/src/a.ts(1,2): error TS1005: ';' expected.\n";
        let d = tsc_diagnostics(out, Path::new("/p"));
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].file.as_deref(), d[0].line, d[0].column), (Some("src/price.ts"), Some(8), Some(9)));
        assert!(d[0].message.starts_with("TS2322: Type 'number'"), "{}", d[0].message);
        assert_eq!(d[1].file.as_deref(), Some("src/a.ts"));
    }
}
