//! Shell-command validators for dataset evals: equivalence after normalisation, a safety
//! classifier and a POSIX-compliance checker (docs/evals.md lists every rule).
//!
//! One lexer feeds all three. It finds word boundaries and operators (which no word-splitting
//! crate knows about); each word's value then comes from the `shell-words` crate, which does
//! the POSIX quote removal, so `'a b'`, `"a b"` and `a\ b` are one and the same word.

pub(crate) mod normalize;
mod options;
pub(crate) mod posix;
pub(crate) mod safety;

pub(crate) use normalize::commands_match;
pub(crate) use posix::{Bashism, bashisms};
pub(crate) use safety::{SafetyRule, classify};

/// One lexical token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Word(Word),
    /// A control or redirection operator: `|`, `&&`, `;`, `>`, `2>`, `<<<`, `((`...; a newline
    /// is the operator `;`.
    Op(String),
}

/// A word as written and after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text as written, quotes included.
    pub raw: String,
    /// The text after quote removal (expansions such as `$HOME` are kept as written).
    pub value: String,
}

/// Why a command line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShellError {
    #[error("unterminated {0} in the shell command")]
    Unterminated(&'static str),
}

/// Operators, longest first so `&&` wins over `&`.
const OPERATORS: &[&str] = &[
    "<<<", "<<-", "&>>", ";;", "&&", "||", "|&", "((", "<<", ">>", ">|", ">&", "<&", "<>", "&>", ";", "&", "|", "(",
    ")", "<", ">",
];

/// Splits a command line into words and operators.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, ShellError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' | '\r' => {
                flush(&mut word, &mut tokens);
                i += 1;
            }
            '\n' => {
                flush(&mut word, &mut tokens);
                tokens.push(Token::Op(";".into()));
                i += 1;
            }
            '#' if word.is_empty() => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' => {
                // A backslash-newline joins lines; any other escaped character stays in the word
                // (shell-words removes the backslash later).
                if next == Some('\n') {
                    i += 2;
                    continue;
                }
                word.push('\\');
                if let Some(n) = next {
                    word.push(n);
                }
                i += 2;
            }
            '\'' => i = take_until(&chars, i, '\'', false, &mut word, "single quote")?,
            '"' => i = take_until(&chars, i, '"', true, &mut word, "double quote")?,
            '`' => i = take_until(&chars, i, '`', true, &mut word, "backquote")?,
            '$' if next == Some('\'') => {
                word.push('$');
                i = take_until(&chars, i + 1, '\'', true, &mut word, "$'…' quote")?;
            }
            '$' if next == Some('(') || next == Some('{') => {
                word.push('$');
                i = take_balanced(&chars, i + 1, &mut word)?;
            }
            // Process substitution is an argument, so it stays one word.
            '<' | '>' if next == Some('(') => {
                word.push(c);
                i = take_balanced(&chars, i + 1, &mut word)?;
            }
            '(' if next == Some('(') => {
                // An arithmetic command: `((`, the expression as one word, `))`. Also right after a
                // word (`ls((`, a syntax error to a shell): read the same way whether or not a space
                // comes first, so a canonical form (which puts one there) reads back as itself.
                flush(&mut word, &mut tokens);
                let mut expr = String::new();
                let end = take_balanced(&chars, i, &mut expr)?;
                tokens.push(Token::Op("((".into()));
                let inner = expr.get(2..expr.len().saturating_sub(2)).unwrap_or("").trim().to_string();
                tokens.push(Token::Word(Word { raw: inner.clone(), value: inner }));
                tokens.push(Token::Op("))".into()));
                i = end;
            }
            '|' | '&' | ';' | '(' | ')' | '<' | '>' => {
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                // `rest` starts with `c`, itself an operator, so some operator always matches.
                let op = OPERATORS.iter().find(|op| rest.starts_with(**op)).copied().unwrap_or(";");
                let mut text = op.to_string();
                // An all-digit word right before a redirection is its file descriptor (`2>`).
                if (c == '<' || c == '>') && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    text = std::mem::take(&mut word) + op;
                } else {
                    flush(&mut word, &mut tokens);
                }
                tokens.push(Token::Op(text));
                i += op.chars().count();
            }
            _ => {
                word.push(c);
                i += 1;
            }
        }
    }
    flush(&mut word, &mut tokens);
    Ok(tokens)
}

