//! POSIX-compliance checker: the bash/ksh/zsh constructs a command uses, each named.
//!
//! Token-level constructs (`[[`, `&>`, `|&`, `<<<`, `((`) come from the lexer; constructs inside
//! words (`$'…'`, `{a,b}`, `${v,,}`, `${a[0]}`) are found by scanning the word as written, outside
//! single quotes, so `echo '[[ x ]]'` or `awk '{print $1}'` are not reported.

use super::{ShellError, Token, simple_commands, tokenize};

/// A construct outside POSIX sh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Bashism {
    /// `[[ … ]]`
    DoubleBracket,
    /// `==` inside `[ … ]` or `test`
    DoubleEqualsInTest,
    /// `a=(…)`, `${a[0]}`, `a[0]=x`, `declare -a`, `readarray`/`mapfile`
    Array,
    /// `function name { … }`
    FunctionKeyword,
    /// `source file` (POSIX has `.`)
    Source,
    /// `&>file`, `&>>file`, `>&file`
    AmpersandRedirect,
    /// `cmd |& cmd`
    PipeAmpersand,
    /// `<(cmd)`, `>(cmd)`
    ProcessSubstitution,
    /// `$'…'`
    AnsiCQuote,
    /// `{a,b}`, `{1..5}`
    BraceExpansion,
    /// `local` outside a function body
    LocalOutsideFunction,
    /// `let i=i+1`
    Let,
    /// `(( … ))` as a command (POSIX has `$(( … ))`)
    ArithmeticCommand,
    /// `${v,,}`, `${v^^}`, `${v,}`, `${v^}`
    CaseModification,
    /// `select x in …`
    Select,
    /// `<<< word`
    HereString,
}

impl Bashism {
    /// The construct's name as written in reports.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Bashism::DoubleBracket => "double-bracket",
            Bashism::DoubleEqualsInTest => "double-equals-in-test",
            Bashism::Array => "array",
            Bashism::FunctionKeyword => "function-keyword",
            Bashism::Source => "source",
            Bashism::AmpersandRedirect => "ampersand-redirect",
            Bashism::PipeAmpersand => "pipe-ampersand",
            Bashism::ProcessSubstitution => "process-substitution",
            Bashism::AnsiCQuote => "ansi-c-quote",
            Bashism::BraceExpansion => "brace-expansion",
            Bashism::LocalOutsideFunction => "local-outside-function",
            Bashism::Let => "let",
            Bashism::ArithmeticCommand => "arithmetic-command",
            Bashism::CaseModification => "case-modification",
            Bashism::Select => "select",
            Bashism::HereString => "here-string",
        }
    }
}

/// Every non-POSIX construct in `text`, each once, in a fixed order.
pub(crate) fn bashisms(text: &str) -> Result<Vec<Bashism>, ShellError> {
    let tokens = tokenize(text)?;
    let mut found = std::collections::BTreeSet::new();

    // Operators and word shapes.
    for (i, token) in tokens.iter().enumerate() {
        let next_is_open = matches!(tokens.get(i + 1), Some(Token::Op(o)) if o == "(");
        match token {
            Token::Op(op) => match op.trim_start_matches(|c: char| c.is_ascii_digit()) {
                "&>" | "&>>" => {
                    found.insert(Bashism::AmpersandRedirect);
                }
                ">&" if !matches!(tokens.get(i + 1), Some(Token::Word(w)) if w.value == "-" || w.value.chars().all(|c| c.is_ascii_digit())) =>
                {
                    found.insert(Bashism::AmpersandRedirect);
                }
                "|&" => {
                    found.insert(Bashism::PipeAmpersand);
                }
                "<<<" => {
                    found.insert(Bashism::HereString);
                }
                "((" => {
                    found.insert(Bashism::ArithmeticCommand);
                }
                _ => {}
            },
            Token::Word(word) => {
                let raw = word.raw.as_str();
                if raw == "[[" {
                    found.insert(Bashism::DoubleBracket);
                }
                if raw.starts_with("<(") || raw.starts_with(">(") {
                    found.insert(Bashism::ProcessSubstitution);
                }
                if raw.ends_with('=') && super::is_assignment(raw) && next_is_open {
                    found.insert(Bashism::Array);
                }
                scan_word(raw, &mut found);
            }
        }
    }

    // Command names.
    for command in simple_commands(&tokens) {
        let Some(start) = command.name_index() else { continue };
        let name = command.words[start].value.as_str();
        let args: Vec<&str> = command.words[start + 1..].iter().map(|w| w.raw.as_str()).collect();
        for assignment in &command.assignments {
            if assignment.raw.split('=').next().is_some_and(|n| n.contains('[')) {
                found.insert(Bashism::Array);
            }
        }
        match name {
            "function" => {
                found.insert(Bashism::FunctionKeyword);
            }
            "source" => {
                found.insert(Bashism::Source);
            }
            "let" => {
                found.insert(Bashism::Let);
            }
            "select" => {
                found.insert(Bashism::Select);
            }
            "readarray" | "mapfile" => {
                found.insert(Bashism::Array);
            }
            "declare" | "typeset"
                if args.iter().any(|a| a.starts_with('-') && (a.contains('a') || a.contains('A'))) =>
            {
                found.insert(Bashism::Array);
            }
            "[" | "test" if args.contains(&"==") => {
                found.insert(Bashism::DoubleEqualsInTest);
            }
            _ => {}
        }
    }
    if local_outside_function(&tokens) {
        found.insert(Bashism::LocalOutsideFunction);
    }
    Ok(found.into_iter().collect())
}

