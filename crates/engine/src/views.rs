//! CREATE/ALTER/DROP VIEW: logged like any DDL, then applied to the
//! catalog. Views share the tables' namespace.

use crate::engine::Engine;
use lockstep_binlog::{Event, ViewDef};
use lockstep_types::error::Code;
use lockstep_types::names::{check_name, NameKind};
use lockstep_types::Error as SqlError;
use std::sync::atomic::Ordering;

/// What CREATE/ALTER VIEW does with an existing view of the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewMode {
    /// CREATE VIEW: the name must be free.
    Create,
    /// CREATE OR REPLACE VIEW: a view of the name is replaced.
    Replace,
    /// ALTER VIEW: the view must exist.
    Alter,
}

pub fn table_exists(name: &str) -> SqlError {
    SqlError::new(Code::TableExists, format!("Table '{name}' already exists"))
}

pub fn not_view(db: &str, name: &str) -> SqlError {
    SqlError::new(Code::WrongObject, format!("'{db}.{name}' is not VIEW"))
}

impl Engine {
    pub async fn put_view(&self, view: ViewDef, mode: ViewMode) -> Result<(), SqlError> {
        check_name(NameKind::Table, &view.name)?;
        let (db, name) = (&view.database, &view.name);
        if !self.catalog.database_exists(db) {
            return Err(SqlError::new(
                Code::BadDb,
                format!("Unknown database '{db}'"),
            ));
        }
        let is_table = self.catalog.table(db, name).is_some();
        let is_view = self.catalog.view(db, name).is_some();
        match mode {
            ViewMode::Create if is_table || is_view => return Err(table_exists(name)),
            ViewMode::Replace | ViewMode::Alter if is_table => return Err(not_view(db, name)),
            ViewMode::Alter if !is_view => return Err(SqlError::no_such_table(db, name)),
            _ => {}
        }
        let _in_flight = self.log_ddl(Event::PutView { view: view.clone() }).await?;
        self.catalog.put_view(view);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Drops a view; false when there is none of the name.
    pub async fn drop_view(&self, db: &str, name: &str) -> Result<bool, SqlError> {
        if self.catalog.view(db, name).is_none() {
            return Ok(false);
        }
        let event = Event::DropView {
            database: db.to_string(),
            name: name.to_string(),
        };
        let _in_flight = self.log_ddl(event).await?;
        self.catalog.remove_view(db, name);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }
}
