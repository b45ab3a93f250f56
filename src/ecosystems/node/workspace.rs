//! npm, yarn and pnpm workspaces: the member directories a root declares (`workspaces` in
//! package.json, `packages` in pnpm-workspace.yaml), found in the project listing.

use serde_json::Value;

use crate::ecosystems::ProjectFiles;

/// Where a workspace root declares its members, and the globs it declares.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Declared {
    /// `package.json workspaces` or `pnpm-workspace.yaml`.
    pub source: &'static str,
    /// Member globs relative to the root; `!glob` leaves directories out.
    pub globs: Vec<String>,
}

/// The members `package.json` (its parsed text, `manifest`) or `pnpm-workspace.yaml` declares;
/// `None` when the root declares none. pnpm reads only its own file, so it wins when both exist.
pub(super) fn declared(files: &ProjectFiles, manifest: &Value) -> Option<Declared> {
    if let Some(globs) = files.read("pnpm-workspace.yaml").and_then(|text| pnpm_packages(&text)) {
        return Some(Declared { source: "pnpm-workspace.yaml", globs });
    }
    let list = match manifest.get("workspaces")? {
        // yarn 1 also takes `{ "packages": [...], "nohoist": [...] }`.
        Value::Object(object) => object.get("packages")?.as_array()?.clone(),
        Value::Array(list) => list.clone(),
        _ => return None,
    };
    let globs: Vec<String> = list.iter().filter_map(Value::as_str).map(str::to_string).collect();
    (!globs.is_empty()).then_some(Declared { source: "package.json workspaces", globs })
}

/// `packages:` of a pnpm-workspace.yaml; `None` when the file lists none (pnpm then treats the
/// root as the only package).
fn pnpm_packages(text: &str) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct PnpmWorkspace {
        #[serde(default)]
        packages: Vec<String>,
    }
    let parsed: PnpmWorkspace = serde_saphyr::from_str(text).ok()?;
    (!parsed.packages.is_empty()).then_some(parsed.packages)
}

/// The member directories (relative, `/`-separated, sorted) the globs select: directories with
/// a package.json that a glob matches and no `!glob` excludes; then those a glob matches and a
/// `!glob` excludes, each with that glob. The root itself is not a member.
pub(super) fn member_dirs(files: &ProjectFiles, globs: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let compile = |pattern: &str| {
        let pattern = pattern.trim().trim_start_matches("./").trim_end_matches('/');
        // `*` stays inside one directory, as in npm's and pnpm's globs; `**` crosses them.
        globset::GlobBuilder::new(pattern).literal_separator(true).build().ok().map(|g| g.compile_matcher())
    };
    let (excluded, included): (Vec<&String>, Vec<&String>) = globs.iter().partition(|g| g.trim().starts_with('!'));
    let included: Vec<_> = included.iter().filter_map(|g| compile(g)).collect();
    let excluded: Vec<_> =
        excluded.iter().filter_map(|g| Some((g.trim(), compile(g.trim().trim_start_matches('!'))?))).collect();
    let mut members = Vec::new();
    let mut left_out = Vec::new();
    for dir in files.files.iter().filter_map(|f| f.strip_suffix("/package.json")) {
        if !included.iter().any(|g| g.is_match(dir)) {
            continue;
        }
        match excluded.iter().find(|(_, g)| g.is_match(dir)) {
            Some((glob, _)) => left_out.push((dir.to_string(), glob.to_string())),
            None => members.push(dir.to_string()),
        }
    }
    members.sort();
    left_out.sort();
    (members, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(files: &[&str]) -> ProjectFiles {
        ProjectFiles { files: files.iter().map(|f| f.to_string()).collect(), ..ProjectFiles::default() }
    }

    #[test]
    fn globs_select_member_directories_with_a_package_json() {
        let files = listing(&[
            "package.json",
            "apps/web/package.json",
            "packages/a/package.json",
            "packages/a/src/x.js",
            "packages/b/package.json",
            "packages/b/fixtures/inner/package.json",
            "packages/private-tests/package.json",
            "tools/README.md",
        ]);
        let globs = |list: &[&str]| list.iter().map(|g| g.to_string()).collect::<Vec<_>>();
        assert_eq!(
            member_dirs(&files, &globs(&["packages/*"])).0,
            ["packages/a", "packages/b", "packages/private-tests"]
        );
        assert_eq!(
            member_dirs(&files, &globs(&["./packages/*", "!packages/private-*", "apps/web/"])),
            (
                vec!["apps/web".to_string(), "packages/a".into(), "packages/b".into()],
                vec![("packages/private-tests".to_string(), "!packages/private-*".to_string())]
            )
        );
        assert_eq!(member_dirs(&files, &globs(&["packages/**"])).0.len(), 4, "`**` reaches nested packages");
        assert!(member_dirs(&files, &globs(&["tools/*"])).0.is_empty());
    }

    #[test]
    fn package_json_and_pnpm_declarations_are_read() {
        let files = listing(&[]);
        let yarn = serde_json::json!({ "workspaces": { "packages": ["packages/*"], "nohoist": ["**/x"] } });
        assert_eq!(
            declared(&files, &yarn),
            Some(Declared { source: "package.json workspaces", globs: vec!["packages/*".into()] })
        );
        assert_eq!(declared(&files, &serde_json::json!({ "workspaces": [] })), None);
        assert_eq!(declared(&files, &serde_json::json!({ "name": "x" })), None);
        assert_eq!(
            pnpm_packages("packages:\n  - 'packages/*'\n  - \"!**/test/**\"\n"),
            Some(vec!["packages/*".to_string(), "!**/test/**".to_string()])
        );
        assert_eq!(pnpm_packages("onlyBuiltDependencies: [esbuild]\n"), None);
    }
}
