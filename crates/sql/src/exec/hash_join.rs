//! Running a hash join (see `plan::hash_join`): the right side is read
//! once into a [`JoinTable`], then each left row looks up its candidates.
//! A build that would outgrow the statement's temporary-table allowance is
//! abandoned and the join runs as a nested loop, which needs no memory for
//! the right side: slower, never wrong, never an error the nested loop
//! would not give.

use super::{row_bytes, Exec, Result};
use crate::exec::keyset::KeySet;
use crate::expr::{eval, BExpr};
use crate::parser::JoinKind;
use crate::plan::hash_join::HashJoin;
use crate::plan::{Source, TableScan};
use lockstep_engine::Error as EngineError;
use lockstep_types::Value;
use std::sync::Arc;

/// Kinds of key values whose equality under `sql_cmp` is equality of
/// their encodings; a probe of one kind against a build of another is
/// compared row by row.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Int,
    Double,
    Bytes,
    Time,
}

/// Appends `v`'s key encoding; None for a value that is not hashed
/// (decimals: equal values may be written differently).
fn encode(v: &Value, out: &mut Vec<u8>) -> Option<Kind> {
    Some(match v {
        Value::Int(i) => {
            out.extend_from_slice(&(*i as i128).to_be_bytes());
            Kind::Int
        }
        Value::UInt(u) => {
            out.extend_from_slice(&(*u as i128).to_be_bytes());
            Kind::Int
        }
        Value::Double(d) => {
            // 0.0 and -0.0 are equal.
            let d = if *d == 0.0 { 0.0f64 } else { *d };
            out.extend_from_slice(&d.to_bits().to_be_bytes());
            Kind::Double
        }
        Value::Bytes(b) => {
            out.extend_from_slice(&(b.len() as u64).to_be_bytes());
            out.extend_from_slice(b);
            Kind::Bytes
        }
        Value::Date(d) => {
            out.extend_from_slice(&d.year.to_be_bytes());
            out.extend_from_slice(&[d.month, d.day, 0, 0, 0, 0, 0, 0, 0]);
            Kind::Time
        }
        Value::DateTime(t) => {
            out.extend_from_slice(&t.date.year.to_be_bytes());
            out.extend_from_slice(&[t.date.month, t.date.day, t.hour, t.minute, t.second]);
            out.extend_from_slice(&t.micro.to_be_bytes());
            Kind::Time
        }
        Value::Null | Value::Decimal(_) => return None,
    })
}

const NONE: u32 = u32::MAX;

/// The right side of a hash join: its rows (the right side's columns
/// only) chained by key.
pub(crate) struct JoinTable {
    keys: KeySet,
    /// Per key ordinal, its first and last rows; rows chain through
    /// `next` in the order they were read, as a nested loop meets them.
    first: Vec<u32>,
    last: Vec<u32>,
    next: Vec<u32>,
    rows: Vec<Vec<Value>>,
    /// Per key column, the kind of every value hashed so far.
    kinds: Vec<Option<Kind>>,
    /// A key was not hashable or kinds mixed: every probe sees every row.
    scan_all: bool,
    /// Columns of the right side (for a LEFT JOIN's NULL row).
    width: usize,
    /// What it holds, for the statement's memory accounting.
    pub bytes: usize,
}

impl JoinTable {
    fn new(columns: usize, width: usize) -> JoinTable {
        JoinTable {
            width,
            keys: KeySet::default(),
            first: Vec::new(),
            last: Vec::new(),
            next: Vec::new(),
            rows: Vec::new(),
            kinds: vec![None; columns],
            scan_all: false,
            bytes: 0,
        }
    }

