//! Links from reports to code: `file:line` of a case becomes
//! `{server}/{repo}/blob/{sha}/{path}#L{line}` on the commit the results belong to.
//!
//! Paths are resolved to the repository root (suite roots, `GITHUB_WORKSPACE`, `path-prefix`) by
//! [`PathMapper`], which annotations share; a path that leaves the repository gets no link.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::model::Suite;

/// Bytes kept as they are in a path segment: RFC 3986 unreserved characters. Everything else
/// (spaces, `#`, `?`, `%`, parentheses, brackets, `|`, non-ASCII) is percent-encoded, so the URL
/// is safe inside a Markdown link and an HTML attribute and still opens the right file.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Turns suite-relative file names into repository-relative paths.
#[derive(Debug, Clone, Default)]
pub struct PathMapper {
    /// Absolute root of each suite by id (known when fcorr ran the suites itself).
    pub roots: HashMap<String, PathBuf>,
    /// Directory suite paths are relative to when a root is unknown (the current directory).
    pub base: PathBuf,
    /// Repository root; paths outside it are left as they are.
    pub workspace: Option<PathBuf>,
    /// Prepended to every path, or with a leading `-`, stripped from its start.
    pub prefix: Option<String>,
}

impl PathMapper {
    /// Repository-relative path of `file` (relative to the suite root, or absolute); a path
    /// outside the workspace is returned as it is (annotations still show it).
    pub fn map(&self, suite: &Suite, file: &str) -> String {
        let absolute = normalize(&self.absolute(suite, file));
        let relative = match &self.workspace {
            Some(ws) => absolute.strip_prefix(normalize(ws)).map(Path::to_path_buf).unwrap_or(absolute.clone()),
            None => absolute.clone(),
        };
        self.with_prefix(relative.to_string_lossy().replace('\\', "/"))
    }

    /// Repository-relative path of `file`, or `None` when it is not inside the repository
    /// (the workspace, else `base`): `..` past the root, an absolute path elsewhere, no file name.
    pub fn repo_path(&self, suite: &Suite, file: &str) -> Option<String> {
        let absolute = strict_normalize(&self.absolute(suite, file))?;
        let root = strict_normalize(self.workspace.as_deref().unwrap_or(&self.base))?;
        let relative = absolute.strip_prefix(&root).ok()?;
        let text = relative.to_string_lossy().replace('\\', "/");
        if text.is_empty() {
            return None;
        }
        let mapped = self.with_prefix(text);
        // A prefix could itself climb out (`../x`) or be absolute: no link then either.
        let escapes = mapped.starts_with('/') || mapped.split('/').any(|s| s == ".." || s == "." || s.is_empty());
        (!escapes).then_some(mapped)
    }

    fn absolute(&self, suite: &Suite, file: &str) -> PathBuf {
        let file_path = Path::new(file);
        if file_path.is_absolute() {
            return file_path.to_path_buf();
        }
        let root = self.roots.get(&suite.id).cloned().unwrap_or_else(|| match &suite.path {
            Some(p) => self.base.join(p),
            None => self.base.clone(),
        });
        root.join(file_path)
    }

    fn with_prefix(&self, mut text: String) -> String {
        match self.prefix.as_deref() {
            Some(strip) if strip.starts_with('-') => {
                let strip = strip[1..].trim_end_matches('/');
                if let Some(rest) = text.strip_prefix(strip) {
                    text = rest.trim_start_matches('/').to_string();
                }
            }
            Some(add) if !add.is_empty() => text = format!("{}/{}", add.trim_end_matches('/'), text),
            _ => {}
        }
        text
    }
}

/// Lexical normalisation (`a/./b/../c` → `a/c`); no filesystem access, so it works for
/// results produced on another machine. `..` past the root is dropped.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// [`normalize`] for absolute paths that refuses `..` past the root (`None`): such a path names
/// nothing in the repository, so it must not be turned into a link that looks right.
fn strict_normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // Popping the root itself fails: the path climbed out of the filesystem.
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    out.has_root().then_some(out)
}

/// Builds URLs to files of one commit of one GitHub repository.
#[derive(Debug, Clone)]
pub struct CodeLinks {
    /// `{server}/{owner}/{repo}/blob/{sha}/`, checked and escaped once.
    blob: String,
    paths: PathMapper,
    /// The check run holding this run's annotations, when it was created before the rendering.
    check_run_url: Option<String>,
}

impl CodeLinks {
    /// Links for `repository` (`owner/name`) at `sha` on `server` (`https://github.com`, or a
    /// GHES host). `None` when any part is missing or unsafe in a URL, so reports keep plain text.
    pub fn new(server: &str, repository: &str, sha: &str, paths: PathMapper) -> Option<CodeLinks> {
        let server = server.trim_end_matches('/');
        let server_ok = (server.starts_with("https://") || server.starts_with("http://"))
            && server.len() > "https://".len()
            && !server.chars().any(|c| c.is_whitespace() || c.is_control() || "()<>\"'`|[]{}\\".contains(c));
        let (owner, name) = repository.split_once('/')?;
        let name_ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        let sha_ok = (7..=64).contains(&sha.len()) && sha.chars().all(|c| c.is_ascii_hexdigit());
        if !(server_ok && name_ok(owner) && name_ok(name) && sha_ok) || name == "." || name == ".." {
            return None;
        }
        Some(CodeLinks { blob: format!("{server}/{owner}/{name}/blob/{sha}/"), paths, check_run_url: None })
    }

    /// The same links, also pointing failures at the check run that carries their annotations.
    pub fn with_check_run(mut self, url: Option<&str>) -> CodeLinks {
        self.check_run_url = url.filter(|u| u.starts_with("https://") || u.starts_with("http://")).map(str::to_string);
        self
    }

