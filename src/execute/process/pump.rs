//! The I/O of one running command, in the thread that runs it: one `poll(2)` loop over its stdin
//! (written as the pipe drains), stdout and stderr (read as they fill) and its exit (a pidfd on
//! Linux), with the timeout and the grace as the poll's timeouts. No thread per pipe: on a busy
//! machine every hand-off between threads waits for a core, and that wait was most of fcorr's
//! cost per command.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};

use super::{CappedLog, Capture, LogSink, lock, platform};

/// Bytes read from a pipe at a time: a whole pipe buffer (64 KiB by default on Linux).
const CHUNK: usize = 64 * 1024;
/// The longest single poll: a bound that keeps any timeout representable on every platform
/// (macOS takes milliseconds in a C int); the loop polls again until the real deadline.
const MAX_POLL: Duration = Duration::from_secs(24 * 3600);
/// How often the last-resort waiter ([`Waiter::Polling`]) looks at the command.
const POLL_EXIT_EVERY: Duration = Duration::from_millis(10);

/// How [`Waiter::new`] watches for the exit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Watch {
    /// A pidfd where the kernel offers one, else a thread.
    Pidfd,
    /// A thread (the fallback; tests take it on purpose).
    #[cfg_attr(not(test), allow(dead_code))]
    Thread,
}

/// Tells when the command's leader has exited, as a descriptor `poll` can wait on.
pub(super) enum Waiter {
    /// A pidfd (Linux ≥ 5.3): readable once the process has exited; `wait` then returns at once.
    #[cfg(target_os = "linux")]
    Pidfd { fd: OwnedFd, child: Child },
    /// A thread blocked in `wait` (no pidfd: macOS, an old kernel, a seccomp filter); it sends
    /// the status, then drops the write end of a pipe, whose read end then polls readable.
    Thread { fd: io::PipeReader, status: mpsc::Receiver<io::Result<ExitStatus>> },
    /// Not even a pipe could be made (out of descriptors): the loop asks `try_wait` every
    /// [`POLL_EXIT_EVERY`].
    Polling(Child),
}

impl Waiter {
    pub(super) fn new(child: Child, watch: Watch) -> Waiter {
        // Only Linux has pidfds: elsewhere every watch is a thread.
        #[cfg(not(target_os = "linux"))]
        let _ = watch;
        #[cfg(target_os = "linux")]
        let child = if watch == Watch::Thread {
            child
        } else {
            let pid = rustix::process::Pid::from_child(&child);
            match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
                // The pid cannot be reused before it is waited for (only this thread does), so the
                // pidfd names this child.
                Ok(fd) => return Waiter::Pidfd { fd, child },
                // ENOSYS before Linux 5.3, EPERM under some seccomp filters, EMFILE.
                Err(_) => child,
            }
        };
        let Ok((reader, writer)) = io::pipe() else { return Waiter::Polling(child) };
        // The child goes to the thread through a channel, so a thread that cannot be started
        // hands it back instead of dropping it.
        let (give, take) = mpsc::channel::<Child>();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new().name("fcorr-wait".into()).spawn(move || {
            if let Ok(mut child) = take.recv() {
                let _ = tx.send(child.wait());
            }
            // Sent before the pipe closes: a readable pipe means the status is there.
            drop(writer);
        });
        match spawned {
            Ok(_) => match give.send(child) {
                Ok(()) => Waiter::Thread { fd: reader, status: rx },
                Err(mpsc::SendError(child)) => Waiter::Polling(child),
            },
            Err(_) => Waiter::Polling(child),
        }
    }

    /// The descriptor that polls readable once the command has exited.
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            #[cfg(target_os = "linux")]
            Waiter::Pidfd { fd, .. } => Some(fd.as_fd()),
            Waiter::Thread { fd, .. } => Some(fd.as_fd()),
            Waiter::Polling(_) => None,
        }
    }

    /// The exit status, if the command has exited (never blocks).
    fn try_status(&mut self) -> Option<io::Result<ExitStatus>> {
        match self {
            #[cfg(target_os = "linux")]
            Waiter::Pidfd { child, .. } => child.try_wait().transpose(),
            Waiter::Thread { status, .. } => match status.try_recv() {
                Ok(status) => Some(status),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => {
                    Some(Err(io::Error::other("wait thread ended without a status")))
                }
            },
            Waiter::Polling(child) => child.try_wait().transpose(),
        }
    }
}

/// What is left to write to the command's stdin.
struct Input {
    pipe: File,
    data: Vec<u8>,
    written: usize,
}

