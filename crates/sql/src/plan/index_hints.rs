//! Index hints (`USE INDEX`, `FORCE INDEX`, `IGNORE INDEX`, each optionally
//! `FOR JOIN`, `FOR ORDER BY`, `FOR GROUP BY`): which of a table's indexes
//! the planner may use for finding rows and for ordering. As MySQL: USE and
//! FORCE name the only usable indexes of their scope (`USE INDEX ()` none),
//! IGNORE removes indexes, a hint without FOR applies to every scope, and
//! an unknown index name is error 1176. A full table scan stays possible;
//! under FORCE INDEX only when no named index has a key from the
//! conditions (a range is then never weighed against a scan).

use crate::parser::{IndexHint, IndexHintKind, IndexHintScope};
use lockstep_tables::TableDef;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// Per index of the table (by position): usable or not, per use.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexHints {
    /// Finding rows (the access path, lookups from other tables).
    pub join: Vec<bool>,
    /// Reading rows in an index's order for ORDER BY.
    pub order: Vec<bool>,
    /// FORCE INDEX for finding rows: a scan only where no key serves.
    pub forced: bool,
}

fn position(def: &TableDef, name: &str) -> Result<usize, Error> {
    let found = def.indexes.iter().enumerate().position(|(i, ix)| {
        // A table without a primary key has a hidden one no hint can name.
        let nameable = i != 0 || def.hidden_row_id.is_none();
        nameable && ix.name.eq_ignore_ascii_case(name)
    });
    found.ok_or_else(|| {
        Error::new(
            Code::KeyDoesNotExist,
            format!("Key '{name}' doesn't exist in table '{}'", def.name),
        )
    })
}

/// The usable indexes for one scope.
fn mask(def: &TableDef, hints: &[IndexHint], scope: IndexHintScope) -> Result<Vec<bool>, Error> {
    let n = def.indexes.len();
    let (mut chosen, mut ignored): (Option<Vec<bool>>, Vec<bool>) = (None, vec![false; n]);
    for h in hints.iter().filter(|h| h.scope.is_none_or(|s| s == scope)) {
        let named = h
            .names
            .iter()
            .map(|name| position(def, name))
            .collect::<Result<Vec<_>, _>>()?;
        let target = match h.kind {
            IndexHintKind::Use | IndexHintKind::Force => {
                chosen.get_or_insert_with(|| vec![false; n])
            }
            IndexHintKind::Ignore => &mut ignored,
        };
        for i in named {
            target[i] = true;
        }
    }
    let chosen = chosen.unwrap_or_else(|| vec![true; n]);
    Ok(chosen.iter().zip(&ignored).map(|(c, i)| *c && !i).collect())
}

/// The hints of one table reference, checked against its definition.
pub fn resolve(def: &TableDef, hints: &[IndexHint]) -> Result<Option<Arc<IndexHints>>, Error> {
    if hints.is_empty() {
        return Ok(None);
    }
    let join = mask(def, hints, IndexHintScope::Join)?;
    let order = mask(def, hints, IndexHintScope::OrderBy)?;
    // GROUP BY never reads an index's order in lockstep (it hashes), so
    // its hints are only checked for names.
    mask(def, hints, IndexHintScope::GroupBy)?;
    let forced = hints.iter().any(|h| {
        h.kind == IndexHintKind::Force && h.scope.is_none_or(|s| s == IndexHintScope::Join)
    });
    Ok(Some(Arc::new(IndexHints {
        join,
        order,
        forced,
    })))
}

/// Whether index `i` may be used for finding rows.
pub fn usable(hints: &Option<Arc<IndexHints>>, i: usize) -> bool {
    hints
        .as_ref()
        .is_none_or(|h| h.join.get(i).copied().unwrap_or(true))
}

/// Whether FORCE INDEX rules out a scan where a key serves.
pub fn forced(hints: &Option<Arc<IndexHints>>) -> bool {
    hints.as_ref().is_some_and(|h| h.forced)
}

/// Whether index `i`'s order may serve ORDER BY.
pub fn orders(hints: &Option<Arc<IndexHints>>, i: usize) -> bool {
    hints
        .as_ref()
        .is_none_or(|h| h.order.get(i).copied().unwrap_or(true))
}