/// Ends the current word, if any.
fn flush(word: &mut String, tokens: &mut Vec<Token>) {
    if word.is_empty() {
        return;
    }
    let raw = std::mem::take(word);
    let value = unquote(&raw);
    tokens.push(Token::Word(Word { raw, value }));
}

/// Quote removal by `shell-words`. A word holding a command substitution with spaces splits
/// into several pieces there; they are joined back, as the word is one argument.
fn unquote(raw: &str) -> String {
    match shell_words::split(raw) {
        Ok(parts) if parts.len() == 1 => parts.into_iter().next().unwrap_or_default(),
        Ok(parts) if !parts.is_empty() => parts.join(" "),
        _ => raw.to_string(),
    }
}

/// Copies a quoted section starting at `start` (the opening quote) into `word`; returns the
/// index after the closing quote.
fn take_until(
    chars: &[char],
    start: usize,
    close: char,
    escapes: bool,
    word: &mut String,
    what: &'static str,
) -> Result<usize, ShellError> {
    word.push(chars[start]);
    let mut i = start + 1;
    while i < chars.len() {
        let c = chars[i];
        word.push(c);
        if escapes && c == '\\' {
            if let Some(n) = chars.get(i + 1) {
                word.push(*n);
            }
            i += 2;
            continue;
        }
        if c == close {
            return Ok(i + 1);
        }
        i += 1;
    }
    Err(ShellError::Unterminated(what))
}

/// Copies a bracketed section (`(…)` or `{…}`) starting at `start` into `word`, nesting and
/// quotes respected; returns the index after the closing bracket.
fn take_balanced(chars: &[char], start: usize, word: &mut String) -> Result<usize, ShellError> {
    let open = chars[start];
    let close = if open == '(' { ')' } else { '}' };
    let mut depth = 0usize;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                i = take_until(chars, i, '\'', false, word, "single quote")?;
                continue;
            }
            '"' => {
                i = take_until(chars, i, '"', true, word, "double quote")?;
                continue;
            }
            '\\' => {
                word.push(c);
                if let Some(n) = chars.get(i + 1) {
                    word.push(*n);
                }
                i += 2;
                continue;
            }
            _ if c == open => depth += 1,
            _ if c == close => {
                depth -= 1;
                if depth == 0 {
                    word.push(c);
                    return Ok(i + 1);
                }
            }
            _ => {}
        }
        word.push(c);
        i += 1;
    }
    Err(ShellError::Unterminated(if open == '(' { "parenthesis" } else { "brace" }))
}

/// One simple command: assignments, words, redirections, and the operator that ended it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub assignments: Vec<Word>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// `|`, `&&`, `;`... or `None` at the end of the line.
    pub op_after: Option<String>,
}

/// A redirection and its target word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub op: String,
    pub target: Option<Word>,
}

impl Redirect {
    /// True for redirections that write to their target (`>`, `>>`, `2>`, `&>`, `>|`, `<>`).
    pub(crate) fn writes(&self) -> bool {
        let op = self.op.trim_start_matches(|c: char| c.is_ascii_digit());
        matches!(op, ">" | ">>" | ">|" | "&>" | "&>>" | "<>") || (op == ">&" && !self.target_is_fd())
    }

    /// True when the target is a file descriptor (`2>&1`) or `-`.
    pub(crate) fn target_is_fd(&self) -> bool {
        self.target.as_ref().is_some_and(|t| t.value == "-" || t.value.chars().all(|c| c.is_ascii_digit()))
    }
}

/// True for operators that end a simple command.
pub(crate) fn is_control(op: &str) -> bool {
    matches!(op, ";" | ";;" | "&&" | "||" | "|" | "|&" | "&" | "(" | ")" | "((" | "))")
}

/// Reserved words that may stand before a command's name.
const RESERVED: &[&str] = &["!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time"];

