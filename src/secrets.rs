//! The secrets fcorr reads — the variables fcorr.toml names as credentials (`api-key-env`,
//! `{env:NAME}`) and the tokens it publishes with — kept in one process-wide registry, filled
//! right after the config is read. Child processes never inherit them unless a suite names them
//! in `pass-env`, and [`redact`] replaces their values by `***` in every text fcorr writes or posts:
//! as read, escaped, and in the fragments a test framework's shortened repr shows ([`fragments`]).

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a secret value is replaced with.
pub(crate) const MASK: &str = "***";

/// Values shorter than this are withheld and masked but not redacted: replacing every `abc`
/// would mangle the reports more than it protects.
pub(crate) const MIN_REDACTED_LEN: usize = 4;

/// Variables removed from every child unless its suite names them in `pass-env`, whatever the
/// config says: the tokens fcorr itself publishes with, and the runner's own credentials. A
/// test that prints its environment would otherwise put them in every report, log and the PR
/// comment.
pub(crate) const SECRET_VARS: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "INPUT_GITHUB-TOKEN",
    "INPUT_GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
];

/// The variable names inside `{env:NAME}` references in `text`.
pub(crate) fn env_refs(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("{env:").filter_map(move |(start, _)| {
        let rest = &text[start + 5..];
        let end = rest.find('}')?;
        Some(&rest[..end]).filter(|name| !name.is_empty())
    })
}

/// The environment variables a configuration value names as secrets: every `{env:NAME}` in a
/// string, and the whole value of a key ending in `-env` (`api-key-env`, and any such key added
/// later), except `pass-env`, whose names are the ones let through.
pub(crate) fn named_by(key: &str, value: &str) -> Vec<String> {
    let mut names: Vec<String> = env_refs(value).map(str::to_string).collect();
    if key.ends_with("-env") && key != "pass-env" && !value.trim().is_empty() {
        names.push(value.trim().to_string());
    }
    names
}

/// A `pass-env` name that fcorr does not withhold, so passing it back means nothing: a typo
/// would silently leave the test without its token.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "`{name}` in `pass-env` is not a variable fcorr removes from test environments; only these can be passed back: {} (every other variable reaches the tests already)",
    allowed.join(", ")
)]
pub(crate) struct PassEnvError {
    pub(crate) name: String,
    /// [`SECRET_VARS`], then the secrets this configuration names.
    pub(crate) allowed: Vec<String>,
}

/// Checks one `pass-env` name against the variables fcorr withholds: [`SECRET_VARS`] and the
/// secrets the configuration names (`configured`).
pub(crate) fn check_pass_env(name: &str, configured: &[String]) -> Result<(), PassEnvError> {
    if SECRET_VARS.contains(&name) || configured.iter().any(|c| c == name) {
        return Ok(());
    }
    let mut allowed: Vec<String> = SECRET_VARS.iter().map(|s| s.to_string()).collect();
    allowed.extend(configured.iter().filter(|c| !SECRET_VARS.contains(&c.as_str())).cloned());
    Err(PassEnvError { name: name.to_string(), allowed })
}

/// Pattern bytes up to which the matcher is a DFA: its memory grows with them (a few MB here),
/// beyond them (a PEM key's spellings) the builder's own choice is kept.
const DFA_MAX_PATTERN_BYTES: usize = 64 * 1024;

/// The secrets known to this process and the matcher that finds them.
struct Registry {
    /// Configured variable names (not [`SECRET_VARS`], which are always withheld).
    names: Vec<String>,
    /// Values of every registered variable, as read.
    values: Vec<String>,
    matcher: Option<AhoCorasick>,
    /// Bytes of the longest pattern: what a stream must hold back to see one whole.
    longest: usize,
}

impl Registry {
    fn new(names: Vec<String>, values: Vec<String>) -> Registry {
        let mut patterns: Vec<String> = values.iter().flat_map(|v| spellings(v)).collect();
        patterns.retain(|p| p.chars().count() >= MIN_REDACTED_LEN);
        patterns.sort();
        patterns.dedup();
        let longest = patterns.iter().map(String::len).max().unwrap_or(0);
        // Leftmost-longest: a whole value wins over one of its lines starting at the same place.
        // A DFA while the patterns are few: fragments start with many different bytes, which
        // defeats the prefilter, and the DFA scans such a set 2.7 times as fast as the default
        // (a 100 MB log with two secrets and their fragments).
        let kind =
            (patterns.iter().map(String::len).sum::<usize>() <= DFA_MAX_PATTERN_BYTES).then_some(AhoCorasickKind::DFA);
        let matcher = (!patterns.is_empty())
            .then(|| AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).kind(kind).build(&patterns).ok())
            .flatten();
        Registry { names, values, matcher, longest }
    }

    fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(matcher) = &self.matcher else { return Cow::Borrowed(bytes) };
        if !matcher.is_match(bytes) {
            return Cow::Borrowed(bytes);
        }
        let mut out = Vec::with_capacity(bytes.len());
        matcher.replace_all_with_bytes(bytes, &mut out, |_, _, out| {
            out.extend_from_slice(MASK.as_bytes());
            true
        });
        Cow::Owned(out)
    }

    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(matcher) = &self.matcher else { return Cow::Borrowed(text) };
        if !matcher.is_match(text) {
            return Cow::Borrowed(text);
        }
        Cow::Owned(matcher.replace_all(text, &vec![MASK; matcher.patterns_len()]))
    }
}

