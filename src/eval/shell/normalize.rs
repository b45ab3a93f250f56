//! Normalisation: two commands that a shell runs the same way compare equal.
//!
//! Rules (docs/evals.md): whitespace and quoting are removed by the lexer; short flags are split
//! and sorted within a run (`-la` ≡ `-al` ≡ `-l -a`); `--name=value` ≡ `--name value`; a leading
//! `./` on an argument is dropped; a trailing `;` (or newline) is dropped.

use super::{ShellError, Token, is_assignment, is_control, tokenize};

/// Commands whose single-dash words are long options (`find -name`), never flag groups.
const SINGLE_DASH_LONG: &[&str] = &[
    "find", "java", "javac", "gcc", "g++", "cc", "clang", "clang++", "go", "ffmpeg", "convert", "magick", "xdotool",
    "tcpdump", "iptables", "ip",
];

/// The canonical form of a command: one string per token, words shell-quoted so that an
/// operator `|` and a quoted word `'|'` stay apart.
pub(crate) fn normalize(text: &str) -> Result<Vec<String>, ShellError> {
    let tokens = tokenize(text)?;
    let mut out: Vec<String> = Vec::new();
    let mut flags: Vec<char> = Vec::new();
    // Where we are in the current simple command.
    let mut name: Option<String> = None;
    let mut after_double_dash = false;
    let mut after_redirect = false;
    for token in &tokens {
        match token {
            Token::Op(op) => {
                flush_flags(&mut flags, &mut out);
                if is_control(op) {
                    name = None;
                    after_double_dash = false;
                    // Consecutive separators are one; `;` and a newline are the same.
                    if op == ";" && (out.is_empty() || out.last().is_some_and(|l| l == ";")) {
                        continue;
                    }
                } else {
                    after_redirect = true;
                }
                out.push(op.clone());
            }
            Token::Word(word) => {
                let value = word.value.as_str();
                if after_redirect {
                    after_redirect = false;
                    out.push(quote(strip_dot_slash(value)));
                    continue;
                }
                let Some(command) = name.as_deref() else {
                    if !is_assignment(&word.raw) {
                        name = Some(value.to_string());
                    }
                    out.push(quote(value));
                    continue;
                };
                if after_double_dash {
                    out.push(quote(strip_dot_slash(value)));
                    continue;
                }
                if value == "--" {
                    flush_flags(&mut flags, &mut out);
                    after_double_dash = true;
                    out.push(quote(value));
                } else if let Some(long) = value.strip_prefix("--").filter(|l| !l.is_empty()) {
                    flush_flags(&mut flags, &mut out);
                    match long.split_once('=') {
                        Some((flag, arg)) => {
                            out.push(quote(&format!("--{flag}")));
                            out.push(quote(arg));
                        }
                        None => out.push(quote(value)),
                    }
                } else if is_flag_group(value) && !SINGLE_DASH_LONG.contains(&command_base(command)) {
                    flags.extend(value.chars().skip(1));
                } else {
                    flush_flags(&mut flags, &mut out);
                    out.push(quote(strip_dot_slash(value)));
                }
            }
        }
    }
    flush_flags(&mut flags, &mut out);
    while out.last().is_some_and(|l| l == ";") {
        out.pop();
    }
    Ok(out)
}

/// True when `expected` and `actual` normalise to the same command. A command that cannot be
/// read (unterminated quote) equals only its own text, trimmed.
pub(crate) fn commands_match(expected: &str, actual: &str) -> bool {
    match (normalize(expected), normalize(actual)) {
        (Ok(a), Ok(b)) => a == b,
        _ => expected.trim() == actual.trim(),
    }
}

#[cfg(test)]
/// The canonical form as one line, for reports.
pub(crate) fn normalized_text(text: &str) -> Result<String, ShellError> {
    normalize(text).map(|parts| parts.join(" "))
}

/// `-la`, `-5`: a single dash then letters or digits.
fn is_flag_group(value: &str) -> bool {
    value.len() > 1 && value.starts_with('-') && value[1..].chars().all(|c| c.is_ascii_alphanumeric())
}

/// `/usr/bin/find` → `find`.
fn command_base(command: &str) -> &str {
    command.rsplit('/').next().unwrap_or(command)
}

/// Emits a run of short flags one per token, in sorted order.
fn flush_flags(flags: &mut Vec<char>, out: &mut Vec<String>) {
    flags.sort_unstable();
    for flag in flags.drain(..) {
        out.push(format!("-{flag}"));
    }
}

/// `./a` → `a`, `././a` → `a`, `./` → `.`; but `./-rf` keeps its `./`, or it would become flags.
fn strip_dot_slash(value: &str) -> &str {
    let mut v = value;
    while let Some(rest) = v.strip_prefix("./") {
        if rest.starts_with('-') {
            break;
        }
        if rest.is_empty() {
            return ".";
        }
        v = rest.trim_start_matches('/');
        if v.is_empty() {
            return ".";
        }
    }
    v
}

