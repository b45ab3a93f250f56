//! The `command` adapter: one process per call, in its own process group (the harness's process
//! runner), the case as JSON on stdin and/or `{prompt}`/`{id}` in its command line; the answer
//! is its stdout, `{"output": …, "usage": {…}}` or plain text.
//!
//! Each call's case is a JSON file (`FCORR_CASE_FILE`, removed after the call) in a private
//! directory (created exclusively, mode 0700) that the command SUTs alive share, so a suite makes
//! one directory, not one per call; the answer is read from stdout kept in memory. No other user
//! of a shared machine can plant a case or an answer, or redirect the output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SutRequest;
use super::answer::{self, AnswerFormat, Reply};
use super::guard::{Backend, Failure};
use crate::execute::process::{self, CommandSpec, Exit, LogSink};

/// Time between SIGTERM and SIGKILL when a call times out: a system under test has no results
/// to save, so it gets a short grace.
const KILL_GRACE: Duration = Duration::from_secs(1);

/// `[suite.sut]` with `type = "command"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct CommandConfig {
    /// A string runs with `sh -c` (`{prompt}`/`{id}` substituted shell-quoted); a list is the argv
    /// itself (substituted verbatim, no shell).
    pub command: CommandLine,
    /// What the process reads on stdin.
    #[serde(default)]
    pub stdin: StdinMode,
    /// Working directory, relative to the configuration file (default: its directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// How stdout is read.
    #[serde(default)]
    pub answer: AnswerFormat,
    /// Withheld variables (the secrets fcorr.toml names, fcorr's tokens) this system may inherit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
}

/// A command line: shell text or argv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum CommandLine {
    Shell(String),
    Argv(Vec<String>),
}

/// What a command SUT gets on stdin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum StdinMode {
    /// The whole case as one JSON object.
    #[default]
    Case,
    /// The prompt text alone.
    Prompt,
    /// Nothing (stdin closed).
    None,
}

/// A command SUT ready to run.
pub(crate) struct CommandSut {
    config: CommandConfig,
    cwd: PathBuf,
    log: LogSink,
    /// The private directory of the case files, once the first call made or found it.
    scratch: OnceLock<Arc<tempfile::TempDir>>,
    /// Whether a shell command line runs without the shell, decided by the first call.
    direct: OnceLock<bool>,
    /// [`CommandSut::program_files`], read once: the files' digests are part of the cache key.
    files: OnceLock<Value>,
}

/// The private directory command calls write their case files to: created exclusively under a
/// random name, entered by fcorr's user alone (tempfile's default is the umask's 0755), shared
/// by every command SUT alive and removed when the last of them is dropped.
fn shared_scratch() -> std::io::Result<Arc<tempfile::TempDir>> {
    static SHARED: Mutex<Weak<tempfile::TempDir>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(dir) = shared.upgrade() {
        return Ok(dir);
    }
    let dir = Arc::new(
        tempfile::Builder::new()
            .prefix("fcorr-sut-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()?,
    );
    *shared = Arc::downgrade(&dir);
    Ok(dir)
}

/// A call's case file, removed when the call is over.
struct CaseFile(PathBuf);

impl CaseFile {
    /// Writes `case` to a new file of `dir` under a name no other call of this process uses.
    fn create(dir: &Path, case: &Value) -> std::io::Result<CaseFile> {
        use std::io::Write;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = dir.join(format!("case-{}.json", NEXT.fetch_add(1, Ordering::Relaxed)));
        // create_new: never through a file or link already there.
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path)?;
        let file_guard = CaseFile(path);
        file.write_all(case.to_string().as_bytes())?;
        Ok(file_guard)
    }
}

impl Drop for CaseFile {
    fn drop(&mut self) {
        // A file left behind goes with its directory at the end of the suite.
        let _ = std::fs::remove_file(&self.0);
    }
}

impl CommandSut {
    pub(crate) fn new(config: CommandConfig, base_dir: &Path, log: LogSink) -> CommandSut {
        let cwd = config.cwd.as_ref().map_or_else(|| base_dir.to_path_buf(), |c| base_dir.join(c));
        CommandSut { config, cwd, log, scratch: OnceLock::new(), direct: OnceLock::new(), files: OnceLock::new() }
    }

