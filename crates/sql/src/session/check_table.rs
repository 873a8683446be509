//! CHECK TABLE: each table is held against writers (as LOCK TABLES ...
//! READ holds it) while `Table::check_integrity` verifies its indexes
//! against its rows; the result rows are MySQL's (Table, Op, Msg_type,
//! Msg_text), "status OK" or the problems found and "error Corrupt".

use super::{rows, Session, R};
use crate::parser::ObjectName;
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};

const COLUMNS: [&str; 4] = ["Table", "Op", "Msg_type", "Msg_text"];

impl Session {
    pub(super) async fn check_tables(&mut self, tables: &[ObjectName]) -> R<Response> {
        // A table maintenance statement commits, as in MySQL.
        self.commit().await?;
        let mut out = Vec::new();
        for name in tables {
            let shown = Value::str(&self.qualified(name));
            let row = |kind: &str, text: &str| {
                vec![
                    shown.clone(),
                    Value::str("check"),
                    Value::str(kind),
                    Value::str(text),
                ]
            };
            match self.check_one(name).await {
                Ok(problems) if problems.is_empty() => out.push(row("status", "OK")),
                Ok(problems) => {
                    out.extend(problems.iter().map(|p| row("error", p)));
                    out.push(row("error", "Corrupt"));
                }
                Err(e) if e.code == Code::QueryInterrupted => return Err(e),
                Err(e) => {
                    out.push(row("Error", &e.message));
                    out.push(row("status", "Operation failed"));
                }
            }
        }
        Ok(rows(&COLUMNS, out))
    }

    /// The problems found in one table (none: it is consistent).
    async fn check_one(&mut self, name: &ObjectName) -> R<Vec<String>> {
        let t = match self.temporary_table(name) {
            Some(t) => t,
            None => self.binder().table(name)?,
        };
        let _hold = match t.temporary {
            true => None,
            false => self.hold_for_read(&t).await?,
        };
        let interrupt = self.ctx.interrupt.clone();
        let found = t
            .check_integrity(|| interrupt.check().is_err())
            .map_err(|_| Error::new(Code::QueryInterrupted, "Query execution was interrupted"))?;
        let mut problems = found.problems;
        let undescribed = found.count - problems.len() as u64;
        if undescribed > 0 {
            problems.push(format!("{undescribed} more problems"));
        }
        Ok(problems)
    }
}
