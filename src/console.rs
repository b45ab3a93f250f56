//! fcorr's own lines on stdout and stderr, written so that a closed or failing stream never stops
//! a run: `fcorr run … | head -1` must still write its results and exit with the gate's code.
//!
//! SIGPIPE stays ignored (Rust's default), so a write to a closed pipe fails with `EPIPE`;
//! `println!` would panic on it. Every line fcorr prints goes through [`outln!`], [`out!`] and
//! [`errln!`] instead: the first failed write on a stream stops printing to it for the rest of the
//! process, and nothing else changes.
//!
//! fcorr writes no escape sequence of its own to stderr, so every stderr line is printed with the
//! controls a terminal acts on made visible (`crate::text::for_terminal`): the warnings and errors
//! quote test names, tool output and file names, which must not recolour or rewrite the terminal.
//! Stdout lines ([`outln!`], [`out!`]) are made safe the same way: `fcorr detect` prints file
//! names, `compare` and `suites list` print case and suite names. Only two kinds of stdout text
//! are written as they are ([`outln_raw!`], [`out_raw!`]): JSON documents (serde escapes every C0
//! control; what they hold is data, byte for byte) and the coloured terminal report, which
//! escapes what it quotes itself (`report::terminal`).

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
/// Set inside GitHub Actions ([`defuse_commands`]): no line fcorr prints may read as a workflow
/// command.
static DEFUSE: AtomicBool = AtomicBool::new(false);

/// From now on, every line printed through this module (and [`defused`] text) that the runner
/// would read as a workflow command is shown behind a prefix instead (`text::defuse_workflow_
/// commands`). fcorr's own commands are written by `publish::guard`, not through here.
pub fn defuse_commands() {
    DEFUSE.store(true, Ordering::Relaxed);
}

/// `text` made safe from the runner as [`defuse_commands`] asks, for output written elsewhere
/// (the table inside its fence, progress lines).
pub fn defused(text: &str) -> std::borrow::Cow<'_, str> {
    if DEFUSE.load(Ordering::Relaxed) {
        crate::text::defuse_workflow_commands(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

/// Writes to stdout, controls made visible, unless an earlier write failed; a failure stops
/// later writes.
pub fn out(args: fmt::Arguments<'_>) {
    write_to(&mut io::stdout().lock(), &STDOUT_GONE, format_args!("{}", for_stderr(args)));
}

/// Writes to stdout as it is (a JSON document, the coloured terminal report) unless an earlier
/// write failed; a failure stops later writes.
pub fn out_raw(args: fmt::Arguments<'_>) {
    write_to(&mut io::stdout().lock(), &STDOUT_GONE, args);
}

/// Writes to stderr, controls made visible, unless an earlier write failed; a failure stops later
/// writes.
pub fn err(args: fmt::Arguments<'_>) {
    write_to(&mut io::stderr().lock(), &STDERR_GONE, format_args!("{}", for_stderr(args)));
}

/// The text of a line, with the controls a terminal acts on made visible (newlines kept).
fn for_stderr(args: fmt::Arguments<'_>) -> String {
    let text = args.to_string();
    match crate::text::for_terminal(&text, true) {
        std::borrow::Cow::Owned(clean) => clean,
        std::borrow::Cow::Borrowed(_) => text,
    }
}

/// Writes bytes to stdout unless an earlier write failed (for documents written piece by piece,
/// such as `--json`'s); a failure stops later writes.
pub fn out_bytes(bytes: &[u8]) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    if io::stdout().lock().write_all(bytes).is_err() {
        STDOUT_GONE.store(true, Ordering::Relaxed);
    }
}

/// True once a write to stdout has failed (the reader went away, the disk is full).
pub fn stdout_gone() -> bool {
    STDOUT_GONE.load(Ordering::Relaxed)
}

fn write_to(stream: &mut dyn Write, gone: &AtomicBool, args: fmt::Arguments<'_>) {
    if gone.load(Ordering::Relaxed) {
        return;
    }
    // `write_fmt` retries on EINTR; any other error (EPIPE, EIO, ENOSPC) will not get better.
    let written = if DEFUSE.load(Ordering::Relaxed) {
        let text = args.to_string();
        stream.write_all(crate::text::defuse_workflow_commands(&text).as_bytes())
    } else {
        stream.write_fmt(args)
    };
    if written.is_err() {
        gone.store(true, Ordering::Relaxed);
    }
}

/// `println!` that never panics: see the module documentation.
#[macro_export]
macro_rules! outln {
    () => { $crate::console::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that never panics: see the module documentation.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::console::out(format_args!($($arg)*)) };
}

/// `println!` that never panics and writes its text as it is: only for JSON documents and the
/// coloured terminal report (see the module documentation).
#[macro_export]
macro_rules! outln_raw {
    () => { $crate::console::out_raw(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::out_raw(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that never panics and writes its text as it is: see [`outln_raw!`].
#[macro_export]
macro_rules! out_raw {
    ($($arg:tt)*) => { $crate::console::out_raw(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics: see the module documentation.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::console::err(format_args!("{}\n", format_args!($($arg)*))) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream whose reader went away.
    struct Closed(usize);

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            self.0 += 1;
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn stderr_lines_show_controls_instead_of_sending_them() {
        let name = "t\u{1b}]0;pwned\u{7}\u{202E}x";
        assert_eq!(for_stderr(format_args!("fcorr: warning: {name}\n")), "fcorr: warning: t␛]0;pwned␇[U+202E]x\n");
    }

    #[test]
    fn a_failed_write_stops_later_writes_without_panicking() {
        let gone = AtomicBool::new(false);
        let mut closed = Closed(0);
        write_to(&mut closed, &gone, format_args!("one\n"));
        write_to(&mut closed, &gone, format_args!("two\n"));
        assert!(gone.load(Ordering::Relaxed));
        assert_eq!(closed.0, 1, "nothing is written after the first failure");
    }
}