    /// URL of `file` (as a case of `suite` records it) at `line`; `None` when the file is not
    /// inside the repository.
    pub fn file_url(&self, suite: &Suite, file: &str, line: Option<u32>) -> Option<String> {
        let path = self.paths.repo_path(suite, file)?;
        let mut url = self.blob.clone();
        for (i, segment) in path.split('/').enumerate() {
            if i > 0 {
                url.push('/');
            }
            url.extend(utf8_percent_encode(segment, SEGMENT));
        }
        if let Some(line) = line.filter(|l| *l > 0) {
            url.push_str(&format!("#L{line}"));
        }
        Some(url)
    }

    /// URL of the check run with this run's annotations, if one was created first.
    pub fn check_run_url(&self) -> Option<&str> {
        self.check_run_url.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SuiteKind;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn suite(path: Option<&str>) -> Suite {
        let mut suite = Suite::new("api", "api", SuiteKind::Import);
        suite.path = path.map(str::to_string);
        suite
    }

    fn links(prefix: Option<&str>) -> CodeLinks {
        let paths = PathMapper {
            base: "/ws".into(),
            workspace: Some("/ws".into()),
            prefix: prefix.map(str::to_string),
            ..PathMapper::default()
        };
        CodeLinks::new("https://github.com/", "org/app", SHA, paths).unwrap()
    }

    #[test]
    fn suite_relative_and_absolute_paths_become_repository_paths() {
        let l = links(None);
        let url = l.file_url(&suite(Some("services/api")), "tests/./test_x.py", Some(12)).unwrap();
        assert_eq!(url, format!("https://github.com/org/app/blob/{SHA}/services/api/tests/test_x.py#L12"));
        let url = l.file_url(&suite(Some("services/api")), "/ws/lib/../src/a.rs", None).unwrap();
        assert_eq!(url, format!("https://github.com/org/app/blob/{SHA}/src/a.rs"));
        // A known suite root wins over the recorded path.
        let mut roots = HashMap::new();
        roots.insert("api".to_string(), PathBuf::from("/ws/elsewhere"));
        let paths = PathMapper { roots, base: "/ws".into(), workspace: Some("/ws".into()), prefix: None };
        let l = CodeLinks::new("https://ghe.example.com", "org/app", SHA, paths).unwrap();
        let url = l.file_url(&suite(Some("api")), "t.go", Some(3)).unwrap();
        assert_eq!(url, format!("https://ghe.example.com/org/app/blob/{SHA}/elsewhere/t.go#L3"));
    }

    #[test]
    fn path_prefix_is_added_or_stripped() {
        let url = links(Some("mono/")).file_url(&suite(None), "a/b.py", Some(1)).unwrap();
        assert!(url.ends_with("/blob/0123456789abcdef0123456789abcdef01234567/mono/a/b.py#L1"), "{url}");
        let url = links(Some("-gen")).file_url(&suite(None), "gen/a/b.py", None).unwrap();
        assert!(url.ends_with(&format!("{SHA}/a/b.py")), "{url}");
        assert_eq!(links(Some("../up")).file_url(&suite(None), "a.py", None), None, "a prefix cannot climb out");
    }

    #[test]
    fn hostile_names_are_escaped_per_segment() {
        let url = links(None).file_url(&suite(None), "dir with space/a)](javascript:x)#?%|.py", Some(2)).unwrap();
        assert_eq!(
            url,
            format!(
                "https://github.com/org/app/blob/{SHA}/dir%20with%20space/a%29%5D%28javascript%3Ax%29%23%3F%25%7C.py#L2"
            )
        );
        let url = links(None).file_url(&suite(None), "tëst/<b>.py", None).unwrap();
        assert!(url.ends_with("/t%C3%ABst/%3Cb%3E.py"), "{url}");
    }

    #[test]
    fn nothing_outside_the_repository_is_linked() {
        let l = links(None);
        assert_eq!(l.file_url(&suite(None), "../../etc/passwd", Some(1)), None);
        assert_eq!(l.file_url(&suite(Some("sub")), "../../outside.py", None), None);
        assert_eq!(l.file_url(&suite(None), "/etc/passwd", None), None);
        assert_eq!(l.file_url(&suite(None), "/wsx/sibling.py", None), None, "a sibling with a common prefix");
        assert_eq!(l.file_url(&suite(None), ".", None), None, "the root itself is not a file");
        // Inside after normalisation is fine.
        assert!(l.file_url(&suite(Some("sub")), "../ok.py", None).is_some());
    }

    #[test]
    fn unsafe_or_missing_parts_give_no_links() {
        let p = PathMapper::default;
        assert!(CodeLinks::new("javascript:alert(1)", "org/app", SHA, p()).is_none());
        assert!(CodeLinks::new("https://github.com", "org", SHA, p()).is_none());
        assert!(CodeLinks::new("https://github.com", "org/a b", SHA, p()).is_none());
        assert!(CodeLinks::new("https://github.com", "org/app", "", p()).is_none());
        assert!(CodeLinks::new("https://github.com", "org/app", "main)", p()).is_none());
        assert!(CodeLinks::new("https://github.com/x)", "org/app", SHA, p()).is_none());
    }

    #[test]
    fn the_check_run_url_is_kept_only_when_it_is_http() {
        assert_eq!(links(None).with_check_run(Some("javascript:x")).check_run_url(), None);
        let l = links(None).with_check_run(Some("https://github.com/org/app/runs/1"));
        assert_eq!(l.check_run_url(), Some("https://github.com/org/app/runs/1"));
    }
}