    /// The private directory of this SUT's case files (made by the first call that needs it).
    fn scratch(&self) -> std::io::Result<&Path> {
        if let Some(dir) = self.scratch.get() {
            return Ok(dir.path());
        }
        let dir = shared_scratch()?;
        // Calls racing here got the same shared directory; whichever is kept is the same one.
        Ok(self.scratch.get_or_init(|| dir).path())
    }

    /// True when `script` is a plain call ([`is_plain_call`]) of a program the kernel can start
    /// itself: an ELF binary or a `#!` script. A script without `#!` runs under `sh -c` (the
    /// shell runs it as a script when exec says ENOEXEC) but not when spawned directly, and a
    /// `PATH` set for the SUT is the shell's to search: both keep the shell.
    fn runs_without_shell(&self, script: &str) -> bool {
        *self.direct.get_or_init(|| {
            if !is_plain_call(script) || self.config.env.contains_key("PATH") {
                return false;
            }
            let Some(program) = script.split(' ').find(|w| !w.is_empty()) else { return false };
            let path =
                if program.contains('/') { Some(self.cwd.join(program)) } else { process::find_on_path(program) };
            let mut head = [0u8; 4];
            let read = path.and_then(|p| {
                use std::io::Read;
                std::fs::File::open(p).and_then(|mut f| f.read(&mut head)).ok()
            });
            matches!(read, Some(n) if head[..n].starts_with(b"#!") || head[..n] == *b"\x7fELF")
        })
    }

    /// sha256 of each file the command line names by a relative path that exists from its
    /// directory (`sut.sh` in `sh sut.sh`, `./sut.py`, an argv word), by word. The answer cache
    /// keys on them: the system under test is usually that script, and a change to it must ask
    /// again rather than replay the answers of the code before the change. Files the program
    /// reads by itself (a module it imports) are not seen: `--no-cache` covers those.
    fn program_files(&self) -> &Value {
        self.files.get_or_init(|| {
            let words: Vec<String> = match &self.config.command {
                CommandLine::Shell(script) => script
                    .split(|c: char| c.is_whitespace() || ";|&<>()`".contains(c))
                    .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
                    .collect(),
                CommandLine::Argv(argv) => argv.clone(),
            };
            let mut files = serde_json::Map::new();
            for word in words {
                if word.is_empty() || word.starts_with('/') || word.contains("{prompt}") || word.contains("{id}") {
                    continue;
                }
                let path = self.cwd.join(&word);
                if path.is_file() {
                    files.insert(word, file_digest(&path).into());
                }
            }
            Value::Object(files)
        })
    }

    /// A command from its words, program first, in this SUT's directory.
    fn argv_spec(&self, mut words: impl Iterator<Item = String>) -> CommandSpec {
        let mut program = words.next().unwrap_or_default();
        // A relative path names a file beside the configuration, wherever fcorr runs.
        if program.contains('/') && !program.starts_with('/') {
            program = self.cwd.join(&program).to_string_lossy().into_owned();
        }
        let mut spec = CommandSpec::new(program, &[], &self.cwd);
        spec.args = words.collect();
        spec
    }

    /// The call's command; `case_file` holds the case as JSON.
    fn spec(&self, request: &SutRequest, case_file: &Path) -> CommandSpec {
        let verbatim = |word: &str| super::fill_placeholders(word, request, str::to_string);
        let mut spec = match &self.config.command {
            // The words the shell would have made, run without it: the shell's start (and, with
            // dash, its fork for the last command) cost more than many systems under test.
            CommandLine::Shell(script) if self.runs_without_shell(script) => {
                self.argv_spec(script.split(' ').filter(|w| !w.is_empty()).map(verbatim))
            }
            CommandLine::Shell(script) => {
                CommandSpec::shell(&super::fill_placeholders(script, request, process::shell_quote), &self.cwd)
            }
            CommandLine::Argv(argv) => self.argv_spec(argv.iter().map(|w| verbatim(w))),
        };
        spec.env = self.config.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        // The id inline only while it is small: a huge one would stop the process from starting.
        process::set_small_env(&mut spec.env, "FCORR_CASE_ID", &request.id);
        spec.env.push(("FCORR_CASE_FILE".into(), case_file.to_string_lossy().into_owned()));
        spec.pass_env = self.config.pass_env.clone();
        spec.stdin = match self.config.stdin {
            StdinMode::Case => Some(request.case.to_string().into_bytes()),
            StdinMode::Prompt => Some(request.prompt.clone().into_bytes()),
            StdinMode::None => None,
        };
        spec
    }
}

