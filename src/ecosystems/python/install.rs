//! Installing a Python project's test dependencies into a cached virtualenv, with uv or pip.
//!
//! The virtualenv is keyed by the interpreter, what is installed (dependency declarations,
//! requirement files, lockfiles) and which project it is for (never the checkout's path), so every
//! checkout of one project shares it and no other project's code is ever in it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::super::ProjectFiles;
use super::deps::{self, TestDeps};
use crate::execute::process::{self, CommandSpec, Exit, find_on_path};

/// uv version fcorr installs from PyPI when none is on `PATH` (tested with this one).
pub(crate) const UV_VERSION: &str = "0.13.9";
/// File in the virtualenv marking its dependencies as completely installed; it holds the key.
pub(crate) const COMPLETE_MARKER: &str = ".fcorr-complete";
/// File in the virtualenv naming the checkout linked into it (editable) and that checkout's hash.
pub(crate) const PROJECT_MARKER: &str = ".fcorr-project";
/// Python that writes a marker (`argv[1]`) holding `argv[2]`: to a temporary file beside it, on
/// disk, then renamed over it, so a full disk fails the phase and leaves the marker as it was
/// (written by the venv's interpreter: the install phase is a list of commands).
const MARKER_WRITER: &str = "import os, sys, tempfile
path, value = sys.argv[1], sys.argv[2].encode()
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix='.fcorr-marker-')
try:
    with os.fdopen(fd, 'wb') as f:
        f.write(value)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
except BaseException:
    os.unlink(tmp)
    raise
";
/// Version of what fcorr puts into a venv; part of the key so older venvs are not reused.
/// (3: the project's identity joined the key; a layout-2 venv may hold other projects' editable
/// installs.)
const CACHE_LAYOUT: &str = "3";
/// File in a virtualenv a user's `commands.install` installed into: what is in it is the user's,
/// so fcorr's own install starts that venv afresh instead of trusting or extending it.
pub(crate) const OVERRIDE_MARKER: &str = ".fcorr-override";
/// How long installing uv itself may take before fcorr falls back to pip.
const UV_BOOTSTRAP_TIMEOUT: Duration = Duration::from_secs(180);

/// The tool that installs packages into the virtualenv.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Installer {
    /// `uv pip install --python <venv>`: one resolver run, parallel downloads, a global cache.
    Uv(PathBuf),
    /// `<venv>/bin/python -m pip install`.
    Pip,
}

impl Installer {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Installer::Uv(_) => "uv",
            Installer::Pip => "pip",
        }
    }
}

/// Which installer `FCORR_PYTHON_INSTALLER` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Preference {
    Auto,
    Uv,
    Pip,
}

impl Preference {
    pub(crate) fn from_env() -> Result<Preference, InstallerError> {
        Ok(Preference::parse(std::env::var("FCORR_PYTHON_INSTALLER").ok().as_deref())?)
    }

    fn parse(value: Option<&str>) -> Result<Preference, UnknownInstaller> {
        match value.map(str::trim) {
            None | Some("" | "auto") => Ok(Preference::Auto),
            Some("uv") => Ok(Preference::Uv),
            Some("pip") => Ok(Preference::Pip),
            Some(other) => Err(UnknownInstaller(other.to_string())),
        }
    }
}

/// `FCORR_PYTHON_INSTALLER` names no installer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("FCORR_PYTHON_INSTALLER={0} is not one of auto, uv, pip")]
pub(crate) struct UnknownInstaller(String);

/// Why no installer can be used for a Python project; the suite reports it as an input error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InstallerError {
    #[error(transparent)]
    Unknown(#[from] UnknownInstaller),
    /// uv was asked for by name and could not be had.
    #[error(
        "FCORR_PYTHON_INSTALLER=uv, but uv is not on PATH and could not be installed from PyPI: {0} \
         (install uv, point FCORR_UV at it, or set FCORR_PYTHON_INSTALLER=pip)"
    )]
    NoUv(#[source] BootstrapError),
}

/// Why uv could not be installed into the tool cache (one line: it also ends up in a note).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BootstrapError {
    #[error("cannot create {}: {source}", path.display())]
    Staging { path: PathBuf, source: std::io::Error },
    /// `pip install uv` failed; `last` is its last line of output.
    #[error("`{command}` exited with code {code}: {last}")]
    Exited { command: String, code: i32, last: String },
    /// `pip install uv` did not exit on its own (timeout, signal, could not start); `how` in
    /// words, as every exit fcorr reports (`killed by signal 9 (SIGKILL)`).
    #[error("`{command}` did not finish ({how})")]
    Ended { command: String, how: String },
    #[error("{} is missing after install", .0.display())]
    Missing(PathBuf),
}

/// Finds uv: `FCORR_UV`, then `uv` on `PATH`, then fcorr's tool cache.
fn find_uv(cache_dir: &Path) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FCORR_UV").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    find_on_path("uv").or_else(|| Some(uv_in_cache(cache_dir)).filter(|p| p.is_file()))
}

fn uv_tool_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join("tools").join(format!("uv-{UV_VERSION}"))
}

fn uv_in_cache(cache_dir: &Path) -> PathBuf {
    uv_tool_dir(cache_dir).join("bin").join("uv")
}

