//! Generated columns in an ALTER rebuild. The SQL layer computes them on
//! every write; a rebuild whose record sets the table's list (it adds
//! one, changes an expression, or adds or converts a column of a table
//! that has some) computes them again for each copied row through
//! `EngineConfig::generate`, both live and when recovery redoes the
//! logged ALTER, so both see the same values. Other rebuilds copy them.

use crate::engine::Engine;
use lockstep_binlog::{Event, TxnRecord};
use lockstep_tables::{CheckConstraint, GeneratedColumn, TableDef};
use lockstep_types::{Error as SqlError, Value};

/// Computes a row's generated columns in place (values in `def`'s layout).
pub type RowFn = Box<dyn Fn(&mut [Value]) -> Result<(), SqlError> + Send + Sync>;

/// Prepares the computation of `columns` over rows of `def` (the SQL
/// layer's; `no_generation` without it).
pub type GenerateFn =
    fn(&crate::catalog::Catalog, &TableDef, &[GeneratedColumn]) -> Result<RowFn, SqlError>;

/// The generation of an engine opened without the SQL layer: values are
/// kept as they were copied.
pub fn no_generation(
    _: &crate::catalog::Catalog,
    _: &TableDef,
    _: &[GeneratedColumn],
) -> Result<RowFn, SqlError> {
    Ok(Box::new(|_| Ok(())))
}

/// The lists an ALTER rebuild replaces in its logged record (None: the
/// rebuilt table keeps the old table's).
#[derive(Clone, Debug, Default)]
pub struct RebuildLists {
    pub checks: Option<Vec<CheckConstraint>>,
    pub generated: Option<Vec<GeneratedColumn>>,
}

impl From<Option<Vec<CheckConstraint>>> for RebuildLists {
    fn from(checks: Option<Vec<CheckConstraint>>) -> Self {
        RebuildLists {
            checks,
            generated: None,
        }
    }
}

impl Engine {
    /// What a rebuild into `def` that sets the generated columns `given`
    /// computes per row: None when it sets none (values are copied).
    pub(crate) fn row_generator(
        &self,
        def: &TableDef,
        given: Option<&[GeneratedColumn]>,
    ) -> Result<Option<RowFn>, SqlError> {
        match given.filter(|l| !l.is_empty()) {
            Some(list) => (self.config.generate)(&self.catalog, def, list).map(Some),
            None => Ok(None),
        }
    }
}

/// The generated columns a logged ALTER gives the rebuilt table `id`.
pub(crate) fn logged_generated(record: &TxnRecord, id: u32) -> Option<&[GeneratedColumn]> {
    record.events.iter().find_map(|e| match e {
        Event::SetGenerated { table, columns } if *table == id => Some(&columns[..]),
        _ => None,
    })
}
