//! Generated columns computed on the rows INSERT, REPLACE, UPDATE, ON
//! DUPLICATE KEY UPDATE and a cascaded foreign-key update write, before
//! the CHECK constraints and foreign keys see the row (`plan::generated`
//! binds them). VIRTUAL and STORED columns are both materialized in the
//! row, so reads and indexes need nothing more. An ALTER rebuild computes
//! them through `rebuild_generator` (the engine's `generate` hook).

use super::{Exec, Result};
use crate::expr::{eval, store_value, Env, SubqueryRef};
use crate::plan::generated::{bind_all, Bound};
use lockstep_engine::catalog::Catalog;
use lockstep_engine::{Error as EngineError, RowFn};
use lockstep_tables::{ColumnDef, GeneratedColumn, Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// A computed value as column `c` stores it: 1048 when NULL and the
/// column is NOT NULL.
fn stored(v: Value, c: &ColumnDef) -> std::result::Result<Value, Error> {
    if v.is_null() && !c.nullable {
        return Err(Error::new(
            Code::BadNull,
            format!("Column '{}' cannot be null", c.name),
        ));
    }
    store_value(v, c.data_type, &c.name)
}

impl Exec<'_> {
    /// Table `table`'s generated columns, bound once per statement.
    pub(crate) fn generated_of(&mut self, table: &Table) -> Result<Arc<Bound>> {
        if let Some(b) = self.generated.get(&table.id) {
            return Ok(b.clone());
        }
        let list = self.engine.catalog.generated(table.id);
        let bound = match list.is_empty() {
            true => Arc::new(Vec::new()),
            false => shared_bound(&self.engine.catalog, table, list).map_err(EngineError::Sql)?,
        };
        self.generated.insert(table.id, bound.clone());
        Ok(bound)
    }

    /// Computes `table`'s generated columns in `row`, in column order.
    pub(crate) fn generate(&mut self, table: &Table, row: &mut [Value]) -> Result<()> {
        let bound = self.generated_of(table)?;
        if bound.is_empty() {
            return Ok(());
        }
        let schema = table.schema();
        debug_assert_eq!(row.len(), schema.def.columns.len(), "a row of the table");
        for (at, e) in bound.iter() {
            let v = self.eval(e, row)?;
            let c = &schema.def.columns[*at];
            row[*at] = self.stored_form(stored(v, c).map_err(EngineError::Sql)?, c)?;
        }
        Ok(())
    }
}

/// Bound expressions kept across statements (parsing and binding them
/// for every single-row INSERT would cost more than computing them), by
/// table id; an entry holds the list it was bound from, so a table whose
/// list changed (or another engine's table of that id) misses.
type Shared = HashMap<u32, (Arc<[GeneratedColumn]>, Arc<Bound>)>;
static SHARED: LazyLock<Mutex<Shared>> = LazyLock::new(Default::default);

/// Past this many tables the cache starts again (dropped tables' entries
/// go with it).
const SHARED_TABLES: usize = 4096;

fn shared_bound(
    catalog: &Catalog,
    table: &Table,
    list: Arc<[GeneratedColumn]>,
) -> std::result::Result<Arc<Bound>, Error> {
    let hit =
        |(l, b): &(Arc<[GeneratedColumn]>, Arc<Bound>)| Arc::ptr_eq(l, &list).then(|| b.clone());
    if let Some(b) = SHARED.lock().get(&table.id).and_then(hit) {
        return Ok(b);
    }
    let bound = Arc::new(bind_all(catalog, &table.def(), &list)?);
    let mut shared = SHARED.lock();
    if shared.len() >= SHARED_TABLES {
        shared.clear();
    }
    shared.insert(table.id, (list, bound.clone()));
    Ok(bound)
}

/// The engine's `generate` hook: computes `list` over rows of `def` in an
/// ALTER rebuild, live and in recovery alike (no session: the
/// expressions read only the row, as validation ensured).
pub fn rebuild_generator(
    catalog: &Catalog,
    def: &TableDef,
    list: &[GeneratedColumn],
) -> std::result::Result<RowFn, Error> {
    let bound = bind_all(catalog, def, list)?;
    let columns = def.columns.clone();
    Ok(Box::new(move |row: &mut [Value]| {
        let mut env = RowEnv;
        for (at, e) in &bound {
            let v = eval(e, row, &mut env)?;
            row[*at] = stored(v, &columns[*at])?;
        }
        Ok(())
    }))
}

/// The environment of an expression that reads only its row.
struct RowEnv;

impl Env for RowEnv {
    fn param(&self, _: usize) -> std::result::Result<Value, Error> {
        Err(Error::internal("a parameter in a generated column"))
    }
    fn user_var(&self, _: &str) -> Value {
        Value::Null
    }
    fn system_var(&self, _: bool, name: &str) -> std::result::Result<Value, Error> {
        Err(Error::internal(format!("@@{name} in a generated column")))
    }
    fn outer(&self, _: usize, _: usize) -> Value {
        Value::Null
    }
    fn database(&self) -> Option<String> {
        None
    }
    fn connection_id(&self) -> u64 {
        0
    }
    fn last_insert_id(&self) -> u64 {
        0
    }
    fn set_last_insert_id(&mut self, _: u64) {}
    fn found_rows(&self) -> u64 {
        0
    }
    fn row_count(&self) -> i64 {
        0
    }
    fn user(&self) -> String {
        String::new()
    }
    fn subquery(
        &mut self,
        _: &SubqueryRef,
        _: &[Value],
    ) -> std::result::Result<Vec<Vec<Value>>, Error> {
        Err(Error::internal("a subquery in a generated column"))
    }
    /// As strict mode: an ALTER fails where a value would be changed.
    fn warn(&mut self, w: Error) -> std::result::Result<(), Error> {
        Err(w)
    }
}
