//! Equivalence classes over columns and constants, built from the
//! conjuncts of one condition (a WHERE with its inner joins' ON, or one
//! LEFT JOIN's ON). From `a = b AND b = 5` the planner learns `a = 5`, so
//! a's table can look it up by key.
//!
//! Only equalities that make two values interchangeable join a class:
//! columns of one type family whose `=` means "the same value" (integers,
//! decimals, binary strings, dates), or text columns under the collation.
//! A string column equal to an integer column compares as numbers ('05' =
//! 5) and joins nothing. `=` never matches NULL, so a class member that is
//! NULL fails the conjunct it came from either way.

use crate::expr::{BExpr, Func};
use crate::parser::BinaryOp;
use lockstep_types::{DataType, Value};

/// Kinds of column whose equality classes may share members.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    Integer,
    Decimal,
    /// Text under the collation: equal values need not be identical.
    Text,
    Binary,
    /// Dates and times: one exact type each.
    Exact(DataType),
}

fn family(t: DataType) -> Option<Family> {
    match t {
        t if t.is_integer() => Some(Family::Integer),
        DataType::Decimal { .. } => Some(Family::Decimal),
        t if t.is_string() => Some(Family::Text),
        t if t.is_binary() => Some(Family::Binary),
        // A TIMESTAMP column reads as a DATETIME in the session zone
        // (`Func::FromUtc`): the two compare as one type.
        DataType::Timestamp { fsp } => Some(Family::Exact(DataType::DateTime { fsp })),
        DataType::Date | DataType::DateTime { .. } => Some(Family::Exact(t)),
        _ => None,
    }
}

/// Whether `a = b` makes two values of these types interchangeable (the
/// rule classes join by): one family, text compared under the collation.
/// `folded`: both sides of a text comparison are folded by it.
pub fn interchangeable(a: DataType, b: DataType, folded: bool) -> bool {
    match (family(a), family(b)) {
        (Some(Family::Text), Some(Family::Text)) => folded,
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The column an equality's side names, through the wrappers `side`
/// sees through, and whether it is folded by the collation.
pub fn side_column(e: &BExpr) -> Option<(usize, bool)> {
    side(e).map(|s| (s.column, is_folded(s.expr)))
}

/// The conjuncts rewritten, and equalities implied by them that only
/// serve to pick access paths (never evaluated).
pub struct Propagated {
    pub conjuncts: Vec<BExpr>,
    pub derived: Vec<BExpr>,
}

/// A column as a condition names it: `col`, `FoldCase(col)` for text, or
/// `FromUtc(col)` for a TIMESTAMP read in the session zone (a fixed
/// offset: equal instants read equal, so the members stay
/// interchangeable).
struct Side<'a> {
    column: usize,
    expr: &'a BExpr,
}

fn side(e: &BExpr) -> Option<Side<'_>> {
    // A datetime compared with text is folded too (a no-op on its value).
    let column = match strip_fold(e) {
        BExpr::Column(i) => *i,
        BExpr::Func(Func::FromUtc, args) => match args.as_slice() {
            [BExpr::Column(i)] => *i,
            _ => return None,
        },
        _ => return None,
    };
    Some(Side { column, expr: e })
}

fn strip_fold(e: &BExpr) -> &BExpr {
    match e {
        BExpr::Func(Func::FoldCase, args) if args.len() == 1 => &args[0],
        e => e,
    }
}

fn is_folded(e: &BExpr) -> bool {
    matches!(e, BExpr::Func(Func::FoldCase, _))
}

/// `a = b` over two columns that may share a class: (a, b, family).
fn column_pair<'a>(
    e: &'a BExpr,
    types: &[(DataType, bool)],
) -> Option<(Side<'a>, Side<'a>, Family)> {
    let BExpr::Binary(BinaryOp::Eq, l, r) = e else {
        return None;
    };
    let (a, b) = (side(l)?, side(r)?);
    let fa = family(types.get(a.column)?.0)?;
    let fb = family(types.get(b.column)?.0)?;
    // Text compares under the collation only when both sides are folded.
    let folded = is_folded(a.expr) && is_folded(b.expr);
    let same = fa == fb && (fa != Family::Text || folded) && a.column != b.column;
    same.then_some((a, b, fa))
}

