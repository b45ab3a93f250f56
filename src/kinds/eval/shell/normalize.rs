//! Normalisation: two commands that a shell runs the same way compare equal.
//!
//! Rules (docs/evals.md): whitespace is removed by the lexer; quoting is removed except where it
//! stops an expansion (`'*.py'` ≢ `*.py`); short flags are split and sorted within a run (`-la` ≡
//! `-al` ≡ `-l -a`); a leading `./` on an argument is dropped; a trailing `;` (or newline) is
//! dropped. For the commands in [`options`](super::options) the options are read as the command
//! reads them: an argument attached or separate (`-n5` ≡ `-n 5`, `--lines=5` ≡ `-n 5`), and
//! options that do not override one another in any order (`git log --oneline -n 5` ≡ `git log -n
//! 5 --oneline`); operands and everything after `--` stay in place.

use super::options::{Syntax, syntax_of};
use super::{ShellError, Token, is_assignment, is_control, tokenize};

/// Commands whose single-dash words are long options (`find -name`), never flag groups.
const SINGLE_DASH_LONG: &[&str] = &[
    "find", "java", "javac", "gcc", "g++", "cc", "clang", "clang++", "go", "ffmpeg", "convert", "magick", "xdotool",
    "tcpdump", "iptables", "ip",
];

/// What one character of a word means to the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Taken literally: unquoted ordinary text, or anything quoted or escaped.
    Lit(char),
    /// Expanded by the shell: an unquoted glob character (`*`, `?`, `[`), a leading `~`, a brace
    /// expansion (whole), or a parameter, command or arithmetic substitution (kept as written).
    Active(String),
}

/// A word as the shell reads it: quotes removed, expansions marked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Arg(Vec<Piece>);