/// How a value can appear in fcorr's outputs: as read, each of its lines (a PEM key printed
/// line by line, and what `::add-mask::` registers), the [`fragments`] of a long one (a test
/// framework's shortened repr, a value printed in two halves), and each of those escaped for
/// JSON, HTML and XML (a report written from a text that still held it).
fn spellings(value: &str) -> Vec<String> {
    let mut raw = vec![value.to_string()];
    let lines: Vec<&str> = value.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if value.contains('\n') {
        raw.extend(lines.iter().map(|l| l.to_string()));
    }
    // Upper- and lower-cased whole (a log that shouts, a header lowered), not fragments:
    // case-insensitive matching everywhere would let short fragments match ordinary words.
    let cased: Vec<String> = raw
        .iter()
        .filter(|t| t.chars().count() >= MIN_FRAGMENT)
        .flat_map(|t| [t.to_uppercase(), t.to_lowercase()])
        .collect();
    // A value of many lines (a PEM key) is found whole and line by line; fragments of each of
    // its lines would cost thousands of patterns for text no framework shortens.
    let fragmented: Vec<String> = if lines.len() <= MAX_FRAGMENTED_LINES {
        raw.iter().flat_map(|text| fragments(text)).collect()
    } else {
        Vec::new()
    };
    raw.iter().chain(&cased).chain(&fragmented).flat_map(|text| escaped(text)).collect()
}

/// Bytes a URL's query or path keeps as they are: RFC 3986's unreserved characters, which
/// every encoder leaves alone (Python's `quote(s, safe='')`, Go's `url.QueryEscape`, JS's
/// `encodeURIComponent` for the characters tokens use).
const URL_KEPT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// [`URL_KEPT`] and `/`: Python's `quote(s)` and paths built from a value.
const URL_PATH_KEPT: &AsciiSet = &URL_KEPT.remove(b'/');

/// `text` as written, escaped for JSON, XML and HTML, and percent-encoded as in a URL (a key in
/// a printed request URL): `%2B` for `+`, and the form spelling with `+` for a space.
fn escaped(text: &str) -> [String; 7] {
    let url = utf8_percent_encode(text, URL_KEPT).to_string();
    // `%20` can only stand for a space: a `%` is itself encoded as `%25`.
    let form = url.replace("%20", "+");
    let path = utf8_percent_encode(text, URL_PATH_KEPT).to_string();
    let json = serde_json::to_string(text).map(|q| q[1..q.len() - 1].to_string()).unwrap_or_default();
    let xml = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;");
    // minijinja's HTML escaping (report.html, templates).
    let html = xml.replace("&apos;", "&#x27;").replace('/', "&#x2f;");
    [text.to_string(), json, xml, html, url, form, path]
}

/// A secret this long (in characters) or longer is also found in [`fragments`]: in a shorter
/// one, a fragment long enough to be told from ordinary text would be most of it.
const FRAGMENTED_FROM_LEN: usize = 16;

/// The fewest characters of a secret a fragment must show, past the secret's common start or
/// end ([`common_ends`]), to be masked: fewer could be ordinary text.
const MIN_FRAGMENT: usize = 8;

/// Fragments are taken up to this many characters: a longer secret (a JWT) is masked as far as
/// its first and last 256 characters reach, without a pattern for every length up to its own.
const MAX_FRAGMENT: usize = 256;

/// A value of more lines than this is found whole and line by line, without fragments.
const MAX_FRAGMENTED_LINES: usize = 4;

/// The start of every prefix and the end of every suffix of a long `text` that shows at least
/// [`MIN_FRAGMENT`] of its characters beyond what it shares with ordinary text: what reaches a
/// report when a test framework shortens a value (pytest's `'ghp_R3alTok3...rstuvWxyz0123'`,
/// `prefix...` cuts) or a test prints it in two pieces. Prefixes and suffixes only: a middle
/// piece cut from both sides is not found.
fn fragments(text: &str) -> Vec<String> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let chars = bounds.len() - 1;
    if chars < FRAGMENTED_FROM_LEN {
        return Vec::new();
    }
    let (head, tail) = common_ends(text);
    let mut out = Vec::new();
    // Prefixes of `k` characters; the whole text is already a pattern.
    for k in (head + MIN_FRAGMENT)..chars.min(MAX_FRAGMENT + 1) {
        out.push(text[..bounds[k]].to_string());
    }
    for k in (tail + MIN_FRAGMENT)..chars.min(MAX_FRAGMENT + 1) {
        out.push(text[bounds[chars - k]..].to_string());
    }
    out
}