/// Whether `k` may stand for every member of a class of `fam`: for text,
/// only a text literal (folded by the collation, as the members are).
/// Other families ignore the fold a parameter (typed as text) brings to
/// `int_col = ?`: folding changes no number.
fn constant_fits(k: &BExpr, fam: Family) -> bool {
    let k = if fam == Family::Text {
        k
    } else {
        strip_fold(k)
    };
    match (k, fam) {
        (BExpr::Literal(Value::Null), _) => false,
        (BExpr::Literal(Value::Bytes(_)), _) => true,
        (_, Family::Text) => false,
        (BExpr::Literal(_), _) | (BExpr::Param(_), _) => true,
        _ => false,
    }
}

/// `col = constant` (either way round): the column side and the constant.
fn column_constant(e: &BExpr) -> Option<(Side<'_>, &BExpr)> {
    let BExpr::Binary(BinaryOp::Eq, l, r) = e else {
        return None;
    };
    match (side(l), side(r)) {
        (Some(s), None) => Some((s, &**r)),
        (None, Some(s)) => Some((s, &**l)),
        _ => None,
    }
}

/// One class: its member columns (with how the conditions name them), the
/// conjuncts that joined them, and a constant they all equal.
struct Class {
    family: Family,
    members: Vec<(usize, BExpr)>,
    edges: Vec<usize>,
    constant: Option<BExpr>,
    /// Members that already have a conjunct `col = constant` with the
    /// class's constant.
    pinned: Vec<usize>,
}

impl Class {
    fn has(&self, col: usize) -> bool {
        self.members.iter().any(|(c, _)| *c == col)
    }

    fn add(&mut self, s: &Side) {
        if !self.has(s.column) {
            self.members.push((s.column, s.expr.clone()));
        }
    }
}

fn class_of(classes: &[Class], col: usize) -> Option<usize> {
    classes.iter().position(|c| c.has(col))
}

/// Merges the classes of the two sides of equality `at` (creating them).
fn join(classes: &mut Vec<Class>, at: usize, a: &Side, b: &Side, family: Family) {
    let (ca, cb) = (class_of(classes, a.column), class_of(classes, b.column));
    let target = match (ca, cb) {
        (Some(x), Some(y)) if x != y => {
            let (keep, gone) = (x.min(y), x.max(y));
            let merged = classes.remove(gone);
            let k = &mut classes[keep];
            k.members.extend(merged.members);
            k.edges.extend(merged.edges);
            keep
        }
        (Some(x), _) | (_, Some(x)) => x,
        (None, None) => {
            classes.push(Class {
                family,
                members: Vec::new(),
                edges: Vec::new(),
                constant: None,
                pinned: Vec::new(),
            });
            classes.len() - 1
        }
    };
    let c = &mut classes[target];
    c.add(a);
    c.add(b);
    c.edges.push(at);
}

fn build_classes(conjuncts: &[BExpr], types: &[(DataType, bool)]) -> Vec<Class> {
    let mut classes: Vec<Class> = Vec::new();
    for (at, c) in conjuncts.iter().enumerate() {
        if let Some((a, b, fam)) = column_pair(c, types) {
            join(&mut classes, at, &a, &b, fam);
        }
    }
    for c in conjuncts {
        let Some((s, k)) = column_constant(c) else {
            continue;
        };
        let Some(ci) = class_of(&classes, s.column) else {
            continue;
        };
        let class = &mut classes[ci];
        // Text compares under the collation only folded; a fold of
        // anything else is the value itself.
        let same_form = class.family != Family::Text
            || class
                .members
                .iter()
                .any(|(col, e)| *col == s.column && is_folded(e) == is_folded(s.expr));
        if !same_form || !constant_fits(k, class.family) {
            continue;
        }
        let chosen = class.constant.get_or_insert_with(|| k.clone());
        // A member equal to another constant keeps that conjunct and gets
        // the class's one too (b = 3 AND b = a AND a = 5 matches nothing).
        if same_constant(chosen, k) {
            class.pinned.push(s.column);
        }
    }
    classes
}

fn same_constant(a: &BExpr, b: &BExpr) -> bool {
    match (strip_fold(a), strip_fold(b)) {
        (BExpr::Literal(x), BExpr::Literal(y)) => {
            std::mem::discriminant(x) == std::mem::discriminant(y) && x == y
        }
        (BExpr::Param(x), BExpr::Param(y)) => x == y,
        _ => false,
    }
}

fn eq(l: BExpr, r: BExpr) -> BExpr {
    BExpr::Binary(BinaryOp::Eq, Box::new(l), Box::new(r))
}

