//! CREATE/DROP PROCEDURE, FUNCTION and TRIGGER: logged like any DDL, then
//! applied to the catalog (recovery and replicas replay the same event).

use crate::engine::Engine;
use lockstep_binlog::{Event, RoutineDef, RoutineKind};
use lockstep_types::error::Code;
use lockstep_types::Error as SqlError;
use std::sync::atomic::Ordering;

impl Engine {
    /// Stores a new stored program (the caller checked the name is free).
    pub async fn put_routine(&self, routine: RoutineDef) -> Result<(), SqlError> {
        lockstep_types::names::check_name(lockstep_types::names::NameKind::Routine, &routine.name)?;
        if !self.catalog.database_exists(&routine.database) {
            return Err(SqlError::new(
                Code::BadDb,
                format!("Unknown database '{}'", routine.database),
            ));
        }
        let _in_flight = self
            .log_ddl(Event::PutRoutine {
                routine: routine.clone(),
            })
            .await?;
        self.catalog.put_routine(routine);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Drops a stored program; false when there is none of the name.
    pub async fn drop_routine(
        &self,
        db: &str,
        kind: RoutineKind,
        name: &str,
    ) -> Result<bool, SqlError> {
        let Some(found) = self.catalog.routine(db, kind, name) else {
            return Ok(false);
        };
        let event = Event::DropRoutine {
            database: db.to_string(),
            kind,
            name: found.name.clone(),
        };
        let _in_flight = self.log_ddl(event).await?;
        self.catalog.remove_routine(db, kind, name);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }
}
