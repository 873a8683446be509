//! CHECK TABLE: each table is held against writers (as LOCK TABLES ...
//! READ holds it) while `Table::check_integrity` verifies its indexes
//! against its rows; the result rows are MySQL's (Table, Op, Msg_type,
//! Msg_text), "status OK" or the problems found and "error Corrupt".
//! Of a view, CHECK TABLE checks that its definition still resolves; the
//! other maintenance statements refuse a view as not a base table.

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
            if let Some(found) = self.check_view(name) {
                out.extend(found.iter().map(|(k, t)| row(k, t)));
                continue;
            }
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

impl Session {
    /// CHECK TABLE of a view (None: `name` is no view): "status OK", or
    /// why its query no longer binds followed by 1356 and "error Corrupt".
    fn check_view(&self, name: &ObjectName) -> Option<Vec<(&'static str, String)>> {
        if self.temporary_table(name).is_some() {
            return None;
        }
        let mut binder = self.binder();
        let view = binder.view(name)?;
        let Some(e) = binder.check_view(&view) else {
            return Some(vec![("status", "OK".to_string())]);
        };
        let invalid = crate::plan::bind::view_invalid(&view.database, &view.name);
        let mut out = Vec::new();
        if e.message != invalid.message {
            // The cause: a missing table or column, or an inner view's 1356.
            out.push(("Error", e.message));
        }
        out.push(("Error", invalid.message));
        out.push(("error", "Corrupt".to_string()));
        Some(out)
    }

    /// ANALYZE/OPTIMIZE/REPAIR of a view: MySQL's 1347 text, or None for
    /// a table.
    pub(super) fn not_base_table(&self, name: &ObjectName) -> Option<String> {
        if self.temporary_table(name).is_some() {
            return None;
        }
        let view = self.binder().view(name)?;
        Some(format!(
            "'{}.{}' is not BASE TABLE",
            view.database, view.name
        ))
    }
}
