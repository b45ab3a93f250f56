//! Running one external command: its own process group, a timeout with a grace period, output
//! streamed to a log file and kept in memory only as a capped head and tail.
//!
//! Every process group started here is registered so a stop signal (Ctrl-C, SIGTERM) can stop
//! them all; after a command
//! ends, whatever is left of its group (grandchildren included) is killed and, on Linux, so is
//! every descendant that left the group (`setsid`, double fork), found through the subreaper.
//! Children never see the tokens fcorr publishes with (`secrets::SECRET_VARS`) nor the secrets fcorr.toml
//! names unless a suite opts in, and their output is redacted (`crate::secrets`) as it arrives.
//!
//! The platform specifics live in `unix.rs`; there is no Windows backend yet, so a Windows build
//! stops here with a clear message instead of failing somewhere in the middle.

#[cfg(not(unix))]
compile_error!("fcorr supports Linux and macOS: process control has no Windows backend yet");

mod pump;
#[cfg(unix)]
mod unix;
pub(crate) use platform::signal_name;
#[cfg(unix)]
use unix as platform;

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::errors::ExecError;

/// The full path of `program` in a directory on `PATH` (the first one holding a file of that
/// name), as the shell would find it: the one lookup every ecosystem uses to see a tool.
pub(crate) fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Bytes of output kept from the start of a command.
pub(crate) const HEAD_BYTES: usize = 8 * 1024;
/// Bytes of output kept from the end of a command.
pub(crate) const TAIL_BYTES: usize = 32 * 1024;
/// Time between SIGTERM and SIGKILL.
pub(crate) const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// How long to wait for output pipes to close once the process group is gone.
const PIPE_DRAIN: Duration = Duration::from_secs(2);
/// Bytes of a suite log written from its start, and kept from its end (see [`capped_file_log`]).
pub(crate) const LOG_HEAD_BYTES: usize = 4 * 1024 * 1024;
/// Bytes kept from the end of a suite log.
pub(crate) const LOG_TAIL_BYTES: usize = 4 * 1024 * 1024;
/// Bytes of a command's stdout copy ([`CommandSpec::stdout_file`]) written from its start; its
/// last [`LOG_TAIL_BYTES`] are kept too. More than a log's head: the copy is a report (`go test
/// -json`, libtest's output) that gets parsed, and a cut report makes its suite an error, so only
/// runaway output (a test printing forever) should reach the cap — not a big, honest test suite.
pub(crate) const STDOUT_FILE_HEAD_BYTES: usize = 64 * 1024 * 1024;

/// The largest value fcorr puts in one environment variable it sets for a child. Linux refuses
/// to start a program given any single argument or variable over 128 KiB (MAX_ARG_STRLEN:
/// "Argument list too long"), and all of them together must fit in ARG_MAX; data that may be
/// larger (a task's JSON, a case id) always goes in a file too, and inline only up to this size.
pub(crate) const MAX_ENV_VALUE: usize = 32 * 1024;

/// Sets `name` to `value` in `env` when the value is at most [`MAX_ENV_VALUE`] bytes; returns
/// whether it did. Callers also hand the data over in a file whose path is always set.
pub(crate) fn set_small_env(env: &mut Vec<(String, String)>, name: &str, value: &str) -> bool {
    let fits = value.len() <= MAX_ENV_VALUE;
    if fits {
        env.push((name.to_string(), value.to_string()));
    }
    fits
}

/// Set in every child's environment to a value unique to the command, so that descendants which
/// left its process group can still be told apart from another suite's when it ends.
pub(crate) const MARKER_VAR: &str = "FCORR_COMMAND_ID";

/// A command to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Also write the complete stdout to this file (for tools that report on stdout).
    pub stdout_file: Option<PathBuf>,
    /// Bytes written to the command's stdin (then closed); `None` leaves stdin closed. Systems
    /// under test and benchmark executors read their case or task here.
    pub stdin: Option<Vec<u8>>,
    /// Withheld variables ([`crate::secrets::withheld`]) this command may inherit (`pass-env`).
    pub pass_env: Vec<String>,
    /// Run at a lower CPU priority (nice +10): work that runs beside the tests (a type check)
    /// takes the cores the tests leave idle instead of slowing the tests down.
    pub background: bool,
}

impl CommandSpec {
    /// A command with no extra environment.
    pub(crate) fn new(program: impl Into<String>, args: &[&str], cwd: impl Into<PathBuf>) -> CommandSpec {
        CommandSpec {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: cwd.into(),
            env: Vec::new(),
            stdout_file: None,
            stdin: None,
            pass_env: Vec::new(),
            background: false,
        }
    }

    /// Runs `script` with `sh -c` (user-written command overrides).
    pub(crate) fn shell(script: &str, cwd: impl Into<PathBuf>) -> CommandSpec {
        CommandSpec::new("sh", &["-c", script], cwd)
    }