/// What an empty stdout's call printed on stderr: ` (stdout was empty; the program printed 6
/// bytes on stderr, first line: `Paris`) — the answer is read from stdout`, or nothing when
/// stderr was empty too. `output` is the call's captured output, which with an empty stdout is
/// all stderr; secrets in it are replaced (the whole message is redacted again on its way out).
fn stderr_note(output: &str) -> String {
    let bytes = output.len();
    let Some(first) = output.lines().map(str::trim).find(|l| !l.is_empty()) else { return String::new() };
    let first = crate::secrets::redact(&crate::text::truncate_chars(first, 121)).into_owned();
    format!(
        " (stdout was empty; the program printed {bytes} bytes on stderr, first line: `{first}`) — the answer is \
         read from stdout"
    )
}

/// A program file's sha256; for one too large to read whole (a big binary), its size and
/// modification time, which a rebuild changes too.
fn file_digest(path: &Path) -> String {
    use sha2::Digest;
    const PROGRAM: crate::fsio::Limit = crate::fsio::Limit {
        what: "program file",
        cap: 64 << 20,
        advice: "its size and modification time stand for it in the answer cache key",
    };
    match crate::fsio::read_capped(path, PROGRAM) {
        Ok(bytes) => hex::encode(sha2::Sha256::digest(&bytes)),
        Err(_) => {
            let meta = std::fs::metadata(path).ok();
            let modified = meta.as_ref().and_then(|m| m.modified().ok()).map(|t| format!("{t:?}"));
            format!("size {} modified {}", meta.map_or(0, |m| m.len()), modified.unwrap_or_default())
        }
    }
}

/// True when a shell command line is one plain program call, which fcorr runs itself with the
/// words the shell would make: words of plain characters and `{prompt}`/`{id}` (substituted
/// shell-quoted, so each value stays inside its word, verbatim), nothing the shell would expand,
/// redirect or chain, and a first word that is a literal program name, not an assignment, a
/// builtin or a keyword (run directly, `echo` would be /bin/echo, which treats backslashes
/// unlike dash's builtin).
fn is_plain_call(script: &str) -> bool {
    // dash's builtins and keywords, and bash's (macOS's sh is bash): `time` there is a keyword.
    const BUILTINS: &str = ". : [ alias bg bind break builtin caller case cd chdir command compgen complete \
        continue coproc declare dirs disown do done echo elif else enable esac eval exec exit export false fc fg fi \
        for function getopts hash help history if jobs kill let local logout mapfile popd printf pushd pwd read \
        readarray readonly return select set shift shopt source suspend test then time times trap true type \
        typeset ulimit umask unalias unset until wait while";
    let plain = |c: char| c.is_ascii_alphanumeric() || " _./:,+@%=-".contains(c);
    let without_placeholders = script.replace("{prompt}", "").replace("{id}", "");
    let Some(program) = script.split(' ').find(|word| !word.is_empty()) else { return false };
    without_placeholders.chars().all(plain)
        && program.chars().all(|c| plain(c) && c != '=')
        && !BUILTINS.split_whitespace().any(|builtin| builtin == program)
}

/// A placeholder written inside quotes in a shell command line (`'{prompt}'`, `"x {id}"`): fcorr
/// quotes the value itself, so the user's quotes close fcorr's and the value's `$(…)`, `*` and
/// newlines reach the shell. `Some(placeholder)` for the first one found.
pub(crate) fn quoted_placeholder(script: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (at, c) in script.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        if single || double {
            for placeholder in ["{prompt}", "{id}"] {
                if script[at..].starts_with(placeholder) {
                    return Some(placeholder);
                }
            }
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
    }
    None
}

