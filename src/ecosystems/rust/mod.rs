//! Rust (cargo) projects: `cargo fetch`, then `cargo test --workspace --no-fail-fast` (doc-tests
//! included) read as libtest text, whose compile step is the build gate: cargo compiles every
//! target before it runs any test, so a compile error means no test ran and the suite is
//! `build-failed` (`build_failure_in_test`), never a failed test. With cargo-nextest (when the
//! project configures it with a JUnit path and `cargo-nextest` is installed) the gate is its own
//! `cargo build --workspace --tests`, then nextest's JUnit report plus `cargo test --doc` for the
//! doc-tests nextest does not run. At a workspace root the whole workspace is tested, as CI does;
//! a member run as a suite of its own tests that package only (no `--workspace`). Packages and
//! test targets in the tree that cargo does not test are named as left out. libtest cases are
//! placed in their member crates here (`workspace`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use super::{Candidate, Ecosystem, Members, PhasePlan, ProjectContext, ProjectFiles, ProjectPlanError};
use crate::collect::{ParsedReport, ReportSpec, relativize};
use crate::execute::process::{CommandSpec, find_on_path};
use crate::model::{Detection, Diagnostic, LeftOut, PhaseKind, Severity};

/// cargo projects.
pub(crate) struct Rust;

/// Why the build phase has no command of its own.
const BUILD_IN_TEST: &str = "checked by `cargo test`: it compiles every target, tests included, before any test \
                             runs; a compile error there fails the build";

mod workspace;

const NEXTEST_CONFIG: &str = ".config/nextest.toml";