/// How many characters at the start and at the end of a secret are common text, which a
/// fragment must reach past ([`MIN_FRAGMENT`] characters) to be masked:
/// - at the start, a URL's scheme and host (`https://hooks.example.com`; only the scheme when
///   credentials follow it, `https://user:pass@`), else a token's kind: words each followed by
///   `_` or `-` (`ghp_`, `github_pat_`, `sk-proj-`), at most [`MAX_KIND`] characters;
/// - at the end, a host after the last `@` (`…@github.com`).
///
/// So `https://` or `sk-proj-` elsewhere in a report is not masked, and every fragment masked
/// holds at least 8 characters that are the secret's own.
fn common_ends(text: &str) -> (usize, usize) {
    let head = match text.find("://") {
        Some(at) if is_scheme(&text[..at]) => {
            let rest = &text[at + 3..];
            let host = match rest.find(['/', '?', '#', '@']) {
                // Credentials follow the scheme: they are the secret's own characters.
                Some(i) if rest.as_bytes()[i] == b'@' => 0,
                Some(i) => i,
                // A URL without a path: it is all host, and found whole.
                None => rest.len(),
            };
            text[..at + 3 + host].chars().count()
        }
        _ => kind_prefix(text),
    };
    let tail = match text.rfind('@') {
        Some(at) if text[at + 1..].chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':')) => {
            text[at..].chars().count()
        }
        _ => 0,
    };
    (head, tail)
}

/// The longest a token's kind ([`common_ends`]) is taken to be: `github_pat_` is 11.
const MAX_KIND: usize = 12;

/// Characters of `text`'s leading words each followed by `_` or `-`, up to [`MAX_KIND`].
fn kind_prefix(text: &str) -> usize {
    let mut end = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if i >= MAX_KIND {
            break;
        }
        match c {
            c if c.is_ascii_alphabetic() => in_word = true,
            '_' | '-' if in_word => {
                end = i + 1;
                in_word = false;
            }
            _ => break,
        }
    }
    end
}

/// True for a URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

static REGISTRY: RwLock<Option<Arc<Registry>>> = RwLock::new(None);

fn current() -> Option<Arc<Registry>> {
    // Plain data, replaced whole: a panic elsewhere cannot leave it half-written.
    REGISTRY.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// What [`register`] found.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Registered {
    /// The configured secrets' values, for `::add-mask::` (the tokens are masked at start).
    pub(crate) values: Vec<String>,
    /// Variables whose value is too short to redact (shorter than [`MIN_REDACTED_LEN`]).
    pub(crate) too_short: Vec<String>,
}

/// Registers the variables a configuration names as secrets (`names`) and the tokens of
/// [`SECRET_VARS`], reading their values from the environment: from now on they are withheld
/// from child processes, out of their reach in fcorr's own environment ([`hide_environment`]) and
/// redacted by [`redact`]. Adds to what an earlier call registered.
pub(crate) fn register(names: &[String]) -> Registered {
    let mut guard = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    let (mut all_names, mut values) = match guard.as_deref() {
        Some(r) => (r.names.clone(), r.values.clone()),
        None => (Vec::new(), Vec::new()),
    };
    let mut found = Registered::default();
    let read = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    for name in names {
        if !all_names.contains(name) {
            all_names.push(name.clone());
        }
        let Some(value) = read(name) else { continue };
        if value.trim().chars().count() < MIN_REDACTED_LEN {
            found.too_short.push(name.clone());
        }
        found.values.push(value.clone());
        values.push(value);
    }
    values.extend(SECRET_VARS.iter().filter_map(|name| read(name)));
    values.sort();
    values.dedup();
    if !values.is_empty() {
        hide_environment();
    }
    *guard = Some(Arc::new(Registry::new(all_names, values)));
    found
}

/// Keeps the tests fcorr runs from reading the secrets it withholds from them out of fcorr's own
/// environment: a process of the same user may read another's `/proc/<pid>/environ` (and attach
/// to it with ptrace) unless that one is not dumpable, which makes its /proc files root's. Root
/// and sudo still can; children are not affected (exec makes them dumpable again). It also stops
/// fcorr's core dumps, which would hold the secrets too. Linux only: elsewhere nothing changes.
pub(crate) fn hide_environment() {
    // Cannot fail for a process changing itself; if a kernel refused, fcorr would run as before.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
}

/// Every variable removed from child processes unless a suite passes it: [`SECRET_VARS`] and
/// the registered configuration secrets.
pub(crate) fn withheld() -> Vec<String> {
    let mut names: Vec<String> = SECRET_VARS.iter().map(|s| s.to_string()).collect();
    if let Some(registry) = current() {
        names.extend(registry.names.iter().filter(|n| !SECRET_VARS.contains(&n.as_str())).cloned());
    }
    names
}