/// Installs uv from PyPI into the tool cache (`pip install --target`, then an atomic rename so
/// concurrent suites never see half a tool). On failure, says why in one line.
fn bootstrap_uv(python: &str, cache_dir: &Path) -> Result<PathBuf, BootstrapError> {
    let final_dir = uv_tool_dir(cache_dir);
    let staging = cache_dir.join("tools").join(format!(".uv-{UV_VERSION}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|source| BootstrapError::Staging { path: staging.clone(), source })?;
    let target = staging.to_string_lossy().into_owned();
    let requirement = format!("uv=={UV_VERSION}");
    let mut spec = CommandSpec::new(
        python,
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--target",
            &target,
            &requirement,
        ],
        cache_dir,
    );
    spec.env.push(("PIP_NO_INPUT".into(), "1".into()));
    let outcome = process::run(&spec, UV_BOOTSTRAP_TIMEOUT, process::DEFAULT_GRACE, &process::null_log());
    let binary = staging.join("bin").join("uv");
    if !outcome.exit.success() || !binary.is_file() {
        let _ = std::fs::remove_dir_all(&staging);
        let command = spec.display();
        return Err(match outcome.exit {
            // pip said it succeeded, yet the binary is not where it installs it.
            Exit::Code(0) => BootstrapError::Missing(binary),
            Exit::Code(code) => {
                let last = outcome.output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                BootstrapError::Exited { command, code, last: last.to_string() }
            }
            other => BootstrapError::Ended { command, how: other.to_string() },
        });
    }
    // Another suite may have won the race; its copy is as good as ours.
    if std::fs::rename(&staging, &final_dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    let installed = uv_in_cache(cache_dir);
    if installed.is_file() { Ok(installed) } else { Err(BootstrapError::Missing(installed)) }
}

/// Picks the installer. `Ok((installer, note))`: the note says why pip was used when uv was
/// wanted but not available.
pub(crate) fn choose(
    preference: Preference,
    python: &str,
    cache_dir: &Path,
    may_download: bool,
) -> Result<(Installer, Option<String>), InstallerError> {
    if preference == Preference::Pip {
        return Ok((Installer::Pip, None));
    }
    if let Some(uv) = find_uv(cache_dir) {
        return Ok((Installer::Uv(uv), None));
    }
    if !may_download {
        return Ok((Installer::Pip, None));
    }
    match bootstrap_uv(python, cache_dir) {
        Ok(uv) => Ok((Installer::Uv(uv), None)),
        Err(why) if preference == Preference::Uv => Err(InstallerError::NoUv(why)),
        Err(why) => Ok((Installer::Pip, Some(format!("uv could not be installed ({why}); installed with pip")))),
    }
}

/// What the cache key depends on besides the declarations: the interpreter.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Interpreter {
    /// `sys.version`, `sys.executable` (resolved) and the machine, one per line.
    pub identity: String,
}

impl Interpreter {
    /// Asks `python` who it is; empty identity when it cannot be run (the install phase then
    /// reports the missing interpreter as a missing tool).
    pub(crate) fn probe(python: &str, cwd: &Path) -> Interpreter {
        // `os.uname().machine` is what `platform.machine()` returns on Unix, without importing
        // `platform` (and `re`): ~35 ms of every run.
        let script = "import os, sys; print(sys.version); print(os.path.realpath(sys.executable)); \
                      print(os.uname().machine if hasattr(os, 'uname') else __import__('platform').machine())";
        // Through a pyenv shim the probe would cost ~0.3 s of bash (a dozen scripts choosing the
        // version) on every run, most of a warm run's overhead; the interpreter is the same.
        let program = find_on_path(python)
            .and_then(|shim| pyenv_interpreter(&shim, cwd, &PyenvEnv::current()))
            .map_or_else(|| python.to_string(), |p| p.to_string_lossy().into_owned());
        let spec = CommandSpec::new(program, &["-I", "-S", "-c", script], cwd);
        let outcome = process::run(&spec, Duration::from_secs(30), process::DEFAULT_GRACE, &process::null_log());
        let identity = if outcome.exit.success() { outcome.output.trim().to_string() } else { String::new() };
        Interpreter { identity }
    }
}

/// The variables that change which interpreter a pyenv shim runs.
#[derive(Debug, Default)]
struct PyenvEnv {
    /// `PYENV_VERSION`.
    version: Option<String>,
    /// `PYENV_DIR` is set (the `.python-version` search starts there, not in the cwd).
    dir_set: bool,
}

impl PyenvEnv {
    fn current() -> PyenvEnv {
        PyenvEnv { version: std::env::var("PYENV_VERSION").ok(), dir_set: std::env::var_os("PYENV_DIR").is_some() }
    }
}

/// The interpreter a pyenv shim at `shim` would run for a command started in `cwd`, chosen the
/// way pyenv documents it (`PYENV_VERSION`, else the nearest `.python-version` from `cwd` up,
/// else `$PYENV_ROOT/version`), or `None` whenever that is not certain — not a shim, several or
/// prefix versions, `system`, `PYENV_DIR`, a version that is not installed — and the shim itself
/// must decide.
fn pyenv_interpreter(shim: &Path, cwd: &Path, env: &PyenvEnv) -> Option<PathBuf> {
    const SHIM_HEAD: u64 = 4096;
    let program = shim.file_name()?;
    if shim.parent()?.file_name()? != "shims" {
        return None;
    }
    let mut head = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(std::fs::File::open(shim).ok()?, SHIM_HEAD), &mut head)
        .ok()?;
    // The shim names its root: `export PYENV_ROOT="/root/.pyenv"` (it overrides the caller's).
    let root = head.lines().find_map(|line| {
        line.trim().strip_prefix("export PYENV_ROOT=").map(|v| v.trim_matches(|c| c == '"' || c == '\''))
    })?;
    if !head.contains("libexec/pyenv\" exec") || env.dir_set {
        return None;
    }
    let root = Path::new(root);
    let version = match &env.version {
        Some(v) if !v.is_empty() => v.clone(),
        _ => {
            let file = cwd
                .ancestors()
                .map(|dir| dir.join(".python-version"))
                .find(|f| f.is_file())
                .unwrap_or_else(|| root.join("version"));
            // Comment lines are skipped; every other word is a version.
            let text = std::fs::read_to_string(file).ok()?;
            let words: Vec<&str> =
                text.lines().filter(|l| !l.trim_start().starts_with('#')).flat_map(str::split_whitespace).collect();
            match words.as_slice() {
                [one] => one.to_string(),
                _ => return None,
            }
        }
    };
    if version == "system" || version.contains([':', '/']) || version.starts_with('.') {
        return None;
    }
    let binary = root.join("versions").join(&version).join("bin").join(program);
    binary.is_file().then_some(binary)
}