impl Ecosystem for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn frameworks(&self) -> &'static [&'static str] {
        &["cargo test", "cargo nextest", "nextest"]
    }

    fn detect(&self, files: &ProjectFiles, framework: Option<&str>) -> Option<Candidate> {
        if !files.has("Cargo.toml") {
            return None;
        }
        let mut markers = vec!["Cargo.toml".to_string()];
        let problem = files.read("Cargo.toml").and_then(|text| toml_problem(&text, &files.root.join("Cargo.toml")));
        if files.has("Cargo.lock") {
            markers.push("Cargo.lock".into());
        }
        let integration = files.files.iter().filter(|f| f.starts_with("tests/") && f.ends_with(".rs")).count();
        if integration > 0 {
            markers.push(format!("{integration} integration test file(s) in tests/"));
        }
        let nextest = nextest_choice(files);
        let framework = match (framework, &nextest) {
            (Some(f), _) => f.to_string(),
            (None, NextestChoice::Use { .. }) => "cargo nextest".into(),
            _ => "cargo test".into(),
        };
        match &nextest {
            NextestChoice::NotConfigured => {}
            NextestChoice::NotInstalled => {
                markers.push(format!("{NEXTEST_CONFIG} (cargo-nextest is not installed: using cargo test)"))
            }
            NextestChoice::NoJunit => markers.push(format!(
                "{NEXTEST_CONFIG} (no profile sets junit.path, so nextest has no report: using cargo test)"
            )),
            NextestChoice::Use { profile, .. } => {
                markers.push(format!("{NEXTEST_CONFIG} (profile `{profile}` with JUnit)"))
            }
        }
        Some(Candidate {
            detection: Detection {
                ecosystem: "rust".into(),
                language: "Rust".into(),
                framework,
                package_manager: Some("cargo".into()),
                confidence: 0.95,
                markers,
            },
            problem,
        })
    }

    fn plan(&self, ctx: &ProjectContext<'_>) -> Result<Vec<PhasePlan>, ProjectPlanError> {
        let root = ctx.root;
        let no_color = |mut spec: CommandSpec| {
            spec.env.push(("CARGO_TERM_COLOR".into(), "never".into()));
            spec
        };
        let install = if !ctx.install {
            PhasePlan::skipped(PhaseKind::Install, "--no-install")
        } else if let Some(reason) =
            ctx.files.read("Cargo.lock").and_then(|lock| nothing_to_fetch(&lock, &cargo_home()))
        {
            PhasePlan::skipped(PhaseKind::Install, reason)
        } else {
            PhasePlan::run(PhaseKind::Install, vec![no_color(CommandSpec::new("cargo", &["fetch"], root))])
        };
        // `--workspace` at a workspace root: every member, not only the root package (or the
        // default members). Elsewhere (a member as its own suite) no flag: cargo tests the package
        // in the current directory, where `--workspace` would test the whole workspace above it.
        let whole = workspace::tests_workspace(ctx.files);
        // `--tests` compiles the test harnesses too: a test-only compile error fails the build gate.
        let build_gate = no_color(CommandSpec::new(
            "cargo",
            &scoped(whole, &["build"], &["--tests", "--message-format=json-diagnostic-short"]),
            root,
        ));
        let use_nextest = ctx.detection.framework == "cargo nextest" || ctx.detection.framework == "nextest";
        let (build, test) = match (use_nextest, nextest_choice(ctx.files)) {
            (true, NextestChoice::Use { profile, report }) => {
                // nextest does not run doc-tests; `cargo test --doc` does, first, so the nextest
                // command stays the last one (retries narrow it).
                let mut doc = no_color(CommandSpec::shell(
                    &format!(
                        "exec cargo {} --doc --no-fail-fast --color never 2>&1",
                        scoped(whole, &["test"], &[]).join(" ")
                    ),
                    root,
                ));
                let doc_report = ctx.work_dir.join("cargo-test-doc.txt");
                doc.stdout_file = Some(doc_report.clone());
                let spec = no_color(CommandSpec::new(
                    "cargo",
                    &scoped(whole, &["nextest", "run"], &["--no-fail-fast", "--profile", &profile]),
                    root,
                ));
                let report = root.join(report);
                // A report left by an earlier run must not be read as this run's.
                if !ctx.dry_run {
                    let _ = std::fs::remove_file(&report);
                }
                let test = PhasePlan::run(PhaseKind::Test, vec![doc, spec]).with_reports(vec![
                    ReportSpec::file(&doc_report, crate::collect::libtest::NAME),
                    ReportSpec::file(&report, crate::collect::junit::NAME),
                ]);
                (PhasePlan::run(PhaseKind::Build, vec![build_gate]), test)
            }
            _ => {
                // cargo prints `Running <target>` on stderr and results on stdout; merged, the
                // parser knows which binary each result came from. Without --no-fail-fast cargo
                // stops after the first failing binary and the rest never run. Compiler messages
                // in the short format: one `file:line:col: error[E…]: …` line each.
                let mut spec = no_color(CommandSpec::shell(
                    &format!(
                        "exec cargo {} --no-fail-fast --color never --message-format short 2>&1",
                        scoped(whole, &["test"], &[]).join(" ")
                    ),
                    root,
                ));
                let report = ctx.work_dir.join("cargo-test.txt");
                spec.stdout_file = Some(report.clone());
                let test = PhasePlan::run(PhaseKind::Test, vec![spec])
                    .with_reports(vec![ReportSpec::file(&report, crate::collect::libtest::NAME)]);
                // A second cargo run only to compile what `cargo test` compiles anyway cost ~0.15 s
                // on every warm run.
                (PhasePlan::checked_by_test(vec![build_gate], BUILD_IN_TEST), test)
            }
        };
        Ok(vec![install, build, test])
    }

    /// cargo prints each target's file relative to its package: in a workspace, the cases go to
    /// their member crate's file.
    fn locate(&self, format: &str, report: &mut ParsedReport, root: &Path) {
        if format == crate::collect::libtest::NAME {
            workspace::place_targets(report, root);
        }
    }

    /// Packages and test targets in the tree that the suite's `cargo test` does not run, with
    /// the reason.
    fn members(&self, files: &ProjectFiles) -> Members {
        let mut left_out = if workspace::tests_workspace(files) {
            left_out_packages(files)
        } else {
            workspace::left_out_below_a_package(files)
        };
        left_out.extend(workspace::untested_targets(files, &left_out));
        Members { left_out, ..Members::default() }
    }

    fn build_diagnostics(&self, output: &str, root: &Path) -> Vec<Diagnostic> {
        let mut diagnostics = cargo_diagnostics(output, root);
        if diagnostics.is_empty() {
            diagnostics = short_diagnostics(output, root);
        }
        if diagnostics.is_empty() { super::generic_build_diagnostics(output) } else { diagnostics }
    }

    /// cargo compiles every target before it runs any test binary: a `cargo test` that failed
    /// with an `error` from cargo or the compiler and never got to `Running` a binary failed to
    /// build (a compile error, a build script, an unresolvable dependency).
    fn build_failure_in_test(&self, output: &str, root: &Path) -> Option<Vec<Diagnostic>> {
        let ran = output.lines().map(str::trim_start).any(|l| l.starts_with("Running ") || l.starts_with("Doc-tests "));
        let error = output.lines().find(|l| l.starts_with("error:") || l.starts_with("error["))?;
        if ran {
            return None;
        }
        let diagnostics = self.build_diagnostics(output, root);
        if !diagnostics.is_empty() {
            return Some(diagnostics);
        }
        Some(vec![Diagnostic {
            severity: Severity::Error,
            source: "build".into(),
            message: error.trim_start_matches("error:").trim().to_string(),
            file: None,
            line: None,
            column: None,
        }])
    }

    /// `cargo test -p <package> <target> -- --exact <names>` per test target (`--lib`, `--test
    /// x`, `--bin x`) of each workspace package; nextest gets the same libtest filters. Doc-tests
    /// are not rerun.
    fn select_tests(&self, test: &PhasePlan, failed: &[&crate::model::Case]) -> Option<super::Rerun> {
        let template = test.commands.last()?;
        let mut selected = Vec::new();
        let mut targets: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (i, case) in failed.iter().enumerate() {
            let class = case.classname.as_deref().unwrap_or_default();
            if case.name.is_empty() || class.ends_with("(doc-tests)") {
                continue;
            }
            selected.push(i);
            // Cases carry their file from the workspace root; cargo selects a package, then a
            // target by its path inside that package.
            let placed = case.file.as_deref().and_then(|f| workspace::package_of(&template.cwd, f));
            let target = match &placed {
                Some((package, file)) => {
                    let flag = target_flag(Some(file), class);
                    format!("-p {} {flag}", crate::execute::process::shell_quote(package)).trim_end().to_string()
                }
                None => format!("--workspace {}", target_flag(case.file.as_deref(), class)).trim_end().to_string(),
            };
            targets.entry(target).or_default().push(case.name.clone().into());
        }
        if template.program != "sh" {
            // nextest: one run, names matched exactly in every binary of the workspace; its
            // report only (the doc-tests are not rerun).
            let mut command = template.clone();
            command.args.extend(["--".into(), "--exact".into()]);
            command.args.extend(targets.into_values().flatten());
            let reports = test
                .reports
                .iter()
                .filter(|r| r.format.as_deref() != Some(crate::collect::libtest::NAME))
                .cloned()
                .collect();
            let phase = PhasePlan::run(PhaseKind::Test, vec![command]).with_reports(reports);
            return Some(super::Rerun { phase, selected });
        }
        let report = template.stdout_file.clone()?;
        let quote = crate::execute::process::shell_quote;
        let mut commands = Vec::new();
        let mut reports = Vec::new();
        for (n, (target, names)) in targets.into_iter().enumerate() {
            let names: Vec<String> = names.iter().map(|name| quote(name)).collect();
            let script =
                format!("exec cargo test --no-fail-fast --color never {target} -- --exact {} 2>&1", names.join(" "));
            let mut command = CommandSpec::shell(&script, &template.cwd);
            command.env = template.env.clone();
            let file = report.with_file_name(format!("cargo-test-rerun-{}.txt", n + 1));
            command.stdout_file = Some(file.clone());
            reports.push(ReportSpec::file(&file, crate::collect::libtest::NAME));
            commands.push(command);
        }
        let phase = PhasePlan::run(PhaseKind::Test, commands).with_reports(reports);
        Some(super::Rerun { phase, selected })
    }
}