/// `text` with every registered secret replaced by [`MASK`].
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    match current() {
        Some(registry) => match registry.redact(text) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(s) => Cow::Owned(s),
        },
        None => Cow::Borrowed(text),
    }
}

/// [`redact`] in place, for an owned string.
pub(crate) fn redact_in_place(text: &mut String) {
    if let Cow::Owned(clean) = redact(text) {
        *text = clean;
    }
}

/// Redacts every string (and object key) of a JSON value; true when something was replaced.
pub(crate) fn redact_json(value: &mut Value) -> bool {
    match current() {
        Some(registry) if registry.matcher.is_some() => redact_value(&registry, value),
        _ => false,
    }
}

fn redact_value(registry: &Registry, value: &mut Value) -> bool {
    match value {
        Value::String(s) => match registry.redact(s) {
            Cow::Owned(clean) => {
                *s = clean;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| redact_value(registry, item) | changed),
        Value::Object(map) => {
            let mut changed = false;
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                changed |= redact_value(registry, &mut item);
                let key = match registry.redact(&key) {
                    Cow::Owned(clean) => {
                        changed = true;
                        clean
                    }
                    Cow::Borrowed(_) => key,
                };
                map.insert(key, item);
            }
            changed
        }
        _ => false,
    }
}

/// Redacts every string of a serialisable value (a suite as it enters the run). Only a value
/// that holds a secret is rebuilt, through JSON; if that fails it is left as it was, and the
/// report files and publishing redact their text again.
pub(crate) fn redact_serde<T: Serialize + DeserializeOwned>(item: &mut T) {
    let Some(registry) = current() else { return };
    let Some(matcher) = &registry.matcher else { return };
    let Ok(text) = serde_json::to_vec(item) else { return };
    // The JSON text holds each secret in its JSON spelling, which is among the patterns.
    if !matcher.is_match(&text) {
        return;
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(&text) else { return };
    redact_value(&registry, &mut value);
    if let Ok(clean) = serde_json::from_value(value) {
        *item = clean;
    }
}

/// Files up to this size are redacted in memory and rewritten only when a secret is found; larger
/// ones (a tool's huge report) are streamed through a [`RedactWriter`] into a new copy.
const IN_MEMORY_FILE: u64 = 64 << 20;

/// Masks the secrets in every file under `dir` (the reports and files the tools of a suite wrote
/// in its work directory, which fcorr reads but did not write, so nothing masked them): a user
/// who uploads the whole output directory as an artifact must not publish a token a test
/// printed into pytest's own XML. Symbolic links are not followed; what cannot be rewritten is
/// removed rather than left with a secret in it.
pub(crate) fn redact_files_under(dir: &std::path::Path) {
    let Some(registry) = current().filter(|r| r.matcher.is_some()) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() {
            redact_files_under(&path);
        } else if kind.is_file() && redact_file(&registry, &path).is_err() {
            let _ = std::fs::remove_file(&path);
        }
    }
}

fn redact_file(registry: &Registry, path: &std::path::Path) -> io::Result<()> {
    let size = std::fs::metadata(path)?.len();
    let tmp = path.with_extension("fcorr-redacting");
    if size <= IN_MEMORY_FILE {
        let bytes = std::fs::read(path)?;
        if let Cow::Owned(masked) = registry.redact_bytes(&bytes) {
            std::fs::write(&tmp, masked)?;
            std::fs::rename(&tmp, path)?;
        }
        return Ok(());
    }
    let mut input = std::fs::File::open(path)?;
    let mut out = RedactWriter::new(io::BufWriter::new(std::fs::File::create(&tmp)?));
    io::copy(&mut input, &mut out)?;
    out.finish()?;
    std::fs::rename(&tmp, path)
}

/// Redacts a stream that arrives in pieces (a child's output, a report being written): holds
/// back just enough bytes that a secret split between two pieces is still found whole.
pub(crate) struct Redactor {
    registry: Option<Arc<Registry>>,
    /// The end of the stream so far, not yet released: shorter than the longest secret.
    pending: Vec<u8>,
    /// Where the held-back bytes and the start of the next piece are looked at together.
    seam: Vec<u8>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

impl Redactor {
    /// A redactor for the secrets registered now.
    pub(crate) fn new() -> Redactor {
        Redactor::with(current())
    }

    /// A redactor for `values` alone, whatever is registered: the `redaction` fuzz target checks
    /// the streaming against the whole text without touching the process-wide registry.
    pub(crate) fn for_values(values: Vec<String>) -> Redactor {
        Redactor::with(Some(Arc::new(Registry::new(Vec::new(), values))))
    }

    fn with(registry: Option<Arc<Registry>>) -> Redactor {
        Redactor { registry: registry.filter(|r| r.matcher.is_some()), pending: Vec::new(), seam: Vec::new() }
    }

