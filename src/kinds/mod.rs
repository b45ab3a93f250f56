//! The suite-kind registry: every kind this version runs, above all of them, so the stages
//! below (config, plan, runners) depend on no kind. Callers hand [`KINDS`] to `Config::parse`
//! and `plan::plan`; `--help`, errors and the JSON Schema list kinds from it.

use crate::plan::Kinds;

pub(crate) mod bank;
pub(crate) mod benchmark;
#[cfg(test)]
pub(crate) mod echo;
pub(crate) mod eval;
pub(crate) mod import;
pub(crate) mod project;

/// Every suite kind this version runs, in the order docs and `--help` list them. Adding a kind
/// is one line here.
pub(crate) static KINDS: Kinds = Kinds(&[
    &crate::kinds::project::Project,
    &crate::kinds::import::Import,
    &crate::kinds::eval::runner::Eval,
    &crate::kinds::bank::runner::Bank,
    &crate::kinds::benchmark::runner::Benchmark,
    #[cfg(test)]
    &crate::kinds::echo::Echo,
]);

/// The kinds with their one-line descriptions, for `--help` and the JSON Schema.
pub(crate) fn kinds_help() -> String {
    let mut text = String::from("Suite kinds (`kind = \"...\"` in a [[suite]] of fcorr.toml):\n");
    for runner in KINDS.all() {
        text.push_str(&format!("  {:<9} {}\n", runner.name(), runner.about()));
    }
    text
}