/// The cargo flag selecting the test target a case came from, known from its source file at the
/// package root; empty (every target, names still matched exactly) when it cannot be told.
fn target_flag(file: Option<&str>, binary: &str) -> String {
    let quote = crate::execute::process::shell_quote;
    match file.unwrap_or_default() {
        "src/lib.rs" => "--lib".into(),
        "src/main.rs" => format!("--bin {}", quote(binary)),
        f => match f.strip_suffix(".rs").and_then(|f| f.strip_prefix("tests/").or(f.strip_prefix("src/bin/"))) {
            Some(name) if !name.contains('/') && f.starts_with("tests/") => format!("--test {}", quote(name)),
            Some(name) if !name.contains('/') => format!("--bin {}", quote(name)),
            _ => String::new(),
        },
    }
}

/// cargo's arguments: `command`, `--workspace` when the whole workspace is tested, then `rest`.
fn scoped<'a>(whole: bool, command: &[&'a str], rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = command.to_vec();
    if whole {
        args.push("--workspace");
    }
    args.extend_from_slice(rest);
    args
}

/// Whether and how nextest runs this project.
#[derive(Debug, Clone, PartialEq)]
enum NextestChoice {
    NotConfigured,
    NotInstalled,
    NoJunit,
    /// Run with this profile; its JUnit report lands at `report` (relative to the root).
    Use {
        profile: String,
        report: String,
    },
}