impl Arg {
    fn parse(raw: &str) -> Arg {
        let chars: Vec<char> = raw.chars().collect();
        let mut pieces = Vec::new();
        let mut in_double = false;
        // A `~` is expanded at the start of a word and after an unquoted `=` or `:`.
        let mut tilde_may_expand = true;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            let mut may_expand_next = false;
            if in_double {
                match c {
                    '"' => in_double = false,
                    '\\' if next.is_some_and(|n| matches!(n, '$' | '`' | '"' | '\\')) => {
                        pieces.push(Piece::Lit(chars[i + 1]));
                        i += 1;
                    }
                    '$' | '`' => {
                        i = expansion(&chars, i, &mut pieces);
                        continue;
                    }
                    _ => pieces.push(Piece::Lit(c)),
                }
                i += 1;
                continue;
            }
            match c {
                '\'' => {
                    let end = chars[i + 1..].iter().position(|&q| q == '\'').map_or(chars.len(), |p| i + 1 + p);
                    pieces.extend(chars[i + 1..end].iter().map(|&q| Piece::Lit(q)));
                    i = end;
                }
                '"' => in_double = true,
                '\\' => {
                    pieces.push(Piece::Lit(next.unwrap_or('\\')));
                    i += 1;
                }
                '$' if next == Some('\'') => {
                    i = ansi_c(&chars, i + 2, &mut pieces);
                    continue;
                }
                '$' if next == Some('"') => {
                    in_double = true;
                    i += 1;
                }
                '$' | '`' => {
                    i = expansion(&chars, i, &mut pieces);
                    continue;
                }
                '*' | '?' | '[' => pieces.push(Piece::Active(c.to_string())),
                '~' if tilde_may_expand => pieces.push(Piece::Active("~".into())),
                // The whole expansion as written: its text quoted after a bare `{` would read
                // back as a literal (`{'a,b}'`), so the canonical form would not be canonical.
                '{' if super::posix::brace_expansion_len(&chars[i..]).is_some() => {
                    let end = super::posix::brace_expansion_len(&chars[i..]).map_or(chars.len(), |len| i + len);
                    pieces.push(Piece::Active(chars[i..end].iter().collect()));
                    i = end;
                    tilde_may_expand = false;
                    continue;
                }
                '=' | ':' => {
                    pieces.push(Piece::Lit(c));
                    may_expand_next = true;
                }
                _ => pieces.push(Piece::Lit(c)),
            }
            tilde_may_expand = may_expand_next;
            i += 1;
        }
        Arg(pieces)
    }

    /// The leading literal text, up to the first expansion.
    fn literal_prefix(&self) -> String {
        self.0
            .iter()
            .map_while(|p| match p {
                Piece::Lit(c) => Some(*c),
                Piece::Active(_) => None,
            })
            .collect()
    }

    /// True when the whole word is literal text.
    fn is_literal(&self) -> bool {
        self.0.iter().all(|p| matches!(p, Piece::Lit(_)))
    }

    /// The word without its first `n` pieces.
    fn after(&self, n: usize) -> Arg {
        Arg(self.0.get(n..).unwrap_or_default().to_vec())
    }

    /// `./a` → `a`, `././a` → `a`, `./` → `.`, `./*.py` → `*.py`; but `./-rf` keeps its `./`, or
    /// it would become flags.
    fn strip_dot_slash(self) -> Arg {
        let mut pieces: &[Piece] = &self.0;
        let mut stripped = false;
        while let [Piece::Lit('.'), Piece::Lit('/'), rest @ ..] = pieces {
            if matches!(rest.first(), Some(Piece::Lit('-'))) {
                break;
            }
            pieces = rest;
            while let [Piece::Lit('/'), rest @ ..] = pieces {
                pieces = rest;
            }
            stripped = true;
        }
        match (stripped, pieces.is_empty()) {
            (false, _) => self,
            (true, true) => Arg(vec![Piece::Lit('.')]),
            (true, false) => Arg(pieces.to_vec()),
        }
    }

    /// One canonical string, read back unambiguously: expansions as written, literal text bare
    /// when it is plain (letters, digits, `_./,:@%+=-`) and starts the word, else single-quoted.
    /// (After an expansion literal text is always quoted: `"$A"B` is not `$AB`.)
    fn render(&self) -> String {
        if self.0.is_empty() {
            return "''".into();
        }
        let mut out = String::new();
        let mut literal = String::new();
        let mut after_expansion = false;
        let flush = |literal: &mut String, out: &mut String, after_expansion: bool| {
            if literal.is_empty() {
                return;
            }
            let plain = literal.chars().all(|c| c.is_ascii_alphanumeric() || "_./,:@%+=-".contains(c));
            if plain && !after_expansion {
                out.push_str(literal);
            } else {
                out.push('\'');
                out.push_str(&literal.replace('\'', "'\\''"));
                out.push('\'');
            }
            literal.clear();
        };
        for piece in &self.0 {
            match piece {
                Piece::Lit(c) => literal.push(*c),
                Piece::Active(text) => {
                    flush(&mut literal, &mut out, after_expansion);
                    out.push_str(text);
                    after_expansion = true;
                }
            }
        }
        flush(&mut literal, &mut out, after_expansion);
        out
    }
}

