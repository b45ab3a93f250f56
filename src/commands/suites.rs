//! `fcorr suites list`: the configured suites, their kinds and, for kinds with items known
//! before running (benchmark tasks, dataset cases), how many each would run — filtered by item
//! id, tag and difficulty, and by `--shard` to see what one matrix job gets.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde::Serialize;

use crate::config::Config;
use crate::errors::FcorrError;
use crate::kinds::KINDS;
use crate::kinds::benchmark::TaskFilter;
use crate::plan::{self, Overrides, SuitePlan};
use crate::runners::SuiteItem;
use crate::shard::Shard;

/// Arguments of `fcorr suites`.
#[derive(Debug, Args)]
pub struct SuitesArgs {
    #[command(subcommand)]
    pub action: SuitesAction,
}

/// What `fcorr suites` does.
#[derive(Debug, Subcommand)]
pub enum SuitesAction {
    /// List the configured suites and their task/case counts.
    List(ListArgs),
}

/// Arguments of `fcorr suites list`.
#[derive(Debug, Args, Default)]
pub struct ListArgs {
    /// Configuration file (default: ./fcorr.toml, then ./.github/fcorr.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Only suites whose name contains this text or matches this glob.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Only items (tasks, cases) with these ids (comma-separated or repeated).
    #[arg(long = "id", value_name = "ID", value_delimiter = ',')]
    pub ids: Vec<String>,
    /// Only items carrying any of these tags.
    #[arg(long = "tag", value_name = "TAG", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Only items of these difficulties.
    #[arg(long, value_name = "LEVEL", value_delimiter = ',')]
    pub difficulty: Vec<String>,
    /// What shard K of N would run (`fcorr run --shard K/N`).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// List every item under its suite.
    #[arg(long)]
    pub items: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One suite as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listed {
    pub name: String,
    pub id: String,
    /// The kind as written in `kind = "..."`.
    pub kind: String,
    pub path: String,
    /// Items left after every filter; `None` for kinds whose cases are known only by running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Items before the command line's id/tag/difficulty filters (the suite's own filters and
    /// the shard applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<SuiteItem>,
    /// Why the items could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Prints the list; exit 0, or 2 when a suite's tasks or cases cannot be read.
pub fn execute(args: SuitesArgs) -> Result<i32, FcorrError> {
    let SuitesAction::List(args) = args.action;
    let cwd = std::env::current_dir().map_err(FcorrError::Cwd)?;
    let config = match crate::pipeline::find_config(args.config.as_deref(), &[], false, &cwd) {
        Some(path) => Config::load(&path, &KINDS)?,
        None => {
            return Err(FcorrError::Usage(format!(
                "no configuration: give --config FILE or run where one of {} exists",
                crate::pipeline::CONFIG_LOCATIONS.join(", ")
            )));
        }
    };
    let listed = list(&config, &args)?;
    if args.json {
        // Plain data (strings, numbers, enums) always serialises.
        outln_raw!("{}", serde_json::to_string_pretty(&listed).expect("list serialises"));
    } else {
        out!("{}", render(&listed, args.items));
    }
    let broken = listed.iter().filter(|l| l.error.is_some()).count();
    if broken > 0 {
        errln!("fcorr: {broken} suite(s) have tasks or cases that cannot be read (see above)");
        return Ok(2);
    }
    Ok(0)
}

/// Plans the config's suites as `fcorr run` would and counts each one's items.
pub fn list(config: &Config, args: &ListArgs) -> Result<Vec<Listed>, FcorrError> {
    let overrides = Overrides { filter: args.filter.clone(), shard: args.shard, ..Overrides::default() };
    let plans = plan::select_suites(plan::plan(config, &[], &overrides, &KINDS)?, args.shard);
    let filter = TaskFilter { ids: args.ids.clone(), tags: args.tags.clone(), difficulty: args.difficulty.clone() };
    Ok(plans.iter().map(|p| listed(p, &filter, args.items)).collect())
}

fn listed(plan: &SuitePlan, filter: &TaskFilter, keep_items: bool) -> Listed {
    let mut listed = Listed {
        name: plan.name.clone(),
        id: plan.id.clone(),
        kind: plan.runner.name().to_string(),
        path: plan.display_path.clone(),
        count: None,
        configured: None,
        items: Vec::new(),
        error: None,
    };
    match plan.runner.items(plan) {
        None => {}
        Some(Err(e)) => listed.error = Some(e.to_string()),
        Some(Ok(items)) => {
            listed.configured = Some(items.len());
            let kept: Vec<SuiteItem> =
                items.into_iter().filter(|i| filter.keeps_item(&i.id, &i.tags, i.difficulty.as_deref())).collect();
            listed.count = Some(kept.len());
            if keep_items {
                listed.items = kept;
            }
        }
    }
    listed
}

/// A plain-text table: suite, kind, items, path; each item indented below when asked.
pub fn render(listed: &[Listed], items: bool) -> String {
    let count = |l: &Listed| match (l.count, l.configured, &l.error) {
        (_, _, Some(_)) => "error".to_string(),
        (Some(n), Some(all), _) if n != all => format!("{n} of {all}"),
        (Some(n), _, _) => n.to_string(),
        _ => "-".to_string(),
    };
    let rows: Vec<[String; 4]> =
        listed.iter().map(|l| [l.name.clone(), l.kind.clone(), count(l), l.path.clone()]).collect();
    let header = ["SUITE", "KIND", "ITEMS", "PATH"].map(String::from);
    let widths: Vec<usize> =
        (0..4).map(|c| rows.iter().chain([&header]).map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let line = |r: &[String; 4]| {
        let cells: Vec<String> = (0..3).map(|c| format!("{:<w$}", r[c], w = widths[c])).collect();
        format!("{}  {}\n", cells.join("  "), r[3]).trim_end().to_string() + "\n"
    };
    let mut out = line(&header);
    for (row, l) in rows.iter().zip(listed) {
        out.push_str(&line(row));
        if let Some(error) = &l.error {
            out.push_str(&format!("  error: {error}\n"));
        }
        if items {
            for item in &l.items {
                let mut text = format!("  {}", item.id);
                if let Some(d) = &item.difficulty {
                    text.push_str(&format!("  [{d}]"));
                }
                if !item.tags.is_empty() {
                    text.push_str(&format!("  {}", item.tags.join(", ")));
                }
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn examples() -> Config {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fcorr.toml");
        Config::load(&path, &KINDS).unwrap()
    }

    fn bench(listed: &[Listed]) -> &Listed {
        listed.iter().find(|l| l.kind == "benchmark").unwrap()
    }

    #[test]
    fn the_examples_list_every_suite_and_the_benchmark_counts_its_tasks() {
        let listed = list(&examples(), &ListArgs::default()).unwrap();
        assert_eq!(listed.len(), 7, "{listed:#?}");
        let eval = listed.iter().find(|l| l.kind == "eval").unwrap();
        assert_eq!((eval.name.as_str(), eval.count), ("shell-commands", Some(33)), "the dataset's cases are counted");
        let b = bench(&listed);
        assert_eq!((b.name.as_str(), b.count, b.configured), ("calc-bench", Some(3), Some(3)));
        assert!(listed.iter().filter(|l| l.kind == "project").all(|l| l.count.is_none()));
        let text = render(&listed, false);
        assert!(text.starts_with("SUITE"), "{text}");
        let row = text.lines().find(|l| l.starts_with("calc-bench")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["calc-bench", "benchmark", "3", "benchmark/tasks.jsonl"]
        );
        let row = text.lines().find(|l| l.starts_with("go-stack")).unwrap();
        assert_eq!(row.split_whitespace().nth(2), Some("-"), "{text}");
    }

    #[test]
    fn items_filter_by_id_tag_and_difficulty() {
        let config = examples();
        let ids = |args: ListArgs| {
            let listed = list(&config, &ListArgs { items: true, filter: Some("calc-bench".into()), ..args }).unwrap();
            assert_eq!(listed.len(), 1);
            let b = bench(&listed).clone();
            (b.count, b.items.into_iter().map(|i| i.id).collect::<Vec<_>>())
        };
        assert_eq!(ids(ListArgs::default()), (Some(3), vec!["fix-add".into(), "fix-mul".into(), "fix-div".into()]));
        assert_eq!(
            ids(ListArgs { ids: vec!["fix-mul".into()], ..ListArgs::default() }),
            (Some(1), vec!["fix-mul".into()])
        );
        assert_eq!(
            ids(ListArgs { tags: vec!["division".into()], ..ListArgs::default() }),
            (Some(1), vec!["fix-div".into()])
        );
        assert_eq!(
            ids(ListArgs { difficulty: vec!["EASY".into()], ..ListArgs::default() }),
            (Some(2), vec!["fix-add".into(), "fix-mul".into()])
        );
        let listed =
            list(&config, &ListArgs { tags: vec!["division".into()], items: true, ..ListArgs::default() }).unwrap();
        let text = render(&listed, true);
        let row = text.lines().find(|l| l.starts_with("calc-bench")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["calc-bench", "benchmark", "1", "of", "3", "benchmark/tasks.jsonl"]
        );
        assert!(text.contains("  fix-div  [medium]  arithmetic, division\n"), "{text}");
    }

    #[test]
    fn shards_list_disjoint_tasks_that_cover_the_suite() {
        let config = examples();
        let mut seen = Vec::new();
        for k in 1..=2 {
            let args = ListArgs { shard: Some(Shard { index: k, total: 2 }), items: true, ..ListArgs::default() };
            seen.extend(bench(&list(&config, &args).unwrap()).items.iter().map(|i| i.id.clone()));
        }
        seen.sort();
        assert_eq!(seen, ["fix-add", "fix-div", "fix-mul"]);
    }

    #[test]
    fn an_unreadable_tasks_file_is_that_suites_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tasks.jsonl"), "{\"id\": \"a\", \"repo\": \".\"}\nnot json\n").unwrap();
        let toml = "[[suite]]\nname = \"b\"\nkind = \"benchmark\"\npath = \"tasks.jsonl\"\n";
        std::fs::write(dir.path().join("fcorr.toml"), toml).unwrap();
        let config = Config::load(&dir.path().join("fcorr.toml"), &KINDS).unwrap();
        let listed = list(&config, &ListArgs::default()).unwrap();
        let error = listed[0].error.as_deref().unwrap();
        assert!(error.contains("tasks.jsonl:2"), "{error}");
        let text = render(&listed, false);
        assert_eq!(
            text.lines().nth(1).unwrap().split_whitespace().collect::<Vec<_>>(),
            ["b", "benchmark", "error", "tasks.jsonl"]
        );
    }
}
