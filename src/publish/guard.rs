//! The workflow-command guard: inside GitHub Actions, every subcommand's output is fenced with
//! `::stop-commands::<random>` … `::<random>::`, so no test name, failure message or log line fcorr
//! prints can act as a runner command (`::add-mask::`, `::error::`, `##[error]`…). The tokens fcorr
//! holds are registered with `::add-mask::` before anything else is printed.
//!
//! Publishing lifts the fence only around the annotation commands it writes itself
//! ([`with_commands`]). The runner keeps one stop state for the whole step, across stdout and
//! stderr, so the fence must be lifted before the process exits ([`finish`]).
//!
//! A process that is killed (SIGKILL, the runner's out-of-memory killer) cannot lift its fence,
//! and the step's later lines would be fenced too, the wrapper's `::error` about the death
//! included. So when [`FENCE_FILE_VAR`] names a file, the token of the fence currently up is
//! kept there (replaced atomically each time a new fence goes up, removed when the last one is
//! lifted): the action's wrapper (scripts/action/run.sh) reads it after fcorr ends and lifts the
//! fence itself. Children never see the variable.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use super::files::random_token;

/// The token variables fcorr reads (and masks): what `GithubContext` uses to call the API.
pub const MASKED_VARS: &[&str] = &["GITHUB_TOKEN", "GH_TOKEN"];

/// The file in which fcorr keeps the token of the fence that is up, for a wrapper that must
/// lift it when fcorr could not (module documentation).
pub const FENCE_FILE_VAR: &str = "FCORR_FENCE_FILE";

/// Where the fence lines go and the token that lifts the current fence.
struct Fence {
    to_stderr: bool,
    token: String,
    /// Where the current token is kept for the wrapper ([`FENCE_FILE_VAR`]).
    file: Option<PathBuf>,
}

impl Fence {
    /// Records the token in the fence file before the fence goes up: a wrapper that finds a
    /// token whose fence is not up yet prints a line that ends nothing, which is harmless.
    fn record(&self) {
        let Some(path) = &self.file else { return };
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        // Written aside and renamed, so the wrapper never reads half a token. A failure leaves
        // the wrapper unable to lift the fence, which is what happens without a file at all.
        if std::fs::write(&tmp, format!("{}\n", self.token)).and_then(|_| std::fs::rename(&tmp, path)).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// The fence is down for good: nothing for the wrapper to lift.
    fn forget(&self) {
        if let Some(path) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

static FENCE: Mutex<Option<Fence>> = Mutex::new(None);

fn fence() -> std::sync::MutexGuard<'static, Option<Fence>> {
    // Plain data: a panic elsewhere while holding it leaves nothing inconsistent.
    FENCE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// True when this process runs as a GitHub Actions step.
pub fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// The `::add-mask::` lines for the tokens in `vars`, one per line of each value.
pub fn mask_lines(vars: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let values: Vec<String> = MASKED_VARS.iter().filter_map(|name| vars(name)).collect();
    value_mask_lines(&values)
}

/// The `::add-mask::` lines for `values`, one per line of each (the runner masks line by line).
fn value_mask_lines(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|value| value.lines().map(str::trim).filter(|p| !p.is_empty()))
        .map(|part| format!("::add-mask::{part}"))
        .collect()
}

/// Masks secrets read after [`start`] (the API keys fcorr.toml names), lifting the fence around
/// the `::add-mask::` lines; outside Actions, does nothing.
pub fn mask(values: &[String]) {
    let lines = value_mask_lines(values);
    if !in_actions() || lines.is_empty() {
        return;
    }
    let emit = |out: &mut dyn Write| {
        for line in &lines {
            let _ = writeln!(out, "{line}");
        }
    };
    let to_stderr = fence().as_ref().is_some_and(|f| f.to_stderr);
    if to_stderr {
        with_commands(&mut std::io::stderr(), emit);
    } else {
        with_commands(&mut std::io::stdout(), emit);
    }
}

/// Masks the tokens and raises the fence, when running in Actions. `to_stderr` when stdout must
/// stay a single document (`--json`): the runner reads stderr for commands too.
///
/// Call it first thing, before any thread starts: it removes [`FENCE_FILE_VAR`] from fcorr's
/// environment so no child (a test, a system under test) can read the token and lift the fence.
pub fn start(to_stderr: bool) {
    let file = std::env::var_os(FENCE_FILE_VAR).filter(|v| !v.is_empty()).map(PathBuf::from);
    // SAFETY: called by main before any other thread exists (see above), so nothing reads the
    // environment concurrently.
    unsafe {
        std::env::remove_var(FENCE_FILE_VAR);
    }
    if !in_actions() {
        return;
    }
    crate::console::defuse_commands();
    // The variable is gone from what children inherit, but not from /proc/<fcorr>/environ, where
    // a test of the same user could read the file's path and then the token that lifts the
    // fence (black-box testing, finding B11): not dumpable, fcorr's /proc files are root's.
    if file.is_some() {
        crate::secrets::hide_environment();
    }
    let token = random_token();
    let mut text = String::new();
    for line in mask_lines(|name| std::env::var(name).ok().filter(|v| !v.is_empty())) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&format!("::stop-commands::{token}\n"));
    let fence_up = Fence { to_stderr, token, file };
    fence_up.record();
    write_fence_line(to_stderr, &text);
    *fence() = Some(fence_up);
}

/// Lifts the fence for good (the step's later output is not fcorr's to guard).
pub fn finish() {
    if let Some(fence) = fence().take() {
        // Everything fcorr printed must reach the runner before the fence goes.
        let _ = std::io::stdout().flush();
        write_fence_line(fence.to_stderr, &format!("::{}::\n", fence.token));
        fence.forget();
    }
}

/// Runs `emit` (which writes fcorr's own workflow commands to `out`) with the fence lifted, then
/// raises a new one with a fresh token. Without a fence, just runs `emit`.
pub fn with_commands(out: &mut dyn Write, emit: impl FnOnce(&mut dyn Write)) {
    let mut guard = fence();
    let Some(current) = guard.as_mut() else {
        drop(guard);
        emit(out);
        return;
    };
    let _ = std::io::stdout().flush();
    let _ = writeln!(out, "::{}::", current.token);
    emit(out);
    current.token = random_token();
    current.record();
    let _ = writeln!(out, "::stop-commands::{}", current.token);
    let _ = out.flush();
}

/// [`finish`] for the panic hook: never waits for the lock a panicking thread may hold.
pub fn finish_after_panic() {
    let Ok(mut guard) = FENCE.try_lock() else { return };
    if let Some(fence) = guard.take() {
        write_fence_line(fence.to_stderr, &format!("::{}::\n", fence.token));
        fence.forget();
    }
}

fn write_fence_line(to_stderr: bool, text: &str) {
    if to_stderr {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    } else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_every_token_is_masked() {
        let lines = mask_lines(|name| match name {
            "GITHUB_TOKEN" => Some("ghs_abc".into()),
            "GH_TOKEN" => Some("two\nlines".into()),
            _ => None,
        });
        assert_eq!(lines, ["::add-mask::ghs_abc", "::add-mask::two", "::add-mask::lines"]);
    }

    #[test]
    fn without_a_fence_commands_pass_straight_through() {
        let mut out = Vec::new();
        with_commands(&mut out, |w| {
            let _ = writeln!(w, "::error::real");
        });
        assert_eq!(String::from_utf8(out).unwrap(), "::error::real\n");
    }
}