fn quote(value: &str) -> String {
    shell_words::quote(value).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs that must compare equal.
    const EQUAL: &[(&str, &str)] = &[
        // whitespace
        ("ls -la", "ls   -la"),
        ("ls -la", "  ls -la  "),
        ("ls\t-la", "ls -la"),
        ("cat a | wc -l", "cat a|wc -l"),
        ("make && make test", "make&&make test"),
        ("echo hi > out.txt", "echo hi >out.txt"),
        ("cmd 2>&1", "cmd 2>&1 "),
        // quoting styles
        ("echo 'a b'", "echo \"a b\""),
        ("echo 'a b'", "echo a\\ b"),
        ("grep 'foo' file", "grep foo file"),
        ("grep \"foo\" file", "grep foo file"),
        ("find . -name '*.txt'", "find . -name \"*.txt\""),
        ("find . -name '*.txt'", "find . -name \\*.txt"),
        ("echo 'it'\\''s'", "echo \"it's\""),
        ("git commit -m 'fix bug'", "git commit -m \"fix bug\""),
        // short-flag grouping and order
        ("ls -la", "ls -al"),
        ("ls -la", "ls -l -a"),
        ("ls -la", "ls -a -l"),
        ("ls -lah", "ls -h -al"),
        ("tar -xzf a.tgz", "tar -x -z -f a.tgz"),
        ("grep -rn foo .", "grep -nr foo ."),
        ("ps -ef", "ps -fe"),
        ("rm -rf build", "rm -r -f build"),
        // long-flag `=` forms
        ("ls --color=auto", "ls --color auto"),
        ("grep --include=*.rs -r x .", "grep --include '*.rs' -r x ."),
        ("git log --format=%H", "git log --format %H"),
        // redundant ./
        ("cat ./notes.txt", "cat notes.txt"),
        ("find ./ -name x", "find . -name x"),
        ("cp ./a ./b", "cp a b"),
        ("cat .//a", "cat a"),
        ("cat ././a", "cat a"),
        ("echo hi > ./out.txt", "echo hi > out.txt"),
        // trailing ;
        ("ls -la;", "ls -la"),
        ("ls -la ;", "ls -la"),
        ("ls -la;\n", "ls -la"),
        ("cd /tmp; ls", "cd /tmp ;ls"),
        ("echo a;\n\necho b", "echo a; echo b"),
        ("cd /tmp\nls", "cd /tmp; ls"),
        // comments
        ("ls -la # list", "ls -la"),
    ];

    /// Pairs that must not compare equal.
    const DIFFERENT: &[(&str, &str)] = &[
        ("ls -la", "ls -l"),
        ("ls -la", "ls -lA"),
        ("ls -la", "ls"),
        ("ls -la", "dir -la"),
        ("rm -rf build", "rm -rf build2"),
        ("echo 'a b'", "echo a b"),
        ("echo '|'", "echo |"),
        ("echo 'a;b'", "echo a; b"),
        ("cat a | wc -l", "cat a; wc -l"),
        ("make && make test", "make || make test"),
        ("sleep 1 &", "sleep 1"),
        ("./build.sh", "build.sh"),
        ("cat ./-rf", "cat -rf"),
        ("find . -name x", "find . -mane x"),
        ("grep -e a -i f", "grep -i a -e f"),
        ("ls --color=auto", "ls --color=never"),
        ("echo hi > a", "echo hi >> a"),
        ("head -n 5 f", "head -n 6 f"),
        ("git log --format=%H", "git log --format=%h"),
        ("ls -- -la", "ls -la"),
    ];

    #[test]
    fn equivalent_commands_are_equal() {
        for (a, b) in EQUAL {
            assert!(commands_match(a, b), "expected equal: {a:?} vs {b:?} ({:?} vs {:?})", normalize(a), normalize(b));
        }
    }

    #[test]
    fn different_commands_are_not_equal() {
        for (a, b) in DIFFERENT {
            assert!(!commands_match(a, b), "expected different: {a:?} vs {b:?} ({:?})", normalize(a));
        }
    }

    #[test]
    fn at_least_forty_pairs() {
        assert!(EQUAL.len() + DIFFERENT.len() >= 40);
    }

    #[test]
    fn unreadable_commands_equal_only_their_own_text() {
        assert!(commands_match("echo 'x", " echo 'x"));
        assert!(!commands_match("echo 'x", "echo x"));
    }

    #[test]
    fn canonical_text_is_readable() {
        assert_eq!(normalized_text("ls -al ./src;").unwrap(), "ls -a -l src");
        assert_eq!(normalized_text("echo 'a b' | tr a-z A-Z").unwrap(), "echo 'a b' | tr a-z A-Z");
    }
}