fn nextest_choice(files: &ProjectFiles) -> NextestChoice {
    if !files.has(NEXTEST_CONFIG) {
        return NextestChoice::NotConfigured;
    }
    if find_on_path("cargo-nextest").is_none() {
        return NextestChoice::NotInstalled;
    }
    let config: Option<toml::Table> = files.read(NEXTEST_CONFIG).and_then(|t| toml::from_str(&t).ok());
    let profiles = config.as_ref().and_then(|c| c.get("profile")).and_then(|p| p.as_table());
    let junit_path =
        |name: &str| -> Option<String> { profiles?.get(name)?.get("junit")?.get("path")?.as_str().map(str::to_string) };
    let store = config
        .as_ref()
        .and_then(|c| c.get("store"))
        .and_then(|s| s.get("dir"))
        .and_then(|d| d.as_str())
        .unwrap_or("target/nextest")
        .to_string();
    // Prefer a `ci` profile, then `default`, then any profile that writes JUnit.
    let mut names: Vec<String> = vec!["ci".into(), "default".into()];
    if let Some(p) = profiles {
        names.extend(p.keys().cloned());
    }
    for name in names {
        if let Some(path) = junit_path(&name) {
            return NextestChoice::Use { report: format!("{store}/{name}/{path}"), profile: name };
        }
    }
    NextestChoice::NoJunit
}

