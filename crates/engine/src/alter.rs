//! ALTER TABLE and RENAME TABLE. An ALTER that changes columns or keys
//! copies the table's rows into a new table (a new id) laid out as the new
//! definition, under the caller's exclusive metadata lock: the copy is
//! built and checked first, then the change is logged, then the catalog
//! switches to the new table. Recovery redoes the logged change on the
//! rows replayed before it, and row events naming the old id (already in
//! a checkpoint that holds the new table) find no table and are skipped,
//! so a restart sees the old table or the new one, never a mix.

use crate::engine::Engine;
use crate::generated::RebuildLists;
use lockstep_binlog::{ColumnSource, Event};
use lockstep_tables::{GeneratedColumn, Row, Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::names::{check_name, NameKind};
use lockstep_types::{Error as SqlError, Value};
use std::collections::HashSet;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Converts a value to a column's type and character set as a strict-mode
/// INSERT does (the SQL layer's `store_in_column`); the engine calls it
/// both live and in recovery, so an ALTER is redone with the same
/// conversion it was done with.
pub type ConvertFn = fn(Value, &lockstep_tables::ColumnDef) -> Result<Value, SqlError>;

/// The conversion of an engine opened without the SQL layer: values are
/// kept as they are.
pub fn keep_value(v: Value, _: &lockstep_tables::ColumnDef) -> Result<Value, SqlError> {
    Ok(v)
}

/// A table to rename and its new name.
pub struct Rename {
    pub table: Arc<Table>,
    pub database: String,
    pub name: String,
}

impl Engine {
    /// Rebuilds `table` as `def` (its id is assigned here), each column of
    /// `def` filled from its entry of `sources`. The caller holds the
    /// table's exclusive metadata lock. On error nothing has changed.
    pub async fn alter_table(
        &self,
        table: &Arc<Table>,
        def: TableDef,
        sources: Vec<ColumnSource>,
    ) -> Result<Arc<Table>, SqlError> {
        self.alter_table_with(table, def, sources, None, None, |_| Ok(()))
            .await
    }

    /// `alter_table`; with `foreign_keys`, the rebuilt table's constraints
    /// (and other children's, when renamed columns of it are followed) are
    /// replaced in the same logged record, after `check` has accepted the
    /// rebuilt rows; so are its CHECK constraints with `checks` (without,
    /// the rebuilt table keeps the old table's).
    pub async fn alter_table_with(
        &self,
        table: &Arc<Table>,
        mut def: TableDef,
        sources: Vec<ColumnSource>,
        foreign_keys: Option<crate::foreign::AlterForeignKeys>,
        lists: impl Into<RebuildLists>,
        check: impl FnOnce(&Arc<Table>) -> Result<(), SqlError>,
    ) -> Result<Arc<Table>, SqlError> {
        check_name(NameKind::Table, &def.name)?;
        for c in &def.columns {
            check_name(NameKind::Column, &c.name)?;
        }
        for ix in &def.indexes {
            check_name(NameKind::Index, &ix.name)?;
        }
        let lists = lists.into();
        def.id = self.catalog.allocate_table_id();
        let built = self.rebuild(table, &def, &sources, lists.generated.as_deref())?;
        check(&built)?;
        self.switch_table(table, built, def, sources, foreign_keys, lists)
            .await
    }

    /// Logs the rebuild of `table` as `built` (with its constraints) and
    /// switches the catalog to it: the commit point of an ALTER.
    pub(crate) async fn switch_table(
        &self,
        table: &Arc<Table>,
        built: Arc<Table>,
        def: TableDef,
        sources: Vec<ColumnSource>,
        foreign_keys: Option<crate::foreign::AlterForeignKeys>,
        lists: RebuildLists,
    ) -> Result<Arc<Table>, SqlError> {
        debug_assert_eq!(built.id, def.id);
        let RebuildLists { checks, generated } = lists;
        let new_id = def.id;
        let mut events = vec![Event::AlterTable {
            table: table.id,
            def,
            sources,
        }];
        let lists = foreign_keys.map(|f| f.lists(new_id)).unwrap_or_default();
        events.extend(lists.iter().map(|(id, fks)| Event::SetForeignKeys {
            table: *id,
            foreign_keys: fks.clone(),
        }));
        if let Some(checks) = &checks {
            events.push(Event::SetChecks {
                table: new_id,
                checks: checks.clone(),
            });
        }
        if let Some(columns) = &generated {
            events.push(Event::SetGenerated {
                table: new_id,
                columns: columns.clone(),
            });
        }
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        let _in_flight = self.log_events(events).await?;
        self.catalog.replace_table(table.id, built.clone());
        for (id, fks) in lists {
            self.catalog.set_foreign_keys(id, fks);
        }
        if let Some(checks) = checks {
            self.catalog.set_checks(new_id, checks);
        }
        if let Some(columns) = generated {
            self.catalog.set_generated(new_id, columns);
        }
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(built)
    }

    /// Renames tables as one logged change (RENAME TABLE a TO b, c TO d).
    /// The caller holds their exclusive metadata locks and has checked
    /// that the new names are free.
    pub async fn rename_tables(&self, renames: &[Rename]) -> Result<(), SqlError> {
        for r in renames {
            check_name(NameKind::Table, &r.name)?;
        }
        let events = renames
            .iter()
            .map(|r| Event::RenameTable {
                table: r.table.id,
                database: r.database.clone(),
                name: r.name.clone(),
            })
            .collect();
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        let _in_flight = self.log_events(events).await?;
        for r in renames {
            self.catalog.rename_table(r.table.id, &r.database, &r.name);
        }
        self.ddl_version.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Recovery and `apply`: redoes a logged ALTER unless the catalog
    /// already holds its result (a checkpoint taken after it).
    pub(crate) fn replay_alter(
        &self,
        table: u32,
        def: &TableDef,
        sources: &[ColumnSource],
        generated: Option<&[GeneratedColumn]>,
    ) {
        let Some(old) = self.catalog.table_by_id(table) else {
            return;
        };
        if self.catalog.table_by_id(def.id).is_some() {
            return;
        }
        match self.rebuild(&old, def, sources, generated) {
            Ok(built) => self.catalog.replace_table(table, built),
            // It succeeded when it was logged, on these same rows.
            Err(e) => eprintln!("lockstep: recovery: ALTER of table#{table} not redone: {e}"),
        }
    }

    /// The new table: every row of `old` in the layout of `def`, with
    /// its secondary indexes, checked for NULLs and duplicate keys.
    fn rebuild(
        &self,
        old: &Table,
        def: &TableDef,
        sources: &[ColumnSource],
        generated: Option<&[GeneratedColumn]>,
    ) -> Result<Arc<Table>, SqlError> {
        let old_def = old.def();
        let new = Arc::new(Table::new(def.clone()));
        let mut uniques = Uniques::new(def);
        let mut rows = 0u64;
        let generate = self.row_generator(def, generated)?;
        for entry in old.range(Bound::Unbounded, Bound::Unbounded, false) {
            let Some(row) = entry.value().latest().and_then(|v| v.row) else {
                continue;
            };
            rows += 1;
            let old_values = row.to_values();
            let values =
                self.new_row(&old_def, def, sources, &old_values, rows, generate.as_ref())?;
            put_row(&new, &mut uniques, def, &values)?;
        }
        let auto = old.auto_increment.load(Ordering::SeqCst);
        let counted = sources.contains(&ColumnSource::Counter);
        let next = if counted { rows + 1 } else { 1 };
        new.auto_increment.store(auto.max(next), Ordering::SeqCst);
        let row_id = old.next_row_id.load(Ordering::SeqCst);
        new.next_row_id.store(row_id.max(next), Ordering::SeqCst);
        Ok(new)
    }

    /// One row in the new layout; `n` counts rows from 1 (error messages
    /// and counters).
    pub(crate) fn new_row(
        &self,
        old_def: &TableDef,
        def: &TableDef,
        sources: &[ColumnSource],
        old: &[Value],
        n: u64,
        generate: Option<&crate::generated::RowFn>,
    ) -> Result<Vec<Value>, SqlError> {
        let mut values = Vec::with_capacity(def.columns.len());
        for (col, source) in def.columns.iter().zip(sources) {
            let v = match *source {
                ColumnSource::Column(i) | ColumnSource::Shifted { column: i, .. } => {
                    let i = i as usize;
                    let mut v = old.get(i).cloned().unwrap_or(Value::Null);
                    if let (ColumnSource::Shifted { seconds, .. }, Value::DateTime(dt)) =
                        (source, &v)
                    {
                        v = Value::DateTime(dt.shifted(*seconds));
                    }
                    let from = old_def.columns.get(i).map(|c| (c.data_type, c.collation));
                    if from == Some((col.data_type, col.collation)) {
                        v
                    } else {
                        (self.config.convert)(v, col).map_err(|e| at_row(e, &col.name, n))?
                    }
                }
                ColumnSource::Value(ref v) => v.clone(),
                ColumnSource::Counter => Value::UInt(n),
            };
            values.push(v);
        }
        if let Some(generate) = generate {
            generate(&mut values).map_err(|e| at_row(e, "", n))?;
        }
        let null = values.iter().zip(&def.columns);
        if null.into_iter().any(|(v, c)| v.is_null() && !c.nullable) {
            return Err(SqlError::new(
                Code::InvalidUseOfNull,
                "Invalid use of NULL value",
            ));
        }
        Ok(values)
    }
}

/// A conversion error of the copy, worded as MySQL's ALTER words it: a
/// string cut short is 1265 (not INSERT's 1406), and the row is counted.
fn at_row(e: SqlError, column: &str, n: u64) -> SqlError {
    if e.code == Code::DataTooLong {
        return SqlError::new(
            Code::WarnDataTruncated,
            format!("Data truncated for column '{column}' at row {n}"),
        );
    }
    match e.message.strip_suffix(" at row 1") {
        Some(head) => SqlError::new(e.code, format!("{head} at row {n}")),
        None => e,
    }
}

/// Adds a row to a table being built, 1062 when a unique key repeats.
pub(crate) fn put_row(
    new: &Table,
    uniques: &mut Uniques,
    def: &TableDef,
    values: &[Value],
) -> Result<(), SqlError> {
    let key = def.index_key(0, values);
    if new.record(&key).is_some() {
        return Err(uniques.duplicate(def, 0, values));
    }
    uniques.check(def, values)?;
    let row = Row::new(values);
    new.index_row(&new.schema(), &key, &row);
    new.load_row(key, Some(row));
    Ok(())
}

/// Keys seen so far in each unique secondary index of the new table.
pub(crate) struct Uniques {
    seen: Vec<(usize, HashSet<Vec<u8>>)>,
}

impl Uniques {
    pub(crate) fn new(def: &TableDef) -> Uniques {
        let seen = (1..def.indexes.len())
            .filter(|&i| def.indexes[i].unique)
            .map(|i| (i, HashSet::new()))
            .collect();
        Uniques { seen }
    }

    /// Takes a row's unique keys out again (it left the table).
    pub(crate) fn forget(&mut self, def: &TableDef, row: &[Value]) {
        for (index, seen) in &mut self.seen {
            if !def.unique_key_has_null(*index, row) {
                seen.remove(&def.index_key(*index, row));
            }
        }
    }

    fn check(&mut self, def: &TableDef, row: &[Value]) -> Result<(), SqlError> {
        for (index, seen) in &mut self.seen {
            // Any number of rows may hold NULL in a unique key.
            if def.unique_key_has_null(*index, row) {
                continue;
            }
            if !seen.insert(def.index_key(*index, row)) {
                let index = *index;
                return Err(self.duplicate(def, index, row));
            }
        }
        Ok(())
    }

    fn duplicate(&self, def: &TableDef, index: usize, row: &[Value]) -> SqlError {
        let ix = &def.indexes[index];
        let text = ix
            .columns
            .iter()
            .map(|&c| row[c].to_string())
            .collect::<Vec<_>>()
            .join("-");
        SqlError::dup_entry(&text, &format!("{}.{}", def.name, ix.name))
    }
}
