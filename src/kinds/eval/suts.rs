//! The systems an eval suite asks: one `[suite.sut]` table (named `sut` unless it says
//! otherwise) or several `[[suite.sut]]` tables, each with a `name`, asked side by side.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::sut::SutConfig;

/// The name of a SUT given in one unnamed `[suite.sut]` table.
pub(crate) const DEFAULT_SUT_NAME: &str = "sut";

/// One system: its name (when the config gives one) and its settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NamedSut {
    pub name: Option<String>,
    pub sut: SutConfig,
}

impl NamedSut {
    /// The name cases and the grid use.
    pub(crate) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(DEFAULT_SUT_NAME)
    }
}

/// `[suite.sut]` (one table) or `[[suite.sut]]` (a list, each named).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SutList {
    suts: Vec<NamedSut>,
    /// Written as a list (`[[suite.sut]]`): every entry needs a name.
    listed: bool,
}

impl SutList {
    pub(crate) fn as_slice(&self) -> &[NamedSut] {
        &self.suts
    }

    /// Whether the config wrote a list, so errors point at `sut.<i>`.
    pub(crate) fn is_listed(&self) -> bool {
        self.listed
    }

    /// A problem with the names: a list needs one per SUT, unique, usable in ids and gates.
    pub(crate) fn name_problem(&self) -> Option<String> {
        let list = self.as_slice();
        if list.is_empty() {
            return Some("the [[suite.sut]] list is empty".into());
        }
        let mut seen = std::collections::HashSet::new();
        for (i, named) in list.iter().enumerate() {
            match &named.name {
                None if self.listed => {
                    return Some(format!("[[suite.sut]] number {} needs a `name`", i + 1));
                }
                _ => {}
            }
            if let Some(problem) = super::prompts::name_problem(named.name()) {
                return Some(format!("sut name {problem}"));
            }
            if !seen.insert(named.name()) {
                return Some(format!("two systems are named `{}`; names must be unique", named.name()));
            }
        }
        None
    }
}

fn named<E: serde::de::Error>(value: Value) -> Result<NamedSut, E> {
    let Value::Object(mut table) = value else {
        return Err(E::custom("a sut must be a table"));
    };
    let name = match table.remove("name") {
        None => None,
        Some(Value::String(name)) => Some(name),
        Some(other) => return Err(E::custom(format!("sut `name` must be a string, not {other}"))),
    };
    let sut = SutConfig::deserialize(Value::Object(table)).map_err(|e| {
        let what = name.as_deref().map(|n| format!("sut `{n}`: ")).unwrap_or_default();
        E::custom(format!("{what}{e}"))
    })?;
    Ok(NamedSut { name, sut })
}

impl<'de> Deserialize<'de> for SutList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SutList, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Array(items) => {
                Ok(SutList { suts: items.into_iter().map(named).collect::<Result<_, _>>()?, listed: true })
            }
            table @ Value::Object(_) => Ok(SutList { suts: vec![named(table)?], listed: false }),
            other => Err(D::Error::custom(format!("`sut` must be a table or a list of tables, not {other}"))),
        }
    }
}

impl Serialize for SutList {
    /// The shape the config holds: one table, or a list of tables, `name` beside the settings.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let table = |named: &NamedSut| -> Result<Value, S::Error> {
            let mut value = serde_json::to_value(&named.sut).map_err(S::Error::custom)?;
            if let (Some(name), Value::Object(map)) = (&named.name, &mut value) {
                map.insert("name".into(), Value::String(name.clone()));
            }
            Ok(value)
        };
        match (self.listed, self.suts.as_slice()) {
            (false, [one]) => table(one)?.serialize(serializer),
            (_, many) => many.iter().map(table).collect::<Result<Vec<_>, _>>()?.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct Holder {
        sut: SutList,
    }

    #[test]
    fn one_table_or_a_named_list_round_trip() {
        let one: Holder = toml::from_str("[sut]\ntype = \"command\"\ncommand = \"x\"\n").unwrap();
        assert_eq!(one.sut.as_slice()[0].name(), "sut");
        assert_eq!(one.sut.name_problem(), None);
        let many: Holder = toml::from_str(
            "[[sut]]\nname = \"small\"\ntype = \"command\"\ncommand = \"a\"\n[[sut]]\nname = \"large\"\ntype = \"command\"\ncommand = \"b\"\n",
        )
        .unwrap();
        let names: Vec<&str> = many.sut.as_slice().iter().map(NamedSut::name).collect();
        assert_eq!(names, ["small", "large"]);
        for holder in [one, many] {
            let text = toml::to_string(&holder).unwrap();
            let again: Holder = toml::from_str(&text).unwrap();
            assert_eq!(again.sut, holder.sut, "{text}");
        }
    }

    #[test]
    fn names_are_checked() {
        let list = |text: &str| toml::from_str::<Holder>(text).unwrap().sut.name_problem().unwrap_or_default();
        assert!(list("[[sut]]\ntype = \"command\"\ncommand = \"a\"\n").contains("needs a `name`"));
        assert!(
            list("[[sut]]\nname = \"a\"\ntype = \"command\"\ncommand = \"a\"\n[[sut]]\nname = \"a\"\ntype = \"command\"\ncommand = \"b\"\n")
                .contains("unique")
        );
        assert!(list("[[sut]]\nname = \"a@b\"\ntype = \"command\"\ncommand = \"a\"\n").contains("may not contain"));
        let err = toml::from_str::<Holder>("[[sut]]\nname = \"a\"\ntype = \"command\"\ncomand = \"a\"\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("sut `a`") && err.contains("comand"), "{err}");
    }
}