/// Packages below the root (a `Cargo.toml` with `[package]`) that are not members of the root's
/// workspace, as `cargo metadata` sees it, each with the reason cargo leaves it out. Nothing when
/// the tree has one manifest, or when cargo cannot read the workspace (the build phase says why).
fn left_out_packages(files: &ProjectFiles) -> Vec<LeftOut> {
    let nested = workspace::packages_below(files);
    if nested.is_empty() || !files.has("Cargo.toml") {
        return Vec::new();
    }
    let Some(members) = workspace_member_dirs(&files.root) else { return Vec::new() };
    let root_manifest: Option<toml::Table> = files.read("Cargo.toml").and_then(|t| toml::from_str(&t).ok());
    let excluded: Vec<String> = root_manifest
        .as_ref()
        .and_then(|t| t.get("workspace")?.get("exclude")?.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(|p| p.trim_end_matches('/').to_string()))
        .collect();
    nested
        .into_iter()
        .filter(|dir| !members.iter().any(|m| m == dir))
        .map(|dir| {
            let own = files.read(&format!("{dir}/Cargo.toml")).is_some_and(|t| has_table(&t, "workspace"));
            let reason = if excluded.iter().any(|e| dir == e || dir.starts_with(&format!("{e}/"))) {
                "excluded from the cargo workspace (`[workspace] exclude` in Cargo.toml): `cargo test --workspace` \
                 does not test it"
            } else if own {
                "a cargo workspace of its own, not a member of the root's: `cargo test --workspace` does not test it"
            } else {
                "not a member of the cargo workspace (`[workspace] members` in Cargo.toml): `cargo test \
                 --workspace` does not test it"
            };
            LeftOut { path: dir.to_string(), reason: reason.into() }
        })
        .collect()
}

/// True when the TOML text has a top-level table `name` (read leniently: a manifest that does not
/// parse has none).
fn has_table(text: &str, name: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.get(name).is_some_and(toml::Value::is_table))
}

/// The directories (relative to `root`, `/`-separated, `""` for the root) of the workspace's
/// member packages, from `cargo metadata --no-deps`; `None` when cargo cannot say.
fn workspace_member_dirs(root: &Path) -> Option<Vec<String>> {
    let mut spec = CommandSpec::new("cargo", &["metadata", "--no-deps", "--format-version", "1", "--offline"], root);
    spec.env.push(("CARGO_TERM_COLOR".into(), "never".into()));
    // The JSON can be larger than the output kept in memory: it is read from a file, in a private
    // directory (removed when dropped) so no one else can plant or read it.
    let scratch = tempfile::Builder::new().prefix("fcorr-cargo-metadata-").tempdir().ok()?;
    let file = scratch.path().join("metadata.json");
    spec.stdout_file = Some(file.clone());
    let outcome = crate::execute::process::run(
        &spec,
        std::time::Duration::from_secs(60),
        crate::execute::process::DEFAULT_GRACE,
        &crate::execute::process::null_log(),
    );
    if !outcome.exit.success() {
        return None;
    }
    // --no-deps: the workspace's own packages only, well under a project file's cap.
    let text = crate::fsio::read_text(&file, crate::fsio::PROJECT_FILE).ok()?;
    let metadata: serde_json::Value = serde_json::from_str(&text).ok()?;
    let members: Vec<&str> = metadata["workspace_members"].as_array()?.iter().filter_map(|v| v.as_str()).collect();
    let workspace_root = Path::new(metadata["workspace_root"].as_str()?);
    let dirs = metadata["packages"]
        .as_array()?
        .iter()
        .filter(|p| p["id"].as_str().is_some_and(|id| members.contains(&id)))
        .filter_map(|p| {
            let dir = Path::new(p["manifest_path"].as_str()?).parent()?;
            Some(dir.strip_prefix(workspace_root).ok()?.to_string_lossy().replace('\\', "/"))
        })
        .collect();
    Some(dirs)
}

/// `Cargo.toml: line L, column C: message` when the manifest is not valid TOML.
fn toml_problem(text: &str, path: &Path) -> Option<String> {
    let e = toml::from_str::<toml::Table>(text).err()?;
    let (line, column) = e.span().map(|s| crate::config::line_col(text, s.start)).unwrap_or((0, 0));
    Some(format!("malformed Cargo.toml: {}: line {line}, column {column}: {}", path.display(), e.message().trim()))
}

