//! One module per subcommand: its arguments and what it does, composed from the pipeline stages.

pub mod detect;
pub mod import;
pub mod run;
pub mod schema;
