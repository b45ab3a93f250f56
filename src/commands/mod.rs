//! One module per subcommand: its arguments and what it does, composed from the pipeline stages.

pub mod calibrate;
pub mod ci;
pub mod compare;
pub mod detect;
pub mod import;
pub mod merge;
pub mod publish;
pub mod report;
pub mod run;
pub mod schema;
pub mod suites;