/// Errors (and warnings in the project's own files) from cargo's JSON compiler messages.
fn cargo_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for line in output.lines().filter(|l| l.starts_with('{')) {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if value["reason"] != "compiler-message" {
            continue;
        }
        let message = &value["message"];
        let severity = match message["level"].as_str() {
            Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            _ => continue,
        };
        let spans = message["spans"].as_array().cloned().unwrap_or_default();
        let primary = spans.iter().find(|s| s["is_primary"] == true).or(spans.first());
        let file = primary.and_then(|s| s["file_name"].as_str());
        // Warnings from dependencies (absolute registry paths) are not the project's business.
        if severity == Severity::Warning && file.is_none_or(|f| Path::new(f).is_absolute()) {
            continue;
        }
        // `aborting due to N previous errors` summaries carry no span and no news.
        if file.is_none() && message["message"].as_str().is_some_and(|m| m.starts_with("aborting due to")) {
            continue;
        }
        let mut text = message["message"].as_str().unwrap_or("compiler error").to_string();
        if let Some(code) = message["code"]["code"].as_str() {
            text = format!("{code}: {text}");
        }
        if let Some(label) = primary.and_then(|s| s["label"].as_str()) {
            text = format!("{text}: {label}");
        }
        diagnostics.push(Diagnostic {
            severity,
            source: "build".into(),
            message: text,
            file: file.map(|f| relativize(f, Some(root))),
            line: primary.and_then(|s| s["line_start"].as_u64()).map(|n| n as u32),
            column: primary.and_then(|s| s["column_start"].as_u64()).map(|n| n as u32),
        });
        if diagnostics.len() >= 50 {
            break;
        }
    }
    diagnostics
}

/// Why `cargo fetch` has nothing to do, read from Cargo.lock: it lists no package from a registry
/// or git, or every registry package's `.crate` is already in cargo's download cache (`cargo
/// test` unpacks from there, offline). `None` (fetch) for a git dependency, a crate not yet
/// downloaded, or a lock file that cannot be read. A warm `cargo fetch` still costs a cargo start
/// and the lock file's resolution, ~0.15 s per run.
fn nothing_to_fetch(lock: &str, cargo_home: &Path) -> Option<String> {
    let lock: toml::Table = toml::from_str(lock).ok()?;
    let packages = lock.get("package")?.as_array()?;
    let mut crates = Vec::new();
    for package in packages {
        let Some(source) = package.get("source").and_then(|s| s.as_str()) else { continue };
        if !source.starts_with("registry+") && !source.starts_with("sparse+") {
            return None;
        }
        let (name, version) = (package.get("name")?.as_str()?, package.get("version")?.as_str()?);
        crates.push(format!("{name}-{version}.crate"));
    }
    if crates.is_empty() {
        return Some("Cargo.lock lists only the workspace's own packages: nothing to fetch".into());
    }
    // One directory per registry (`index.crates.io-<hash>`); a crate may be in any of them.
    let registries: Vec<PathBuf> =
        std::fs::read_dir(cargo_home.join("registry").join("cache")).ok()?.flatten().map(|e| e.path()).collect();
    crates.iter().all(|file| registries.iter().any(|dir| dir.join(file).is_file())).then(|| {
        format!(
            "dependencies up to date (the {} crate(s) in Cargo.lock are in {})",
            crates.len(),
            cargo_home.join("registry").join("cache").display()
        )
    })
}

/// `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> PathBuf {
    match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"),
    }
}

