//! Benchmark tasks: loading them from a JSON array, JSONL, TOML (`[[task]]`) or a directory of
//! such files, in SWE-bench's field names or fcorr's, and filtering by id, tag and difficulty.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

/// One task: a repository state, what to fix, and how to tell whether it was fixed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Task {
    #[serde(alias = "instance_id")]
    pub id: String,
    /// A directory (a git checkout or plain files), relative to the tasks file, or anything
    /// `git clone` accepts that is already reachable (a local bare repository, a fetched mirror).
    pub repo: String,
    /// Commit to check out when `repo` is a git repository (default: its HEAD).
    #[serde(default, alias = "base_commit", skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, alias = "problem_statement")]
    pub description: String,
    /// The reference solution, for people and executors that want it; never applied by fcorr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_patch: Option<String>,
    /// A patch file to apply instead of running the executor (relative to the tasks file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_file: Option<PathBuf>,
    /// Shell commands that test the result; empty: the project's own tests, as fcorr detects them.
    #[serde(default)]
    pub test_commands: Vec<String>,
    /// Report files the test commands write (globs, relative to the task's copy).
    #[serde(default)]
    pub reports: Vec<String>,
    /// The task's test files (paths of files or directories in the copy): put back as they are
    /// at the base before the tests run, whatever the executor did to them. Default: the files
    /// `test_patch` touches, or else the base's files the test commands and test names name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_files: Vec<String>,
    /// SWE-bench's `test_patch`: applied after the executor's change, on test files put back as
    /// they are at the base, so the tests that grade are the task's, never the executor's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_patch: Option<String>,
    /// Tests that must go from failing to passing.
    #[serde(default, rename = "FAIL_TO_PASS", alias = "fail_to_pass", deserialize_with = "names")]
    pub fail_to_pass: Vec<String>,
    /// Tests that must keep passing.
    #[serde(default, rename = "PASS_TO_PASS", alias = "pass_to_pass", deserialize_with = "names")]
    pub pass_to_pass: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Directory the task came from; relative paths in it start here.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// A list of test names, or (as SWE-bench ships them) a string holding a JSON list.
fn names<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        List(Vec<String>),
        Encoded(String),
    }
    match Names::deserialize(deserializer)? {
        Names::List(list) => Ok(list),
        Names::Encoded(text) => serde_json::from_str(&text).map_err(|e| {
            serde::de::Error::custom(format!("expected a list of test names or a JSON list in a string: {e}"))
        }),
    }
}

/// Which tasks to run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct TaskFilter {
    /// Task ids to keep (exact).
    pub ids: Vec<String>,
    /// Keep tasks carrying any of these tags.
    pub tags: Vec<String>,
    /// Keep tasks of these difficulties.
    pub difficulty: Vec<String>,
}

impl TaskFilter {
    /// True when the task passes every filter that is set.
    pub(crate) fn keeps(&self, task: &Task) -> bool {
        self.keeps_item(&task.id, &task.tags, task.difficulty.as_deref())
    }

    /// The same test on any item with an id, tags and a difficulty (`fcorr suites list`).
    pub(crate) fn keeps_item(&self, id: &str, tags: &[String], difficulty: Option<&str>) -> bool {
        (self.ids.is_empty() || self.ids.iter().any(|i| i == id))
            && (self.tags.is_empty() || tags.iter().any(|t| self.tags.contains(t)))
            && (self.difficulty.is_empty()
                || difficulty.is_some_and(|d| self.difficulty.iter().any(|f| f.eq_ignore_ascii_case(d))))
    }
}

/// A tasks file or directory that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum TaskError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse { path: PathBuf, line: Option<usize>, message: String },
    /// Both places are named: in a file of thousands of tasks, "appears twice" alone leaves the
    /// user searching for which two.
    #[error("task id `{id}` appears twice, at {first} and at {second}; ids must be unique")]
    Duplicate { id: String, first: Place, second: Place },
    /// No task at all: said as such, since the filters that would otherwise be blamed may not be set.
    #[error("{}: holds no task; a benchmark suite needs at least one", path.display())]
    Empty { path: PathBuf },
    #[error("{}: holds no task in any of its .json, .jsonl and .toml files; a benchmark suite needs at least one", path.display())]
    EmptyDir { path: PathBuf },
}

