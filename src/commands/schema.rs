//! `fcorr schema`: the JSON Schema of `results.json`, generated from the model types.

use crate::errors::FcorrError;
use crate::model::Run;

/// The schema as pretty JSON.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(Run);
    // Serialising a schema (plain JSON values) cannot fail.
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

/// Prints the schema.
pub fn execute() -> Result<i32, FcorrError> {
    println!("{}", schema_json());
    Ok(0)
}