/// Parts of `pyproject.toml` that decide what gets installed (not, say, pytest's options).
const PYPROJECT_INSTALL_KEYS: &[&[&str]] = &[
    &["build-system"],
    // The distribution linked in: a renamed project must not keep its old name's editable install.
    &["project", "name"],
    &["project", "dependencies"],
    &["project", "optional-dependencies"],
    &["project", "dynamic"],
    &["dependency-groups"],
    &["tool", "uv"],
    &["tool", "pdm"],
    &["tool", "hatch", "envs"],
    &["tool", "setuptools", "dynamic"],
    &["tool", "poetry"],
    // tox's configuration inline (`legacy_tox_ini`): its `deps` are installed.
    &["tool", "tox"],
];

fn lookup<'a>(table: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (first, rest) = path.split_first()?;
    let mut value = table.get(*first)?;
    for key in rest {
        value = value.as_table()?.get(*key)?;
    }
    Some(value)
}

/// Which project a venv is for, the same in every checkout of it: the project's directory
/// relative to the git work tree it is in, after that work tree's directory name (a CI checkout
/// is `<runner>/work/<repo>/<repo>`), e.g. `shop/services/api`; outside a work tree, the
/// directory's own name. Two projects of one repository never share a venv, so one's editable
/// install cannot satisfy another's undeclared import.
pub(crate) fn project_identity(root: &Path) -> String {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "/".into());
    match root.ancestors().find(|dir| dir.join(".git").exists()) {
        Some(top) => {
            let relative = root.strip_prefix(top).map(|r| r.to_string_lossy().into_owned()).unwrap_or_default();
            if relative.is_empty() { name(top) } else { format!("{}/{relative}", name(top)) }
        }
        None => name(&root),
    }
}

