//! Running one external command: its own process group, a timeout with a grace period, output
//! streamed to a log file and kept in memory only as a capped head and tail.
//!
//! Every process group started here is registered so Ctrl-C can stop them all; after a command
//! ends, whatever is left of its group (grandchildren included) is killed, so nothing outlives it.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of output kept from the start of a command.
pub const HEAD_BYTES: usize = 8 * 1024;
/// Bytes of output kept from the end of a command.
pub const TAIL_BYTES: usize = 32 * 1024;
/// Time between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// How long to wait for output pipes to close once the process group is gone.
const PIPE_DRAIN: Duration = Duration::from_secs(2);

/// A command to run.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Also write the complete stdout to this file (for tools that report on stdout).
    pub stdout_file: Option<PathBuf>,
    /// Bytes written to the command's stdin (then closed); `None` leaves stdin closed. Systems
    /// under test and benchmark executors read their case or task here.
    pub stdin: Option<Vec<u8>>,
}

impl CommandSpec {
    /// A command with no extra environment.
    pub fn new(program: impl Into<String>, args: &[&str], cwd: impl Into<PathBuf>) -> CommandSpec {
        CommandSpec {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: cwd.into(),
            env: Vec::new(),
            stdout_file: None,
            stdin: None,
        }
    }

    /// Runs `script` with `sh -c` (user-written command overrides).
    pub fn shell(script: &str, cwd: impl Into<PathBuf>) -> CommandSpec {
        CommandSpec::new("sh", &["-c", script], cwd)
    }

    /// The command line as a person would read it: a multi-line inline script (`python -c`) is
    /// shown as a placeholder; [`CommandSpec::display_full`] has every word.
    pub fn display(&self) -> String {
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
    pub fn display_full(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(shell_quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Quotes a word for display when it contains shell-special characters.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
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
    pub fn success(&self) -> bool {
        matches!(self, Exit::Code(0))
    }

    /// The exit code, when the command exited on its own.
    pub fn code(&self) -> Option<i32> {
        match self {
            Exit::Code(code) => Some(*code),
            _ => None,
        }
    }
}

/// Result of running a command.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub duration: Duration,
    /// Capped head and tail of stdout and stderr, interleaved as they arrived.
    pub output: String,
    /// Total bytes the command printed.
    pub output_bytes: u64,
}

/// Where a command's output is written in full.
pub type LogSink = Arc<Mutex<Box<dyn Write + Send>>>;

/// A log sink that writes to a file.
pub fn file_log(file: File) -> LogSink {
    Arc::new(Mutex::new(Box::new(file)))
}

/// A log sink that discards everything.
pub fn null_log() -> LogSink {
    Arc::new(Mutex::new(Box::new(io::sink())))
}

static ACTIVE_GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
static CANCELLED: AtomicBool = AtomicBool::new(false);

fn active_groups() -> &'static Mutex<HashSet<i32>> {
    ACTIVE_GROUPS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// True once the user asked to stop.
pub fn is_cancelled() -> bool {
    CANCELLED.load(Ordering::SeqCst)
}

/// Stops every running command: SIGTERM now; a second call sends SIGKILL.
pub fn cancel_all() {
    let again = CANCELLED.swap(true, Ordering::SeqCst);
    let signal = if again { libc::SIGKILL } else { libc::SIGTERM };
    let groups: Vec<i32> = lock(active_groups()).iter().copied().collect();
    for pgid in groups {
        signal_group(pgid, signal);
    }
}

/// Installs the Ctrl-C handler that cancels every running command.
pub fn install_interrupt_handler() -> Result<(), String> {
    ctrlc::set_handler(cancel_all).map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind; keep using it.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: killpg only sends a signal; an invalid or finished group yields ESRCH, ignored.
    unsafe {
        libc::killpg(pgid, signal);
    }
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
/// `CI=true` is always set; stdin is closed. Output goes to `log` in full.
pub fn run(spec: &CommandSpec, timeout: Duration, grace: Duration, log: &LogSink) -> Outcome {
    let started = Instant::now();
    {
        let mut sink = lock(log);
        // Log write failures must not stop the run; the capture still has the output.
        let _ = writeln!(sink, "$ {}  (in {})", spec.display_full(), spec.cwd.display());
    }
    if is_cancelled() {
        return finished(Exit::Cancelled, started, &Capture::new(0, 0));
    }

    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env("CI", "true")
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(if spec.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);

    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let not_found = e.kind() == io::ErrorKind::NotFound;
            let message = if not_found && !spec.cwd.is_dir() {
                format!("working directory {} does not exist", spec.cwd.display())
            } else if not_found {
                format!("`{}` was not found on PATH", spec.program)
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
            return outcome;
        }
    };
    let pgid = child.id() as i32;
    lock(active_groups()).insert(pgid);
    // Ctrl-C may have landed between the check above and the registration.
    if is_cancelled() {
        signal_group(pgid, libc::SIGTERM);
    }

    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), spec.stdin.clone()) {
        // A writer thread, so a command that does not read its stdin cannot block us; when it
        // exits without reading, the write fails with EPIPE, which is fine.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let capture = Arc::new(Mutex::new(Capture::new(HEAD_BYTES, TAIL_BYTES)));
    let stdout_copy = spec.stdout_file.as_ref().and_then(|p| File::create(p).ok());
    let (pipes_done_tx, pipes_done_rx) = mpsc::channel::<()>();
    let mut readers = 0;
    if let Some(stdout) = child.stdout.take() {
        readers += 1;
        spawn_reader(stdout, stdout_copy, capture.clone(), log.clone(), pipes_done_tx.clone());
    }
    if let Some(stderr) = child.stderr.take() {
        readers += 1;
        spawn_reader(stderr, None, capture.clone(), log.clone(), pipes_done_tx.clone());
    }
    drop(pipes_done_tx);

    let (exit_tx, exit_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let status = child.wait();
        let _ = exit_tx.send(status);
    });