    /// Adds a row with its key values; a row with a NULL key can never
    /// satisfy `=` and is dropped.
    fn insert(&mut self, key: &[Value], row: Vec<Value>) {
        debug_assert_eq!(key.len(), self.kinds.len(), "one value per key column");
        if key.iter().any(Value::is_null) {
            return;
        }
        let at = self.rows.len() as u32;
        self.bytes += row_bytes(&row) + 8;
        self.rows.push(row);
        self.next.push(NONE);
        let mut hashable = !self.scan_all;
        let (ordinal, grown) = self.keys.insert_with(|buf| {
            for (v, kind) in key.iter().zip(self.kinds.iter_mut()) {
                match (encode(v, buf), *kind) {
                    (Some(k), None) => *kind = Some(k),
                    (Some(k), Some(had)) if k == had => {}
                    _ => hashable = false,
                }
            }
        });
        self.bytes += grown.unwrap_or(0);
        self.scan_all |= !hashable;
        if ordinal == self.first.len() {
            self.first.push(at);
            self.last.push(at);
        } else {
            self.next[self.last[ordinal] as usize] = at;
            self.last[ordinal] = at;
        }
    }

    /// The rows that may match a left row with key values `probe`.
    fn candidates(&self, probe: &[Value], buf: &mut Vec<u8>) -> Candidates<'_> {
        if self.rows.is_empty() || probe.iter().any(Value::is_null) {
            return Candidates::Chain(self, NONE);
        }
        if self.scan_all {
            return Candidates::All(0..self.rows.len());
        }
        buf.clear();
        for (v, kind) in probe.iter().zip(&self.kinds) {
            if encode(v, buf) != *kind {
                // Compared across kinds (a string with a number): by rule.
                return Candidates::All(0..self.rows.len());
            }
        }
        let head = self.keys.find(buf).map_or(NONE, |o| self.first[o]);
        Candidates::Chain(self, head)
    }
}

enum Candidates<'t> {
    Chain(&'t JoinTable, u32),
    All(std::ops::Range<usize>),
}

impl Iterator for Candidates<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        match self {
            Candidates::All(r) => r.next(),
            Candidates::Chain(t, at) => {
                let i = *at;
                if i == NONE {
                    return None;
                }
                *at = t.next[i as usize];
                Some(i as usize)
            }
        }
    }
}