/// Groups tokens into simple commands.
pub(crate) fn simple_commands(tokens: &[Token]) -> Vec<SimpleCommand> {
    let mut commands = Vec::new();
    let mut current = SimpleCommand::default();
    let mut iter = tokens.iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            Token::Op(op) if is_control(op) => {
                current.op_after = Some(op.clone());
                commands.push(std::mem::take(&mut current));
            }
            Token::Op(op) => {
                let target = match iter.peek() {
                    Some(Token::Word(w)) => {
                        let w = w.clone();
                        iter.next();
                        Some(w)
                    }
                    _ => None,
                };
                current.redirects.push(Redirect { op: op.clone(), target });
            }
            Token::Word(w) => {
                let leading = current.words.iter().all(|x| RESERVED.contains(&x.raw.as_str()));
                if leading && is_assignment(&w.raw) {
                    current.assignments.push(w.clone());
                } else {
                    current.words.push(w.clone());
                }
            }
        }
    }
    if !current.words.is_empty() || !current.assignments.is_empty() || !current.redirects.is_empty() {
        commands.push(current);
    }
    commands
}

/// `NAME=value` (or `NAME[i]=value`) as written.
pub(crate) fn is_assignment(raw: &str) -> bool {
    let Some(eq) = raw.find('=') else {
        return false;
    };
    let name = &raw[..eq];
    let name = name.split('[').next().unwrap_or("");
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

impl SimpleCommand {
    /// Index in `words` of the command's name, past reserved words (`if`, `then`, `!`...).
    pub(crate) fn name_index(&self) -> Option<usize> {
        self.words.iter().position(|w| !RESERVED.contains(&w.raw.as_str()))
    }

    /// The command's name, past reserved words.
    #[cfg(test)]
    pub(crate) fn name(&self) -> Option<&str> {
        self.name_index().map(|i| self.words[i].value.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops_and_words(text: &str) -> Vec<String> {
        tokenize(text)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => format!("w:{}", w.value),
                Token::Op(o) => format!("o:{o}"),
            })
            .collect()
    }

    #[test]
    fn operators_split_words_without_spaces() {
        assert_eq!(ops_and_words("ls|wc -l;echo 'a|b'"), ["w:ls", "o:|", "w:wc", "w:-l", "o:;", "w:echo", "w:a|b"]);
        assert_eq!(ops_and_words("cmd 2>&1 >>log"), ["w:cmd", "o:2>&", "w:1", "o:>>", "w:log"]);
        assert_eq!(ops_and_words("diff <(ls a) b"), ["w:diff", "w:<(ls a)", "w:b"]);
        assert_eq!(ops_and_words("echo $(date +%s) # note"), ["w:echo", "w:$(date +%s)"]);
        assert_eq!(ops_and_words("((i++))"), ["o:((", "w:i++", "o:))"]);
        // Found by the `shell` fuzz target: `ls(( -al` and its canonical form `ls (( -al` must read alike.
        assert_eq!(tokenize("ls(( -al"), tokenize("ls (( -al"));
    }

    #[test]
    fn quotes_are_removed_by_shell_words() {
        assert_eq!(ops_and_words(r#"echo 'a b' "a b" a\ b"#), ["w:echo", "w:a b", "w:a b", "w:a b"]);
    }

    #[test]
    fn unterminated_quotes_are_errors() {
        assert_eq!(tokenize("echo 'abc"), Err(ShellError::Unterminated("single quote")));
        assert_eq!(tokenize("echo $(ls"), Err(ShellError::Unterminated("parenthesis")));
    }

    #[test]
    fn simple_commands_keep_redirections_apart() {
        let commands = simple_commands(&tokenize("FOO=1 sudo tee /etc/x > /dev/null && echo ok").unwrap());
        assert_eq!(commands.len(), 2);
        assert_eq!(commands[0].assignments[0].raw, "FOO=1");
        assert_eq!(commands[0].name(), Some("sudo"));
        assert_eq!(commands[0].redirects[0].target.as_ref().unwrap().value, "/dev/null");
        assert_eq!(commands[0].op_after.as_deref(), Some("&&"));
    }
}