impl Backend for CommandSut {
    fn attempt(&self, request: &SutRequest, timeout: Duration) -> Result<Reply, Failure> {
        let private = |what: &str, e: std::io::Error| Failure::Permanent {
            message: format!("cannot create {what} for the call to the system under test: {e}"),
            raw: None,
        };
        let scratch = self.scratch().map_err(|e| private("a private temporary directory", e))?;
        let case_file = CaseFile::create(scratch, &request.case).map_err(|e| private("the case file", e))?;
        let spec = self.spec(request, &case_file.0);
        // Stdout alone is the answer; the runner's capture interleaves stderr, so stdout is
        // also kept apart, in memory, up to the answer limit.
        let limit = usize::try_from(answer::MAX_ANSWER).unwrap_or(usize::MAX);
        let (outcome, stdout) = process::run_keeping_stdout(&spec, timeout, KILL_GRACE, &self.log, limit);
        drop(case_file);
        let output = || Some(answer::cap(&outcome.output));
        match outcome.exit {
            Exit::Code(0) => {}
            Exit::TimedOut => return Err(Failure::Timeout),
            Exit::Cancelled => return Err(Failure::Cancelled),
            Exit::Code(code) => {
                let message = format!("`{}` exited with code {code}", spec.display());
                return Err(Failure::Permanent { message, raw: output() });
            }
            Exit::Signal(signal) => {
                let message = format!("`{}` was killed by signal {signal}", spec.display());
                return Err(Failure::Permanent { message, raw: output() });
            }
            Exit::SpawnFailed { message, .. } => return Err(Failure::Permanent { message, raw: None }),
        }
        if stdout.len() > limit {
            let message = format!(
                "`{}` printed more than {} MiB; that is not an answer",
                spec.display(),
                answer::MAX_ANSWER >> 20
            );
            return Err(Failure::Permanent { message, raw: output() });
        }
        answer::parse(&stdout, self.config.answer).map_err(|bad| {
            let mut message = format!("`{}` answered something unusable: {}", spec.display(), bad.message);
            // An answer printed on stderr by mistake (`print(…, file=sys.stderr)`, `>&2`, a
            // logger) is the usual cause of an empty one: say what went there.
            if stdout.iter().all(u8::is_ascii_whitespace) {
                message.push_str(&stderr_note(&outcome.output));
            }
            Failure::Permanent { message, raw: Some(bad.raw) }
        })
    }

    fn identity(&self) -> Value {
        let mut identity = serde_json::json!({"type": "command", "config": self.config, "cwd": self.cwd});
        // Only when there are some, so the keys of a command naming no file stay as they were.
        if let (Some(object), Value::Object(files)) = (identity.as_object_mut(), self.program_files())
            && !files.is_empty()
        {
            object.insert("files".into(), Value::Object(files.clone()));
        }
        identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execute::process::tests::wait_until_dead;
    use crate::sut::guard::{CallPolicy, Guarded};
    use crate::sut::{Sut, SutError};
    use serde_json::json;
    use std::time::Instant;

    fn sut(command: CommandLine, dir: &std::path::Path, timeout: Duration) -> Guarded<CommandSut> {
        let config = CommandConfig {
            command,
            stdin: StdinMode::Case,
            cwd: None,
            env: BTreeMap::new(),
            answer: AnswerFormat::Auto,
            pass_env: Vec::new(),
        };
        let policy = CallPolicy { timeout, ..CallPolicy::default() };
        Guarded::new(CommandSut::new(config, dir, process::null_log()), policy, None)
    }

    fn shell(script: &str, dir: &std::path::Path) -> Guarded<CommandSut> {
        sut(CommandLine::Shell(script.into()), dir, Duration::from_secs(10))
    }

    fn request(prompt: &str) -> SutRequest {
        SutRequest { id: "case-1".into(), prompt: prompt.into(), case: json!({"id": "case-1", "prompt": prompt}) }
    }

    #[test]
    fn prompt_is_substituted_shell_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let answer = shell("printf '%s|%s' {prompt} {id}", dir.path()).call(&request("it's $HOME; `x`")).unwrap();
        assert_eq!(answer.output, json!("it's $HOME; `x`|case-1"));
        assert_eq!(answer.attempts, 1);
        assert!(!answer.cached);
    }

    #[test]
    fn a_prompt_holding_a_placeholder_arrives_as_written_and_an_id_never_reaches_the_shell() {
        // The dataset's id carries shell code and its prompt is `{id}`: replacing {prompt} then
        // {id} put the id, quoted, inside the prompt's quotes, and the shell ran `touch`.
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join("pwned");
        let id = format!("x$(touch {})", planted.display());
        let request = |prompt: &str| SutRequest { id: id.clone(), prompt: prompt.into(), case: json!({"id": id}) };
        for script in ["printf '%s|%s' {prompt} {id}", "printf '%s|%s' {prompt} {id} | cat"] {
            let answer = shell(script, dir.path()).call(&request("say {id} and {prompt}")).unwrap();
            assert_eq!(answer.output, json!(format!("say {{id}} and {{prompt}}|{id}")), "{script}");
            assert!(!planted.exists(), "{script}: the id ran as shell code");
        }
    }

