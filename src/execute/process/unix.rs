//! Process control on Unix: process groups, signals, exit statuses and, on Linux, the child
//! subreaper that lets fcorr find and kill descendants that left their group or session.
//!
//! Everything here that only Linux offers sits behind `cfg(target_os = "linux")`; on macOS the
//! process-group kill is all there is (see docs/github-action.md, "Processes").

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};

use super::Exit;

/// A signal fcorr sends to the processes it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Ask politely (SIGTERM).
    Term,
    /// Kill (SIGKILL).
    Kill,
}

impl Stop {
    fn signal(self) -> i32 {
        match self {
            Stop::Term => libc::SIGTERM,
            Stop::Kill => libc::SIGKILL,
        }
    }
}

/// Calls `handle` with the signal's number, on a thread of its own, each time fcorr receives
/// SIGINT, SIGTERM or SIGHUP (which then no longer end the process by themselves).
pub(crate) fn on_stop_signals(handle: impl Fn(i32) + Send + 'static) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("fcorr-signals".into()).spawn(move || {
        for signal in signals.forever() {
            handle(signal);
        }
    })?;
    Ok(())
}

/// Puts the command in a new process group of its own, so the whole group can be signalled.
pub(crate) fn own_group(command: &mut Command) {
    command.process_group(0);
}

/// Signals every process of group `pgid`.
pub(crate) fn signal_group(pgid: i32, stop: Stop) {
    // SAFETY: killpg only sends a signal; an invalid or finished group yields ESRCH, ignored.
    unsafe {
        libc::killpg(pgid, stop.signal());
    }
}

/// How a process ended, from its wait status.
pub(crate) fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Signal(0),
    }
}

/// The conventional name of a signal number (`SIGSEGV`), for messages.
pub(crate) fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return None,
    })
}

/// Makes fcorr the reaper of every orphaned descendant, so a process that calls `setsid` or
/// double-forks stays visible as a descendant instead of being adopted by init.
#[cfg(target_os = "linux")]
pub(crate) fn become_subreaper() -> bool {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Without a subreaper, orphans go to launchd/init and cannot be found again.
#[cfg(not(target_os = "linux"))]
pub(crate) fn become_subreaper() -> bool {
    false
}

/// Kills descendants of fcorr that outlived their command, and reaps the ones that are ours.
///
/// A descendant is left alone when it belongs to a command still running (`running` holds their
/// process ids: leaders and everything below them). Otherwise it is killed when its environment
/// carries a marker that `wanted` accepts: the marker of the command that just ended, or at the
/// end of the run any marker this fcorr handed out. A process without a marker was not started
/// through [`super::run`] (a server another part of fcorr started, say) or scrubbed its
/// environment: it cannot be attributed, so it is left alone. Returns the pids killed.
#[cfg(target_os = "linux")]
pub(crate) fn kill_leftovers(wanted: &dyn Fn(&str) -> bool, running: &std::collections::HashSet<i32>) -> Vec<i32> {
    use std::time::{Duration, Instant};
    let me = std::process::id() as i32;
    let mut killed = Vec::new();
    // Processes may fork while we kill; a few rounds catch the children of the dying.
    for _ in 0..5 {
        let table = linux::process_table();
        let mut round = Vec::new();
        for (&pid, info) in &table {
            if pid == me || !linux::descends_from(pid, me, &table) || linux::under_any(pid, running, me, &table) {
                continue;
            }
            if info.zombie {
                // Already dead. A zombie's environment cannot be read, so it cannot be told from a
                // child some `std::process::Command` elsewhere in fcorr is about to wait for:
                // reaping it could steal that status. An orphan that exited on its own stays a
                // zombie (no process, one table entry) until fcorr exits.
                continue;
            }
            if linux::marker_of(pid).is_some_and(|m| wanted(&m)) {
                // SAFETY: kill only sends a signal; a pid that just exited yields ESRCH.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                round.push((pid, info.ppid));
            }
        }
        if round.is_empty() {
            break;
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        for &(pid, ppid) in &round {
            while linux::alive(pid) && Instant::now() < deadline {
                if ppid == me {
                    linux::reap(pid);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            if ppid == me {
                linux::reap(pid);
            }
        }
        killed.extend(round.into_iter().map(|(pid, _)| pid));
    }
    killed
}

/// Without a subreaper there is nothing to find: the process-group kill is all fcorr can do.
#[cfg(not(target_os = "linux"))]
pub(crate) fn kill_leftovers(_wanted: &dyn Fn(&str) -> bool, _running: &std::collections::HashSet<i32>) -> Vec<i32> {
    Vec::new()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};

    use super::super::MARKER_VAR;

    pub(super) struct Info {
        pub ppid: i32,
        pub zombie: bool,
    }

    /// Every process's parent and state, from `/proc/<pid>/stat`.
    pub(super) fn process_table() -> HashMap<i32, Info> {
        let mut table = HashMap::new();
        let Ok(entries) = std::fs::read_dir("/proc") else { return table };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so split at the last ')'.
            let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else { continue };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            let Some(ppid) = fields.next().and_then(|p| p.parse().ok()) else { continue };
            table.insert(pid, Info { ppid, zombie: state == "Z" || state == "X" });
        }
        table
    }

    /// True when `ancestor` is on `pid`'s parent chain.
    pub(super) fn descends_from(pid: i32, ancestor: i32, table: &HashMap<i32, Info>) -> bool {
        let mut current = pid;
        // The chain is finite; the bound guards against a table read mid-change.
        for _ in 0..4096 {
            let Some(info) = table.get(&current) else { return false };
            if info.ppid == ancestor {
                return true;
            }
            if info.ppid <= 1 {
                return false;
            }
            current = info.ppid;
        }
        false
    }

    /// True when `pid` or one of its ancestors below `me` is in `running`.
    pub(super) fn under_any(pid: i32, running: &HashSet<i32>, me: i32, table: &HashMap<i32, Info>) -> bool {
        let mut current = pid;
        for _ in 0..4096 {
            if running.contains(&current) {
                return true;
            }
            match table.get(&current) {
                Some(info) if info.ppid != me && info.ppid > 1 => current = info.ppid,
                _ => return false,
            }
        }
        false
    }

    /// The value of fcorr's command marker in the environment `pid` started with.
    pub(super) fn marker_of(pid: i32) -> Option<String> {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let prefix = format!("{MARKER_VAR}=");
        environ
            .split(|b| *b == 0)
            .find_map(|var| var.strip_prefix(prefix.as_bytes()))
            .map(|value| String::from_utf8_lossy(value).into_owned())
    }

    /// True while `pid` exists and is not a zombie.
    pub(super) fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
                !matches!(state, Some("Z") | Some("X") | None)
            }
            Err(_) => false,
        }
    }

    /// Collects the exit status of an adopted orphan so it does not stay a zombie.
    pub(super) fn reap(pid: i32) {
        let mut status = 0;
        // SAFETY: waitpid on one specific pid that is our child and not one std::process waits
        // for (those are in `running` and skipped); WNOHANG never blocks.
        unsafe {
            libc::waitpid(pid, &mut status, libc::WNOHANG);
        }
    }
}