/// One output pipe: read as data arrives, redacted, and delivered to the log, the capture and
/// (stdout) the capped copy.
struct Output {
    /// `None` once the pipe reached end of file.
    pipe: Option<File>,
    redactor: crate::secrets::Redactor,
    copy: Option<CappedLog<File>>,
    /// Stdout kept in memory (for an answer read from it), up to one byte over its limit.
    keep: Option<Kept>,
}

/// Bytes kept in memory: at most `limit + 1`, so a longer output shows as one.
pub(super) struct Kept {
    pub(super) bytes: Vec<u8>,
    limit: usize,
}

impl Kept {
    fn push(&mut self, chunk: &[u8]) {
        let room = (self.limit + 1).saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
}

/// The command's pipes and where their bytes go.
pub(super) struct Pump {
    input: Option<Input>,
    outputs: Vec<Output>,
    capture: Capture,
    log: LogSink,
    buf: Vec<u8>,
}

/// How far the timeout has gone.
#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Running,
    /// SIGTERM sent to the group at the timeout; SIGKILL follows after the grace.
    Terminated,
    /// SIGKILL sent; waiting for the kernel to finish the job.
    Killed,
}

impl Pump {
    /// Takes the child's pipes (stdin gets `input`); stdout is also copied to `copy`, and kept
    /// in memory up to `keep` bytes (and one more, to tell a longer output).
    pub(super) fn new(
        child: &mut Child,
        input: Option<Vec<u8>>,
        copy: Option<CappedLog<File>>,
        keep: Option<usize>,
        capture: Capture,
        log: LogSink,
    ) -> Pump {
        // Non-blocking, so a command that stops reading its stdin (or never reads it) cannot
        // block the loop; only fcorr's ends of the pipes change.
        let nonblocking = |fd: OwnedFd| {
            // A pipe that stays blocking only risks a stall on a full stdin pipe; poll says
            // when the output pipes have data, so their reads return at once either way.
            let _ = rustix::io::ioctl_fionbio(&fd, true);
            File::from(fd)
        };
        let input = match (child.stdin.take(), input) {
            (Some(pipe), Some(data)) => Some(Input { pipe: nonblocking(pipe.into()), data, written: 0 }),
            _ => None,
        };
        let mut outputs = Vec::with_capacity(2);
        if let Some(stdout) = child.stdout.take() {
            let keep = keep.map(|limit| Kept { bytes: Vec::new(), limit });
            outputs.push(Output { pipe: Some(nonblocking(stdout.into())), redactor: Default::default(), copy, keep });
        }
        if let Some(stderr) = child.stderr.take() {
            let pipe = Some(nonblocking(stderr.into()));
            outputs.push(Output { pipe, redactor: Default::default(), copy: None, keep: None });
        }
        let mut pump = Pump { input, outputs, capture, log, buf: vec![0; CHUNK] };
        pump.close_input_if_done();
        pump
    }

    /// Moves bytes until the command's leader exits, signalling its group at the timeout
    /// (SIGTERM) and after the grace (SIGKILL). Returns the status and whether it timed out.
    pub(super) fn until_exit(
        &mut self,
        waiter: &mut Waiter,
        pgid: i32,
        timeout: Duration,
        grace: Duration,
    ) -> (io::Result<ExitStatus>, bool) {
        let mut stage = Stage::Running;
        // A timeout too far away to represent is no timeout.
        let mut deadline = Instant::now().checked_add(timeout);
        loop {
            let now = Instant::now();
            if let Some(at) = deadline
                && now >= at
            {
                if stage == Stage::Running {
                    platform::signal_group(pgid, platform::Stop::Term);
                    stage = Stage::Terminated;
                    deadline = now.checked_add(grace);
                } else {
                    platform::signal_group(pgid, platform::Stop::Kill);
                    stage = Stage::Killed;
                    deadline = None;
                }
                continue;
            }
            let mut wait = deadline.map(|at| at - now);
            if matches!(waiter, Waiter::Polling(_)) {
                wait = Some(wait.map_or(POLL_EXIT_EVERY, |w| w.min(POLL_EXIT_EVERY)));
            }
            let exit_ready = self.poll(waiter.fd(), wait);
            if (exit_ready || waiter.fd().is_none())
                && let Some(status) = waiter.try_status()
            {
                return (status, stage != Stage::Running);
            }
        }
    }

    /// After the process group is gone: stops writing stdin and reads what is left in the output
    /// pipes until they close or `deadline` passes. Returns whether they all closed (a process
    /// that escaped the group may hold them open).
    pub(super) fn drain(&mut self, deadline: Instant) -> bool {
        self.input = None;
        loop {
            if self.outputs.iter().all(|o| o.pipe.is_none()) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            self.poll(None, Some(deadline - now));
        }
    }

