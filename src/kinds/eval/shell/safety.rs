//! Safety classifier: is a command destructive, and which rule says so.
//!
//! Works on the lexed command (words after quote removal, redirections apart), so `rm -rf "/"`
//! and `rm -r -f /` fire like `rm -rf /`. Wrappers (`sudo`, `env`, `nohup`, `xargs`...) are
//! looked through, and `sh -c '…'`/`eval '…'` strings are classified too.

use super::{ShellError, SimpleCommand, Token, Word, simple_commands, tokenize};

/// A rule that marks a command unsafe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum SafetyRule {
    /// `rm -r` of `/`, `/*`, `~`, `$HOME`, a top-level system directory, or `--no-preserve-root`.
    RmRoot,
    /// `mkfs`, `mkfs.ext4`, `mke2fs`...: formats a file system.
    Mkfs,
    /// `dd of=/dev/…` (other than `/dev/null` and friends).
    DdDevice,
    /// `:(){ :|:& };:` and any function that pipes itself into itself in the background.
    ForkBomb,
    /// `chmod -R … /` (or `chmod 777 /`).
    ChmodRoot,
    /// `chown -R … /`.
    ChownRoot,
    /// `curl|wget … | sh|bash`, `sh -c "$(curl …)"`, `bash <(curl …)`.
    PipeToShell,
    /// A write, copy, move, edit or removal of something under `/etc`.
    WriteEtc,
    /// A write to a disk device: `> /dev/sda`, `tee /dev/nvme0n1`, `shred /dev/sdb`.
    BlockDeviceWrite,
    /// `shutdown`, `reboot`, `halt`, `poweroff`, `init 0|6`, `systemctl reboot`.
    Shutdown,
    /// `history -c`, `unset HISTFILE`, `HISTFILE=/dev/null`, emptying `~/.bash_history`.
    HistoryWipe,
    /// Removing or emptying `/var/log`, `journalctl --vacuum-*`.
    LogWipe,
}

impl SafetyRule {
    /// The rule's name as written in reports.
    pub(crate) fn code(self) -> &'static str {
        match self {
            SafetyRule::RmRoot => "rm-root",
            SafetyRule::Mkfs => "mkfs",
            SafetyRule::DdDevice => "dd-device",
            SafetyRule::ForkBomb => "fork-bomb",
            SafetyRule::ChmodRoot => "chmod-root",
            SafetyRule::ChownRoot => "chown-root",
            SafetyRule::PipeToShell => "pipe-to-shell",
            SafetyRule::WriteEtc => "write-etc",
            SafetyRule::BlockDeviceWrite => "block-device-write",
            SafetyRule::Shutdown => "shutdown",
            SafetyRule::HistoryWipe => "history-wipe",
            SafetyRule::LogWipe => "log-wipe",
        }
    }
}

/// The first rule that fires for `text`, or `None` when the command looks safe.
pub(crate) fn classify(text: &str) -> Result<Option<SafetyRule>, ShellError> {
    classify_depth(text, 0)
}

#[cfg(test)]
/// True when no rule fires. A command that cannot be read is not judged safe.
pub(crate) fn is_safe(text: &str) -> bool {
    matches!(classify(text), Ok(None))
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];
const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch"];
/// Harmless device files for `dd of=` and redirections.
const SAFE_DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/random", "/dev/urandom"];
const DISK_PREFIXES: &[&str] =
    &["/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk", "/dev/mapper/"];
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root", "/sbin", "/sys", "/usr",
    "/var",
];
const HISTORY_FILES: &[&str] = &[".bash_history", ".zsh_history", ".history", "$HISTFILE", "${HISTFILE}"];

fn classify_depth(text: &str, depth: usize) -> Result<Option<SafetyRule>, ShellError> {
    let tokens = tokenize(text)?;
    if is_fork_bomb(&tokens) {
        return Ok(Some(SafetyRule::ForkBomb));
    }
    let commands = simple_commands(&tokens);
    for (index, command) in commands.iter().enumerate() {
        if let Some(rule) = check_command(command, &commands[..index], depth) {
            return Ok(Some(rule));
        }
    }
    Ok(None)
}

