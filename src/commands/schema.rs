//! `fcorr schema`: the JSON Schema of `results.json`, generated from the model types.

use crate::errors::FcorrError;
use crate::model::Run;

/// The schema as pretty JSON.
pub fn schema_json() -> String {
    let mut schema = schemars::schema_for!(Run);
    describe_kinds(&mut schema);
    // Serialising a schema (plain JSON values) cannot fail.
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

/// Suite kinds are described by the runners that produce them, so the schema offers exactly
/// what this version runs; kinds without a runner stay readable and say so.
fn describe_kinds(schema: &mut schemars::Schema) {
    let Some(kind) = schema.pointer_mut("/$defs/SuiteKind").and_then(|v| v.as_object_mut()) else { return };
    let Some(serde_json::Value::Array(names)) = kind.remove("enum") else { return };
    kind.remove("type");
    let variants: Vec<serde_json::Value> = names
        .iter()
        .filter_map(|name| name.as_str())
        .map(|name| {
            let runner = crate::kinds::KINDS
                .all()
                .iter()
                .find(|r| serde_json::to_value(r.suite_kind()).is_ok_and(|v| v.as_str() == Some(name)));
            let description = match runner {
                Some(runner) => format!("`kind = \"{}\"` in fcorr.toml: {}.", runner.name(), runner.about()),
                None => "Not produced by this version (no suite runner implements it yet); accepted when reading \
                         results."
                    .to_string(),
            };
            serde_json::json!({ "description": description, "type": "string", "const": name })
        })
        .collect();
    kind.insert("oneOf".into(), serde_json::Value::Array(variants));
}

/// Prints the schema.
pub fn execute() -> Result<i32, FcorrError> {
    outln_raw!("{}", schema_json());
    Ok(0)
}