/// A `$…` or `` `…` `` expansion at `start`, kept as written; returns the index after it.
fn expansion(chars: &[char], start: usize, pieces: &mut Vec<Piece>) -> usize {
    let mut text = String::new();
    let end = if chars[start] == '`' {
        let close = chars[start + 1..].iter().position(|&c| c == '`').map_or(chars.len(), |p| start + 2 + p);
        text.extend(&chars[start..close.min(chars.len())]);
        close
    } else {
        match chars.get(start + 1) {
            Some('(') | Some('{') => {
                text.push('$');
                super::take_balanced(chars, start + 1, &mut text).unwrap_or(chars.len())
            }
            Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
                let len = chars[start + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').count();
                text.extend(&chars[start..start + 1 + len]);
                start + 1 + len
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(*c) => {
                text.extend(&chars[start..start + 2]);
                start + 2
            }
            // A lone `$` is literal.
            _ => {
                pieces.push(Piece::Lit('$'));
                return start + 1;
            }
        }
    };
    pieces.push(Piece::Active(text));
    end
}

/// The body of a `$'…'` quote from `start` (after the quote): escapes decoded, all literal.
fn ansi_c(chars: &[char], start: usize, pieces: &mut Vec<Piece>) -> usize {
    let mut i = start;
    while i < chars.len() && chars[i] != '\'' {
        if chars[i] == '\\' && i + 1 < chars.len() {
            let decoded = match chars[i + 1] {
                'n' => Some('\n'),
                't' => Some('\t'),
                'r' => Some('\r'),
                '\\' | '\'' | '"' => Some(chars[i + 1]),
                _ => None,
            };
            match decoded {
                Some(c) => pieces.push(Piece::Lit(c)),
                None => pieces.extend([Piece::Lit('\\'), Piece::Lit(chars[i + 1])]),
            }
            i += 2;
        } else {
            pieces.push(Piece::Lit(chars[i]));
            i += 1;
        }
    }
    i + 1
}

/// A word or a redirection of one simple command.
enum Item {
    Word(Arg),
    Redirect(String, Option<Arg>),
}

/// The canonical form of a command: one string per token, words shell-quoted so that an
/// operator `|` and a quoted word `'|'` stay apart.
pub(crate) fn normalize(text: &str) -> Result<Vec<String>, ShellError> {
    let tokens = tokenize(text)?;
    let mut out: Vec<String> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let mut iter = tokens.iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            Token::Op(op) if is_control(op) => {
                simple_command(std::mem::take(&mut items), &mut out);
                // Consecutive separators are one; `;` and a newline are the same.
                if op == ";" && (out.is_empty() || out.last().is_some_and(|l| l == ";")) {
                    continue;
                }
                out.push(op.clone());
            }
            Token::Op(op) => {
                let target = match iter.peek() {
                    Some(Token::Word(w)) => {
                        iter.next();
                        Some(Arg::parse(&w.raw))
                    }
                    _ => None,
                };
                items.push(Item::Redirect(op.clone(), target));
            }
            Token::Word(word) if items.iter().all(|i| !matches!(i, Item::Word(_))) && is_assignment(&word.raw) => {
                // An assignment before the command name: kept as written, quoting normalised.
                out.push(Arg::parse(&word.raw).render());
            }
            Token::Word(word) => items.push(Item::Word(Arg::parse(&word.raw))),
        }
    }
    simple_command(items, &mut out);
    while out.last().is_some_and(|l| l == ";") {
        out.pop();
    }
    Ok(out)
}

/// Appends one simple command's canonical tokens: its name, then its arguments read as the
/// command reads them when it is known, else by the generic rules.
fn simple_command(items: Vec<Item>, out: &mut Vec<String>) {
    let mut items = items.into_iter().peekable();
    // Redirections before the name stay where they are.
    let name = loop {
        match items.next() {
            Some(Item::Redirect(op, target)) => push_redirect(op, target, out),
            Some(Item::Word(word)) => break word,
            None => return,
        }
    };
    out.push(name.render());
    let rest: Vec<Item> = items.collect();
    let value: String = name.literal_prefix();
    let base = value.rsplit('/').next().unwrap_or(&value).to_string();
    if !name.is_literal() {
        return generic(rest, &base, out);
    }
    if base == "git" {
        return git(rest, out);
    }
    match syntax_of(&base) {
        Some(syntax) => known(rest, syntax, out),
        None => generic(rest, &base, out),
    }
}

fn push_redirect(op: String, target: Option<Arg>, out: &mut Vec<String>) {
    out.push(op);
    if let Some(target) = target {
        out.push(target.strip_dot_slash().render());
    }
}

