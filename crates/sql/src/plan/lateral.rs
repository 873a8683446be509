//! Binding LATERAL derived tables and JSON_TABLE: the FROM items to their
//! left are their enclosing row, so a reference to one of them binds as
//! an outer reference (`BExpr::Outer`) and the executor runs the table
//! once per distinct values of the columns it reads (`exec/lateral.rs`).
//! Items to its right, and the table itself, are not in that scope: a
//! reference to them is 1054 as in MySQL.

use super::{Binder, Placement, Scope};
use crate::parser::{LateralRef, TableRef};
use crate::plan::Source;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// What makes a derived table lateral: the positions of the row before it
/// (the items to its left) that it reads. Its join order keeps it after
/// them, and its results are cached by their values.
#[derive(Debug)]
pub struct Lateral {
    pub refs: Vec<usize>,
    /// References further out, to the rows enclosing this FROM's query:
    /// (how many rows above the one before it, column). Part of the key.
    pub outer: Vec<(usize, usize)>,
    /// Made by the planner from a grouped derived table joined on its
    /// GROUP BY key (`split.rs`, MariaDB's LATERAL DERIVED), not written.
    pub split: bool,
}

impl Binder<'_> {
    pub(super) fn bind_lateral(
        &mut self,
        l: &LateralRef,
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Result<Source, Error> {
        let at = self.outer.len();
        self.outer.push(scope.clone());
        let saved = std::mem::replace(&mut self.correlated, false);
        let mark = self.outer_refs.len();
        let plan = match l {
            LateralRef::Query { query, .. } => self.bind_query(query),
            LateralRef::JsonTable(t) => self.bind_json_table(t),
        };
        self.outer.pop();
        self.correlated = saved;
        let (refs, outer) = self.own_refs(mark, at);
        let plan = Arc::new(plan?);
        let names = match l {
            LateralRef::Query { columns, .. } => &columns[..],
            LateralRef::JsonTable(_) => &[],
        };
        let mut source = self.derived(plan, l.alias().to_string(), names, scope, place)?;
        // Even without references to its left: it was bound with them as
        // its enclosing row, so it runs with one (`exec/lateral.rs`).
        if let Source::Derived { lateral, .. } = &mut source {
            *lateral = Some(Arc::new(Lateral {
                refs,
                outer,
                split: false,
            }));
        }
        Ok(source)
    }

    /// The columns of scope `at` read since `mark`; references further out
    /// stay logged (an enclosing lateral table's) and make the query
    /// binding this FROM correlated.
    pub(super) fn own_refs(&mut self, mark: usize, at: usize) -> (Vec<usize>, Vec<(usize, usize)>) {
        let logged: Vec<(usize, usize)> = self.outer_refs.drain(mark..).collect();
        let (mut refs, mut outer) = (Vec::new(), Vec::new());
        for (place, col) in logged {
            if place == at {
                refs.push(col);
            } else if place < at {
                self.correlated = true;
                self.outer_refs.push((place, col));
                outer.push((at - 1 - place, col));
            }
        }
        refs.sort_unstable();
        refs.dedup();
        outer.sort_unstable();
        outer.dedup();
        (refs, outer)
    }
}

/// A RIGHT JOIN binds its right operand first: a LATERAL table there that
/// names a table of the left operand gets MySQL's 3668 instead of 1054.
pub(super) fn right_join_error(first: &TableRef, left: &TableRef, e: Error) -> Error {
    let TableRef::Lateral(l) = first else {
        return e;
    };
    let named = e.code == Code::BadField
        && e.message
            .strip_prefix("Unknown column '")
            .and_then(|rest| rest.split_once('.'))
            .is_some_and(|(qualifier, _)| names_table(left, qualifier));
    if !named {
        return e;
    }
    Error::new(
        Code::TableFunctionForbiddenJoin,
        format!(
            "INNER or LEFT JOIN must be used for LATERAL references made by '{}'",
            l.alias()
        ),
    )
}

/// Whether `t` has a table, derived table or alias named `name`.
fn names_table(t: &TableRef, name: &str) -> bool {
    match t {
        TableRef::Table { name: n, alias, .. } => alias.as_deref().unwrap_or(&n.name) == name,
        TableRef::Derived { alias, .. } => alias == name,
        TableRef::Lateral(l) => l.alias() == name,
        TableRef::Join { left, right, .. } => names_table(left, name) || names_table(right, name),
    }
}