    /// The command line as a person would read it: a multi-line inline script (`python -c`) is
    /// shown as a placeholder; [`CommandSpec::display_full`] has every word.
    pub(crate) fn display(&self) -> String {
        if self.program == "sh" && self.args.len() == 2 && self.args[0] == "-c" {
            return self.args[1].clone();
        }
        std::iter::once(self.program.clone())
            .chain(self.args.iter().map(|arg| match arg.lines().count() {
                0 | 1 => shell_quote(arg),
                lines => format!("<inline script, {lines} lines>"),
            }))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The complete command line, every word quoted (for logs).
    pub(crate) fn display_full(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(shell_quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Quotes a word for display when it contains shell-special characters.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Exit {
    /// Exited on its own with this code.
    Code(i32),
    /// Killed by a signal it did not get from us.
    Signal(i32),
    /// Killed by us after its timeout.
    TimedOut,
    /// Killed by us because the user pressed Ctrl-C.
    Cancelled,
    /// Could not be started; `not_found` means the program does not exist.
    SpawnFailed { message: String, not_found: bool },
}

impl Exit {
    /// True when the command exited with code 0.
    pub(crate) fn success(&self) -> bool {
        matches!(self, Exit::Code(0))
    }

    /// The exit code, when the command exited on its own.
    pub(crate) fn code(&self) -> Option<i32> {
        match self {
            Exit::Code(code) => Some(*code),
            _ => None,
        }
    }
}

/// How a command ended, in words for logs and messages (`Code(128)` meant nothing to users).
impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit code {code}"),
            Exit::Signal(signal) => f.write_str(&crate::execute::signal_text(*signal)),
            Exit::TimedOut => f.write_str("timed out (killed by fcorr)"),
            Exit::Cancelled => f.write_str("cancelled (stopped by fcorr)"),
            Exit::SpawnFailed { message, .. } => write!(f, "not started: {message}"),
        }
    }
}

/// Result of running a command.
#[derive(Debug, Clone)]
pub(crate) struct CommandOutcome {
    pub exit: Exit,
    pub duration: Duration,
    /// Capped head and tail of stdout and stderr, interleaved as they arrived.
    pub output: String,
    /// Bytes cut from the middle of the stdout copy ([`CommandSpec::stdout_file`]) to keep it
    /// within [`STDOUT_FILE_HEAD_BYTES`] and [`LOG_TAIL_BYTES`]; 0 when nothing was cut.
    pub stdout_file_cut: u64,
}

impl CommandOutcome {
    /// What collection sees when no command ran (an import): a clean exit and nothing on stdout.
    pub(crate) fn none_ran() -> CommandOutcome {
        CommandOutcome { exit: Exit::Code(0), duration: Duration::ZERO, output: String::new(), stdout_file_cut: 0 }
    }
}

pub(crate) use crate::events::LogSink;

/// A log sink that writes to a file, capped: the first [`LOG_HEAD_BYTES`] go straight to the
/// file, the last [`LOG_TAIL_BYTES`] are held and written when the sink is dropped, after a line
/// saying how many bytes were cut between them. A test printing 500 MB leaves an 8 MiB log.
pub(crate) fn capped_file_log(file: File) -> LogSink {
    Arc::new(Mutex::new(Box::new(CappedLog::new(file, LOG_HEAD_BYTES, LOG_TAIL_BYTES, "log"))))
}

/// Head written through, tail kept in a ring, the middle counted and dropped.
struct CappedLog<W: Write> {
    out: W,
    head: usize,
    head_left: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    cut: u64,
    /// What the file is, for the marker line ("log", "output").
    what: &'static str,
    /// Receives the number of bytes cut when the file is finished.
    cut_total: Option<Arc<AtomicU64>>,
}

impl<W: Write> CappedLog<W> {
    fn new(out: W, head: usize, tail: usize, what: &'static str) -> CappedLog<W> {
        CappedLog { out, head, head_left: head, tail: VecDeque::new(), tail_cap: tail, cut: 0, what, cut_total: None }
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.cut > 0 {
            // Start the tail on a line boundary so the marker and the first kept line are whole.
            let skip = self.tail.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1);
            self.tail.drain(..skip);
            self.cut += skip as u64;
            writeln!(
                self.out,
                "\n[fcorr: {} bytes cut from the middle of this {}; it keeps the first {} and the last {} bytes]",
                self.cut,
                self.what,
                self.head,
                self.tail.len()
            )?;
            if let Some(total) = &self.cut_total {
                total.fetch_add(self.cut, Ordering::SeqCst);
            }
            self.cut = 0;
        }
        let (a, b) = self.tail.as_slices();
        self.out.write_all(a)?;
        self.out.write_all(b)?;
        self.tail.clear();
        self.out.flush()
    }
}

