//! Foreign key DDL: a table's constraints are logged as one event holding
//! their whole list, in the same record as the CREATE TABLE that declares
//! them, so a crash never leaves a table without the constraints it was
//! created with.

use crate::engine::Engine;
use lockstep_binlog::Event;
use lockstep_tables::{ForeignKey, IndexDef, Table, TableDef};
use lockstep_types::Error as SqlError;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Engine {
    /// CREATE TABLE with foreign keys: the table and its constraints in
    /// one logged record.
    pub async fn create_table_with_foreign_keys(
        &self,
        def: TableDef,
        foreign_keys: Vec<ForeignKey>,
    ) -> Result<Arc<Table>, SqlError> {
        self.create_table_with_constraints(def, foreign_keys, Vec::new(), Vec::new())
            .await
    }

    /// ALTER TABLE ADD/DROP FOREIGN KEY: the table's new list of
    /// constraints, with the indexes new ones need created first. The caller holds the table's exclusive metadata lock.
    pub async fn set_foreign_keys(
        &self,
        table: &Table,
        foreign_keys: Vec<ForeignKey>,
        indexes: Vec<IndexDef>,
    ) -> Result<(), SqlError> {
        // An index left by a crash before the constraints is harmless.
        for index in indexes {
            self.create_index(table, index).await?;
        }
        let _in_flight = self
            .log_ddl(Event::SetForeignKeys {
                table: table.id,
                foreign_keys: foreign_keys.clone(),
            })
            .await?;
        self.catalog.set_foreign_keys(table.id, foreign_keys);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The constraints an ALTER rebuild sets: the rebuilt table's own, and
/// the whole lists of other children whose references to it change.
pub struct AlterForeignKeys {
    pub own: Vec<ForeignKey>,
    pub children: Vec<(u32, Vec<ForeignKey>)>,
}

impl AlterForeignKeys {
    /// Each (table id, list) to set, the rebuilt table as `new_id`.
    pub(crate) fn lists(self, new_id: u32) -> Vec<(u32, Vec<ForeignKey>)> {
        let mut out = vec![(new_id, self.own)];
        out.extend(self.children);
        out
    }
}
