//! fcorr's integration tests, one binary: one module per area, `support` shared.
//! (One binary links once; nineteen took most of CI's test build time and disk.)

mod report_support;
mod support;

mod action_files;
mod banks;
mod ci_e2e;
mod cli_run;
mod compare_gate;
mod eval_cli;
mod eval_graders;
mod files_io;
mod fuzz_targets;
mod github_baseline;
mod github_comment;
mod github_proxy;
mod harness_errors;
mod harness_go;
mod harness_java;
mod harness_node;
mod harness_node_build;
mod harness_python;
mod harness_retry;
mod harness_rust;
mod harness_workspaces;
mod history;
mod import_cli;
mod import_ctrf;
mod import_dotnet;
mod import_formats;
mod import_junit;
mod import_tools;
mod junit_reruns;
mod merge_cli;
mod module_graph;
mod process_faults;
mod report_formats;
mod report_html_browser;
mod report_links;
mod report_markdown;
mod samples;
mod secrets;
mod terminal_pty;
mod truth_process;