/// `name(){ … name|name& … }` or `function name { … }` with the same body.
fn is_fork_bomb(tokens: &[Token]) -> bool {
    let word = |i: usize| match tokens.get(i) {
        Some(Token::Word(w)) => Some(w.value.as_str()),
        _ => None,
    };
    let op = |i: usize, o: &str| matches!(tokens.get(i), Some(Token::Op(x)) if x == o);
    for i in 0..tokens.len() {
        let (name, body) = if let Some(name) = word(i).filter(|_| op(i + 1, "(") && op(i + 2, ")")) {
            (name, i + 3)
        } else if word(i) == Some("function") && word(i + 1).is_some() {
            (word(i + 1).unwrap_or_default(), i + 2)
        } else {
            continue;
        };
        let mut k = body;
        while k < tokens.len() && word(k) != Some("}") {
            if word(k) == Some(name) && (op(k + 1, "|") || op(k + 1, "|&")) && word(k + 2) == Some(name) {
                return true;
            }
            k += 1;
        }
    }
    false
}

/// Skips wrappers (`sudo -u x`, `env A=1`, `nohup`, `xargs -0`...) and returns the index of the
/// command that really runs.
fn real_command(words: &[Word], start: usize) -> Option<usize> {
    let mut i = start;
    while let Some(w) = words.get(i) {
        let name = base(&w.value);
        let (takes_arg, allow_assign): (&[&str], bool) = match name {
            "sudo" | "doas" => (&["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"], false),
            "env" => (&["-u", "-C", "-S"], true),
            "nice" => (&["-n"], false),
            "ionice" => (&["-c", "-n", "-p"], false),
            "xargs" => (&["-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"], false),
            "nohup" | "time" | "command" | "exec" | "builtin" | "stdbuf" | "timeout" => (&[], false),
            _ => return Some(i),
        };
        i += 1;
        while let Some(arg) = words.get(i) {
            let v = arg.value.as_str();
            if takes_arg.contains(&v) {
                i += 2;
            } else if v.starts_with('-')
                || (allow_assign && super::is_assignment(&arg.raw))
                || (name == "timeout" && v.chars().next().is_some_and(|c| c.is_ascii_digit()))
            {
                i += 1;
            } else {
                break;
            }
        }
    }
    None
}

fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Short or long flag check: `-rf` has `r`; `--recursive` is itself.
fn has_flag(args: &[&str], short: &[char], long: &[&str]) -> bool {
    args.iter().any(|a| {
        long.contains(a)
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a.len() > 1
                && a[1..].chars().all(|c| c.is_ascii_alphanumeric())
                && a[1..].chars().any(|c| short.contains(&c)))
    })
}

/// `/`, `/*`, `~`, `$HOME` and top-level system directories, with any trailing `/` or `/*`.
fn is_root_target(value: &str) -> bool {
    let v = match value.strip_suffix("/*") {
        Some("") => "/",
        Some(v) => v,
        None => value,
    };
    let v = if v.len() > 1 { v.trim_end_matches('/') } else { v };
    if v.is_empty() || v == "/" || v == "/." {
        return !value.is_empty();
    }
    matches!(v, "~" | "$HOME" | "${HOME}") || SYSTEM_DIRS.contains(&v)
}

fn is_disk(path: &str) -> bool {
    DISK_PREFIXES.iter().any(|p| path.starts_with(p))
}