impl Exec<'_> {
    /// The hash table of a join's right side, built once per statement
    /// when the build reads nothing of an enclosing row; None when it
    /// outgrows what the statement may still hold.
    pub(super) fn join_table(
        &mut self,
        right: &Source,
        h: &HashJoin,
    ) -> Result<Option<Arc<JoinTable>>> {
        let key = h as *const HashJoin as usize;
        if let Some(t) = self.join_tables.get(&key) {
            return Ok(Some(t.clone()));
        }
        let room = self.temp_room();
        let built = match right {
            Source::Table(scan) => self.build_from_table(scan, h, room)?,
            Source::Derived { plan, offset, .. } => {
                let rows = self.materialize(plan)?;
                let width = plan.columns.len();
                self.build_from_rows(&rows, (*offset, width), h, room)?
            }
            _ => None,
        };
        let Some(table) = built else {
            return Ok(None);
        };
        self.charge_temp(table.bytes)?;
        let table = Arc::new(table);
        if h.reusable {
            self.join_tables.insert(key, table.clone());
        }
        Ok(Some(table))
    }

    fn build_from_table(
        &mut self,
        scan: &TableScan,
        h: &HashJoin,
        room: usize,
    ) -> Result<Option<JoinTable>> {
        // Only the conditions on the right side alone apply while building.
        let mut build = scan.clone();
        build.filter = h.build_filter.clone();
        let nulls = vec![Value::Null; scan.offset];
        let mut table = JoinTable::new(h.build.len(), scan.def.columns.len());
        let mut key = Vec::with_capacity(h.build.len());
        let mut fits = true;
        self.table_rows(&build, &nulls, None, None, &mut |env, _, row| {
            let values = row.values();
            key.clear();
            for e in &h.build {
                key.push(eval(e, values, env).map_err(EngineError::Sql)?);
            }
            table.insert(&key, values[scan.offset..].to_vec());
            fits = table.bytes <= room;
            Ok(fits)
        })?;
        Ok(fits.then_some(table))
    }

    fn build_from_rows(
        &mut self,
        rows: &[Vec<Value>],
        (offset, width): (usize, usize),
        h: &HashJoin,
        room: usize,
    ) -> Result<Option<JoinTable>> {
        let mut table = JoinTable::new(h.build.len(), width);
        let (mut key, mut ticks) = (Vec::with_capacity(h.build.len()), 0u32);
        let mut combined = vec![Value::Null; offset];
        for r in rows {
            self.ctx
                .interrupt
                .tick(&mut ticks)
                .map_err(EngineError::Sql)?;
            combined.truncate(offset);
            combined.extend_from_slice(r);
            if !self.truth(&h.build_filter, &combined)? {
                continue;
            }
            key.clear();
            for e in &h.build {
                key.push(self.eval(e, &combined)?);
            }
            table.insert(&key, r.clone());
            if table.bytes > room {
                return Ok(None);
            }
        }
        Ok(Some(table))
    }

    /// One left row's matches by looking them up in the hash table (a
    /// LEFT JOIN's NULL row when there are none); only the first with
    /// `first`.
    pub(super) fn probe(
        &mut self,
        l: Vec<Value>,
        right: &Source,
        kind: JoinKind,
        on: &Option<BExpr>,
        (h, table): (&HashJoin, &JoinTable),
        first: bool,
    ) -> Result<Vec<Vec<Value>>> {
        let own = match right {
            Source::Table(scan) => scan.filter.as_ref(),
            _ => None,
        };
        let mut probe = Vec::with_capacity(h.probe.len());
        for e in &h.probe {
            probe.push(self.eval(e, &l)?);
        }
        let mut matched = Vec::new();
        for i in table.candidates(&probe, &mut Vec::new()) {
            let mut row = Vec::with_capacity(l.len() + table.rows[i].len());
            row.extend_from_slice(&l);
            row.extend_from_slice(&table.rows[i]);
            let own = match own {
                Some(f) => self.eval(f, &row)?.truth() == Some(true),
                None => true,
            };
            if own && self.truth(on, &row)? {
                matched.push(row);
                if first {
                    break; // a "Not exists" join needs no other match
                }
            }
        }
        if matched.is_empty() && kind == JoinKind::Left {
            let mut row = l;
            row.resize(row.len() + table.width, Value::Null);
            matched.push(row);
        }
        Ok(matched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(Value, i64)]) -> JoinTable {
        let mut t = JoinTable::new(1, 1);
        for (k, id) in rows {
            t.insert(std::slice::from_ref(k), vec![Value::Int(*id)]);
        }
        t
    }

    fn ids(t: &JoinTable, probe: Value) -> Vec<usize> {
        t.candidates(&[probe], &mut Vec::new()).collect()
    }

    #[test]
    fn matches_come_in_the_order_they_were_read() {
        let t = table(&[
            (Value::Int(1), 10),
            (Value::Int(2), 11),
            (Value::UInt(1), 12),
            (Value::Null, 13),
            (Value::Int(1), 14),
        ]);
        assert_eq!(ids(&t, Value::Int(1)), vec![0, 2, 3]);
        assert_eq!(ids(&t, Value::UInt(2)), vec![1]);
        assert!(ids(&t, Value::Int(3)).is_empty());
        assert!(ids(&t, Value::Null).is_empty(), "NULL matches nothing");
        // A string against integers compares as a number: every row.
        assert_eq!(ids(&t, Value::str("1")).len(), 4);
    }

    #[test]
    fn unhashable_or_mixed_keys_make_every_row_a_candidate() {
        let dec = Value::Decimal("1.5".parse().expect("a decimal literal"));
        let t = table(&[(Value::Int(1), 10), (dec, 11)]);
        assert_eq!(ids(&t, Value::Int(7)), vec![0, 1]);
        let mixed = table(&[(Value::Int(1), 10), (Value::str("a"), 11)]);
        assert_eq!(ids(&mixed, Value::Int(1)), vec![0, 1]);
        let dates = table(&[(Value::str("x"), 1)]);
        assert_eq!(ids(&dates, Value::str("x")), vec![0]);
        assert!(ids(&dates, Value::str("X")).is_empty(), "exact bytes");
    }
}
