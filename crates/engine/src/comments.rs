//! COMMENT clauses: a table's comments are logged as one event holding
//! all of them, in the same record as the CREATE TABLE that declares them;
//! an ALTER that changes them logs the new set after its rebuild (the
//! catalog moves the old set to the rebuilt table's id).

use crate::engine::Engine;
use lockstep_binlog::Event;
use lockstep_tables::{
    CheckConstraint, ForeignKey, GeneratedColumn, Table, TableComments, TableDef,
};
use lockstep_types::Error as SqlError;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a CREATE TABLE declares besides its definition.
#[derive(Default)]
pub struct TableExtras {
    pub foreign_keys: Vec<ForeignKey>,
    pub checks: Vec<CheckConstraint>,
    pub generated: Vec<GeneratedColumn>,
    pub comments: TableComments,
    /// AUTO_INCREMENT=n among the table options.
    pub auto_increment: Option<u64>,
}

impl Engine {
    /// CREATE TABLE with its constraints, generated columns, comments and
    /// AUTO_INCREMENT start, all in one logged record.
    pub async fn create_table_with(
        &self,
        def: TableDef,
        extras: TableExtras,
    ) -> Result<Arc<Table>, SqlError> {
        let TableExtras {
            foreign_keys,
            checks,
            generated,
            comments,
            auto_increment,
        } = extras;
        let plain = foreign_keys.is_empty() && checks.is_empty() && generated.is_empty();
        if plain && comments.is_empty() && auto_increment.is_none() {
            return self.create_table(def).await;
        }
        let def = self.prepare_create(def)?;
        let id = def.id;
        let mut events = vec![Event::CreateTable { def: def.clone() }];
        if !foreign_keys.is_empty() {
            events.push(Event::SetForeignKeys {
                table: id,
                foreign_keys: foreign_keys.clone(),
            });
        }
        if !checks.is_empty() {
            events.push(Event::SetChecks {
                table: id,
                checks: checks.clone(),
            });
        }
        if !generated.is_empty() {
            let columns = generated.clone();
            events.push(Event::SetGenerated { table: id, columns });
        }
        if !comments.is_empty() {
            let comments = comments.clone();
            events.push(Event::SetComments {
                table: id,
                comments,
            });
        }
        let next = auto_increment.map(|n| n.max(1));
        if let Some(next) = next {
            events.push(Event::SetAutoIncrement { table: id, next });
        }
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        let _in_flight = self.log_events(events).await?;
        let t = self.catalog.add_table(def);
        if let Some(next) = next {
            t.auto_increment.store(next, Ordering::SeqCst);
        }
        self.catalog.set_foreign_keys(t.id, foreign_keys);
        self.catalog.set_checks(t.id, checks);
        self.catalog.set_generated(t.id, generated);
        self.catalog.set_comments(t.id, comments);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(t)
    }

    /// ALTER TABLE that changes comments: the table's new set. The caller
    /// holds the table's exclusive metadata lock.
    pub async fn set_comments(
        &self,
        table: &Table,
        comments: TableComments,
    ) -> Result<(), SqlError> {
        let _in_flight = self
            .log_ddl(Event::SetComments {
                table: table.id,
                comments: comments.clone(),
            })
            .await?;
        self.catalog.set_comments(table.id, comments);
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