/// The dependency cache key: interpreter, installer, the project's identity, what fcorr read as
/// the test dependencies, the install-relevant parts of `pyproject.toml`, and the contents of
/// setup files, requirement and constraint files and lockfiles.
pub(crate) fn dependency_key(
    identity: &str,
    interpreter: &Interpreter,
    installer: &Installer,
    files: &ProjectFiles,
    pyproject: Option<&toml::Table>,
    test_deps: &TestDeps,
    with_pytest: bool,
) -> String {
    let mut hasher = Sha256::new();
    let mut feed = |label: &str, text: &str| {
        hasher.update(label.as_bytes());
        hasher.update([0u8]);
        hasher.update(text.as_bytes());
        hasher.update([0u8]);
    };
    // Bumped when what fcorr puts in a venv changes (e.g. bytecode compiled at install time).
    feed("layout", CACHE_LAYOUT);
    feed("interpreter", &interpreter.identity);
    // One venv per project: a venv shared by projects with the same declarations held each one's
    // editable install, so an import one of them forgot to declare passed (and a user's
    // `commands.install` changed every other project's environment).
    feed("project", identity);
    // A uv-made venv has no pip; the two kinds are not interchangeable.
    feed("installer", installer.label());
    if !with_pytest {
        // A unittest project's venv lacks the pytest fcorr adds to the others (their keys are
        // unchanged: nothing is fed for them).
        feed("runner", "unittest");
    }
    // What fcorr reads those files as: a venv filled when fcorr did not read a source (Poetry's
    // groups, tox's setup.cfg) has the same files behind it, and must not pass for one that
    // holds what they declare.
    let declared = [
        ("requirement files", &test_deps.requirement_files),
        ("constraint files", &test_deps.constraint_files),
        ("dependencies", &test_deps.dependencies),
        ("extras", &test_deps.extras),
        ("extra requirements", &test_deps.extra_requirements),
        ("group requirements", &test_deps.group_requirements),
        ("workspace members", &test_deps.workspace_members),
    ];
    for (label, list) in declared {
        feed(label, &list.join("\n"));
    }
    feed("declares pytest", if test_deps.declares_pytest { "yes" } else { "no" });
    if let Some(table) = pyproject {
        for path in PYPROJECT_INSTALL_KEYS {
            if let Some(value) = lookup(table, path) {
                feed(&path.join("."), &value.to_string());
            }
        }
    }
    // tox.ini and setup.cfg whole: tox's `deps` are installed (a change to its commands reinstalls
    // too; rare).
    let mut inputs: Vec<String> = ["setup.py", "setup.cfg", "tox.ini"].iter().map(|s| s.to_string()).collect();
    // A uv workspace's members are installed too: what they declare is part of the venv.
    inputs.extend(test_deps.workspace_members.iter().map(|dir| format!("{dir}/pyproject.toml")));
    inputs.extend(test_deps.requirement_files.iter().cloned());
    inputs.extend(test_deps.constraint_files.iter().cloned());
    inputs.extend(deps::LOCKFILES.iter().map(|s| s.to_string()));
    for file in inputs {
        if let Some(text) = files.has(&file).then(|| files.read(&file)).flatten() {
            feed(&file, &text);
        }
    }
    // What those files pull in decides the venv as much as they do: `-r base.txt` and
    // `-c constraints.txt` (a bump there left the key, and the old venv, unchanged), and the
    // files setuptools' dynamic metadata reads the dependencies from.
    let given = || test_deps.requirement_files.iter().chain(&test_deps.constraint_files);
    let mut starts: Vec<String> = given().cloned().collect();
    if let Some(table) = pyproject {
        starts.extend(dynamic_dependency_files(table));
    }
    let fed: Vec<String> = given().filter(|f| files.has(f)).cloned().collect();
    for file in included_requirement_files(files, &starts, &fed) {
        if let Some(text) = files.read(&file) {
            feed(&format!("included {file}"), &text);
        }
    }
    hex::encode(&hasher.finalize()[..8])
}

/// Most requirement files followed through `-r`/`-c` lines: a guard against include cycles
/// through `..` spellings and against runaway trees.
const MAX_INCLUDED: usize = 64;

/// The files `starts` include with `-r`/`--requirement`/`-c`/`--constraint` (and those include),
/// and `starts` themselves, less the files already `fed` to the key, as paths relative to the
/// project root, each once, in reading order.
fn included_requirement_files(files: &ProjectFiles, starts: &[String], fed: &[String]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut queue: std::collections::VecDeque<String> = starts.iter().cloned().collect();
    let mut included = Vec::new();
    while let Some(file) = queue.pop_front() {
        if seen.contains(&file) || seen.len() >= MAX_INCLUDED {
            continue;
        }
        seen.push(file.clone());
        if !fed.contains(&file) {
            included.push(file.clone());
        }
        let Some(text) = files.read(&file) else { continue };
        let dir = std::path::Path::new(&file).parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        for target in text.lines().filter_map(requirement_include) {
            queue.push_back(normalize_relative(&dir.join(target)));
        }
    }
    included
}

/// The file a requirements line includes: `-r base.txt`, `-rbase.txt`, `--requirement=base.txt`,
/// and the same for `-c`/`--constraint`.
fn requirement_include(line: &str) -> Option<&str> {
    let line = line.trim();
    let rest = ["--requirement", "--constraint", "-r", "-c"].iter().find_map(|flag| line.strip_prefix(flag))?;
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim();
    // A comment after the path (` # pinned`) is not part of it.
    let path = rest.split(" #").next().unwrap_or(rest).trim();
    (!path.is_empty() && !path.starts_with(['-', '='])).then_some(path)
}

/// `a/./b/../c` as `a/c`, `/`-separated: the form the project's file listing uses. A path that
/// climbs above the root keeps its leading `..` (read relative to the root all the same).
fn normalize_relative(path: &std::path::Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if parts.last().is_some_and(|p| p != "..") => {
                parts.pop();
            }
            other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
        }
    }
    parts.join("/")
}

/// The files `[tool.setuptools.dynamic]` reads dependencies from (`dependencies = {file = [...]}`,
/// and each optional group's).
fn dynamic_dependency_files(table: &toml::Table) -> Vec<String> {
    let Some(dynamic) = lookup(table, &["tool", "setuptools", "dynamic"]).and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    let file_lists = dynamic.get("dependencies").into_iter().chain(
        dynamic.get("optional-dependencies").and_then(toml::Value::as_table).into_iter().flat_map(|t| t.values()),
    );
    file_lists
        .filter_map(|entry| entry.get("file"))
        .flat_map(|file| match file {
            toml::Value::String(one) => vec![one.clone()],
            toml::Value::Array(many) => many.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        })
        .map(|f| normalize_relative(std::path::Path::new(&f)))
        .collect()
}