    /// Ends every output (what a redactor held back is delivered, the stdout copy gets its tail
    /// and marker) and returns the capture and the stdout kept in memory (empty unless asked).
    pub(super) fn finish(mut self) -> (Capture, Vec<u8>) {
        for index in 0..self.outputs.len() {
            if self.outputs[index].pipe.is_some() {
                self.close_output(index);
            }
        }
        let kept = self.outputs.iter_mut().find_map(|o| o.keep.take()).map(|k| k.bytes).unwrap_or_default();
        (self.capture, kept)
    }

    /// One `poll` over the pipes still open and `exit`, then one read or write on each ready
    /// pipe. Returns whether `exit` is readable (a poll that fails says yes, after a pause, so
    /// the caller looks at the process instead of spinning).
    fn poll(&mut self, exit: Option<BorrowedFd<'_>>, wait: Option<Duration>) -> bool {
        const NONE: usize = usize::MAX;
        // Which pipe each entry is: an output's index, `INPUT`, or `EXIT`.
        const INPUT: usize = NONE - 1;
        const EXIT: usize = NONE - 2;
        let mut slots = [NONE; 4];
        let mut ready = [PollFlags::empty(); 4];
        {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            for (index, output) in self.outputs.iter().enumerate() {
                if let Some(pipe) = &output.pipe {
                    slots[fds.len()] = index;
                    fds.push(PollFd::new(pipe, PollFlags::IN));
                }
            }
            if let Some(input) = &self.input {
                slots[fds.len()] = INPUT;
                fds.push(PollFd::new(&input.pipe, PollFlags::OUT));
            }
            if let Some(fd) = exit {
                slots[fds.len()] = EXIT;
                fds.push(PollFd::from_borrowed_fd(fd, PollFlags::IN));
            }
            let timeout = wait.map(|w| {
                let w = w.min(MAX_POLL);
                Timespec { tv_sec: w.as_secs() as _, tv_nsec: w.subsec_nanos() as _ }
            });
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => return false,
                Err(_) => {
                    std::thread::sleep(POLL_EXIT_EVERY);
                    return true;
                }
            }
            for (flags, fd) in ready.iter_mut().zip(&fds) {
                *flags = fd.revents();
            }
        }
        let mut exit_ready = false;
        for (slot, flags) in slots.into_iter().zip(ready) {
            if flags.is_empty() {
                continue;
            }
            match slot {
                NONE => {}
                EXIT => exit_ready = true,
                INPUT => self.write_input(),
                index => self.read_output(index),
            }
        }
        exit_ready
    }

    /// Writes what the stdin pipe takes now. A command may exit or close its stdin without
    /// reading it all (`echo ok` as a system under test): the write then fails with EPIPE
    /// (SIGPIPE is ignored, see main.rs), which only means the command did not read its input.
    fn write_input(&mut self) {
        let Some(input) = self.input.as_mut() else { return };
        match input.pipe.write(&input.data[input.written..]) {
            Ok(n) => input.written += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(_) => self.input = None,
        }
        self.close_input_if_done();
    }

    /// Closes stdin once everything was written, so the command sees end of file.
    fn close_input_if_done(&mut self) {
        if self.input.as_ref().is_some_and(|input| input.written >= input.data.len()) {
            self.input = None;
        }
    }

    /// Reads once from output `index` and delivers the bytes; at end of file closes it.
    fn read_output(&mut self, index: usize) {
        let Some(pipe) = self.outputs[index].pipe.as_mut() else { return };
        match pipe.read(&mut self.buf) {
            Ok(0) => self.close_output(index),
            Ok(n) => {
                let output = &mut self.outputs[index];
                // Secrets are replaced before the output reaches the log, the copy or the capture.
                let chunk = output.redactor.push(&self.buf[..n]);
                deliver(&chunk, output, &mut self.capture, &self.log);
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(_) => self.close_output(index),
        }
    }

    /// Closes output `index`: delivers what its redactor held back and finishes its copy.
    fn close_output(&mut self, index: usize) {
        let output = &mut self.outputs[index];
        output.pipe = None;
        let rest = output.redactor.finish();
        deliver(&rest, output, &mut self.capture, &self.log);
        // Finish the copy (its tail and marker) now: the caller parses it once `run` returns.
        output.copy = None;
    }
}

/// Hands a redacted chunk of `output` to its copy and kept bytes, the log and the capture.
fn deliver(chunk: &[u8], output: &mut Output, capture: &mut Capture, log: &LogSink) {
    if chunk.is_empty() {
        return;
    }
    if let Some(kept) = output.keep.as_mut() {
        kept.push(chunk);
    }
    if let Some(file) = output.copy.as_mut() {
        // A failed copy write leaves a short report file; the parser reports it.
        let _ = file.write_all(chunk);
    }
    let _ = lock(log).write_all(chunk);
    capture.push(chunk);
}
