//! CHECK constraint DDL: a table's constraints are logged as one event
//! holding their whole list, in the same record as the CREATE TABLE that
//! declares them (as foreign keys are, `foreign.rs`). An ALTER rebuild
//! keeps them: the catalog moves them to the rebuilt table's id.

use crate::engine::Engine;
use lockstep_binlog::Event;
use lockstep_tables::{CheckConstraint, ForeignKey, GeneratedColumn, Table, TableDef};
use lockstep_types::Error as SqlError;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Engine {
    /// CREATE TABLE with its foreign keys, CHECK constraints and generated
    /// columns, all in one logged record (`create_table_with`).
    pub async fn create_table_with_constraints(
        &self,
        def: TableDef,
        foreign_keys: Vec<ForeignKey>,
        checks: Vec<CheckConstraint>,
        generated: Vec<GeneratedColumn>,
    ) -> Result<Arc<Table>, SqlError> {
        let extras = crate::comments::TableExtras {
            foreign_keys,
            checks,
            generated,
            comments: Default::default(),
            auto_increment: None,
        };
        self.create_table_with(def, extras).await
    }

    /// ALTER TABLE ADD/DROP CHECK, ALTER CHECK [NOT] ENFORCED: the table's
    /// new list. The caller holds the table's exclusive metadata lock.
    pub async fn set_checks(
        &self,
        table: &Table,
        checks: Vec<CheckConstraint>,
    ) -> Result<(), SqlError> {
        let _in_flight = self
            .log_ddl(Event::SetChecks {
                table: table.id,
                checks: checks.clone(),
            })
            .await?;
        self.catalog.set_checks(table.id, checks);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