    /// True when this redactor has secrets to look for: without them a stream passes through as it is.
    fn is_active(&self) -> bool {
        self.registry.is_some()
    }

    /// The part of the stream that can be released after `chunk`, redacted; without secrets,
    /// `chunk` itself.
    pub(crate) fn push<'a>(&mut self, chunk: &'a [u8]) -> Cow<'a, [u8]> {
        if !self.is_active() {
            return Cow::Borrowed(chunk);
        }
        let mut out = Vec::new();
        let _ = self.pass(chunk, |piece| {
            out.extend_from_slice(piece);
            Ok::<(), std::convert::Infallible>(())
        });
        Cow::Owned(out)
    }

    /// [`Redactor::push`] handing what is released to `emit`, in one or more pieces. A piece in
    /// which no secret starts (nearly all of them) is handed on borrowed, without being copied.
    pub(crate) fn pass<E>(&mut self, chunk: &[u8], mut emit: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        let Redactor { registry, pending, seam } = self;
        let Some((matcher, longest)) = registry.as_ref().and_then(|r| Some((r.matcher.as_ref()?, r.longest))) else {
            return emit(chunk);
        };
        let keep = longest.saturating_sub(1);
        if pending.len() + chunk.len() > keep && !matcher.is_match(chunk) && {
            // A secret starting in the held-back bytes ends within `keep` bytes of the chunk.
            seam.clear();
            seam.extend_from_slice(pending);
            seam.extend_from_slice(&chunk[..chunk.len().min(keep)]);
            !matcher.is_match(&seam[..])
        } {
            // No secret anywhere in what is not yet released: release all but the last `keep`
            // bytes, as the search below would.
            if chunk.len() >= keep {
                let (out, rest) = chunk.split_at(chunk.len() - keep);
                if !pending.is_empty() {
                    emit(&pending[..])?;
                }
                emit(out)?;
                pending.clear();
                pending.extend_from_slice(rest);
            } else {
                let release = pending.len() + chunk.len() - keep;
                emit(&pending[..release])?;
                pending.drain(..release);
                pending.extend_from_slice(chunk);
            }
            return Ok(());
        }
        pending.extend_from_slice(chunk);
        if pending.len() <= keep {
            return Ok(());
        }
        // Any secret starting before `cut` lies wholly inside `pending`, so it is found now;
        // one starting later may still be arriving and waits for the next piece.
        let mut cut = pending.len() - keep;
        let mut out = Vec::with_capacity(cut);
        let mut last = 0;
        for found in matcher.find_iter(&pending[..]) {
            if found.start() >= cut {
                break;
            }
            out.extend_from_slice(&pending[last..found.start()]);
            out.extend_from_slice(MASK.as_bytes());
            last = found.end();
        }
        cut = cut.max(last);
        out.extend_from_slice(&pending[last..cut]);
        pending.drain(..cut);
        emit(&out)
    }

    /// The rest of the stream, redacted.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        let rest = std::mem::take(&mut self.pending);
        match &self.registry {
            Some(registry) => registry.redact_bytes(&rest).into_owned(),
            None => rest,
        }
    }
}

/// Bytes a [`RedactWriter`] gathers before redacting them: report writers write a few bytes at
/// a time (serde writes each quote and comma apart), and every write through the redactor and
/// the file's buffer behind it costs calls; one redaction per 256 KiB costs next to nothing.
const GATHER: usize = 256 * 1024;

/// A buffered writer that redacts what goes through it; [`RedactWriter::finish`] writes what it
/// held back.
pub(crate) struct RedactWriter<W: Write> {
    inner: W,
    redactor: Redactor,
    /// Written and not yet redacted; never grows past [`GATHER`].
    gathered: Vec<u8>,
}

impl<W: Write> RedactWriter<W> {
    pub(crate) fn new(inner: W) -> RedactWriter<W> {
        RedactWriter { inner, redactor: Redactor::new(), gathered: Vec::with_capacity(GATHER) }
    }

    /// Redacts what was gathered and hands it on (less what may be the start of a secret).
    fn release(&mut self, more: &[u8]) -> io::Result<()> {
        let RedactWriter { inner, redactor, gathered } = self;
        if !gathered.is_empty() {
            redactor.pass(&gathered[..], |piece| inner.write_all(piece))?;
            gathered.clear();
        }
        if !more.is_empty() {
            redactor.pass(more, |piece| inner.write_all(piece))?;
        }
        Ok(())
    }

    /// Writes the held-back end of the stream and flushes; the writer's last call.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        self.release(&[])?;
        let rest = self.redactor.finish();
        self.inner.write_all(&rest)?;
        self.inner.flush()
    }
}