/// Where a task was read: its file, and the line it starts on when the format tells.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Place {
    pub path: PathBuf,
    pub line: Option<usize>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.path.display()),
            None => write!(f, "{}", self.path.display()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlTasks {
    /// Spanned, so a duplicate id can be traced to its `[[task]]`.
    #[serde(default)]
    task: Vec<toml::Spanned<Task>>,
}

/// Loads every task from a file (`.json`, `.jsonl`, `.toml`) or a directory of them (sorted by
/// name, not recursive).
pub(crate) fn load(path: &Path) -> Result<Vec<Task>, TaskError> {
    let read_err =
        |e: std::io::Error| TaskError::Read { path: path.to_path_buf(), message: format!("cannot read it: {e}") };
    let mut placed = Vec::new();
    let dir = path.is_dir();
    if dir {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read_err)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && matches!(extension(p).as_str(), "json" | "jsonl" | "toml"))
            .collect();
        files.sort();
        for file in files {
            placed.extend(load_file(&file)?);
        }
    } else {
        placed = load_file(path)?;
    }
    if placed.is_empty() {
        let path = path.to_path_buf();
        return Err(if dir { TaskError::EmptyDir { path } } else { TaskError::Empty { path } });
    }
    let mut seen: std::collections::HashMap<&str, &Place> = std::collections::HashMap::new();
    for (task, place) in &placed {
        if let Some(first) = seen.insert(task.id.as_str(), place) {
            return Err(TaskError::Duplicate { id: task.id.clone(), first: first.clone(), second: place.clone() });
        }
    }
    Ok(placed.into_iter().map(|(task, _)| task).collect())
}

fn extension(path: &Path) -> String {
    path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default()
}

/// The tasks of one file, each with the line it starts on.
fn load_file(path: &Path) -> Result<Vec<(Task, Place)>, TaskError> {
    let text = crate::fsio::read_text(path, crate::fsio::TASKS)
        .map_err(|e| TaskError::Read { path: path.to_path_buf(), message: e.problem.to_string() })?;
    let parse = |line: Option<usize>, message: String| TaskError::Parse { path: path.to_path_buf(), line, message };
    let mut tasks: Vec<(Task, Option<usize>)> = match extension(path).as_str() {
        "jsonl" => {
            let mut tasks = Vec::new();
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                tasks.push((serde_json::from_str(line).map_err(|e| parse(Some(n + 1), e.to_string()))?, Some(n + 1)));
            }
            tasks
        }
        "json" => {
            let tasks: Vec<Task> = serde_json::from_str(&text).map_err(|e| parse(Some(e.line()), e.to_string()))?;
            let lines = element_lines(&text);
            // The scan reads the text serde_json just read as an array, so it finds every element;
            // were it ever to disagree, no line is better than a wrong one.
            let lines = if lines.len() == tasks.len() {
                lines.into_iter().map(Some).collect()
            } else {
                vec![None; tasks.len()]
            };
            tasks.into_iter().zip(lines).collect()
        }
        "toml" => {
            let tasks = toml::from_str::<TomlTasks>(&text).map_err(|e| parse(None, e.to_string()))?.task;
            tasks
                .into_iter()
                .map(|task| {
                    let line = line_at(&text, task.span().start);
                    (task.into_inner(), Some(line))
                })
                .collect()
        }
        other => return Err(parse(None, format!("unknown task file type `.{other}`; use .json, .jsonl or .toml"))),
    };
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    for (task, line) in &mut tasks {
        if task.id.trim().is_empty() {
            return Err(parse(*line, "a task has an empty `id`".into()));
        }
        task.base_dir = base.clone();
    }
    Ok(tasks.into_iter().map(|(task, line)| (task, Place { path: path.to_path_buf(), line })).collect())
}

/// The 1-based line of byte `offset` in `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes().iter().take(offset).filter(|b| **b == b'\n').count() + 1
}