/// What the checkout linked into the venv must match: its path and its packaging files.
pub(crate) fn project_stamp(root: &Path, files: &ProjectFiles) -> String {
    let mut hasher = Sha256::new();
    hasher.update(root.to_string_lossy().as_bytes());
    let pyproject: Option<toml::Table> = files.read("pyproject.toml").and_then(|t| toml::from_str(&t).ok());
    let members = deps::workspace_members(files, pyproject.as_ref()).into_iter().map(|d| format!("{d}/pyproject.toml"));
    let packaging: Vec<String> =
        ["pyproject.toml", "setup.py", "setup.cfg"].map(String::from).into_iter().chain(members).collect();
    for file in &packaging {
        if let Some(text) = files.has(file).then(|| files.read(file)).flatten() {
            hasher.update([0u8]);
            hasher.update(file.as_bytes());
            hasher.update([0u8]);
            hasher.update(text.as_bytes());
        }
    }
    format!("{}\n{}", root.display(), hex::encode(&hasher.finalize()[..8]))
}

pub(crate) fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// True when the file `marker` in the venv holds exactly `value`.
pub(crate) fn marker_is(venv: &Path, marker: &str, value: &str) -> bool {
    std::fs::read_to_string(venv.join(marker)).is_ok_and(|t| t.trim() == value.trim())
}

/// The install commands, given what is already in the venv.
pub(crate) struct InstallPlan<'a> {
    pub installer: &'a Installer,
    /// The interpreter the venv is made from.
    pub base_python: &'a str,
    pub venv: &'a Path,
    pub root: &'a Path,
    pub deps: &'a TestDeps,
    /// True when the project itself is installed (editable) rather than only its requirements.
    pub installable_project: bool,
    /// pytest runs the tests (added when nothing declares it); false for unittest projects.
    pub with_pytest: bool,
    pub env: &'a [(String, String)],
}