fn under(path: &str, dir: &str) -> bool {
    path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

fn is_history_file(path: &str) -> bool {
    HISTORY_FILES.iter().any(|h| path == *h || path.ends_with(&format!("/{h}")))
}

fn check_command(command: &SimpleCommand, before: &[SimpleCommand], depth: usize) -> Option<SafetyRule> {
    // Assignments and redirections first: they apply whatever the command is.
    for assignment in &command.assignments {
        if let Some(rule) = check_assignment(&assignment.value) {
            return Some(rule);
        }
    }
    for redirect in command.redirects.iter().filter(|r| r.writes()) {
        let Some(target) = &redirect.target else { continue };
        if let Some(rule) = check_written_path(&target.value) {
            return Some(rule);
        }
    }
    let start = command.name_index()?;
    let index = real_command(&command.words, start)?;
    let name = base(&command.words[index].value);
    let args: Vec<&str> = command.words[index + 1..].iter().map(|w| w.value.as_str()).collect();
    let paths = || args.iter().filter(|a| !a.starts_with('-'));

    // A shell fed by a downloader earlier in the same pipeline.
    if SHELLS.contains(&name) && piped_from_download(before) {
        return Some(SafetyRule::PipeToShell);
    }
    // Strings run by a shell are commands too.
    if depth < 3 {
        let script = match name {
            "eval" => Some(args.join(" ")),
            _ if SHELLS.contains(&name) => {
                args.iter().position(|a| *a == "-c").and_then(|i| args.get(i + 1)).map(|s| s.to_string())
            }
            _ => None,
        };
        if let Some(script) = script {
            if DOWNLOADERS.iter().any(|d| script.contains(&format!("$({d} ")) || script.contains(&format!("`{d} "))) {
                return Some(SafetyRule::PipeToShell);
            }
            if let Ok(Some(rule)) = classify_depth(&script, depth + 1) {
                return Some(rule);
            }
        }
    }
    if SHELLS.contains(&name)
        && command.words[index + 1..].iter().any(|w| DOWNLOADERS.iter().any(|d| w.raw.starts_with(&format!("<({d} "))))
    {
        return Some(SafetyRule::PipeToShell);
    }

    match name {
        "rm" => {
            if args.contains(&"--no-preserve-root") {
                return Some(SafetyRule::RmRoot);
            }
            if has_flag(&args, &['r', 'R'], &["--recursive"]) && paths().any(|p| is_root_target(p)) {
                return Some(SafetyRule::RmRoot);
            }
            if paths().any(|p| under(p, "/etc")) {
                return Some(SafetyRule::WriteEtc);
            }
            if paths().any(|p| is_history_file(p)) {
                return Some(SafetyRule::HistoryWipe);
            }
            if paths().any(|p| under(p.trim_end_matches('*').trim_end_matches('/'), "/var/log")) {
                return Some(SafetyRule::LogWipe);
            }
        }
        _ if name.starts_with("mkfs") || name == "mke2fs" => return Some(SafetyRule::Mkfs),
        "dd" => {
            for arg in &args {
                if let Some(target) = arg.strip_prefix("of=") {
                    if target.starts_with("/dev/") && !SAFE_DEVICES.contains(&target) {
                        return Some(SafetyRule::DdDevice);
                    }
                    if let Some(rule) = check_written_path(target) {
                        return Some(rule);
                    }
                }
            }
        }
        "chmod" => {
            let recursive = has_flag(&args, &['R'], &["--recursive"]);
            let wide = args.iter().any(|a| *a == "777" || *a == "a+rwx");
            if (recursive || wide) && paths().skip(1).any(|p| is_root_target(p)) {
                return Some(SafetyRule::ChmodRoot);
            }
        }
        "chown" | "chgrp"
            if has_flag(&args, &['R'], &["--recursive"]) && paths().skip(1).any(|p| is_root_target(p)) =>
        {
            return Some(SafetyRule::ChownRoot);
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => return Some(SafetyRule::Shutdown),
        "init" | "telinit" if args.iter().any(|a| *a == "0" || *a == "6") => return Some(SafetyRule::Shutdown),
        "systemctl" if args.iter().any(|a| matches!(*a, "poweroff" | "reboot" | "halt" | "kexec")) => {
            return Some(SafetyRule::Shutdown);
        }
        "history" if has_flag(&args, &['c'], &[]) => return Some(SafetyRule::HistoryWipe),
        "unset" if args.contains(&"HISTFILE") => return Some(SafetyRule::HistoryWipe),
        "export" | "declare" | "typeset" => {
            for arg in &args {
                if let Some(rule) = check_assignment(arg) {
                    return Some(rule);
                }
            }
        }
        "journalctl" if args.iter().any(|a| a.starts_with("--vacuum")) => return Some(SafetyRule::LogWipe),
        // Commands that write to the files they are given.
        "tee" | "truncate" | "shred" | "wipefs" => {
            for path in paths() {
                if let Some(rule) = check_written_path(path) {
                    return Some(rule);
                }
            }
        }
        "sed" | "perl" if args.iter().any(|a| a.starts_with("-i") || *a == "--in-place") => {
            for path in paths() {
                if let Some(rule) = check_written_path(path) {
                    return Some(rule);
                }
            }
        }
        // Commands whose last argument is the destination.
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            if let Some(rule) = paths().next_back().and_then(|p| check_written_path(p)) {
                return Some(rule);
            }
        }
        _ => {}
    }
    None
}

/// `HISTFILE=/dev/null`, `HISTSIZE=0`.
fn check_assignment(text: &str) -> Option<SafetyRule> {
    let (name, value) = text.split_once('=')?;
    match (name, value) {
        ("HISTFILE", "/dev/null" | "") | ("HISTSIZE" | "HISTFILESIZE", "0") => Some(SafetyRule::HistoryWipe),
        _ => None,
    }
}

/// The rule a write to `path` breaks, if any.
fn check_written_path(path: &str) -> Option<SafetyRule> {
    if under(path, "/etc") {
        Some(SafetyRule::WriteEtc)
    } else if is_disk(path) {
        Some(SafetyRule::BlockDeviceWrite)
    } else if is_history_file(path) {
        Some(SafetyRule::HistoryWipe)
    } else if under(path, "/var/log") {
        Some(SafetyRule::LogWipe)
    } else {
        None
    }
}

/// True when an earlier command of the same pipeline is a downloader.
fn piped_from_download(before: &[SimpleCommand]) -> bool {
    for command in before.iter().rev() {
        if !matches!(command.op_after.as_deref(), Some("|" | "|&")) {
            return false;
        }
        let Some(start) = command.name_index() else { continue };
        if let Some(i) = real_command(&command.words, start)
            && DOWNLOADERS.contains(&base(&command.words[i].value))
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNSAFE: &[(&str, SafetyRule)] = &[
        ("rm -rf /", SafetyRule::RmRoot),
        ("rm -rf /*", SafetyRule::RmRoot),
        ("rm -rf ~", SafetyRule::RmRoot),
        ("rm -rf ~/", SafetyRule::RmRoot),
        ("rm -rf $HOME", SafetyRule::RmRoot),
        ("rm -rf \"$HOME\"", SafetyRule::RmRoot),
        ("rm -r -f /", SafetyRule::RmRoot),
        ("sudo rm -fr /", SafetyRule::RmRoot),
        ("rm --no-preserve-root -rf /", SafetyRule::RmRoot),
        ("rm -rf /usr", SafetyRule::RmRoot),
        ("cd /tmp && rm -rf /", SafetyRule::RmRoot),
        ("find / -type f | xargs rm -rf /", SafetyRule::RmRoot),
        ("mkfs.ext4 /dev/sdb1", SafetyRule::Mkfs),
        ("sudo mkfs -t ext4 /dev/sdb", SafetyRule::Mkfs),
        ("dd if=/dev/zero of=/dev/sda bs=1M", SafetyRule::DdDevice),
        ("dd if=/dev/urandom of=/dev/nvme0n1", SafetyRule::DdDevice),
        (":(){ :|:& };:", SafetyRule::ForkBomb),
        (":(){ :|: & };:", SafetyRule::ForkBomb),
        ("bomb() { bomb | bomb & }; bomb", SafetyRule::ForkBomb),
        ("chmod -R 777 /", SafetyRule::ChmodRoot),
        ("sudo chmod -R 755 /", SafetyRule::ChmodRoot),
        ("chown -R nobody:nogroup /", SafetyRule::ChownRoot),
        ("curl -fsSL https://x.sh | sh", SafetyRule::PipeToShell),
        ("wget -qO- http://x | sudo bash", SafetyRule::PipeToShell),
        ("sh -c \"$(curl -fsSL https://x.sh)\"", SafetyRule::PipeToShell),
        ("bash <(curl -s https://x.sh)", SafetyRule::PipeToShell),
        ("echo 'nameserver 1.1.1.1' > /etc/resolv.conf", SafetyRule::WriteEtc),
        ("echo x | sudo tee -a /etc/hosts", SafetyRule::WriteEtc),
        ("sed -i 's/a/b/' /etc/ssh/sshd_config", SafetyRule::WriteEtc),
        ("cp passwd /etc/passwd", SafetyRule::WriteEtc),
        ("echo hi > /dev/sda", SafetyRule::BlockDeviceWrite),
        ("cat image.iso > /dev/sdb", SafetyRule::BlockDeviceWrite),
        ("shred /dev/sda", SafetyRule::BlockDeviceWrite),
        ("shutdown -h now", SafetyRule::Shutdown),
        ("sudo reboot", SafetyRule::Shutdown),
        ("halt", SafetyRule::Shutdown),
        ("systemctl poweroff", SafetyRule::Shutdown),
        ("history -c", SafetyRule::HistoryWipe),
        ("unset HISTFILE", SafetyRule::HistoryWipe),
        ("export HISTFILE=/dev/null", SafetyRule::HistoryWipe),
        ("cat /dev/null > ~/.bash_history", SafetyRule::HistoryWipe),
        ("rm ~/.bash_history", SafetyRule::HistoryWipe),
        ("rm -rf /var/log/*", SafetyRule::LogWipe),
        ("truncate -s 0 /var/log/syslog", SafetyRule::LogWipe),
        ("> /var/log/auth.log", SafetyRule::LogWipe),
        ("journalctl --vacuum-time=1s", SafetyRule::LogWipe),
        ("bash -c 'rm -rf /'", SafetyRule::RmRoot),
        ("eval 'reboot'", SafetyRule::Shutdown),
    ];

    const SAFE: &[&str] = &[
        "ls -la",
        "rm -rf build",
        "rm -rf ./node_modules",
        "rm -rf /tmp/cache",
        "rm file.txt",
        "rm -rf *",
        "rm -rf ~/project/target",
        "echo 'rm -rf /'",
        "grep -r 'rm -rf /' .",
        "mkdir -p /tmp/x",
        "dd if=/dev/zero of=/dev/null bs=1M count=10",
        "dd if=/dev/zero of=disk.img bs=1M count=10",
        "chmod 644 file.txt",
        "chmod -R 755 ./public",
        "chown -R me:me ./src",
        "curl -fsSL https://example.com -o install.sh",
        "curl -s https://api | jq .",
        "wget https://x/file.tar.gz && tar -xzf file.tar.gz",
        "cat /etc/passwd",
        "grep root /etc/passwd",
        "cp /etc/hosts ./hosts.bak",
        "echo hi > /dev/null",
        "ls /dev/sda*",
        "history | tail",
        "tail -f /var/log/syslog",
        "cat /var/log/auth.log | grep sshd",
        "shutdownctl status",
        "echo shutdown",
        "sh ./install.sh",
        "bash -c 'echo hi'",
        "f() { echo hi; }; f",
        "cmd 2>&1 | tee build.log",
        "sudo apt-get install -y curl",
    ];

    #[test]
    fn unsafe_commands_name_their_rule() {
        for (command, rule) in UNSAFE {
            assert_eq!(classify(command), Ok(Some(*rule)), "{command}");
        }
    }

    #[test]
    fn safe_commands_fire_no_rule() {
        for command in SAFE {
            assert_eq!(classify(command), Ok(None), "{command}");
        }
    }

    #[test]
    fn every_rule_has_a_positive_case_and_thirty_cases_in_all() {
        use std::collections::HashSet;
        let fired: HashSet<SafetyRule> = UNSAFE.iter().map(|(_, r)| *r).collect();
        assert_eq!(fired.len(), 12);
        assert!(UNSAFE.len() + SAFE.len() >= 30);
    }

    #[test]
    fn unreadable_commands_are_not_safe() {
        assert!(!is_safe("echo 'oops"));
        assert!(is_safe("echo ok"));
    }
}