/// Rewrites a conjunction through its equivalence classes. A class with a
/// constant has its column equalities replaced by `col = constant` for
/// every member (the same condition, which each table can use alone and
/// an exact key range makes free); a class without one keeps them and
/// adds the implied equalities between members for access paths only.
pub fn propagate(conjuncts: Vec<BExpr>, types: &[(DataType, bool)]) -> Propagated {
    // Cheap way out for the common case of no column equalities.
    if !conjuncts.iter().any(|c| column_pair(c, types).is_some()) {
        return Propagated {
            conjuncts,
            derived: Vec::new(),
        };
    }
    let classes = build_classes(&conjuncts, types);
    let mut dropped = vec![false; conjuncts.len()];
    let mut added = Vec::new();
    let mut derived = Vec::new();
    for class in &classes {
        match &class.constant {
            Some(k) => {
                class.edges.iter().for_each(|&at| dropped[at] = true);
                for (col, form) in &class.members {
                    if !class.pinned.contains(col) {
                        added.push(eq(form.clone(), k.clone()));
                    }
                }
            }
            None => derived.extend(implied_pairs(class, &conjuncts)),
        }
    }
    let mut out: Vec<BExpr> = conjuncts
        .into_iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(c, _)| c)
        .collect();
    out.extend(added);
    Propagated {
        conjuncts: out,
        derived,
    }
}

/// Equalities between members of a class without a constant that no
/// conjunct states (a = b AND b = c gives a = c), both ways round.
fn implied_pairs(class: &Class, conjuncts: &[BExpr]) -> Vec<BExpr> {
    // Quadratic in the class: big classes gain little more.
    const MAX_MEMBERS: usize = 8;
    let mut out = Vec::new();
    if class.members.len() > MAX_MEMBERS {
        return out;
    }
    let stated = |x: usize, y: usize| {
        class.edges.iter().any(|&at| match &conjuncts[at] {
            BExpr::Binary(_, l, r) => {
                let (l, r) = (side(l).map(|s| s.column), side(r).map(|s| s.column));
                (l, r) == (Some(x), Some(y)) || (l, r) == (Some(y), Some(x))
            }
            _ => false,
        })
    };
    for (i, (a, fa)) in class.members.iter().enumerate() {
        for (b, fb) in &class.members[i + 1..] {
            if !stated(*a, *b) {
                out.push(eq(fa.clone(), fb.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(i: usize) -> BExpr {
        BExpr::Column(i)
    }

    fn int(v: i64) -> BExpr {
        BExpr::Literal(Value::Int(v))
    }

    fn types(ts: &[DataType]) -> Vec<(DataType, bool)> {
        ts.iter().map(|t| (*t, true)).collect()
    }

    const INT: DataType = DataType::Int { unsigned: false };

    #[test]
    fn constant_reaches_every_member() {
        let t = types(&[INT, INT, INT]);
        let p = propagate(
            vec![eq(col(0), col(1)), eq(col(1), col(2)), eq(col(2), int(5))],
            &t,
        );
        let text: Vec<String> = p.conjuncts.iter().map(|c| format!("{c:?}")).collect();
        assert_eq!(p.conjuncts.len(), 3, "{text:?}");
        assert!(p.derived.is_empty());
    }

    #[test]
    fn different_constants_stay_contradictory() {
        let t = types(&[INT, INT]);
        let p = propagate(
            vec![eq(col(0), col(1)), eq(col(1), int(5)), eq(col(0), int(3))],
            &t,
        );
        // b = 5, a = 3, and a = 5 from the class.
        assert_eq!(p.conjuncts.len(), 3);
    }

    #[test]
    fn string_and_integer_columns_do_not_join() {
        let t = types(&[DataType::VarChar { len: 10 }, INT]);
        let p = propagate(vec![eq(col(0), col(1)), eq(col(1), int(5))], &t);
        assert_eq!(p.conjuncts.len(), 2);
        assert!(matches!(&p.conjuncts[0], BExpr::Binary(_, l, r)
            if matches!(**l, BExpr::Column(0)) && matches!(**r, BExpr::Column(1))));
    }

    #[test]
    fn classes_without_constants_derive_pairs() {
        let t = types(&[INT, INT, INT]);
        let p = propagate(vec![eq(col(0), col(1)), eq(col(1), col(2))], &t);
        assert_eq!(p.conjuncts.len(), 2);
        assert_eq!(p.derived.len(), 1);
    }
}