/// `git`: its own options as written, then the subcommand, read as that subcommand's syntax
/// when fcorr knows it.
fn git(items: Vec<Item>, out: &mut Vec<String>) {
    let mut items = items.into_iter();
    while let Some(item) = items.next() {
        let Item::Word(word) = item else {
            let Item::Redirect(op, target) = item else { continue };
            push_redirect(op, target, out);
            continue;
        };
        let value = word.literal_prefix();
        out.push(word.render());
        if value == "-C" || value == "-c" {
            // git's options with a separate argument.
            if let Some(Item::Word(argument)) = items.next() {
                out.push(argument.render());
            }
            continue;
        }
        if value.starts_with('-') || !word.is_literal() {
            continue;
        }
        let rest: Vec<Item> = items.collect();
        return match syntax_of(&format!("git {value}")) {
            Some(syntax) => known(rest, syntax, out),
            None => generic(rest, "git", out),
        };
    }
}

/// The generic rules, for commands fcorr has no option table for: runs of short-flag words are
/// split into letters and sorted (`-la` ≡ `-l -a`), other words are kept as written (`--x=y`
/// stays one word: `ls --color auto` lists a file named `auto`), `./` is dropped from operands.
fn generic(items: Vec<Item>, command: &str, out: &mut Vec<String>) {
    let mut flags: Vec<char> = Vec::new();
    let mut after_double_dash = false;
    for item in items {
        let word = match item {
            Item::Redirect(op, target) => {
                flush_flags(&mut flags, out);
                push_redirect(op, target, out);
                continue;
            }
            Item::Word(word) => word,
        };
        let value = word.literal_prefix();
        let literal = word.is_literal();
        if after_double_dash {
            out.push(word.strip_dot_slash().render());
        } else if literal && value == "--" {
            flush_flags(&mut flags, out);
            after_double_dash = true;
            out.push(quote(&value));
        } else if literal && value.starts_with("--") {
            flush_flags(&mut flags, out);
            out.push(word.render());
        } else if literal && is_flag_group(&value) && !SINGLE_DASH_LONG.contains(&command) {
            flags.extend(value.chars().skip(1));
        } else {
            flush_flags(&mut flags, out);
            out.push(word.strip_dot_slash().render());
        }
    }
    flush_flags(&mut flags, out);
}

/// One unit of a known command's arguments.
enum Unit {
    /// An option fcorr knows, with its argument: may move among its neighbours.
    Option { name: &'static str, key: &'static str, argument: Option<Arg> },
    /// Kept in place, and nothing moves across it: an operand, an option fcorr does not know (or
    /// a word that might be its argument), a redirection, `--` and what follows it.
    Fixed(Vec<String>),
}