impl InstallPlan<'_> {
    fn command(&self, program: &str, args: &[&str]) -> CommandSpec {
        let mut spec = CommandSpec::new(program, args, self.root);
        spec.env = self.env.to_vec();
        spec
    }

    /// `uv pip install --python <venv python>` or `<venv python> -m pip install`, then `args`.
    fn install(&self, args: &[&str]) -> CommandSpec {
        let py = venv_python(self.venv).to_string_lossy().into_owned();
        match self.installer {
            Installer::Uv(uv) => {
                let mut all = vec!["pip", "install", "--python", py.as_str()];
                all.extend_from_slice(args);
                self.command(&uv.to_string_lossy(), &all)
            }
            Installer::Pip => {
                let mut all = vec!["-m", "pip", "install"];
                all.extend_from_slice(args);
                self.command(&py, &all)
            }
        }
    }

    fn write_marker(&self, marker: &str, value: &str) -> CommandSpec {
        let path = self.venv.join(marker).to_string_lossy().into_owned();
        let py = venv_python(self.venv).to_string_lossy().into_owned();
        self.command(&py, &["-c", MARKER_WRITER, &path, value])
    }

    /// Creates the venv unless a usable one is there (a failed install's venv is finished, not
    /// remade). A venv a user's `commands.install` filled is remade: its packages are not the
    /// declared ones.
    fn create_venv(&self) -> Vec<CommandSpec> {
        let venv = self.venv.to_string_lossy().into_owned();
        let overridden = self.venv.join(OVERRIDE_MARKER).exists();
        if !overridden && venv_python(self.venv).is_file() && self.venv.join("pyvenv.cfg").is_file() {
            return Vec::new();
        }
        let mut commands = Vec::new();
        if overridden {
            commands.push(self.command("rm", &["-rf", &venv]));
        }
        commands.push(match self.installer {
            Installer::Uv(uv) => self.command(
                &uv.to_string_lossy(),
                &["venv", "--quiet", "--allow-existing", "--python", self.base_python, &venv],
            ),
            Installer::Pip => self.command(self.base_python, &["-m", "venv", "--clear", &venv]),
        });
        commands
    }

    /// Everything: venv, one installer run for all requirements and the project, markers.
    pub(crate) fn full(&self, key: &str, stamp: &str) -> Vec<CommandSpec> {
        let mut commands = self.create_venv();
        let mut args: Vec<String> = Vec::new();
        for file in &self.deps.requirement_files {
            args.push("-r".into());
            args.push(file.clone());
        }
        if self.installable_project {
            // The project itself, editable, with its test extras: imports resolve as in development.
            args.push("-e".into());
            args.push(if self.deps.extras.is_empty() {
                ".".into()
            } else {
                format!(".[{}]", self.deps.extras.join(","))
            });
        } else {
            // Nothing to build: the extras' requirements directly.
            args.extend(self.deps.extra_requirements.iter().cloned());
        }
        // A uv workspace's members, editable, in the same run: one member's dependency on another
        // resolves to the local one (pip and uv both prefer a requirement given here).
        for member in &self.deps.workspace_members {
            args.push("-e".into());
            args.push(member.clone());
        }
        args.extend(self.deps.group_requirements.iter().cloned());
        if self.with_pytest && !self.deps.declares_pytest {
            args.push("pytest".into());
        }
        // Constraints pin what the rest installs, as tox passes them (alone, they install nothing).
        if !args.is_empty() {
            for file in &self.deps.constraint_files {
                args.extend(["-c".to_string(), file.clone()]);
            }
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        // A unittest project with no dependencies needs only the venv (pip refuses an empty list).
        if !refs.is_empty() {
            commands.push(self.install(&refs));
        }
        // Last: only a complete install is marked, so a failed one is retried next time.
        commands.push(self.write_marker(COMPLETE_MARKER, key));
        if self.links_checkout() {
            commands.push(self.write_marker(PROJECT_MARKER, stamp));
        }
        commands
    }

    /// True when the checkout itself is installed (the project, or a uv workspace's members), so
    /// another checkout sharing the venv must link its own in.
    pub(crate) fn links_checkout(&self) -> bool {
        self.installable_project || !self.deps.workspace_members.is_empty()
    }

    /// Dependencies are in place; only this checkout is linked in (editable, no dependencies).
    pub(crate) fn relink(&self, stamp: &str) -> Vec<CommandSpec> {
        let mut args: Vec<&str> = vec!["--no-deps"];
        if self.installable_project {
            args.extend(["-e", "."]);
        }
        for member in &self.deps.workspace_members {
            args.extend(["-e", member.as_str()]);
        }
        vec![self.install(&args), self.write_marker(PROJECT_MARKER, stamp)]
    }

    /// Runs before a user's `commands.install`: makes sure the venv exists with its own pip, so
    /// `pip install …` in the override (with the venv first on `PATH`) installs into it. The venv
    /// is made afresh unless the same override filled it last time (its text, which the project
    /// runner passes in `FCORR_INSTALL_OVERRIDE`, is kept in [`OVERRIDE_MARKER`]): packages fcorr
    /// or an earlier override put there must not satisfy an import the override leaves out.
    pub(crate) fn override_setup(&self) -> CommandSpec {
        let venv = self.venv.to_string_lossy();
        let marker = self.venv.join(OVERRIDE_MARKER);
        let script = format!(
            "if ! test -x {pip} || ! printf '%s' \"$FCORR_INSTALL_OVERRIDE\" | cmp -s - {marker}; then \
             rm -rf {venv} && {python} -m venv {venv} && printf '%s' \"$FCORR_INSTALL_OVERRIDE\" > {marker}; fi",
            pip = process::shell_quote(&self.venv.join("bin").join("pip").to_string_lossy()),
            python = process::shell_quote(self.base_python),
            venv = process::shell_quote(&venv),
            marker = process::shell_quote(&marker.to_string_lossy()),
        );
        let mut spec = CommandSpec::shell(&script, self.root);
        spec.env = self.env.to_vec();
        spec
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::files_of;
    use super::*;

    /// A pyenv root in a temporary directory: a shim as `pyenv rehash` writes it, and
    /// `versions/<v>/bin/python3` for each version.
    fn fake_pyenv(versions: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("pyenv");
        std::fs::create_dir_all(root.join("shims")).unwrap();
        let shim = format!(
            "#!/usr/bin/env bash\nset -e\nprogram=\"${{0##*/}}\"\n\nexport PYENV_ROOT=\"{0}\"\n\
             exec \"{0}/libexec/pyenv\" exec \"$program\" \"$@\"\n",
            root.display()
        );
        std::fs::write(root.join("shims/python3"), shim).unwrap();
        for v in versions {
            std::fs::create_dir_all(root.join("versions").join(v).join("bin")).unwrap();
            std::fs::write(root.join("versions").join(v).join("bin/python3"), "").unwrap();
        }
        std::fs::create_dir_all(dir.path().join("work/project/sub")).unwrap();
        dir
    }

    #[test]
    fn a_pyenv_shim_is_resolved_the_way_pyenv_chooses_or_left_to_pyenv() {
        let dir = fake_pyenv(&["3.11.7", "3.12.1"]);
        let root = dir.path().join("pyenv");
        let shim = root.join("shims/python3");
        let cwd = dir.path().join("work/project/sub");
        let none = PyenvEnv::default();
        let bin = |v: &str| Some(root.join("versions").join(v).join("bin/python3"));
        // No version anywhere: pyenv would run the system python; the shim decides.
        assert_eq!(pyenv_interpreter(&shim, &cwd, &none), None);
        std::fs::write(root.join("version"), "3.11.7\n").unwrap();
        assert_eq!(pyenv_interpreter(&shim, &cwd, &none), bin("3.11.7"));
        // The nearest .python-version above the directory wins over the global file (comments skipped).
        std::fs::write(dir.path().join("work/.python-version"), "# pinned\n3.12.1\n").unwrap();
        assert_eq!(pyenv_interpreter(&shim, &cwd, &none), bin("3.12.1"));
        // PYENV_VERSION wins over both.
        let pinned = PyenvEnv { version: Some("3.11.7".into()), dir_set: false };
        assert_eq!(pyenv_interpreter(&shim, &cwd, &pinned), bin("3.11.7"));
        // Whatever is not certain stays with pyenv: several versions, a prefix or a version that
        // is not installed, `system`, PYENV_DIR, a file that is not a shim.
        for version in ["3.11.7:3.12.1", "3.11", "3.9.1", "system", "../3.11.7"] {
            let env = PyenvEnv { version: Some(version.into()), dir_set: false };
            assert_eq!(pyenv_interpreter(&shim, &cwd, &env), None, "{version}");
        }
        std::fs::write(dir.path().join("work/.python-version"), "3.11.7\n3.12.1\n").unwrap();
        assert_eq!(pyenv_interpreter(&shim, &cwd, &none), None);
        assert_eq!(pyenv_interpreter(&shim, &cwd, &PyenvEnv { version: None, dir_set: true }), None);
        let python = root.join("versions/3.11.7/bin/python3");
        assert_eq!(pyenv_interpreter(&python, &cwd, &pinned), None);
    }

    #[test]
    fn the_probe_names_the_interpreter_the_pyenv_shim_runs() {
        // Only where python3 is a pyenv shim (as on this project's machines); elsewhere the probe
        // runs python3 itself and there is nothing to compare.
        let Some(shim) = find_on_path("python3") else { return };
        let cwd = std::env::temp_dir();
        if pyenv_interpreter(&shim, &cwd, &PyenvEnv::current()).is_none() {
            return;
        }
        let via_shim = std::process::Command::new(&shim)
            .args(["-I", "-S", "-c", "import os, platform, sys; print(sys.version); print(os.path.realpath(sys.executable)); print(platform.machine())"])
            .current_dir(&cwd)
            .output()
            .unwrap();
        assert!(via_shim.status.success());
        assert_eq!(Interpreter::probe("python3", &cwd).identity, String::from_utf8_lossy(&via_shim.stdout).trim());
    }

    #[test]
    fn a_marker_written_on_a_full_disk_fails_and_leaves_no_file() {
        let Some(disk) = crate::test_disk::Tmpfs::mount("a_marker_written_on_a_full_disk", 64) else { return };
        let marker = disk.path().join(COMPLETE_MARKER);
        disk.fill();
        let python = find_on_path("python3").expect("python3");
        let write = |value: &str| {
            std::process::Command::new(&python).args(["-c", MARKER_WRITER]).arg(&marker).arg(value).output().unwrap()
        };
        let failed = write("new-key");
        assert!(!failed.status.success());
        assert!(String::from_utf8_lossy(&failed.stderr).contains("No space left on device"));
        assert_eq!(disk.names("."), Vec::<String>::new(), "no empty marker, no temporary file");
        disk.free();
        assert!(write("new-key").status.success());
        assert!(marker_is(disk.path(), COMPLETE_MARKER, "new-key"));
        assert_eq!(disk.names("."), [COMPLETE_MARKER]);
    }

    fn key_of(entries: &[(&str, &str)], interpreter: &str) -> String {
        key_for("repo/project", entries, interpreter)
    }

    fn key_for(identity: &str, entries: &[(&str, &str)], interpreter: &str) -> String {
        let (_d, files) = files_of(entries);
        let py: Option<toml::Table> = files.read("pyproject.toml").map(|t| toml::from_str(&t).unwrap());
        let deps = deps::read(&files, py.as_ref());
        let interpreter = Interpreter { identity: interpreter.into() };
        dependency_key(identity, &interpreter, &Installer::Pip, &files, py.as_ref(), &deps, true)
    }

    #[test]
    fn two_projects_with_the_same_declarations_never_share_a_venv() {
        let same = "[project]\nname = \"x\"\n";
        assert_ne!(
            key_for("repo/lib", &[("pyproject.toml", same)], "3.11.7"),
            key_for("repo/app", &[("pyproject.toml", same)], "3.11.7")
        );
        // A renamed project gets a fresh venv rather than keeping its old name's editable install.
        let renamed = "[project]\nname = \"y\"\n";
        assert_ne!(key_of(&[("pyproject.toml", same)], "3.11.7"), key_of(&[("pyproject.toml", renamed)], "3.11.7"));
    }

    #[test]
    fn the_identity_is_the_path_in_the_work_tree_the_same_in_every_checkout() {
        let identity = |checkout: &str, sub: &str| {
            let dir = tempfile::tempdir().unwrap();
            let top = dir.path().join(checkout);
            std::fs::create_dir_all(top.join(".git")).unwrap();
            std::fs::create_dir_all(top.join(sub)).unwrap();
            project_identity(&top.join(sub))
        };
        assert_eq!(identity("shop", "services/api"), "shop/services/api");
        assert_eq!(identity("shop", ""), "shop");
        // Outside any work tree: the directory's name.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("calc")).unwrap();
        assert_eq!(project_identity(&dir.path().join("calc")), "calc");
    }

    #[test]
    fn key_ignores_the_path_and_unrelated_config_but_not_dependencies() {
        let base = "[project]\nname = \"x\"\ndependencies = [\"attrs\"]\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        // Two checkouts (two temp dirs) of the same project share the key.
        let a = key_of(&[("pyproject.toml", base)], "3.11.7");
        assert_eq!(a, key_of(&[("pyproject.toml", base)], "3.11.7"));
        // pytest options do not change what is installed.
        let reconfigured = base.replace("-q", "-v");
        assert_eq!(a, key_of(&[("pyproject.toml", &reconfigured)], "3.11.7"));
        // Dependencies, lockfiles, requirement files and the interpreter do.
        assert_ne!(a, key_of(&[("pyproject.toml", &base.replace("attrs", "attrs>=23"))], "3.11.7"));
        assert_ne!(a, key_of(&[("pyproject.toml", base), ("uv.lock", "version = 1\n")], "3.11.7"));
        assert_ne!(a, key_of(&[("pyproject.toml", base), ("requirements/tests.txt", "pytest\n")], "3.11.7"));
        assert_ne!(a, key_of(&[("pyproject.toml", base)], "3.12.1"));
    }

    #[test]
    fn key_follows_requirement_includes_and_setuptools_dependency_files() {
        // requirements.txt only includes: a bump in what it includes must change the key.
        let with = |base: &str, constraints: &str| {
            key_of(
                &[
                    ("requirements.txt", "-r requirements/base.txt  # shared\n--constraint=constraints.txt\n"),
                    ("requirements/base.txt", &format!("-r ../requirements/common.txt\n{base}\n")),
                    ("requirements/common.txt", "attrs\n"),
                    ("constraints.txt", constraints),
                    ("test_x.py", "def test_x(): pass\n"),
                ],
                "3.11.7",
            )
        };
        let a = with("six==1.16.0", "attrs<24\n");
        assert_eq!(a, with("six==1.16.0", "attrs<24\n"));
        assert_ne!(a, with("six==1.17.0", "attrs<24\n"), "an included file's pin");
        assert_ne!(a, with("six==1.16.0", "attrs<25\n"), "a constraints file");
        // setuptools reads the dependencies from a file pyproject names.
        let dynamic = |pins: &str| {
            key_of(
                &[
                    (
                        "pyproject.toml",
                        "[project]\nname = \"x\"\ndynamic = [\"dependencies\"]\n\
                         [tool.setuptools.dynamic]\ndependencies = { file = [\"deps/runtime.in\"] }\n",
                    ),
                    ("deps/runtime.in", pins),
                ],
                "3.11.7",
            )
        };
        assert_ne!(dynamic("six==1.16.0\n"), dynamic("six==1.17.0\n"));
        // tox's own constraints and inline configuration decide what is installed too.
        let tox = |pins: &str, deps: &str| {
            let pyproject = format!(
                "[project]\nname = \"x\"\n[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv]\ndeps =\n    {deps}\n    -c c.txt\n\"\"\"\n"
            );
            key_of(&[("pyproject.toml", &pyproject), ("c.txt", pins)], "3.11.7")
        };
        assert_eq!(tox("six==1.16.0\n", "six"), tox("six==1.16.0\n", "six"));
        assert_ne!(tox("six==1.16.0\n", "six"), tox("six==1.17.0\n", "six"), "a tox constraints file");
        assert_ne!(tox("six==1.16.0\n", "six"), tox("six==1.16.0\n", "attrs"), "legacy_tox_ini's deps");
        assert_eq!(requirement_include("-rbase.txt"), Some("base.txt"));
        assert_eq!(requirement_include("--requirement = x.txt"), None, "not pip's syntax");
        assert_eq!(normalize_relative(Path::new("a/./b/../c.txt")), "a/c.txt");
    }

    #[test]
    fn one_installer_run_installs_files_project_extras_and_groups() {
        let deps = TestDeps {
            requirement_files: vec!["requirements/tests.txt".into()],
            extras: vec!["test".into()],
            group_requirements: vec!["tomli-w".into()],
            ..TestDeps::default()
        };
        let uv = Installer::Uv(PathBuf::from("/t/uv"));
        let plan = InstallPlan {
            installer: &uv,
            base_python: "python3",
            venv: Path::new("/c/venvs/k"),
            root: Path::new("/p"),
            deps: &deps,
            installable_project: true,
            with_pytest: true,
            env: &[],
        };
        let commands: Vec<String> = plan.full("k", "/p\nh").iter().map(CommandSpec::display).collect();
        assert_eq!(commands[0], "/t/uv venv --quiet --allow-existing --python python3 /c/venvs/k");
        assert_eq!(
            commands[1],
            "/t/uv pip install --python /c/venvs/k/bin/python -r requirements/tests.txt -e '.[test]' tomli-w pytest"
        );
        assert_eq!(commands.len(), 4, "{commands:?}");
        let relink: Vec<String> = plan.relink("/p\nh").iter().map(CommandSpec::display).collect();
        assert_eq!(relink[0], "/t/uv pip install --python /c/venvs/k/bin/python --no-deps -e .");
        // unittest projects get no pytest.
        let unittest = InstallPlan { with_pytest: false, ..plan };
        assert!(!CommandSpec::display(&unittest.full("k", "/p\nh")[1]).contains("pytest"));
    }

    #[test]
    fn preference_values() {
        assert_eq!(Preference::parse(None), Ok(Preference::Auto));
        assert_eq!(Preference::parse(Some(" pip ")), Ok(Preference::Pip));
        assert_eq!(Preference::parse(Some("uv")), Ok(Preference::Uv));
        assert_eq!(
            Preference::parse(Some("poetry")).unwrap_err().to_string(),
            "FCORR_PYTHON_INSTALLER=poetry is not one of auto, uv, pip"
        );
    }
}