impl<W: Write> Write for CappedLog<W> {
    fn write(&mut self, mut buf: &[u8]) -> io::Result<usize> {
        let len = buf.len();
        if self.head_left > 0 {
            let take = buf.len().min(self.head_left);
            self.out.write_all(&buf[..take])?;
            self.head_left -= take;
            buf = &buf[take..];
        }
        if buf.len() >= self.tail_cap {
            self.cut += (self.tail.len() + buf.len() - self.tail_cap) as u64;
            self.tail.clear();
            self.tail.extend(&buf[buf.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + buf.len()).saturating_sub(self.tail_cap);
            self.cut += overflow as u64;
            self.tail.drain(..overflow);
            self.tail.extend(buf);
        }
        Ok(len)
    }

    fn flush(&mut self) -> io::Result<()> {
        // The tail is written once, at the end: flushing it early would let it repeat.
        self.out.flush()
    }
}

impl<W: Write> Drop for CappedLog<W> {
    fn drop(&mut self) {
        // Nothing to report a failure to at this point; the reports carry the capped tails.
        let _ = self.finish();
    }
}

/// A log sink that discards everything.
pub(crate) fn null_log() -> LogSink {
    Arc::new(Mutex::new(Box::new(io::sink())))
}

static ACTIVE_GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
static CANCELLED: AtomicBool = AtomicBool::new(false);
static NEXT_COMMAND: AtomicU64 = AtomicU64::new(0);
static SUBREAPER: OnceLock<bool> = OnceLock::new();
/// The first signal that asked fcorr to stop (SIGINT, SIGTERM, SIGHUP); 0 until one did.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// True once the command has started work that stops on [`is_cancelled`] (suites, SUT calls).
static CANCELLABLE: AtomicBool = AtomicBool::new(false);
/// What a stop signal that ends fcorr at once cut short, set by a command with nothing to
/// cancel ([`note_on_stop`]); `None` means it came before any suite started.
static STOP_NOTE: Mutex<Option<String>> = Mutex::new(None);

/// Says what a stop signal that ends fcorr at once would cut short (`import`, `merge` and
/// `report` read and write with no command to cancel), e.g. "while importing into DIR: reports
/// not yet written there are missing or left from an earlier run". Printed after "stopped by X".
pub(crate) fn note_on_stop(note: String) {
    *lock(&STOP_NOTE) = Some(note);
}

/// Makes fcorr the subreaper of its descendants (Linux; once per process). Returns whether
/// orphaned descendants can be found again: false on macOS, where they go to launchd.
pub(crate) fn ensure_subreaper() -> bool {
    *SUBREAPER.get_or_init(platform::become_subreaper)
}

/// Kills every descendant still alive that a command started by this fcorr left behind and
/// that is not part of a running command (the end of a run). Returns the pids killed.
pub(crate) fn kill_all_leftovers() -> Vec<i32> {
    let active = lock(active_groups());
    let ours = format!("{}-", std::process::id());
    platform::kill_leftovers(&|marker: &str| marker.starts_with(&ours), &active)
}

fn active_groups() -> &'static Mutex<HashSet<i32>> {
    ACTIVE_GROUPS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// True once the user asked to stop.
pub(crate) fn is_cancelled() -> bool {
    CANCELLED.load(Ordering::SeqCst)
}

/// The signal that stopped the run (2 for SIGINT, 15 for SIGTERM, 1 for SIGHUP), if one did.
pub(crate) fn stop_signal() -> Option<i32> {
    Some(STOP_SIGNAL.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

/// The conventional exit code of a process stopped by `signal`: 128 + its number (130 for
/// SIGINT, 143 for SIGTERM).
pub(crate) fn signal_exit_code(signal: i32) -> i32 {
    128 + signal
}

/// Stops every running command: SIGTERM now; a second call sends SIGKILL.
pub(crate) fn cancel_all() {
    let again = CANCELLED.swap(true, Ordering::SeqCst);
    let signal = if again { platform::Stop::Kill } else { platform::Stop::Term };
    let groups: Vec<i32> = lock(active_groups()).iter().copied().collect();
    for pgid in groups {
        platform::signal_group(pgid, signal);
    }
}

/// From now on a stop signal cancels the work under way (every running command is stopped, the
/// suites return what they have, results are written) instead of ending fcorr at once.
pub(crate) fn cancel_on_signal() {
    CANCELLABLE.store(true, Ordering::SeqCst);
}

/// Handles SIGINT, SIGTERM and SIGHUP for the whole process, on a thread of its own.
///
/// Once the command called [`cancel_on_signal`], a signal cancels the run ([`cancel_all`]; a
/// second one kills what is left) and the command finishes with `128 + signal`. Before that
/// (planning, or a command with nothing to cancel) nothing would look at the cancellation, so
/// `exit` runs (it lifts the workflow-command fence) and the process ends with `128 + signal`.
pub(crate) fn install_stop_handler(exit: fn()) -> Result<(), ExecError> {
    platform::on_stop_signals(move |signal| {
        let _ = STOP_SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        if CANCELLABLE.load(Ordering::SeqCst) {
            cancel_all();
            return;
        }
        let name = signal_name(signal).unwrap_or("a signal");
        match lock(&STOP_NOTE).as_deref() {
            Some(note) => errln!("fcorr: stopped by {name} {note}"),
            None => errln!("fcorr: stopped by {name} before any suite started; nothing was measured or written"),
        }
        // Held until the process is gone: no command can start in between, and any that a
        // helper started (a version probe) is killed rather than left behind.
        let active = lock(active_groups());
        CANCELLED.store(true, Ordering::SeqCst);
        for &pgid in active.iter() {
            platform::signal_group(pgid, platform::Stop::Kill);
        }
        exit();
        std::process::exit(signal_exit_code(signal));
    })?;
    Ok(())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind; keep using it.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Keeps the first `head` bytes and the last `tail` bytes of a stream.
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    fn new(head_cap: usize, tail_cap: usize) -> Capture {
        Capture { head: Vec::new(), tail: VecDeque::new(), head_cap, tail_cap, total: 0 }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_cap {
            let take = bytes.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    fn render(&self) -> String {
        let head = utf8_prefix(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let kept = (self.head.len() + tail.len()) as u64;
        if kept >= self.total {
            return format!("{head}{}", utf8_suffix(&tail));
        }
        let omitted = self.total - kept;
        format!("{head}\n[... {omitted} bytes omitted ...]\n{}", utf8_suffix(&tail))
    }
}

/// The longest valid UTF-8 prefix, lossily decoded (never a half character at the end).
fn utf8_prefix(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(e) if e.error_len().is_none() => String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Decodes a suffix, dropping continuation bytes of a character cut at the start.
fn utf8_suffix(bytes: &[u8]) -> String {
    let start = bytes.iter().take(3).take_while(|b| (**b & 0b1100_0000) == 0b1000_0000).count();
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// Runs a command to completion, timeout or cancellation.
///
/// `CI=true` is always set; stdin gets `spec.stdin`, else is closed. Output goes to `log` in full.
pub(crate) fn run(spec: &CommandSpec, timeout: Duration, grace: Duration, log: &LogSink) -> CommandOutcome {
    run_watching(spec, timeout, grace, log, None, pump::Watch::Pidfd).0
}

/// [`run`], also keeping the command's stdout (redacted) in memory: its first `limit` bytes and
/// one more when there are more, so a longer output shows as longer than `limit`. For an answer
/// read from stdout: no file to create, write and read back per call.
pub(crate) fn run_keeping_stdout(
    spec: &CommandSpec,
    timeout: Duration,
    grace: Duration,
    log: &LogSink,
    limit: usize,
) -> (CommandOutcome, Vec<u8>) {
    run_watching(spec, timeout, grace, log, Some(limit), pump::Watch::Pidfd)
}

/// [`run`], keeping up to `keep` bytes of stdout, with the command's exit watched the way
/// `watch` says (tests take the fallback).
fn run_watching(
    spec: &CommandSpec,
    timeout: Duration,
    grace: Duration,
    log: &LogSink,
    keep: Option<usize>,
    watch: pump::Watch,
) -> (CommandOutcome, Vec<u8>) {
    let started = Instant::now();
    {
        let mut sink = lock(log);
        // Log write failures must not stop the run; the capture still has the output.
        let line = format!("$ {}  (in {})\n", spec.display_full(), spec.cwd.display());
        // One write: the suite log is an unbuffered file shared by the suite's commands.
        let _ = sink.write_all(crate::secrets::redact(&line).as_bytes());
    }
    if is_cancelled() {
        return (finished(Exit::Cancelled, started, &Capture::new(0, 0)), Vec::new());
    }

    let subreaper = ensure_subreaper();
    let marker = format!("{}-{}", std::process::id(), NEXT_COMMAND.fetch_add(1, Ordering::SeqCst));
    // The copy of stdout is created before the command starts: a command whose output cannot be
    // kept must not run as if it could (its caller would read whatever the path holds).
    let stdout_copy_file = match &spec.stdout_file {
        Some(path) => match File::create(path) {
            Ok(file) => Some(file),
            Err(e) => {
                let message = format!("cannot create {} for the output of `{}`: {e}", path.display(), spec.program);
                let mut outcome = finished(
                    Exit::SpawnFailed { message: message.clone(), not_found: false },
                    started,
                    &Capture::new(0, 0),
                );
                outcome.output = message;
                return (outcome, Vec::new());
            }
        },
        None => None,
    };
    let mut command = Command::new(&spec.program);
    command.args(&spec.args).current_dir(&spec.cwd);
    for name in crate::secrets::withheld() {
        if !spec.pass_env.contains(&name) {
            command.env_remove(name);
        }
    }
    command
        .env("CI", "true")
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env(MARKER_VAR, &marker)
        .stdin(if spec.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    platform::own_group(&mut command);
    if spec.background {
        platform::start_at_lower_priority(&mut command);
    }

    // Spawn and register under the lock the leftover sweep holds, so the sweep never mistakes a
    // command that has just started (or already exited) for a leftover.
    let mut active = lock(active_groups());
    let spawned = command.spawn();
    if let Ok(child) = &spawned {
        active.insert(child.id() as i32);
    }
    drop(active);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let not_found = e.kind() == io::ErrorKind::NotFound;
            let message = if not_found && !spec.cwd.is_dir() {
                format!("working directory {} does not exist", spec.cwd.display())
            } else if not_found {
                format!("`{}` was not found on PATH", spec.program)
            } else if e.raw_os_error() == Some(libc::E2BIG) {
                too_big_to_start(spec, &e)
            } else {
                format!("cannot start `{}`: {e}", spec.program)
            };
            let mut capture = Capture::new(0, 0);
            capture.total = 0;
            let mut outcome = finished(
                Exit::SpawnFailed { message: message.clone(), not_found: not_found && spec.cwd.is_dir() },
                started,
                &capture,
            );
            outcome.output = message;
            return (outcome, Vec::new());
        }
    };
    let pgid = child.id() as i32;
    // Ctrl-C may have landed between the check above and the registration.
    if is_cancelled() {
        platform::signal_group(pgid, platform::Stop::Term);
    }

    // The copy is capped like a suite log (head, marker, tail), with a head sized for reports.
    let stdout_cut = Arc::new(AtomicU64::new(0));
    let stdout_copy = stdout_copy_file.map(|file| {
        let mut copy = CappedLog::new(file, STDOUT_FILE_HEAD_BYTES, LOG_TAIL_BYTES, "output");
        copy.cut_total = Some(stdout_cut.clone());
        copy
    });
    let capture = Capture::new(HEAD_BYTES, TAIL_BYTES);
    let mut pump = pump::Pump::new(&mut child, spec.stdin.clone(), stdout_copy, keep, capture, log.clone());
    let mut waiter = pump::Waiter::new(child, watch);
    let (status, timed_out) = pump.until_exit(&mut waiter, pgid, timeout, grace);

    // The leader is gone; anything it left behind in its group goes too, and so does every
    // descendant that left the group but still carries this command's marker.
    platform::signal_group(pgid, platform::Stop::Kill);
    let leftovers = {
        let mut active = lock(active_groups());
        active.remove(&pgid);
        if subreaper && platform::may_have_leftovers(&active) {
            platform::kill_leftovers(&|found: &str| found == marker, &active)
        } else {
            Vec::new()
        }
    };
    let drained = pump.drain(Instant::now() + PIPE_DRAIN);
    let (capture, stdout) = pump.finish();

    let exit = if is_cancelled() && !timed_out {
        Exit::Cancelled
    } else if timed_out {
        Exit::TimedOut
    } else {
        match status {
            Ok(status) => platform::exit_of(status),
            Err(e) => {
                Exit::SpawnFailed { message: format!("waiting for `{}` failed: {e}", spec.program), not_found: false }
            }
        }
    };
    let mut outcome = finished(exit, started, &capture);
    outcome.stdout_file_cut = stdout_cut.load(Ordering::SeqCst);
    if !leftovers.is_empty() {
        outcome.output.push_str(&format!(
            "\n[fcorr: killed {} process(es) that outlived the command outside its process group: {:?}]",
            leftovers.len(),
            leftovers
        ));
    }
    if !drained {
        outcome
            .output
            .push_str("\n[fcorr: output pipes still open after the process group ended; a process escaped its group]");
    }
    {
        let mut sink = lock(log);
        if !leftovers.is_empty() {
            // The log is what people read after the run: it names the pids too.
            let _ = writeln!(sink, "[fcorr: killed leftover process(es) outside the command's group: {leftovers:?}]");
        }
        let line = format!("[fcorr: {} after {:.1}s]\n\n", outcome.exit, outcome.duration.as_secs_f64());
        let _ = sink.write_all(line.as_bytes());
        let _ = sink.flush();
    }
    (outcome, stdout)
}

/// Why a command could not start with E2BIG: which argument or variable is too long, or that
/// all of them together are.
fn too_big_to_start(spec: &CommandSpec, e: &io::Error) -> String {
    const PER_STRING: usize = 128 * 1024;
    let env = spec.env.iter().map(|(k, v)| (format!("the variable {k}"), k.len() + 1 + v.len()));
    let args = spec.args.iter().enumerate().map(|(i, a)| (format!("argument {}", i + 1), a.len()));
    let longest = args.chain(env).max_by_key(|(_, len)| *len);
    let what = match longest {
        Some((name, len)) if len >= PER_STRING => {
            format!("{name} is {len} bytes, over the kernel's limit of {PER_STRING} bytes for one")
        }
        _ => "its arguments and environment together are over the kernel's limit".to_string(),
    };
    format!(
        "cannot start `{}`: {e}: {what}; pass large data on stdin or in a file instead (for a system under test, \
         `stdin = \"prompt\"` or `\"case\"` rather than `{{prompt}}` in the command)",
        spec.program
    )
}

fn finished(exit: Exit, started: Instant, capture: &Capture) -> CommandOutcome {
    CommandOutcome { exit, duration: started.elapsed(), output: capture.render(), stdout_file_cut: 0 }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn sh(script: &str) -> CommandSpec {
        CommandSpec::shell(script, std::env::temp_dir())
    }

    #[test]
    fn captures_exit_code_and_output() {
        let out = run(&sh("echo hello; echo oops >&2; exit 3"), Duration::from_secs(10), DEFAULT_GRACE, &null_log());
        assert_eq!(out.exit, Exit::Code(3));
        assert!(out.output.contains("hello") && out.output.contains("oops"), "{}", out.output);
    }

    #[test]
    fn a_background_command_and_its_children_run_at_a_lower_priority() {
        // `nice` with no arguments prints the niceness it runs at; `sh -c` forks it as a child.
        let niceness = |background: bool| {
            let mut spec = sh("nice");
            spec.background = background;
            let outcome = run(&spec, Duration::from_secs(30), DEFAULT_GRACE, &null_log());
            assert!(outcome.exit.success(), "{}", outcome.output);
            outcome.output.trim().parse::<i32>().unwrap()
        };
        let normal = niceness(false);
        assert_eq!(niceness(true), (normal + 10).min(19));
    }

    #[test]
    fn stdin_bytes_reach_the_command() {
        let mut spec = sh("tr a-z A-Z");
        spec.stdin = Some(b"hello stdin".to_vec());
        let out = run(&spec, Duration::from_secs(10), DEFAULT_GRACE, &null_log());
        assert_eq!(out.exit, Exit::Code(0));
        assert!(out.output.contains("HELLO STDIN"), "{}", out.output);
    }

    #[test]
    fn missing_program_is_reported_as_not_found() {
        let spec = CommandSpec::new("fcorr-no-such-tool", &[], std::env::temp_dir());
        let out = run(&spec, Duration::from_secs(5), DEFAULT_GRACE, &null_log());
        assert!(matches!(out.exit, Exit::SpawnFailed { not_found: true, .. }), "{:?}", out.exit);
        assert!(out.output.contains("fcorr-no-such-tool"));
    }

    #[test]
    fn timeout_kills_the_whole_group_including_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The grandchild ignores SIGTERM, so only the SIGKILL after the grace period stops it.
        let script = format!("sh -c 'trap \"\" TERM; echo $$ > {}; sleep 300' & wait", pidfile.display());
        let started = Instant::now();
        let out = run(&sh(&script), Duration::from_millis(500), Duration::from_millis(500), &null_log());
        assert_eq!(out.exit, Exit::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(5));
        let pid: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        assert!(!wait_until_dead(pid, Duration::from_secs(2)), "grandchild {pid} survived the timeout");
    }

    /// Polls `/proc` until `pid` is gone or a zombie; returns whether it is still alive.
    pub(crate) fn wait_until_dead(pid: u32, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let alive = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                // The state letter follows the parenthesised command name.
                Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.trim().chars().next()) != Some('Z'),
                Err(_) => false,
            };
            if !alive || Instant::now() > deadline {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Reads the pids the script wrote, one per file, waiting for the files to appear.
    fn pids_in(dir: &std::path::Path, names: &[&str]) -> Vec<u32> {
        names
            .iter()
            .map(|name| {
                let path = dir.join(name);
                let deadline = Instant::now() + Duration::from_secs(5);
                loop {
                    if let Ok(text) = std::fs::read_to_string(&path)
                        && let Ok(pid) = text.trim().parse()
                    {
                        break pid;
                    }
                    assert!(Instant::now() < deadline, "{} was never written", path.display());
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .collect()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn descendants_in_their_own_session_or_double_forked_do_not_outlive_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        // A grandchild in a new session (setsid), and a classic daemon: fork, setsid, fork again,
        // parent exits. Neither is in the command's process group any more.
        let daemon = "import os, sys, time\n\
                      if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        \
                      open(sys.argv[1], 'w').write(str(os.getpid()))\n        time.sleep(300)\n    os._exit(0)\n";
        std::fs::write(dir.path().join("daemon.py"), daemon).unwrap();
        let script = format!(
            "setsid sh -c 'echo $$ > {d}/sess; exec sleep 300' </dev/null >/dev/null 2>&1 & \
             python3 {d}/daemon.py {d}/daemon </dev/null >/dev/null 2>&1; \
             while [ ! -s {d}/sess ] || [ ! -s {d}/daemon ]; do sleep 0.05; done; echo started"
        );
        let out = run(&sh(&script), Duration::from_secs(20), DEFAULT_GRACE, &null_log());
        assert_eq!(out.exit, Exit::Code(0), "{}", out.output);
        for pid in pids_in(dir.path(), &["sess", "daemon"]) {
            assert!(!wait_until_dead(pid, Duration::from_secs(2)), "{pid} outlived the command: {}", out.output);
        }
        assert!(out.output.contains("outlived the command"), "{}", out.output);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_setsid_grandchild_does_not_survive_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let script =
            format!("setsid sh -c 'trap \"\" TERM; echo $$ > {d}/sess; sleep 300' >/dev/null 2>&1 & sleep 300");
        let out = run(&sh(&script), Duration::from_millis(800), Duration::from_millis(300), &null_log());
        assert_eq!(out.exit, Exit::TimedOut);
        let pid = pids_in(dir.path(), &["sess"])[0];
        assert!(!wait_until_dead(pid, Duration::from_secs(2)), "setsid grandchild {pid} survived the timeout");
    }

    #[test]
    fn tokens_are_removed_from_the_child_environment_unless_passed() {
        // Inherited from fcorr's own environment, as on a runner. The child writes its
        // environment to a file: its output would show a registered token as `***`.
        let dir = tempfile::tempdir().unwrap();
        let env_file = dir.path().join("env.txt");
        let mut spec = sh(&format!("env > {}", env_file.display()));
        // SAFETY: set once in this test process before the child is spawned; no other test reads it.
        unsafe {
            std::env::set_var("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "s3cr3t-value");
            std::env::set_var("ACTIONS_RUNTIME_TOKEN", "s3cr3t-value");
        }
        run(&spec, Duration::from_secs(10), DEFAULT_GRACE, &null_log());
        let seen = std::fs::read_to_string(&env_file).unwrap();
        assert!(!seen.contains("s3cr3t-value"), "{seen}");
        assert!(seen.contains(MARKER_VAR), "{seen}");
        spec.pass_env = vec!["ACTIONS_RUNTIME_TOKEN".into()];
        run(&spec, Duration::from_secs(10), DEFAULT_GRACE, &null_log());
        let seen = std::fs::read_to_string(&env_file).unwrap();
        assert!(seen.contains("ACTIONS_RUNTIME_TOKEN=s3cr3t-value"), "{seen}");
        assert!(!seen.contains("ACTIONS_ID_TOKEN_REQUEST_TOKEN"), "{seen}");
    }

    #[test]
    fn configured_secrets_are_withheld_unless_passed_and_redacted_from_output_and_log() {
        const VALUE: &str = "fcorr-process-secret-5120";
        // SAFETY: a variable no other test reads, set before any child is spawned.
        unsafe { std::env::set_var("FCORR_TEST_PROCESS_SECRET", VALUE) };
        crate::secrets::register(&["FCORR_TEST_PROCESS_SECRET".to_string()]);
        let dir = tempfile::tempdir().unwrap();
        let env_file = dir.path().join("env.txt");
        // The value also reaches the child another way (its own script) and is printed in
        // pieces small enough to be split between reads, and too short to be masked on their
        // own as a prefix or suffix of it (secrets::fragments): the whole is found across reads.
        let script = format!(
            "env > {}; printf 'fcorr-proc'; sleep 0.1; printf 'ess-secr'; sleep 0.1; printf 'et-5120 on stdout\\n'; echo {VALUE} >&2",
            env_file.display()
        );
        let mut spec = sh(&script);
        spec.stdout_file = Some(dir.path().join("stdout.txt"));
        let log_path = dir.path().join("suite.log");
        let log = capped_file_log(File::create(&log_path).unwrap());
        let out = run(&spec, Duration::from_secs(10), DEFAULT_GRACE, &log);
        drop(log);
        assert!(!std::fs::read_to_string(&env_file).unwrap().contains(VALUE));
        // Stdout and stderr are redacted each on its own (and so interleave a little later).
        assert!(out.output.matches("***").count() == 2 && !out.output.contains(VALUE), "{}", out.output);
        let logged = std::fs::read_to_string(&log_path).unwrap();
        // The command line itself names the value: redacted too.
        assert!(logged.matches("***").count() == 3 && !logged.contains(VALUE), "{logged}");
        assert_eq!(std::fs::read_to_string(dir.path().join("stdout.txt")).unwrap(), "*** on stdout\n");
        spec.pass_env = vec!["FCORR_TEST_PROCESS_SECRET".into()];
        run(&spec, Duration::from_secs(10), DEFAULT_GRACE, &null_log());
        assert!(std::fs::read_to_string(&env_file).unwrap().contains(&format!("FCORR_TEST_PROCESS_SECRET={VALUE}")));
    }

    #[test]
    fn a_huge_output_leaves_a_capped_log_with_head_tail_and_a_marker() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suite.log");
        let log = capped_file_log(File::create(&path).unwrap());
        // 40 MB of output from a real process, with recognisable first and last lines.
        let script = "echo FIRST-LINE; yes 0123456789abcdef0123456789abcdef | head -c 40000000; echo; echo LAST-LINE";
        let out = run(&sh(script), Duration::from_secs(60), DEFAULT_GRACE, &log);
        assert_eq!(out.exit, Exit::Code(0));
        drop(log);
        let size = std::fs::metadata(&path).unwrap().len() as usize;
        assert!(size <= LOG_HEAD_BYTES + LOG_TAIL_BYTES + 4096, "log is {size} bytes");
        let text = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&text);
        assert!(text.contains("FIRST-LINE") && text.contains("LAST-LINE"));
        let marker = text.lines().find(|l| l.starts_with("[fcorr: ") && l.contains("bytes cut")).unwrap();
        let cut: u64 = marker["[fcorr: ".len()..].split(' ').next().unwrap().parse().unwrap();
        // What was cut plus what was kept is what was printed, plus fcorr's own lines.
        assert!(cut + size as u64 >= 40_000_000, "{marker}");
    }

    #[test]
    fn a_huge_stdout_copy_is_capped_with_a_marker_and_the_cut_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.txt");
        let mut spec =
            sh("echo FIRST-LINE; yes 0123456789abcdef0123456789abcdef | head -c 80000000; echo; echo LAST-LINE; \
             echo on-stderr >&2");
        spec.stdout_file = Some(path.clone());
        let out = run(&spec, Duration::from_secs(120), DEFAULT_GRACE, &null_log());
        assert_eq!(out.exit, Exit::Code(0));
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= (STDOUT_FILE_HEAD_BYTES + LOG_TAIL_BYTES + 4096) as u64, "the copy is {size} bytes");
        let text = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&text);
        assert!(text.starts_with("FIRST-LINE\n") && text.ends_with("LAST-LINE\n"));
        assert!(!text.contains("on-stderr"), "only stdout is copied");
        let marker = text.lines().find(|l| l.starts_with("[fcorr: ") && l.contains("bytes cut")).unwrap();
        assert!(marker.contains("of this output"), "{marker}");
        let cut: u64 = marker["[fcorr: ".len()..].split(' ').next().unwrap().parse().unwrap();
        assert_eq!(out.stdout_file_cut, cut);
        assert!(cut + size >= 80_000_000 + 22, "{marker}");
        // A small output is copied whole, with nothing cut.
        spec.args = vec!["-c".into(), "echo small".into()];
        let out = run(&spec, Duration::from_secs(10), DEFAULT_GRACE, &null_log());
        assert_eq!((std::fs::read_to_string(&path).unwrap().as_str(), out.stdout_file_cut), ("small\n", 0));
    }

    #[test]
    fn capture_keeps_head_and_tail_on_char_boundaries() {
        let mut c = Capture::new(4, 4);
        c.push("ééééé-ééééé".as_bytes());
        let text = c.render();
        assert!(text.starts_with("éé"));
        assert!(text.contains("bytes omitted"));
        assert!(!text.contains('\u{FFFD}'), "{text}");
    }

    /// The bytes the capture left out, from its marker (0 when it kept everything).
    fn omitted(output: &str) -> u64 {
        output.split("[... ").nth(1).map_or(0, |rest| rest.split(' ').next().unwrap().parse().unwrap())
    }

    #[test]
    fn a_command_filling_both_pipes_without_reading_a_large_stdin_finishes_with_every_byte() {
        // Each pipe gets far more than its 64 KiB buffer, at the same time, while 4 MiB wait on
        // stdin that the command never reads: a loop that blocked on any one pipe would hang.
        let dir = tempfile::tempdir().unwrap();
        let mut spec = sh("(head -c 300000 /dev/zero | tr '\\0' e >&2) & \
             head -c 300000 /dev/zero | tr '\\0' o; wait; echo END");
        spec.stdin = Some(vec![b'i'; 4 << 20]);
        spec.stdout_file = Some(dir.path().join("stdout"));
        let out = run(&spec, Duration::from_secs(60), DEFAULT_GRACE, &null_log());
        assert_eq!(out.exit, Exit::Code(0), "{}", out.output);
        let copy = std::fs::read(dir.path().join("stdout")).unwrap();
        assert_eq!(copy.len(), 300_004);
        assert!(copy[..300_000].iter().all(|b| *b == b'o') && copy.ends_with(b"END\n"));
        // The capture counted every byte of both pipes: kept plus omitted is all of it.
        assert_eq!(omitted(&out.output) + (HEAD_BYTES + TAIL_BYTES) as u64, 600_004, "{}", &out.output[..200]);
    }

    #[test]
    fn a_command_that_closes_its_output_early_still_times_out() {
        let started = Instant::now();
        let out = run(
            &sh("echo before; exec >&-; echo on-stderr >&2; exec 2>&-; sleep 300"),
            Duration::from_millis(500),
            Duration::from_millis(500),
            &null_log(),
        );
        assert_eq!(out.exit, Exit::TimedOut);
        assert!(out.output.contains("before") && out.output.contains("on-stderr"), "{}", out.output);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn a_huge_stdin_to_a_command_that_exits_at_once_is_not_an_error() {
        let mut spec = sh("echo ok");
        spec.stdin = Some(vec![b'x'; 16 << 20]);
        let out = run(&spec, Duration::from_secs(30), DEFAULT_GRACE, &null_log());
        assert_eq!((out.exit, out.output.as_str()), (Exit::Code(0), "ok\n"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_that_escaped_with_the_output_pipe_loses_it_when_the_command_is_over() {
        // A grandchild in a session of its own and without fcorr's marker cannot be found or
        // attributed, so it survives the command; it keeps writing to the command's stdout. Once
        // the drain gives up, fcorr's end of the pipe is closed (fcorr used to keep a thread
        // reading it for the rest of the run), so its next write ends it with SIGPIPE.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let script = format!(
            "env -u {MARKER_VAR} setsid sh -c 'echo $$ > {d}/pid; while echo tick; do sleep 0.05; done' & \
             while [ ! -s {d}/pid ]; do sleep 0.05; done"
        );
        let out = run(&sh(&script), Duration::from_secs(20), DEFAULT_GRACE, &null_log());
        let pid = pids_in(dir.path(), &["pid"])[0];
        let survived = wait_until_dead(pid, Duration::from_secs(3));
        // SAFETY: kill only sends a signal; the pid is our test's own escaped process.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        assert_eq!(out.exit, Exit::Code(0), "{}", out.output);
        assert!(out.output.contains("output pipes still open"), "{}", out.output);
        assert!(!survived, "the escaped writer {pid} still had a reader after the command ended");
    }

    #[test]
    fn without_a_pidfd_the_thread_that_waits_gives_the_same_outcomes() {
        // Where pidfd_open fails (macOS, Linux before 5.3, a seccomp filter) a thread waits.
        let fallback = |spec: &CommandSpec, timeout: Duration| {
            run_watching(spec, timeout, Duration::from_millis(300), &null_log(), None, pump::Watch::Thread).0
        };
        let mut spec = sh("tr a-z A-Z; echo oops >&2; exit 3");
        spec.stdin = Some(b"hello stdin".to_vec());
        let out = fallback(&spec, Duration::from_secs(10));
        assert_eq!(out.exit, Exit::Code(3));
        assert!(out.output.contains("HELLO STDIN") && out.output.contains("oops"), "{}", out.output);
        let started = Instant::now();
        let out = fallback(&sh("trap '' TERM; sleep 300"), Duration::from_millis(300));
        assert_eq!(out.exit, Exit::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    }

    #[test]
    fn display_quotes_words_with_spaces() {
        let spec = CommandSpec::new("pytest", &["-k", "a and b"], "/");
        assert_eq!(spec.display(), "pytest -k 'a and b'");
    }

    #[test]
    fn display_abbreviates_inline_scripts_but_the_log_form_keeps_them() {
        let spec = CommandSpec::new("python", &["-c", "import sys\nprint(1)\n", "a.py"], "/");
        assert_eq!(spec.display(), "python -c <inline script, 2 lines> a.py");
        assert!(spec.display_full().contains("print(1)"));
    }
}