/// A known command's arguments as it reads them: each option with its argument (attached or
/// not, any spelling), options between two fixed units sorted by what may not reorder (stable).
fn known(items: Vec<Item>, syntax: &'static Syntax, out: &mut Vec<String>) {
    let mut units: Vec<Unit> = Vec::new();
    let mut items = items.into_iter().peekable();
    // Set after an option fcorr does not know: the next word may be its argument.
    let mut opaque_next = false;
    let mut literal_rest = false;
    // xargs: from its first operand on, another command with its own arguments.
    let mut inner_command: Option<Vec<Item>> = None;
    while let Some(item) = items.next() {
        let word = match item {
            Item::Redirect(op, target) => {
                let mut tokens = Vec::new();
                push_redirect(op, target, &mut tokens);
                units.push(Unit::Fixed(tokens));
                continue;
            }
            Item::Word(word) => word,
        };
        if literal_rest || std::mem::take(&mut opaque_next) {
            units.push(Unit::Fixed(vec![word.strip_dot_slash().render()]));
            continue;
        }
        let prefix = word.literal_prefix();
        if word.is_literal() && prefix == "--" {
            literal_rest = true;
            units.push(Unit::Fixed(vec![quote("--")]));
            continue;
        }
        if !prefix.starts_with('-') || prefix == "-" {
            if syntax.operands_end_options {
                inner_command = Some(std::iter::once(Item::Word(word)).chain(items).collect());
                break;
            }
            // An operand (`-` is standard input).
            units.push(Unit::Fixed(vec![word.strip_dot_slash().render()]));
            continue;
        }
        let parsed = if prefix.starts_with("--") {
            long_option(&word, &prefix, syntax, &mut items)
        } else {
            short_options(&word, &prefix, syntax, &mut items)
        };
        match parsed {
            Some(options) => units.extend(options),
            None => {
                units.push(Unit::Fixed(vec![word.render()]));
                // `--x=v` carries its argument; any other unknown option may take the next word.
                opaque_next = !(prefix.starts_with("--") && prefix.contains('='));
            }
        }
    }
    // Sort each run of movable options; fixed units stay where they are.
    let mut run: Vec<(&'static str, &'static str, Option<Arg>)> = Vec::new();
    let flush = |run: &mut Vec<(&'static str, &'static str, Option<Arg>)>, out: &mut Vec<String>| {
        run.sort_by(|a, b| a.0.cmp(b.0));
        for (_, name, argument) in run.drain(..) {
            out.push(name.to_string());
            if let Some(argument) = argument {
                out.push(argument.strip_dot_slash().render());
            }
        }
    };
    for unit in units {
        match unit {
            Unit::Option { name, key, argument } if !syntax.is_fixed(name) => run.push((key, name, argument)),
            Unit::Option { name, argument, .. } => {
                flush(&mut run, out);
                out.push(name.to_string());
                out.extend(argument.map(|a| a.strip_dot_slash().render()));
            }
            Unit::Fixed(tokens) => {
                flush(&mut run, out);
                out.extend(tokens);
            }
        }
    }
    flush(&mut run, out);
    if let Some(command) = inner_command {
        simple_command(command, out);
    }
}

/// The rest of a simple command's words and redirections.
type Items = std::iter::Peekable<std::vec::IntoIter<Item>>;

/// The next item when it is a word (an option's separate argument).
fn next_word(items: &mut Items) -> Option<Arg> {
    match items.next_if(|item| matches!(item, Item::Word(_))) {
        Some(Item::Word(word)) => Some(word),
        _ => None,
    }
}

/// `--name`, `--name=value` or `--name value` of a known long option; `None` when the option is
/// not known, or its argument is missing.
fn long_option(word: &Arg, prefix: &str, syntax: &'static Syntax, items: &mut Items) -> Option<Vec<Unit>> {
    let (name, attached) = match prefix.split_once('=') {
        Some((name, _)) => (name, Some(word.after(name.chars().count() + 1))),
        None if word.is_literal() => (prefix, None),
        // `--name$X`: not an option fcorr can read.
        None => return None,
    };
    let (canonical, takes_argument) = syntax.option(name)?;
    let argument = match (takes_argument, attached) {
        (true, Some(argument)) => Some(argument),
        (true, None) => Some(next_word(items)?),
        (false, None) => None,
        // `--flag=x` for a flag without an argument is an error (or an optional argument).
        (false, Some(_)) => return None,
    };
    Some(vec![Unit::Option { name: canonical, key: syntax.sort_key(canonical), argument }])
}

