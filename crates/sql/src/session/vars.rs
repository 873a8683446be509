//! System variables: the global values (shared by all sessions) and their
//! defaults. Sessions keep their own overrides of session-scoped ones.

pub use crate::sysvars::{defaults, is_integer_var, VarScope};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use parking_lot::RwLock;
use std::collections::BTreeMap;

pub struct Globals {
    values: RwLock<BTreeMap<String, (Value, VarScope)>>,
}

impl Globals {
    pub fn new(overrides: &[(&str, Value)]) -> Globals {
        let mut map = BTreeMap::new();
        for (k, v, sc) in defaults() {
            map.insert(k.to_string(), (v, sc));
        }
        for (k, v) in overrides {
            if let Some(e) = map.get_mut(*k) {
                e.0 = v.clone();
            }
        }
        Globals {
            values: RwLock::new(map),
        }
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        self.values.read().get(name).map(|(v, _)| v.clone())
    }

    /// The value `name` has before any server option or SET: what
    /// `SET GLOBAL name = DEFAULT` restores, as in MySQL.
    pub fn compiled_default(name: &str) -> Option<Value> {
        defaults()
            .into_iter()
            .find(|(n, ..)| *n == name)
            .map(|(_, v, _)| v)
    }

    pub fn scope(&self, name: &str) -> Option<VarScope> {
        self.values.read().get(name).map(|(_, s)| *s)
    }

    /// Sets a global value (SET GLOBAL), checking that it may be set.
    pub fn set(&self, name: &str, v: Value) -> Result<(), Error> {
        let mut map = self.values.write();
        match map.get_mut(name) {
            None => Err(unknown(name)),
            Some((_, VarScope::ReadOnly)) => Err(read_only(name)),
            Some(e) => {
                e.0 = v;
                Ok(())
            }
        }
    }

    /// Sets a value regardless of scope (server-internal: uuid, gtid).
    pub fn force(&self, name: &str, v: Value) {
        if let Some(e) = self.values.write().get_mut(name) {
            e.0 = v;
        }
    }

    pub fn all(&self) -> Vec<(String, Value)> {
        self.values
            .read()
            .iter()
            .map(|(k, (v, _))| (k.clone(), v.clone()))
            .collect()
    }
}

pub fn unknown(name: &str) -> Error {
    Error::new(
        Code::UnknownSystemVariable,
        format!("Unknown system variable '{name}'"),
    )
}

/// SET SESSION of a variable whose session value is read-only.
pub fn session_read_only(name: &str) -> Error {
    Error::new(
        Code::VariableIsReadonly,
        format!("SESSION variable '{name}' is read-only. Use SET GLOBAL to assign the value"),
    )
}

/// @@global of a variable only sessions have.
pub fn session_only(name: &str) -> Error {
    Error::new(
        Code::IncorrectGlobalLocalVar,
        format!("Variable '{name}' is a SESSION variable"),
    )
}

pub fn read_only(name: &str) -> Error {
    Error::new(
        Code::IncorrectGlobalLocalVar,
        format!("Variable '{name}' is a read only variable"),
    )
}

/// Normalizes a value given to SET for a boolean variable (ON/OFF/1/0).
pub fn bool_setting(name: &str, v: &Value) -> Result<bool, Error> {
    match v {
        Value::Int(0) | Value::UInt(0) => Ok(false),
        Value::Int(1) | Value::UInt(1) => Ok(true),
        Value::Bytes(b) => match String::from_utf8_lossy(b).to_ascii_uppercase().as_str() {
            "ON" | "TRUE" | "1" => Ok(true),
            "OFF" | "FALSE" | "0" => Ok(false),
            _ => Err(Error::new(
                Code::WrongValueForVar,
                format!(
                    "Variable '{name}' can't be set to the value of '{}'",
                    String::from_utf8_lossy(b)
                ),
            )),
        },
        other => Err(Error::new(
            Code::WrongValueForVar,
            format!("Variable '{name}' can't be set to the value of '{other}'"),
        )),
    }
}
