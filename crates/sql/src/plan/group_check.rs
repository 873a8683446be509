//! ONLY_FULL_GROUP_BY (in MySQL 8's default sql_mode): a grouped query may
//! show a column outside an aggregate only if the GROUP BY columns
//! determine it, as MySQL decides functional dependence: the column is
//! grouped, or equal to a constant or to a determined column by an
//! equality of the WHERE or a join's ON, or its table has a primary or a
//! NOT NULL unique key whose columns are all determined.
//!
//! Where lockstep cannot tell as MySQL does (columns of derived tables and
//! views, whose dependences MySQL follows into their definitions), it lets
//! the query run rather than refuse one MySQL accepts.

use crate::expr::{BExpr, Func};
use crate::parser::BinaryOp;
use crate::plan::bind::split_conjuncts;
use crate::plan::Source;
use lockstep_tables::TableDef;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// Which row positions the GROUP BY determines.
#[derive(Debug)]
pub struct Determined {
    det: Vec<bool>,
}

/// An equality the conditions hold: position = constant, or = position.
type Equality = (usize, Option<usize>);

fn column(e: &BExpr) -> Option<usize> {
    match e {
        BExpr::Column(i) => Some(*i),
        BExpr::Func(Func::FoldCase | Func::FromUtc, args) if args.len() == 1 => column(&args[0]),
        _ => None,
    }
}

/// Whether `e` is the same for every row of the query (reads no column
/// of it, nor anything that changes per row).
fn constant(e: &BExpr) -> bool {
    let mut fixed = true;
    fn walk(e: &BExpr, fixed: &mut bool) {
        match e {
            BExpr::Column(_) | BExpr::Subquery(_) | BExpr::Exists { .. } => *fixed = false,
            BExpr::InSubquery { .. } => *fixed = false,
            BExpr::Func(Func::Rand | Func::Sleep | Func::LastInsertId, _) => *fixed = false,
            _ => e.for_each_child(&mut |c| walk(c, fixed)),
        }
    }
    walk(e, &mut fixed);
    fixed
}

fn equality(c: &BExpr, out: &mut Vec<Equality>) {
    let BExpr::Binary(BinaryOp::Eq | BinaryOp::NullSafeEq, a, b) = c else {
        return;
    };
    match (column(a), column(b)) {
        (Some(x), Some(y)) => out.push((x, Some(y))),
        (Some(x), None) if constant(b) => out.push((x, None)),
        (None, Some(y)) if constant(a) => out.push((y, None)),
        _ => {}
    }
}

/// The base tables of `source` (offset, definition), the equalities its
/// scans and joins hold, and the positions of derived tables.
fn walk_source(
    src: &Source,
    tables: &mut Vec<(usize, Arc<TableDef>)>,
    eqs: &mut Vec<Equality>,
    derived: &mut Vec<(usize, usize)>,
) {
    match src {
        Source::Dual => {}
        Source::Table(scan) => {
            tables.push((scan.offset, scan.def.clone()));
            for c in scan.filter.iter().flat_map(split_conjuncts) {
                equality(&c, eqs);
            }
            // Equalities the key range took out of the filter.
            if let [range] = &scan.access.ranges[..] {
                let key = &scan.def.indexes[scan.access.index].columns;
                for (col, e) in key.iter().zip(&range.eq) {
                    let at = scan.offset + col;
                    match column(e) {
                        Some(y) => eqs.push((at, Some(y))),
                        None if constant(e) => eqs.push((at, None)),
                        None => {}
                    }
                }
            }
        }
        Source::Derived { plan, offset, .. } => {
            derived.push((*offset, offset + plan.columns.len()))
        }
        Source::Join {
            left, right, on, ..
        } => {
            walk_source(left, tables, eqs, derived);
            walk_source(right, tables, eqs, derived);
            for c in on.iter().flat_map(split_conjuncts) {
                equality(&c, eqs);
            }
        }
    }
}

impl Determined {
    /// The positions `group` determines in a query over `source` with the
    /// remaining WHERE `filter`, `width` positions in all.
    pub fn new(source: &Source, filter: &Option<BExpr>, group: &[BExpr], width: usize) -> Self {
        let (mut tables, mut eqs, mut derived) = (Vec::new(), Vec::new(), Vec::new());
        walk_source(source, &mut tables, &mut eqs, &mut derived);
        for c in filter.iter().flat_map(split_conjuncts) {
            equality(&c, &mut eqs);
        }
        let mut det = vec![false; width];
        for (lo, hi) in derived {
            det[lo.min(width)..hi.min(width)].fill(true);
        }
        for p in group.iter().filter_map(column) {
            if let Some(d) = det.get_mut(p) {
                *d = true;
            }
        }
        let mut d = Determined { det };
        while d.follow(&eqs) | d.keys(&tables) {}
        d
    }

    fn set(&mut self, p: usize) -> bool {
        match self.det.get_mut(p) {
            Some(d) if !*d => {
                *d = true;
                true
            }
            _ => false,
        }
    }

    fn is(&self, p: usize) -> bool {
        self.det.get(p).copied().unwrap_or(true)
    }

    /// Spreads determination along equalities; true if it grew.
    fn follow(&mut self, eqs: &[Equality]) -> bool {
        let mut grew = false;
        for &(x, y) in eqs {
            grew |= match y {
                None => self.set(x),
                Some(y) if self.is(x) => self.set(y),
                Some(y) if self.is(y) => self.set(x),
                Some(_) => false,
            };
        }
        grew
    }

    /// A table whose unique NOT NULL key is determined is determined
    /// whole; true if it grew.
    fn keys(&mut self, tables: &[(usize, Arc<TableDef>)]) -> bool {
        let mut grew = false;
        for (offset, def) in tables {
            let whole = def.indexes.iter().enumerate().any(|(i, ix)| {
                let not_null = i == 0 || ix.columns.iter().all(|&c| !def.columns[c].nullable);
                ix.unique && not_null && ix.columns.iter().all(|&c| self.is(offset + c))
            });
            if whole {
                for c in 0..def.columns.len() {
                    grew |= self.set(offset + c);
                }
            }
        }
        grew
    }

    /// Whether the column at `p` may be shown outside an aggregate.
    pub fn allows(&self, p: usize) -> bool {
        self.is(p)
    }
}

/// MySQL's error for a column the GROUP BY does not determine: `place`
/// names the clause ("SELECT list", "HAVING clause", "ORDER BY clause"),
/// `number` the expression's position in it (from 1).
pub fn not_determined(grouped: bool, place: &str, number: usize, column: &str) -> Error {
    match grouped {
        true => Error::new(
            Code::WrongFieldWithGroup,
            format!(
                "Expression #{number} of {place} is not in GROUP BY clause and contains nonaggregated column '{column}' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"
            ),
        ),
        false => Error::new(
            Code::MixOfGroupFuncAndFields,
            format!(
                "In aggregated query without GROUP BY, expression #{number} of {place} contains nonaggregated column '{column}'; this is incompatible with sql_mode=only_full_group_by"
            ),
        ),
    }
}
