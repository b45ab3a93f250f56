//! One module per subcommand: its arguments and what it does, composed from the pipeline stages.

pub mod detect;
pub mod report;
pub mod run;
pub mod schema;