    let mut timed_out = false;
    let status = match exit_rx.recv_timeout(timeout) {
        Ok(status) => status,
        Err(_) => {
            timed_out = true;
            signal_group(pgid, libc::SIGTERM);
            match exit_rx.recv_timeout(grace) {
                Ok(status) => status,
                Err(_) => {
                    signal_group(pgid, libc::SIGKILL);
                    exit_rx.recv().unwrap_or_else(|_| Err(io::Error::other("wait thread ended without a status")))
                }
            }
        }
    };
    // The leader is gone; anything it left behind in its group goes too.
    signal_group(pgid, libc::SIGKILL);
    lock(active_groups()).remove(&pgid);

    let drain_deadline = Instant::now() + PIPE_DRAIN;
    let mut drained = 0;
    while drained < readers {
        let left = drain_deadline.saturating_duration_since(Instant::now());
        if pipes_done_rx.recv_timeout(left).is_err() {
            break;
        }
        drained += 1;
    }

    let exit = if is_cancelled() && !timed_out {
        Exit::Cancelled
    } else if timed_out {
        Exit::TimedOut
    } else {
        match status {
            Ok(status) => match (status.code(), status.signal()) {
                (Some(code), _) => Exit::Code(code),
                (None, Some(signal)) => Exit::Signal(signal),
                (None, None) => Exit::Signal(0),
            },
            Err(e) => {
                Exit::SpawnFailed { message: format!("waiting for `{}` failed: {e}", spec.program), not_found: false }
            }
        }
    };
    let capture = lock(&capture);
    let mut outcome = finished(exit, started, &capture);
    if drained < readers {
        outcome
            .output
            .push_str("\n[fcorr: output pipes still open after the process group ended; a process escaped its group]");
    }
    {
        let mut sink = lock(log);
        let _ = writeln!(sink, "[fcorr: {:?} after {:.1}s]\n", outcome.exit, outcome.duration.as_secs_f64());
        let _ = sink.flush();
    }
    outcome
}

fn finished(exit: Exit, started: Instant, capture: &Capture) -> Outcome {
    Outcome { exit, duration: started.elapsed(), output: capture.render(), output_bytes: capture.total }
}

fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    mut copy: Option<File>,
    capture: Arc<Mutex<Capture>>,
    log: LogSink,
    done: mpsc::Sender<()>,
) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let chunk = &buf[..n];
                    if let Some(file) = copy.as_mut() {
                        // A failed copy write leaves a short report file; the parser reports it.
                        let _ = file.write_all(chunk);
                    }
                    let _ = lock(&log).write_all(chunk);
                    lock(&capture).push(chunk);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
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

    #[test]
    fn capture_keeps_head_and_tail_on_char_boundaries() {
        let mut c = Capture::new(4, 4);
        c.push("ééééé-ééééé".as_bytes());
        let text = c.render();
        assert!(text.starts_with("éé"));
        assert!(text.contains("bytes omitted"));
        assert!(!text.contains('\u{FFFD}'), "{text}");
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