/// `-abc`, `-n5`, `-n 5`, `-an5` of known short options; `None` when a letter is not known (it
/// might take the rest as its argument) or an argument is missing.
fn short_options(word: &Arg, prefix: &str, syntax: &'static Syntax, items: &mut Items) -> Option<Vec<Unit>> {
    let mut units = Vec::new();
    for (i, letter) in prefix.chars().enumerate().skip(1) {
        let (canonical, takes_argument) = syntax.option(&format!("-{letter}"))?;
        let key = syntax.sort_key(canonical);
        if takes_argument {
            let rest = word.after(i + 1);
            let argument = if rest.0.is_empty() { next_word(items)? } else { rest };
            units.push(Unit::Option { name: canonical, key, argument: Some(argument) });
            return Some(units);
        }
        units.push(Unit::Option { name: canonical, key, argument: None });
    }
    // Letters only up to an expansion: `-l$X` is not a flag group.
    word.is_literal().then_some(units)
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

/// Emits a run of short flags one per token, in sorted order.
fn flush_flags(flags: &mut Vec<char>, out: &mut Vec<String>) {
    flags.sort_unstable();
    for flag in flags.drain(..) {
        out.push(format!("-{flag}"));
    }
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
        // long-flag `=` forms, for options known to take an argument
        ("grep --include='*.rs' -r x .", "grep --include '*.rs' -r x ."),
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
        // quoting that changes nothing: expansions stay expansions, literals stay literals
        ("echo \"$HOME\"", "echo $HOME"),
        ("echo '$HOME'", "echo \\$HOME"),
        ("echo \"\\$HOME\"", "echo '$HOME'"),
        ("cat ~/a", "cat ~/\"a\""),
        ("ls *.txt", "ls *\".txt\""),
        ("echo 'a*b'", "echo a\\*b"),
        ("find . -name \"*.py\" -o -name '*.pyi'", "find . -name \\*.py -o -name \"*.pyi\""),
        // an option's argument attached or separate, any spelling (known commands)
        ("head -n5 f", "head -n 5 f"),
        ("head -n 5 f", "head --lines=5 f"),
        ("head --lines 5 f", "head -n5 f"),
        ("tail -n20 -f log", "tail -f -n 20 log"),
        ("tail -fn 20 log", "tail -f -n20 log"),
        ("cut -d, -f1 data.csv", "cut -f 1 -d , data.csv"),
        ("cut -d ',' -f 1 data.csv", "cut --delimiter=, --fields 1 data.csv"),
        ("sort -k2 -n f", "sort -n -k 2 f"),
        ("xargs -n1 echo", "xargs -n 1 echo"),
        ("xargs -n1 rm -rf", "xargs -n 1 rm -fr"),
        ("tar -xzf a.tgz", "tar -zxf a.tgz"),
        ("tar -xzf a.tgz", "tar --extract --gzip --file=a.tgz"),
        ("grep -nre foo .", "grep -n -r -e foo ."),
        ("grep -e foo -i .", "grep -ie foo ."),
        ("grep -A2 x f", "grep --after-context=2 x f"),
        // independent options in any order (known commands)
        ("git log --oneline -n 5", "git log -n 5 --oneline"),
        ("git log --oneline -n 5", "git log -n5 --oneline"),
        ("git log --oneline -n 5", "git log --max-count=5 --oneline"),
        ("git log --author=ann --oneline", "git log --oneline --author ann"),
        ("git -C repo log --graph --all", "git -C repo log --all --graph"),
        ("grep -i --include='*.py' -r foo .", "grep -r --include '*.py' -i foo ."),
        ("head -q -n 5 a b", "head -n 5 -q a b"),
        ("head -z -n 5 f", "head -n5 --zero-terminated f"),
        ("ls -l --human-readable", "ls -h -l"),
        ("sort -r -k 2 f", "sort -k 2 -r f"),
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
        // quoting that stops an expansion is significant: the shell expands the other one
        ("find . -name '*.py'", "find . -name *.py"),
        ("find . -name \"*.py\"", "find . -name *.py"),
        ("grep --include=*.rs -r x .", "grep --include '*.rs' -r x ."),
        ("ls *.txt", "ls '*.txt'"),
        ("rm file?", "rm 'file?'"),
        ("ls [ab]", "ls '[ab]'"),
        ("cd ~", "cd '~'"),
        ("cat ~/notes", "cat \"~/notes\""),
        ("echo $HOME", "echo '$HOME'"),
        ("echo $HOME", "echo \\$HOME"),
        ("echo {a,b}", "echo '{a,b}'"),
        ("echo $(date)", "echo '$(date)'"),
        // `--x=v` ≡ `--x v` only for options known to require an argument
        ("ls --color=auto", "ls --color auto"),
        ("git log --format=%H", "git log --format %H"),
        ("foo --level=3", "foo --level 3"),
        // an argument-taking letter takes the rest of its group
        ("tar -xzf a.tgz", "tar -fxz a.tgz"),
        ("grep -ei foo f", "grep -ie foo f"),
        ("head -n5 f", "head -n -5 f"),
        // options that override one another keep their order
        ("head -n 5 -c 3 f", "head -c 3 -n 5 f"),
        ("ls -l1", "ls -1l"),
        ("grep -A 2 -C 5 x f", "grep -C 5 -A 2 x f"),
        ("sort -k2 -k1 f", "sort -k1 -k2 f"),
        ("git log --topo-order --date-order", "git log --date-order --topo-order"),
        // operands, `--` and options fcorr does not know never move, nor anything across them
        ("git log -n 5 src", "git log src -n 5"),
        ("grep -- -n -r", "grep -- -r -n"),
        ("head -Y -n 5 f", "head -n 5 -Y f"),
        ("head -Q -n 5 -v f", "head -Q -v -n 5 f"),
        ("tar -C out -xf a.tar b", "tar -xf a.tar -C out b"),
        ("xargs -n1 rm -rf", "xargs -n1 rm -r"),
    ];

    #[test]
    fn equivalent_commands_are_equal_both_ways() {
        for (a, b) in EQUAL {
            assert!(commands_match(a, b), "expected equal: {a:?} vs {b:?} ({:?} vs {:?})", normalize(a), normalize(b));
            assert!(commands_match(b, a), "expected equal: {b:?} vs {a:?}");
        }
    }

    #[test]
    fn different_commands_are_not_equal_either_way() {
        for (a, b) in DIFFERENT {
            assert!(!commands_match(a, b), "expected different: {a:?} vs {b:?} ({:?})", normalize(a));
            assert!(!commands_match(b, a), "expected different: {b:?} vs {a:?}");
        }
    }

    #[test]
    fn the_shell_itself_agrees_on_quoting() {
        // Each pair is equal exactly when `sh` prints the same words for both, in a directory
        // where the globs match.
        let dir = tempfile::tempdir().unwrap();
        for file in ["a.py", "b.py", "fileX"] {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        let words = |command: &str| {
            let script = format!("set -- {command}; printf '%s\\n' \"$@\"");
            let out = std::process::Command::new("sh")
                .args(["-c", &script])
                .current_dir(dir.path())
                .env("HOME", "/home/u")
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        for (a, b, equal) in [
            ("'*.py'", "*.py", false),
            ("\"*.py\"", "\\*.py", true),
            ("file?", "'file?'", false),
            ("~/x", "'~/x'", false),
            ("$HOME", "\"$HOME\"", true),
            ("'$HOME'", "\\$HOME", true),
            ("'a b'", "a\\ b", true),
        ] {
            assert_eq!(words(a) == words(b), equal, "sh: {a} vs {b}");
            assert_eq!(commands_match(&format!("echo {a}"), &format!("echo {b}")), equal, "fcorr: {a} vs {b}");
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
        assert_eq!(normalized_text("git log --oneline -n5").unwrap(), "git log --oneline -n 5");
        assert_eq!(
            normalized_text("find . -name '*.py' -o -name *.rs").unwrap(),
            "find . -name '*.py' -o -name *'.rs'"
        );
        // Found by the `shell` fuzz target: the canonical form read back as another command.
        assert_eq!(normalized_text("echo {a,b}x <<< 'x'").unwrap(), "echo {a,b}'x' <<< x");
        assert_eq!(normalize("echo {a,b}x"), normalize("echo {a,b}'x'"));
    }
}
