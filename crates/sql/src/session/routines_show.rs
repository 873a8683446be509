//! SHOW CREATE PROCEDURE / FUNCTION / TRIGGER, SHOW PROCEDURE / FUNCTION
//! STATUS and SHOW TRIGGERS.

use super::super::{like_ci, rows, Session, R};
use crate::parser::{ObjectName, RoutineStatement, ShowFilter};
use crate::routine::call::parse_def;
use lockstep_engine::RoutineKind;
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};

use super::infoschema::SQL_MODE;

fn filtered(name: &str, filter: &Option<ShowFilter>) -> R<bool> {
    match filter {
        None => Ok(true),
        Some(ShowFilter::Like(p)) => Ok(like_ci(name, p)),
        // Applied to the listed rows afterwards (`with_where`).
        Some(ShowFilter::Where(_)) => Ok(true),
    }
}

impl Session {
    /// SHOW ... STATUS / TRIGGERS WHERE: the condition over the listed
    /// rows, as for the other SHOW statements.
    pub(super) fn with_where(
        &mut self,
        shown: R<Response>,
        filter: &Option<ShowFilter>,
    ) -> R<Response> {
        match (filter, shown?) {
            (Some(ShowFilter::Where(c)), Response::Rows(rs)) => {
                crate::session::infoschema::filter_rows(self, rs, c)
            }
            (_, r) => Ok(r),
        }
    }

    pub(super) fn show_create_routine(&self, kind: RoutineKind, name: &ObjectName) -> R<Response> {
        let db = match &name.database {
            Some(d) => d.clone(),
            None => self.ctx.database.clone().ok_or_else(Error::no_db)?,
        };
        let Some(def) = self.engine.catalog.routine(&db, kind, &name.name) else {
            return Err(match kind {
                RoutineKind::Trigger => Error::new(Code::TrgDoesNotExist, "Trigger does not exist"),
                _ => Error::new(
                    Code::SpDoesNotExist,
                    format!("{} {} does not exist", kind.keyword(), name.name),
                ),
            });
        };
        // Only to whom it is visible (its definer, a privilege on it): a
        // trigger is 1142 (TRIGGER on its table), a routine does not exist.
        if !super::infoschema::visible(self, &def) {
            return Err(match kind {
                RoutineKind::Trigger => self.grants.table_denied("TRIGGER", &def.table),
                _ => Error::new(
                    Code::SpDoesNotExist,
                    format!("{} {} does not exist", kind.keyword(), name.name),
                ),
            });
        }
        let (first, second) = match kind {
            RoutineKind::Procedure => ("Procedure", "Create Procedure"),
            RoutineKind::Function => ("Function", "Create Function"),
            RoutineKind::Trigger => ("Trigger", "SQL Original Statement"),
        };
        let mut names = vec![first, "sql_mode", second];
        let text = match super::infoschema::sees_text(self, &def) {
            true => Value::str(&def.create_statement()),
            false => Value::Null,
        };
        let mut row = vec![Value::str(&def.name), Value::str(SQL_MODE), text];
        names.extend([
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ]);
        row.extend([
            Value::str("utf8mb4"),
            Value::str("utf8mb4_0900_ai_ci"),
            Value::str("utf8mb4_0900_ai_ci"),
        ]);
        if kind == RoutineKind::Trigger {
            names.push("Created");
            row.push(super::infoschema::created(&def));
        }
        Ok(rows(&names, vec![row]))
    }

    pub(super) fn show_routine_status(
        &self,
        kind: RoutineKind,
        filter: &Option<ShowFilter>,
    ) -> R<Response> {
        let mut out = Vec::new();
        for def in self.engine.catalog.routines(None) {
            let shown = super::infoschema::visible(self, &def);
            if def.kind != kind || !shown || !filtered(&def.name, filter)? {
                continue;
            }
            let (security, comment) = match parse_def(&def)? {
                RoutineStatement::Create(cr) => (cr.security_definer, cr.comment.clone()),
                _ => (true, String::new()),
            };
            out.push(vec![
                Value::str(&def.database),
                Value::str(&def.name),
                Value::str(kind.keyword()),
                Value::str(&format!("{}@{}", def.definer.0, def.definer.1)),
                super::infoschema::created(&def),
                super::infoschema::created(&def),
                Value::str(if security { "DEFINER" } else { "INVOKER" }),
                Value::str(&comment),
                Value::str("utf8mb4"),
                Value::str("utf8mb4_0900_ai_ci"),
                Value::str("utf8mb4_0900_ai_ci"),
            ]);
        }
        let names = [
            "Db",
            "Name",
            "Type",
            "Definer",
            "Modified",
            "Created",
            "Security_type",
            "Comment",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ];
        Ok(rows(&names, out))
    }

    pub(super) fn show_triggers(
        &self,
        database: Option<&str>,
        filter: &Option<ShowFilter>,
    ) -> R<Response> {
        let db = match database {
            Some(d) => d.to_string(),
            None => self.ctx.database.clone().ok_or_else(Error::no_db)?,
        };
        // information_schema.TRIGGERS' rows (in action order) reshaped.
        let mut out = Vec::new();
        for r in super::infoschema::trigger_rows(self) {
            let table = r[6].to_string();
            if r[1].to_string() != db || !filtered(&table, filter)? {
                continue;
            }
            let [_, _, name, event, _, _, table, _, body, _, timing, _, _, created, mode, definer] =
                <[Value; 16]>::try_from(r).map_err(|_| Error::internal("trigger row"))?;
            out.push(vec![
                name,
                event,
                table,
                body,
                timing,
                created,
                mode,
                definer,
                Value::str("utf8mb4"),
                Value::str("utf8mb4_0900_ai_ci"),
                Value::str("utf8mb4_0900_ai_ci"),
            ]);
        }
        let names = [
            "Trigger",
            "Event",
            "Table",
            "Statement",
            "Timing",
            "Created",
            "sql_mode",
            "Definer",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ];
        Ok(rows(&names, out))
    }
}