    #[test]
    fn a_placeholder_inside_quotes_is_found_and_one_outside_is_not() {
        for script in ["python3 echo.py '{prompt}'", "sut \"say {id} now\"", "a 'b' \"c '{prompt}'\""] {
            assert!(quoted_placeholder(script).is_some(), "{script}");
        }
        for script in ["printf '%s|%s' {prompt} {id}", "sut {prompt} 'x' \\'{id}", "sut \"a\" {prompt}"] {
            assert_eq!(quoted_placeholder(script), None, "{script}");
        }
    }

    #[test]
    fn a_plain_shell_command_line_runs_as_one_process() {
        // The script reports whether it leads its process group: it does when fcorr started it
        // itself, not when a shell forked it (and waited).
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("who.sh"),
            "[ \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" ] && echo leader \"$1\" || echo child \"$1\"\n",
        )
        .unwrap();
        let answer = shell("sh who.sh {prompt}", dir.path()).call(&request("it's a b")).unwrap();
        assert_eq!(answer.output, json!("leader it's a b"));
        // Anything the shell itself must do keeps the shell.
        let answer = shell("sh who.sh {prompt} | cat", dir.path()).call(&request("x")).unwrap();
        assert_eq!(answer.output, json!("child x"));
        // An executable script without `#!` still runs: the shell runs it as a script.
        let plain = dir.path().join("plain.sh");
        std::fs::write(&plain, "echo hi \"$1\"\n").unwrap();
        std::fs::set_permissions(&plain, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let answer = shell("./plain.sh {prompt}", dir.path()).call(&request("x y")).unwrap();
        assert_eq!(answer.output, json!("hi x y"));
        for (line, execs) in [
            ("python3 sut.py --model=small {prompt}", true),
            ("./sut {id}", true),
            ("echo {prompt}", false),
            ("time sut {prompt}", false),
            ("FOO=1 sut {prompt}", false),
            ("sut {prompt}; rm x", false),
            ("sut $HOME", false),
            ("sut *.txt", false),
            ("{prompt}", false),
            ("", false),
        ] {
            assert_eq!(is_plain_call(line), execs, "{line}");
        }
    }

    #[test]
    fn argv_form_passes_words_verbatim_and_resolves_relative_programs() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("echo.sh");
        std::fs::write(&script, "#!/bin/sh\nprintf '%s' \"$1\"\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let argv = CommandLine::Argv(vec!["./echo.sh".into(), "say {prompt}".into()]);
        let answer = sut(argv, dir.path(), Duration::from_secs(10)).call(&request("a b")).unwrap();
        assert_eq!(answer.output, json!("say a b"));
    }

    #[test]
    fn the_case_arrives_as_json_on_stdin_and_json_answers_carry_usage() {
        let dir = tempfile::tempdir().unwrap();
        let script =
            r#"read -r line; printf '{"output": %s, "usage": {"input_tokens": 5, "output_tokens": 2}}' "$line""#;
        let answer = shell(script, dir.path()).call(&request("list")).unwrap();
        assert_eq!(answer.output, json!({"id": "case-1", "prompt": "list"}));
        let usage = answer.usage.unwrap();
        assert_eq!((usage.tokens, usage.tokens_in, usage.tokens_out), (7, Some(5), Some(2)));
    }

    #[test]
    fn a_hanging_sut_is_killed_at_the_timeout_with_its_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The child ignores SIGTERM, so only the group SIGKILL after the grace stops it.
        let script = format!("sh -c 'trap \"\" TERM; echo $$ > {}; sleep 300' & wait", pidfile.display());
        let started = Instant::now();
        let err =
            sut(CommandLine::Shell(script), dir.path(), Duration::from_millis(300)).call(&request("x")).unwrap_err();
        assert_eq!(err, SutError::Timeout { after: Duration::from_millis(300) });
        assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
        let pid: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        assert!(!wait_until_dead(pid, Duration::from_secs(2)), "process {pid} outlived the timeout");
    }

    #[test]
    fn garbage_on_stdout_is_a_backend_error_with_the_raw_text() {
        let dir = tempfile::tempdir().unwrap();
        let err = shell(r#"echo '{"output": "ls" oops'"#, dir.path()).call(&request("x")).unwrap_err();
        let SutError::Backend { message, raw } = err else { panic!("{err:?}") };
        assert!(message.contains("unusable") && message.contains("does not parse"), "{message}");
        assert_eq!(raw.as_deref(), Some("{\"output\": \"ls\" oops\n"));

        let err = shell(r"printf '\377\376\000binary'", dir.path()).call(&request("x")).unwrap_err();
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }

    #[test]
    fn a_non_zero_exit_is_a_backend_error_naming_the_code_and_keeping_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let err = shell("echo 'model not loaded' >&2; exit 3", dir.path()).call(&request("x")).unwrap_err();
        let SutError::Backend { message, raw } = err else { panic!("{err:?}") };
        assert!(message.contains("exited with code 3"), "{message}");
        assert!(raw.unwrap().contains("model not loaded"));
    }

    #[test]
    fn an_answer_beyond_the_limit_is_an_error_not_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        // 17 MiB of output: a backend error naming the limit.
        let err = shell("head -c 17825792 /dev/zero | tr '\\0' x", dir.path()).call(&request("x")).unwrap_err();
        assert!(err.to_string().contains("more than 16 MiB"), "{err}");
    }

    #[test]
    fn a_file_planted_at_a_predictable_temp_path_is_neither_written_nor_read() {
        // fcorr used to copy a call's stdout to $TMPDIR/fcorr-sut-<pid>-<n>.out (n counting calls)
        // and read it back: a symlink planted there made fcorr overwrite the file it points to
        // and serve it as the answer. Plant one at every name this process could have used.
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "planted").unwrap();
        let planted: Vec<PathBuf> = (0..2048)
            .map(|n| std::env::temp_dir().join(format!("fcorr-sut-{}-{n}.out", std::process::id())))
            .filter(|path| std::os::unix::fs::symlink(&victim, path).is_ok())
            .collect();
        // The call's files live in a directory only fcorr's user can enter.
        let answer = shell(r#"stat -c %a "$(dirname "$FCORR_CASE_FILE")""#, dir.path()).call(&request("x"));
        for path in &planted {
            let _ = std::fs::remove_file(path);
        }
        assert_eq!(answer.unwrap().output, json!("700"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "planted", "the planted link was written through");
    }

    #[test]
    fn calls_share_one_private_directory_and_leave_no_case_file_behind() {
        // One directory per suite, not one (mkdir, and a walk to remove it) per call.
        let dir = tempfile::tempdir().unwrap();
        let sut = shell(r#"printf '%s' "$FCORR_CASE_FILE""#, dir.path());
        let first = sut.call(&request("a")).unwrap().output;
        let second = sut.call(&request("b")).unwrap().output;
        let (first, second) = (PathBuf::from(first.as_str().unwrap()), PathBuf::from(second.as_str().unwrap()));
        assert_ne!(first, second);
        assert_eq!(first.parent(), second.parent());
        assert!(!first.exists() && !second.exists(), "a case file outlived its call");
        assert!(first.parent().unwrap().is_dir(), "the directory lives as long as the SUT");
    }

    #[test]
    fn the_case_is_in_a_file_and_a_huge_id_is_not_in_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let script = r#"printf '%s|' "${FCORR_CASE_ID-unset}"; wc -c < "$FCORR_CASE_FILE""#;
        let mut request = request("q");
        let answer = shell(script, dir.path()).call(&request).unwrap();
        assert_eq!(answer.output, json!(format!("case-1|{}", request.case.to_string().len())));
        request.id = "i".repeat(200_000);
        request.case = json!({"id": request.id, "prompt": "q"});
        let answer = shell(script, dir.path()).call(&request).unwrap();
        assert_eq!(answer.output, json!(format!("unset|{}", request.case.to_string().len())));
    }

    #[test]
    fn a_prompt_too_long_for_the_command_line_is_a_backend_error_that_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let err = shell("echo {prompt}", dir.path()).call(&request(&"p".repeat(200_000))).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("argument 2 is") && text.contains("stdin = \"prompt\""), "{text}");
    }

    #[test]
    fn a_missing_program_is_a_backend_error() {
        let dir = tempfile::tempdir().unwrap();
        let argv = CommandLine::Argv(vec!["fcorr-no-such-sut".into()]);
        let err = sut(argv, dir.path(), Duration::from_secs(5)).call(&request("x")).unwrap_err();
        assert!(err.to_string().contains("fcorr-no-such-sut"), "{err}");
    }
}
