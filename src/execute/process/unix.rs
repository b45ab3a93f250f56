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

/// Makes the command start at a CPU priority 10 lower than fcorr's (capped at the lowest, 19),
/// set in the child before it runs the program, so the program and everything it starts run
/// there from their first instruction. Best effort: a failure only means the command competes
/// with the tests at normal priority.
///
/// Setting it from fcorr after the start raced with the program: a short one (or one that
/// forks at once) could run, and read or pass on its priority, before the call. The hook makes
/// std fork instead of posix_spawn for these commands, a cost only background work pays.
pub(crate) fn start_at_lower_priority(command: &mut Command) {
    // SAFETY: the hook runs in the forked child before exec and only makes two system calls
    // (getpriority, setpriority), both async-signal-safe; it touches no memory fcorr shares.
    unsafe {
        command.pre_exec(|| {
            let own = libc::getpriority(libc::PRIO_PROCESS, 0);
            libc::setpriority(libc::PRIO_PROCESS, 0, (own + 10).min(19));
            Ok(())
        });
    }
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

/// False when no process fcorr started can have outlived its command outside the ones still
/// `running`: fcorr has no child at all, or (where the kernel lists a process's children) every
/// child is the leader of a running command. Every orphaned descendant is adopted as fcorr's
/// child through the subreaper, so a leftover always hangs under a child that is not a running
/// leader. Checking this costs one or a few system calls; [`kill_leftovers`] reads every
/// process's `/proc/<pid>/stat` (about 125 files here, 3 ms of system time per command).
///
/// A child that exits while the kernel lists its siblings can hide one of them (the list is
/// not read atomically); such a leftover is still killed by the sweep at the end of the run.
#[cfg(target_os = "linux")]
pub(crate) fn may_have_leftovers(running: &std::collections::HashSet<i32>) -> bool {
    if linux::has_no_children() {
        return false;
    }
    match linux::children() {
        Some(children) => children.iter().any(|pid| !running.contains(pid)),
        None => true,
    }
}

/// Without a subreaper nothing can be found, so there is nothing to look for.
#[cfg(not(target_os = "linux"))]
pub(crate) fn may_have_leftovers(_running: &std::collections::HashSet<i32>) -> bool {
    false
}

/// Without a subreaper there is nothing to find: the process-group kill is all fcorr can do.
#[cfg(not(target_os = "linux"))]
pub(crate) fn kill_leftovers(_wanted: &dyn Fn(&str) -> bool, _running: &std::collections::HashSet<i32>) -> Vec<i32> {
    Vec::new()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};
    use std::fmt::Write as _;

    use super::super::MARKER_VAR;

    pub(super) struct Info {
        pub ppid: i32,
        pub zombie: bool,
    }

    /// True when this process has no child, running or exited (`waitid` says ECHILD).
    pub(super) fn has_no_children() -> bool {
        // SAFETY: an all-zero siginfo_t is a valid value of this plain C struct.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid writes only into `info`; WNOWAIT leaves an exited child's status for
        // the thread that waits for it, and WNOHANG never blocks.
        let found = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
        found == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD)
    }

    /// This process's children, from `/proc/self/task/*/children` (each thread's own; an
    /// adopted orphan is the child of whichever thread the kernel picked). `None` when the kernel
    /// does not offer that file (built without CONFIG_PROC_CHILDREN) or it cannot be read.
    pub(super) fn children() -> Option<HashSet<i32>> {
        static OFFERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if !*OFFERED.get_or_init(|| std::path::Path::new("/proc/thread-self/children").exists()) {
            return None;
        }
        let mut children = HashSet::new();
        for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            match std::fs::read_to_string(task.path().join("children")) {
                Ok(list) => children.extend(list.split_whitespace().filter_map(|pid| pid.parse::<i32>().ok())),
                // The thread ended since the directory was listed; its children moved to another.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return None,
            }
        }
        Some(children)
    }

    /// Every process's parent and state, from `/proc/<pid>/stat`.
    pub(super) fn process_table() -> HashMap<i32, Info> {
        let mut table = HashMap::new();
        let Ok(entries) = std::fs::read_dir("/proc") else { return table };
        let mut path = String::with_capacity(32);
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            path.clear();
            let _ = write!(path, "/proc/{pid}/stat");
            let Some(stat) = read_stat(&path) else { continue };
            let Some((ppid, state)) = parse_stat(&stat) else { continue };
            table.insert(pid, Info { ppid, zombie: state == b'Z' || state == b'X' });
        }
        table
    }

    /// The first bytes of a `/proc/<pid>/stat` file, in one read: they hold the parent and the
    /// state (the command name in the second field is at most 64 bytes), and one read into a
    /// buffer on the stack is three system calls per process where `read_to_string` makes five.
    pub(super) fn read_stat(path: &str) -> Option<StatHead> {
        use std::io::Read;
        let mut head = StatHead { bytes: [0; 256], len: 0 };
        head.len = std::fs::File::open(path).ok()?.read(&mut head.bytes).ok()?;
        Some(head)
    }

    pub(super) struct StatHead {
        pub(super) bytes: [u8; 256],
        pub(super) len: usize,
    }

    /// The parent and the state letter from "pid (comm) S ppid ...": comm may hold spaces and
    /// parentheses, so the fields start after the last ')' (the fields after comm are numbers).
    pub(super) fn parse_stat(head: &StatHead) -> Option<(i32, u8)> {
        let bytes = &head.bytes[..head.len];
        let close = bytes.iter().rposition(|b| *b == b')')?;
        let rest = std::str::from_utf8(&bytes[close + 1..]).ok()?;
        let mut fields = rest.split_ascii_whitespace();
        let state = *fields.next()?.as_bytes().first()?;
        let ppid = fields.next()?.parse().ok()?;
        Some((ppid, state))
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
        let state = read_stat(&format!("/proc/{pid}/stat")).and_then(|head| parse_stat(&head)).map(|(_, s)| s);
        !matches!(state, Some(b'Z') | Some(b'X') | None)
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_is_not_a_running_command_may_be_a_leftover() {
        // The cheap check may only ever answer "nothing to look for" when nothing can be left:
        // a live child of fcorr that no running command accounts for must send the sweep on.
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        assert!(may_have_leftovers(&std::collections::HashSet::new()));
        let _ = child.kill();
        let _ = child.wait();
        // Once it is gone (and no other test's child is around) the check may say no; it is not
        // asserted, since tests run side by side and spawn children of their own.
        let _ = may_have_leftovers(&[pid].into_iter().collect());
    }

    #[test]
    fn stat_lines_are_parsed_after_the_last_parenthesis() {
        let head = |text: &str| {
            let mut head = linux::StatHead { bytes: [0; 256], len: text.len() };
            head.bytes[..text.len()].copy_from_slice(text.as_bytes());
            head
        };
        assert_eq!(linux::parse_stat(&head("42 (sh) S 7 42 42 0 -1")), Some((7, b'S')));
        assert_eq!(linux::parse_stat(&head("43 (a) Z 1 (b)) Z 9 43 43")), Some((9, b'Z')));
        assert_eq!(linux::parse_stat(&head("44 (x y) R")), None);
        // The real file of this process.
        let me = linux::read_stat(&format!("/proc/{}/stat", std::process::id())).unwrap();
        let (ppid, state) = linux::parse_stat(&me).unwrap();
        assert_eq!(ppid as u32, std::os::unix::process::parent_id());
        assert!(state.is_ascii_uppercase());
    }
}