/// The line each element of a top-level JSON array starts on. serde_json keeps no positions of
/// what it read, so the text is scanned again: brackets, braces and commas count only outside
/// strings, and a comma at depth 1 starts the next element.
fn element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let (mut line, mut depth) = (1, 0usize);
    let (mut in_string, mut escaped, mut next_starts) = (false, false, false);
    for c in text.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if next_starts && depth == 1 && !c.is_whitespace() && c != ']' {
            lines.push(line);
            next_starts = false;
        }
        match c {
            '\n' => line += 1,
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                next_starts = depth == 1;
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => next_starts = true,
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_json_toml_and_directories_load_alike() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.jsonl"),
            "{\"instance_id\": \"t1\", \"repo\": \"r\", \"FAIL_TO_PASS\": \"[\\\"test_a\\\"]\", \"difficulty\": \"easy\"}\n\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("b.json"), r#"[{"id": "t2", "repo": "r", "tags": ["parser"]}]"#).unwrap();
        std::fs::write(
            dir.path().join("c.toml"),
            "[[task]]\nid = \"t3\"\nrepo = \"r\"\ntest_commands = [\"make test\"]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.md"), "ignored").unwrap();
        let tasks = load(dir.path()).unwrap();
        let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2", "t3"]);
        assert_eq!(tasks[0].fail_to_pass, ["test_a"]);
        assert_eq!(tasks[2].test_commands, ["make test"]);
        assert_eq!(tasks[0].base_dir, dir.path());
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.jsonl");
        std::fs::write(&file, "{\"id\": \"a\", \"repo\": \"r\"}\n{\"id\": \"b\", \"repo\": \"r\", \"oops\": 1}\n")
            .unwrap();
        let err = load(&file).unwrap_err().to_string();
        assert!(err.contains("t.jsonl:2") && err.contains("oops"), "{err}");
        std::fs::write(&file, "{\"id\": \"a\", \"repo\": \"r\"}\n{\"id\": \"a\", \"repo\": \"r\"}\n").unwrap();
        assert!(load(&file).unwrap_err().to_string().contains("appears twice"));
    }

    #[test]
    fn a_duplicate_id_names_the_line_of_each_in_every_format() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str, line: usize| format!("{}:{line}", dir.path().join(name).display());
        let err = |path: &Path| load(path).unwrap_err().to_string();
        let cases = [
            (
                "t.jsonl",
                "{\"id\": \"a\", \"repo\": \"r\"}\n\n{\"id\": \"b\", \"repo\": \"r\"}\n{\"id\": \"a\", \"repo\": \"r\"}\n",
                1,
                4,
            ),
            // Brackets, braces and commas inside strings are not the array's.
            (
                "t.json",
                "[\n  {\"id\": \"a\", \"repo\": \"r\", \"description\": \"[x, {\\\"y\\\"}]\\\\\"},\n  {\"id\": \"b\", \"repo\": \"r\"},\n\n  {\"instance_id\": \"a\", \"repo\": \"r\"}\n]\n",
                2,
                5,
            ),
            (
                "t.toml",
                "[[task]]\nid = \"a\"\nrepo = \"r\"\n\n[[task]]\nid = \"b\"\nrepo = \"r\"\n[[task]]\nrepo = \"r\"\nid = \"a\"\n",
                1,
                8,
            ),
        ];
        for (name, text, first, second) in cases {
            let file = dir.path().join(name);
            std::fs::write(&file, text).unwrap();
            let err = err(&file);
            assert!(err.contains("task id `a`"), "{err}");
            assert!(err.contains(&at(name, first)) && err.contains(&at(name, second)), "{name}: {err}");
        }
        // Across the files of a directory: each file with its line.
        let tasks = dir.path().join("tasks");
        std::fs::create_dir_all(&tasks).unwrap();
        std::fs::write(tasks.join("1.jsonl"), "{\"id\": \"x\", \"repo\": \"r\"}\n{\"id\": \"a\", \"repo\": \"r\"}\n")
            .unwrap();
        std::fs::write(tasks.join("2.json"), "[{\"id\": \"a\", \"repo\": \"r\"}]").unwrap();
        let err = err(&tasks);
        assert!(err.contains(&at("tasks/1.jsonl", 2)) && err.contains(&at("tasks/2.json", 1)), "{err}");
    }

    #[test]
    fn a_tasks_file_with_no_task_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("e.jsonl", "\n \n"), ("e.json", "[ ]"), ("e.toml", "# none yet\n")] {
            let file = dir.path().join(name);
            std::fs::write(&file, text).unwrap();
            let err = load(&file).unwrap_err().to_string();
            assert!(err.contains(name) && err.contains("holds no task"), "{err}");
        }
        let empty = dir.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(load(&empty).unwrap_err().to_string().contains("holds no task"));
    }

    #[test]
    fn filters_by_id_tag_and_difficulty() {
        let task = |id: &str, tags: &[&str], difficulty: Option<&str>| Task {
            id: id.into(),
            repo: "r".into(),
            commit: None,
            description: String::new(),
            expected_patch: None,
            patch_file: None,
            test_commands: Vec::new(),
            reports: Vec::new(),
            test_files: Vec::new(),
            test_patch: None,
            fail_to_pass: Vec::new(),
            pass_to_pass: Vec::new(),
            difficulty: difficulty.map(String::from),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            base_dir: PathBuf::new(),
        };
        let tasks = [task("a", &["io"], Some("easy")), task("b", &["parser"], Some("hard")), task("c", &[], None)];
        let kept = |f: TaskFilter| tasks.iter().filter(|t| f.keeps(t)).map(|t| t.id.clone()).collect::<Vec<_>>();
        assert_eq!(kept(TaskFilter::default()), ["a", "b", "c"]);
        assert_eq!(kept(TaskFilter { ids: vec!["b".into()], ..Default::default() }), ["b"]);
        assert_eq!(kept(TaskFilter { tags: vec!["io".into()], ..Default::default() }), ["a"]);
        assert_eq!(kept(TaskFilter { difficulty: vec!["HARD".into()], ..Default::default() }), ["b"]);
    }
}