/// Errors (and warnings in the project's own files) in rustc's short format
/// (`--message-format short`): `src/lib.rs:19:25: error[E0308]: mismatched types: expected …`.
fn short_diagnostics(output: &str, root: &Path) -> Vec<Diagnostic> {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // The pattern is a literal; it compiles.
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(r"^(\S+\.rs):(\d+):(\d+): (error|warning)(?:\[(\w+)\])?: (.+)$").expect("valid regex")
    });
    let mut diagnostics = Vec::new();
    for c in output.lines().filter_map(|l| pattern.captures(l.trim_end())) {
        let severity = if &c[4] == "error" { Severity::Error } else { Severity::Warning };
        // Warnings from dependencies (absolute registry paths) are not the project's business.
        if severity == Severity::Warning && Path::new(&c[1]).is_absolute() {
            continue;
        }
        let message = match c.get(5) {
            Some(code) => format!("{}: {}", code.as_str(), &c[6]),
            None => c[6].to_string(),
        };
        diagnostics.push(Diagnostic {
            severity,
            source: "build".into(),
            message,
            file: Some(relativize(&c[1], Some(root))),
            line: c[2].parse().ok(),
            column: c[3].parse().ok(),
        });
        if diagnostics.len() >= 50 {
            break;
        }
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_messages_become_diagnostics() {
        let out = r#"   Compiling x v0.1.0
{"reason":"compiler-artifact","package_id":"y"}
{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/lib.rs","is_primary":true,"label":"expected `String`, found `usize`","line_start":19,"column_start":25}]}}
{"reason":"compiler-message","message":{"level":"warning","message":"unused","code":null,"spans":[{"file_name":"/home/u/.cargo/registry/dep/src/lib.rs","is_primary":true,"label":null,"line_start":1,"column_start":1}]}}
{"reason":"compiler-message","message":{"level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}
error: could not compile `x` (lib test) due to 1 previous error
"#;
        let d = cargo_diagnostics(out, Path::new("/p"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].message, "E0308: mismatched types: expected `String`, found `usize`");
        assert_eq!((d[0].file.as_deref(), d[0].line, d[0].column), (Some("src/lib.rs"), Some(19), Some(25)));
    }

    #[test]
    fn cargo_test_that_never_ran_a_binary_is_a_build_failure_with_rustc_lines() {
        let compile_error = "   Compiling x v0.1.0 (/p)\n\
            src/lib.rs:19:25: error[E0308]: mismatched types: expected `String`, found `usize`\n\
            src/lib.rs:3:9: warning: unused variable: `n`\n\
            /home/u/.cargo/registry/src/dep/lib.rs:1:1: warning: unused\n\
            error: could not compile `x` (lib test) due to 1 previous error\n";
        let d = Rust.build_failure_in_test(compile_error, Path::new("/p")).unwrap();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].message, "E0308: mismatched types: expected `String`, found `usize`");
        assert_eq!((d[0].file.as_deref(), d[0].line, d[0].column), (Some("src/lib.rs"), Some(19), Some(25)));
        assert_eq!((d[1].severity, d[1].line), (Severity::Warning, Some(3)));
        // A cargo error with no compiler line (a manifest, a dependency) still fails the build.
        let d = Rust.build_failure_in_test("error: failed to load manifest for workspace member\n", Path::new("/p"));
        assert_eq!(d.unwrap()[0].message, "failed to load manifest for workspace member");
        // Once a test binary ran, the build had passed: a failing test printing cargo's words is a test.
        let ran = "     Running unittests src/lib.rs (target/debug/deps/x-1)\nrunning 1 test\n\
                   error: could not compile `y`\ntest result: FAILED. 0 passed; 1 failed\nerror: test failed\n";
        assert!(Rust.build_failure_in_test(ran, Path::new("/p")).is_none());
    }

    #[test]
    fn fetch_is_skipped_only_when_cargo_has_every_package_already() {
        let home = tempfile::tempdir().unwrap();
        let own = "version = 4\n[[package]]\nname = \"x\"\nversion = \"0.1.0\"\n";
        assert!(nothing_to_fetch(own, home.path()).unwrap().contains("nothing to fetch"));
        let registry = "source = \"registry+https://github.com/rust-lang/crates.io-index\"";
        let with_dep = format!("{own}[[package]]\nname = \"itoa\"\nversion = \"1.0.15\"\n{registry}\n");
        assert_eq!(nothing_to_fetch(&with_dep, home.path()), None, "no download cache at all");
        let cache = home.path().join("registry/cache/index.crates.io-1949cf8c6b5b557f");
        std::fs::create_dir_all(&cache).unwrap();
        assert_eq!(nothing_to_fetch(&with_dep, home.path()), None, "not downloaded yet");
        std::fs::write(cache.join("itoa-1.0.15.crate"), "").unwrap();
        assert!(
            nothing_to_fetch(&with_dep, home.path()).unwrap().starts_with("dependencies up to date (the 1 crate(s)")
        );
        let git =
            format!("{with_dep}[[package]]\nname = \"g\"\nversion = \"0.1.0\"\nsource = \"git+https://e.x/g#abc\"\n");
        assert_eq!(nothing_to_fetch(&git, home.path()), None, "git dependencies are always fetched");
        assert_eq!(nothing_to_fetch("not [toml", home.path()), None);
    }

    #[test]
    fn nextest_config_falls_back_to_cargo_test_when_nextest_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".config")).unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        std::fs::write(dir.path().join(NEXTEST_CONFIG), "[profile.ci.junit]\npath = \"junit.xml\"\n").unwrap();
        let files = ProjectFiles::scan(dir.path()).unwrap();
        let detection = Rust.detect(&files, None).unwrap().detection;
        if find_on_path("cargo-nextest").is_some() {
            assert_eq!(detection.framework, "cargo nextest");
            assert_eq!(
                nextest_choice(&files),
                NextestChoice::Use { profile: "ci".into(), report: "target/nextest/ci/junit.xml".into() }
            );
        } else {
            assert_eq!(detection.framework, "cargo test");
            assert!(detection.markers.iter().any(|m| m.contains("cargo-nextest is not installed")), "{detection:?}");
        }
    }

    /// A failing `harness = false` target is a `[test binary]` error case: not a test name, so a
    /// retry never runs `cargo test -- --exact '[test binary]'` (which runs nothing).
    #[test]
    fn a_test_binary_error_case_is_never_selected_by_name() {
        let mut spec = CommandSpec::shell("exec cargo test --workspace --no-fail-fast 2>&1", Path::new("/p"));
        spec.stdout_file = Some(PathBuf::from("/w/cargo-test.txt"));
        let test = PhasePlan::run(PhaseKind::Test, vec![spec])
            .with_reports(vec![ReportSpec::file(Path::new("/w/cargo-test.txt"), crate::collect::libtest::NAME)]);
        let case = |name: &str, class: &str, file: &str, status| crate::model::Case {
            name: name.into(),
            classname: Some(class.into()),
            file: Some(file.into()),
            status,
            ..Default::default()
        };
        let golden = case("[test binary]", "golden", "tests/golden.rs", crate::model::CaseStatus::Error);
        let flaky = case("tests::flaky", "x", "src/lib.rs", crate::model::CaseStatus::Failed);
        let rerun = Rust.rerun(&test, &[&golden, &flaky]).unwrap();
        assert_eq!(rerun.selected, [1]);
        let scripts: Vec<&str> = rerun.phase.commands.iter().map(|c| c.args[1].as_str()).collect();
        assert_eq!(
            scripts,
            ["exec cargo test --no-fail-fast --color never --workspace --lib -- --exact tests::flaky 2>&1"]
        );
        assert!(Rust.rerun(&test, &[&golden]).unwrap().selected.is_empty());
    }

    #[test]
    fn malformed_manifest_names_line_and_column() {
        let problem = toml_problem("[package]\nname = \"x\nversion = \"1\"\n", Path::new("Cargo.toml")).unwrap();
        assert!(problem.contains("line 2, column"), "{problem}");
        assert!(toml_problem("[package]\nname = \"x\"\n", Path::new("Cargo.toml")).is_none());
    }
}