impl<W: Write> Write for RedactWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if buf.len() <= GATHER - self.gathered.len() {
            self.gathered.extend_from_slice(buf);
            return Ok(());
        }
        if buf.len() < GATHER {
            self.release(&[])?;
            self.gathered.extend_from_slice(buf);
            return Ok(());
        }
        self.release(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        // What is held back may be the start of a secret: only `finish` releases it.
        self.release(&[])?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(values: &[&str]) -> Registry {
        Registry::new(Vec::new(), values.iter().map(|v| v.to_string()).collect())
    }

    #[test]
    fn config_values_name_secrets_by_reference_and_by_key() {
        assert_eq!(named_by("X-Api-Key", "Bearer {env:API_TOKEN} and {env:OTHER}"), ["API_TOKEN", "OTHER"]);
        assert_eq!(named_by("api-key-env", "OPENAI_API_KEY"), ["OPENAI_API_KEY"]);
        assert_eq!(named_by("embeddings-key-env", " EMB "), ["EMB"]);
        assert!(named_by("pass-env", "API_TOKEN").is_empty());
        assert!(named_by("url", "http://{env:}/x {env:UNCLOSED").is_empty());
    }

    #[test]
    fn pass_env_accepts_tokens_and_configured_secrets_only() {
        let configured = vec!["API_TOKEN".to_string()];
        assert!(check_pass_env("GITHUB_TOKEN", &configured).is_ok());
        assert!(check_pass_env("API_TOKEN", &configured).is_ok());
        let err = check_pass_env("API_TOKN", &configured).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("`API_TOKN` in `pass-env` is not a variable fcorr removes"), "{text}");
        assert!(text.contains("ACTIONS_ID_TOKEN_REQUEST_URL, API_TOKEN (every other"), "{text}");
    }

    #[test]
    fn values_lines_and_escaped_spellings_are_replaced_short_ones_are_not() {
        let r = registry(&["s3cr3t\"key</x>", "line-one\nline-two", "abc"]);
        // As read, in the JSON spelling serde writes (`"` → `\"`) and in minijinja's HTML one.
        let text = "a s3cr3t\"key</x> b s3cr3t\\\"key</x> c s3cr3t&quot;key&lt;&#x2f;x&gt; d";
        assert_eq!(r.redact(text), "a *** b *** c *** d");
        assert_eq!(r.redact(r#"{"m": "s3cr3t\"key</x>"}"#), r#"{"m": "***"}"#);
        assert_eq!(r.redact("printed: line-one\nline-two"), "printed: ***");
        assert_eq!(r.redact("only line-two here"), "only *** here");
        assert_eq!(r.redact("abc stays"), "abc stays");
        assert!(matches!(r.redact("nothing"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_secrets_are_found_in_prefixes_and_suffixes_that_show_eight_of_their_own_characters() {
        const TOKEN: &str = "ghp_R3alTok3nAbcdefGhijklmnopQrstuvWxyz0123";
        const ODD: &str = "ghp_Ab<&>\"Z0123456789secretXYZ";
        const HOOK: &str = "https://hooks.example.com/services/T0/B0/aSecretPath99";
        let r = registry(&[TOKEN, ODD, HOOK, "fifteen-chars-1", "https://u:pa55word@db.example.com"]);
        // pytest's elided repr, a cut, two halves, and their escaped spellings.
        assert_eq!(r.redact("assert 'ghp_R3alTok3...rstuvWxyz0123' == 'x'"), "assert '***...***' == 'x'");
        assert_eq!(r.redact("token ghp_R3alTok3n... (cut)"), "token ***... (cut)");
        assert_eq!(r.redact("1: ghp_R3alTok3nAbcde\n2: fGhijklmnopQrstuvWxyz0123"), "1: ***\n2: ***");
        assert_eq!(r.redact("assert 'ghp_Ab<&>\"Z0...6789secretXYZ'"), "assert '***...***'");
        assert_eq!(r.redact("ghp_Ab&lt;&amp;&gt;&quot;Z0...6789secretXYZ"), "***...***");
        assert_eq!(r.redact("{\"t\": \"ghp_Ab<&>\\\"Z0...\"}"), "{\"t\": \"***...\"}");
        assert_eq!(r.redact("GET https://hooks.example.com/services/T0/... failed"), "GET ***... failed");
        assert_eq!(r.redact("connect to https://u:pa55wo..."), "connect to ***...");
        // Not masked: the common start (a token's kind, a URL's scheme and host) with fewer
        // than 8 of the secret's own characters after it, 7 of its last characters, the
        // end of a URL that is its host, and fragments of a secret shorter than 16 characters.
        let plain = "ghp_R3alTok, ...xyz0123, https://hooks.example.com/serv, sk@db.example.com, fifteen-chars";
        assert_eq!(r.redact(plain), plain);
    }

    #[test]
    fn url_encoded_and_recased_spellings_are_replaced() {
        let r = registry(&["sk-proj-AbC+/=%line1\nline2-of-secret-XYZ", "key with space&more"]);
        // Python's quote(s, safe=''), quote(s) and quote_plus(s); str.upper() and str.lower().
        let url = "url-encoded: sk-proj-AbC%2B%2F%3D%25line1%0Aline2-of-secret-XYZ";
        assert_eq!(r.redact(url), "url-encoded: ***");
        assert_eq!(r.redact("GET /k/sk-proj-AbC%2B/%3D%25line1 200"), "GET /k/*** 200");
        assert_eq!(r.redact("?q=key+with+space%26more&x=1"), "?q=***&x=1");
        assert_eq!(r.redact("upper: SK-PROJ-ABC+/=%LINE1\nLINE2-OF-SECRET-XYZ"), "upper: ***");
        assert_eq!(r.redact("lower: sk-proj-abc+/=%line1"), "lower: ***");
        // Only the whole value and its lines change case: other casings of fragments are text.
        assert_eq!(r.redact("SK-PROJ-ABC+/=%L..."), "SK-PROJ-ABC+/=%L...");
    }

    #[test]
    fn common_ends_are_a_tokens_kind_a_urls_scheme_and_host_and_a_trailing_host() {
        assert_eq!(common_ends("ghp_R3alTok3nAbcdef"), (4, 0));
        assert_eq!(common_ends("github_pat_11ABCDEFG0123456789"), (11, 0));
        assert_eq!(common_ends("sk-proj-AbC+/=%line1"), (8, 0));
        assert_eq!(common_ends("correct-horse-battery-staple"), (8, 0));
        assert_eq!(common_ends("https://hooks.example.com/services/x"), (25, 0));
        assert_eq!(common_ends("https://user:pass@github.com"), (8, 11));
        assert_eq!(common_ends("R3alTok3nAbcdefGhijkl"), (0, 0));
        assert_eq!(common_ends("not a scheme://x"), (0, 0));
    }

    #[test]
    fn a_stream_finds_fragments_split_across_pieces() {
        let r = Arc::new(registry(&["ghp_R3alTok3nAbcdefGhijklmnopQrstuvWxyz0123"]));
        let text = b"a 'ghp_R3alTok3...rstuvWxyz0123' b ghp_R3alTok3nAbcdefGhijklmnopQrstuvWxyz0123 c".repeat(3);
        let whole = r.redact_bytes(&text).into_owned();
        assert_eq!(String::from_utf8_lossy(&whole), "a '***...***' b *** c".repeat(3));
        for size in 1..=50 {
            assert_eq!(streamed(&r, &text, size), whole, "pieces of {size}");
        }
    }

    /// `text` redacted as a stream of pieces of `size` bytes.
    fn streamed(r: &Arc<Registry>, text: &[u8], size: usize) -> Vec<u8> {
        let mut redactor = Redactor::with(Some(r.clone()));
        let mut out = Vec::new();
        for piece in text.chunks(size) {
            out.extend_from_slice(&redactor.push(piece));
        }
        out.extend(redactor.finish());
        out
    }

    #[test]
    fn a_stream_finds_secrets_split_across_pieces() {
        let r = Arc::new(registry(&["tok_0123456789", "tok_01"]));
        let text = b"xx tok_0123456789 yy tok_01 zz tok_0123456789".repeat(3);
        for size in 1..=20 {
            let out = streamed(&r, &text, size);
            assert_eq!(String::from_utf8(out).unwrap(), "xx *** yy *** zz ***".repeat(3), "pieces of {size}");
        }
    }

    #[test]
    fn a_piece_with_no_secret_is_passed_on_borrowed() {
        let mut redactor = Redactor::for_values(vec!["tok_0123456789".into()]);
        let first = b"held back: tok_01".to_vec();
        let second = b"2345 and then a long piece with nothing secret in it at all".to_vec();
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        let mut out = Vec::new();
        for chunk in [&first, &second] {
            redactor
                .pass(chunk, |piece| {
                    pieces.push((piece.as_ptr() as usize, piece.len()));
                    out.extend_from_slice(piece);
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        out.extend(redactor.finish());
        let text = [first.clone(), second.clone()].concat();
        assert_eq!(out, text, "a secret that is not whole is not one");
        let inside = |(at, len): (usize, usize)| {
            let start = second.as_ptr() as usize;
            at >= start && at + len <= start + second.len()
        };
        assert!(pieces.iter().any(|p| inside(*p) && p.1 > 30), "no piece borrowed from the chunk: {pieces:?}");
    }

    #[test]
    fn a_redacting_writer_gives_the_whole_text_redacted_whatever_the_write_sizes() {
        const VALUE: &str = "fcorr-unit-writer-secret-9361";
        let r = Arc::new(registry(&[VALUE]));
        // Secrets on both sides of every gathering boundary, and one split by it.
        let mut text = Vec::new();
        while text.len() < 3 * GATHER {
            text.extend_from_slice(b"{\"name\": \"case\", \"out\": \"");
            if text.len() % 7 == 0 {
                text.extend_from_slice(VALUE.as_bytes());
            }
            text.extend_from_slice(b"\"},\n");
        }
        for at in [GATHER - 5, 2 * GATHER - 20, 2 * GATHER + 1] {
            text.splice(at..at, VALUE.bytes());
        }
        let expected = r.redact_bytes(&text).into_owned();
        assert!(expected.len() < text.len());
        for size in [1, 3, 13, 4096, GATHER - 1, GATHER, GATHER + 7, 3 * GATHER] {
            let mut writer =
                RedactWriter { inner: Vec::new(), redactor: Redactor::with(Some(r.clone())), gathered: Vec::new() };
            for piece in text.chunks(size) {
                writer.write_all(piece).unwrap();
                if size == 13 {
                    writer.flush().unwrap();
                }
            }
            writer.finish().unwrap();
            assert!(writer.inner == expected, "writes of {size} bytes redact differently");
        }
    }

    #[test]
    fn without_secrets_a_stream_passes_through_untouched() {
        let mut redactor = Redactor::with(None);
        assert!(matches!(redactor.push(b"abc"), Cow::Borrowed(b"abc")));
        assert!(redactor.finish().is_empty());
    }

    #[test]
    fn json_keys_and_strings_are_redacted() {
        let r = registry(&["hunter22"]);
        let mut value = serde_json::json!({"env": {"KEY=hunter22": ["x hunter22", 5]}, "n": 1});
        assert!(redact_value(&r, &mut value));
        assert_eq!(value, serde_json::json!({"env": {"KEY=***": ["x ***", 5]}, "n": 1}));
        assert!(!redact_value(&r, &mut value));
    }

    #[test]
    fn a_suite_holding_a_secret_comes_back_whole_with_only_the_secret_replaced() {
        use crate::model::{Case, CaseStatus, Reason, Suite, SuiteKind, Usage};
        const VALUE: &str = "fcorr-unit-suite-secret-8812";
        // SAFETY: a variable no other test reads, set before anything reads it.
        unsafe { std::env::set_var("FCORR_TEST_SECRETS_SUITE", VALUE) };
        register(&["FCORR_TEST_SECRETS_SUITE".to_string()]);
        let mut suite = Suite::new("s", "s", SuiteKind::Eval);
        let mut case = Case {
            id: "s/c1".into(),
            name: "c1".into(),
            status: CaseStatus::Failed,
            duration_ms: Some(12.345678901234),
            extra: crate::model::CaseExtra {
                details: Some(format!("{{\"env\": \"{VALUE}\"}}").into()),
                score: Some(33.333333333333336),
                eval: crate::model::EvalExtra {
                    usage: Some(Usage { tokens: u64::MAX, tokens_in: Some(3), ..Usage::default() }),
                    ..Default::default()
                }
                .packed(),
                ..Default::default()
            }
            .packed(),
            ..Case::default()
        }
        .with_message(Some(format!("expected `hi`, got `KEY={VALUE}`")));
        case.extra_mut().eval_mut().tags.insert(format!("k{VALUE}"), "v".into());
        case.extra_mut().eval_mut().reasons.push(Reason {
            code: "incorrect".into(),
            expected: Some(serde_json::json!("hi")),
            actual: Some(serde_json::json!({"answer": VALUE})),
            message: None,
        });
        suite.cases.push(case);
        let before = serde_json::to_string(&suite).unwrap();
        redact_serde(&mut suite);
        assert_eq!(serde_json::to_string(&suite).unwrap(), before.replace(VALUE, MASK));
        // Nothing to replace: the value is left as it was, without a round trip.
        let again = serde_json::to_string(&suite).unwrap();
        redact_serde(&mut suite);
        assert_eq!(serde_json::to_string(&suite).unwrap(), again);
    }

    #[test]
    fn registered_variables_are_withheld_redacted_and_short_ones_reported() {
        // SAFETY: variables no other test reads, set before anything reads them.
        unsafe {
            std::env::set_var("FCORR_TEST_SECRETS_LONG", "fcorr-unit-secret-4471");
            std::env::set_var("FCORR_TEST_SECRETS_SHORT", "ab");
        }
        let names = ["FCORR_TEST_SECRETS_LONG", "FCORR_TEST_SECRETS_SHORT", "FCORR_TEST_SECRETS_UNSET"];
        let found = register(&names.map(String::from));
        assert_eq!(found.values, ["fcorr-unit-secret-4471", "ab"]);
        assert_eq!(found.too_short, ["FCORR_TEST_SECRETS_SHORT"]);
        assert!(withheld().iter().any(|n| n == "FCORR_TEST_SECRETS_UNSET"));
        assert!(withheld().iter().any(|n| n == "GITHUB_TOKEN"));
        assert_eq!(redact("key=fcorr-unit-secret-4471 ab"), "key=*** ab");
        let mut written = RedactWriter::new(Vec::new());
        for piece in b"x fcorr-unit-secret-4471 y".chunks(3) {
            written.write_all(piece).unwrap();
        }
        written.finish().unwrap();
        assert_eq!(written.inner, b"x *** y");
    }
}