/// True when `local` is used as a command name outside any function body.
fn local_outside_function(tokens: &[Token]) -> bool {
    let mut frames: Vec<bool> = Vec::new();
    let mut pending = false;
    let mut at_command_start = true;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Op(op) => {
                // `name ( )` marks the next `{` as a function body.
                if op == "(" && i > 0 && matches!(tokens.get(i + 1), Some(Token::Op(o)) if o == ")") {
                    pending = matches!(tokens.get(i - 1), Some(Token::Word(_)));
                }
                at_command_start = super::is_control(op);
            }
            Token::Word(word) => {
                match word.raw.as_str() {
                    "{" => {
                        frames.push(pending);
                        pending = false;
                        at_command_start = true;
                        continue;
                    }
                    "}" => {
                        frames.pop();
                        continue;
                    }
                    "function" if at_command_start => {
                        pending = true;
                        at_command_start = false;
                        continue;
                    }
                    "local" if at_command_start && !frames.iter().any(|f| *f) => return true,
                    _ => {}
                }
                at_command_start = false;
            }
        }
    }
    false
}

/// Constructs inside one word, found outside single quotes.
fn scan_word(raw: &str, found: &mut std::collections::BTreeSet<Bashism>) {
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    let mut in_double = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\\' => {
                i += 2;
                continue;
            }
            '\'' if !in_double => {
                // Skip to the closing quote.
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '"' => in_double = !in_double,
            '$' if next == Some('\'') && !in_double => {
                found.insert(Bashism::AnsiCQuote);
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '$' if next == Some('{') => {
                // `${name…}`: what follows the name decides.
                let mut k = i + 2;
                if chars.get(k) == Some(&'#') {
                    k += 1;
                }
                let name_start = k;
                while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
                    k += 1;
                }
                if k > name_start {
                    match chars.get(k) {
                        Some('[') => {
                            found.insert(Bashism::Array);
                        }
                        Some(',') | Some('^') => {
                            found.insert(Bashism::CaseModification);
                        }
                        _ => {}
                    }
                }
                i = k;
                continue;
            }
            '{' if !in_double && (i == 0 || chars[i - 1] != '$') => {
                if let Some(len) = brace_expansion_len(&chars[i..]) {
                    found.insert(Bashism::BraceExpansion);
                    i += len;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Length of `{a,b}` or `{1..5}` at the start of `chars`, if it is one (not `{}` or `{x}`).
pub(super) fn brace_expansion_len(chars: &[char]) -> Option<usize> {
    let mut depth = 0;
    let mut comma_or_range = false;
    for (i, c) in chars.iter().enumerate() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return comma_or_range.then_some(i + 1);
                }
            }
            ',' if depth == 1 => comma_or_range = true,
            '.' if depth == 1 && chars.get(i + 1) == Some(&'.') => comma_or_range = true,
            ' ' | '\'' | '"' | '$' if depth == 1 => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOT_POSIX: &[(&str, Bashism)] = &[
        ("[[ -f a ]] && echo yes", Bashism::DoubleBracket),
        ("if [[ $x == y ]]; then echo y; fi", Bashism::DoubleBracket),
        ("[ \"$a\" == \"$b\" ]", Bashism::DoubleEqualsInTest),
        ("test $a == b", Bashism::DoubleEqualsInTest),
        ("arr=(a b c)", Bashism::Array),
        ("echo ${arr[0]}", Bashism::Array),
        ("echo \"${#arr[@]}\"", Bashism::Array),
        ("declare -a list", Bashism::Array),
        ("mapfile -t lines < f", Bashism::Array),
        ("function greet { echo hi; }", Bashism::FunctionKeyword),
        ("source ~/.bashrc", Bashism::Source),
        ("make &> build.log", Bashism::AmpersandRedirect),
        ("make &>> build.log", Bashism::AmpersandRedirect),
        ("make >& build.log", Bashism::AmpersandRedirect),
        ("make |& tee log", Bashism::PipeAmpersand),
        ("diff <(sort a) <(sort b)", Bashism::ProcessSubstitution),
        ("tee >(wc -l) < f", Bashism::ProcessSubstitution),
        ("echo $'a\\tb'", Bashism::AnsiCQuote),
        ("IFS=$'\\n'", Bashism::AnsiCQuote),
        ("mkdir -p src/{lib,bin}", Bashism::BraceExpansion),
        ("echo {1..5}", Bashism::BraceExpansion),
        ("cp file{,.bak}", Bashism::BraceExpansion),
        ("local x=1", Bashism::LocalOutsideFunction),
        ("let i=i+1", Bashism::Let),
        ("((i++))", Bashism::ArithmeticCommand),
        ("(( x > 3 )) && echo big", Bashism::ArithmeticCommand),
        ("echo ${name,,}", Bashism::CaseModification),
        ("echo \"${name^^}\"", Bashism::CaseModification),
        ("select x in a b; do echo $x; done", Bashism::Select),
        ("grep x <<< \"$text\"", Bashism::HereString),
    ];

    const POSIX: &[&str] = &[
        "ls -la",
        "[ -f a ] && echo yes",
        "[ \"$a\" = \"$b\" ]",
        "test $a = b",
        "echo '[[ not a test ]]'",
        "greet() { echo hi; }",
        "f() { local x=1; echo $x; }",
        ". ~/.profile",
        "make > build.log 2>&1",
        "make 2>&1 | tee log",
        "cmd >&2",
        "echo $((1 + 2))",
        "i=$((i + 1))",
        "echo ${name:-default}",
        "echo ${#name}",
        "echo ${name%.txt}",
        "awk '{print $1}' file",
        "find . -exec rm {} \\;",
        "find . -name '*.{c,h}'",
        "echo 'a\\tb'",
        "cat <<EOF",
        "x=1; echo $x",
        "echo \"{a,b}\"",
        "for f in *.txt; do echo $f; done",
        "echo 'local x'",
        "case $x in a) echo a;; esac",
    ];

    #[test]
    fn bashisms_are_named() {
        for (command, construct) in NOT_POSIX {
            let found = bashisms(command).unwrap();
            assert!(found.contains(construct), "{command}: expected {construct:?}, found {found:?}");
        }
    }

    #[test]
    fn posix_commands_have_none() {
        for command in POSIX {
            assert_eq!(bashisms(command).unwrap(), [], "{command}");
        }
    }

    #[test]
    fn every_construct_has_a_positive_case_and_thirty_cases_in_all() {
        let all: std::collections::HashSet<Bashism> = NOT_POSIX.iter().map(|(_, b)| *b).collect();
        assert_eq!(all.len(), 16);
        assert!(NOT_POSIX.len() + POSIX.len() >= 30);
    }
}
