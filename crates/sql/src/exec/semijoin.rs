//! Running keyed subqueries (plan/semijoin.rs): per row at first; once
//! the runs reach the plan's threshold, the decorrelated subquery's rows
//! are produced once, split by key into a hash table, and each enclosing
//! row finishes the subquery over its key's rows. A key's result is kept,
//! so each distinct key is finished once per statement.
//!
//! Keys hash only where hashing agrees with SQL's `=`: integers with
//! integers (signed and unsigned meet) and strings with strings, byte-wise
//! (a case-insensitive comparison folds both sides before they get here).
//! A NULL key matches nothing. Inner keys of another kind, or of mixed
//! kinds, or a build past the statement's temporary-table memory, leave the
//! subquery running per row; so does a probe of another kind than the
//! inner keys.

use super::{row_bytes, Exec, Result, RowSink, ScanEnv, SourceRow};
use crate::exec::keyset::KeySet;
use crate::expr::{eval, BExpr, SubqueryRef};
use crate::plan::semijoin::Keyed;
use lockstep_engine::Error as EngineError;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::sync::Arc;

type Rows = Arc<Vec<Vec<Value>>>;

/// A keyed plan, its id in the statement and the key of an enclosing row
/// (None: a key no row has).
type Lookup<'q> = (&'q Keyed, usize, Option<Vec<u8>>);

/// Where a keyed subquery stands in the statement.
pub(super) enum State {
    /// Runs per row so far.
    PerRow(u64),
    Built(Box<Build>),
    /// No build could be made: per row for the rest of the statement.
    Declined,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Bytes,
}

/// One key's rows, then the subquery's result over them.
enum Part {
    Rows(Rows),
    Done(Rows),
}

pub(super) struct Build {
    keys: KeySet,
    /// Per key ordinal.
    parts: Vec<Part>,
    /// Per key column: the kind of its non-NULL values (None: none met).
    kinds: Vec<Option<Kind>>,
    /// The result over no rows, for keys nothing matches.
    empty: Option<Rows>,
}

/// Appends the hash key of `v`; None for a kind that does not hash.
fn put_key(v: &Value, out: &mut Vec<u8>) -> Option<Kind> {
    let int = |out: &mut Vec<u8>, i: i128| {
        out.push(0);
        out.extend_from_slice(&i.to_be_bytes());
        Some(Kind::Int)
    };
    match v {
        Value::Int(i) => int(out, *i as i128),
        Value::UInt(u) => int(out, *u as i128),
        Value::Bytes(b) => {
            out.push(1);
            out.extend_from_slice(&(b.len() as u64).to_be_bytes());
            out.extend_from_slice(b);
            Some(Kind::Bytes)
        }
        _ => None,
    }
}

/// Splits the produced rows by key, within `room` bytes.
struct BuildSink<'k> {
    inner: &'k [BExpr],
    /// Keep an empty row for each row (the subquery reads none of it).
    blind: bool,
    build: Build,
    room: usize,
    bytes: usize,
    failed: bool,
}

impl RowSink for BuildSink<'_> {
    fn push(&mut self, env: &mut ScanEnv, row: SourceRow) -> Result<bool> {
        let mut key = Vec::new();
        for (e, kind) in self.inner.iter().zip(self.build.kinds.iter_mut()) {
            let v = eval(e, row.values(), env).map_err(EngineError::Sql)?;
            if v.is_null() {
                // `NULL = x` is never true: the row is in no key's set.
                return Ok(true);
            }
            match (put_key(&v, &mut key), *kind) {
                (Some(k), None) => *kind = Some(k),
                (Some(k), Some(had)) if k == had => {}
                _ => {
                    self.failed = true;
                    return Ok(false);
                }
            }
        }
        let row = match self.blind {
            true => Vec::new(),
            false => row.into_owned(),
        };
        self.bytes += row_bytes(&row) + key.len() + 32;
        if self.bytes > self.room {
            self.failed = true;
            return Ok(false);
        }
        let (i, grown) = self.build.keys.insert_with(|b| b.extend_from_slice(&key));
        if grown.is_some() {
            self.build.parts.push(Part::Rows(Arc::new(Vec::new())));
        }
        if let Part::Rows(rows) = &mut self.build.parts[i] {
            Arc::get_mut(rows)
                .expect("a part being built is not shared")
                .push(row);
        }
        Ok(true)
    }
}

/// The probe of an enclosing row.
enum Probe {
    /// A NULL or a kind no inner key has: matches no row.
    Nothing,
    Key(Vec<u8>),
    /// A kind hashing cannot compare: run per row.
    PerRow,
}

impl Exec<'_> {
    /// The rows of subquery `q` for the enclosing row `row` from its keyed
    /// build; None where it runs per row. Errors as `Env` reports them.
    pub(super) fn keyed_env(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> std::result::Result<Option<Rows>, Error> {
        let found = self.keyed_probe(q, row).and_then(|probe| match probe {
            Some((k, id, key)) => self.keyed_result(k, id, key).map(Some),
            None => Ok(None),
        });
        self.env_result(found)
    }

    /// Whether subquery `q` gives no row for `row` (EXISTS), from its keyed
    /// build; None where it runs per row.
    pub(super) fn keyed_is_empty(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> std::result::Result<Option<bool>, Error> {
        let found = self.keyed_probe(q, row).and_then(|probe| match probe {
            // Each row of the key gives a row: only whether it has any counts.
            Some((k, id, key)) if k.plain => Ok(Some(self.keyed_ordinal(id, key).is_none())),
            Some((k, id, key)) => Ok(Some(self.keyed_result(k, id, key)?.is_empty())),
            None => Ok(None),
        });
        self.env_result(found)
    }

    /// Counts a run of keyed subquery `q` per row (toward its threshold).
    pub(super) fn keyed_ran_per_row(&mut self, q: &SubqueryRef) {
        if q.keyed.is_some() {
            let id = Arc::as_ptr(q) as usize;
            if let State::PerRow(n) = self.keyed.entry(id).or_insert(State::PerRow(0)) {
                *n += 1;
            }
        }
    }

    fn env_result<T>(&mut self, r: Result<T>) -> std::result::Result<T, Error> {
        match r {
            Ok(v) => Ok(v),
            Err(EngineError::Sql(e)) => Err(e),
            Err(wait) => {
                // Surface the lock wait after the expression unwinds.
                self.pending = Some(wait);
                Err(Error::new(Code::LockWaitTimeout, "lock wait pending"))
            }
        }
    }

    /// The keyed plan of `q`, its id and the key of `row` (None: a key no
    /// row has), building the hash table once the runs per row reached
    /// the threshold; None while (or where) it runs per row.
    fn keyed_probe<'q>(&mut self, q: &'q SubqueryRef, row: &[Value]) -> Result<Option<Lookup<'q>>> {
        let Some(k) = q.keyed.as_deref() else {
            return Ok(None);
        };
        let id = Arc::as_ptr(q) as usize;
        match self.keyed.get(&id).unwrap_or(&State::PerRow(0)) {
            State::Declined => return Ok(None),
            State::PerRow(n) if *n < k.threshold => return Ok(None),
            State::PerRow(_) => {
                let state = match self.build_keyed(k)? {
                    Some(b) => State::Built(Box::new(b)),
                    None => State::Declined,
                };
                let declined = matches!(state, State::Declined);
                self.keyed.insert(id, state);
                if declined {
                    return Ok(None);
                }
            }
            State::Built(_) => {}
        }
        Ok(match self.probe(k, id, row)? {
            Probe::PerRow => None,
            Probe::Nothing => Some((k, id, None)),
            Probe::Key(key) => Some((k, id, Some(key))),
        })
    }

    /// The ordinal of `key` in the build of keyed subquery `id`.
    fn keyed_ordinal(&self, id: usize, key: Option<Vec<u8>>) -> Option<usize> {
        match self.keyed.get(&id) {
            Some(State::Built(build)) => key.and_then(|key| build.keys.find(&key)),
            _ => None,
        }
    }

    /// Produces the decorrelated rows once and splits them by key; None
    /// when they do not hash or do not fit.
    fn build_keyed(&mut self, k: &Keyed) -> Result<Option<Build>> {
        let mut sink = BuildSink {
            inner: &k.inner,
            blind: k.blind,
            build: Build {
                keys: KeySet::default(),
                parts: Vec::new(),
                kinds: vec![None; k.inner.len()],
                empty: None,
            },
            room: self.temp_room(),
            bytes: 0,
            failed: false,
        };
        let (statement, temp) = (self.memory.statement, self.memory.temp_table);
        let produced = self.produce(&k.source, &[], &k.filter, None, &mut sink);
        self.memory.statement = statement;
        self.memory.temp_table = temp;
        match produced {
            // Reading the rows without the keys' narrowing may need more
            // memory than the statement has: keep running per row.
            Err(EngineError::Sql(e))
                if matches!(e.code, Code::OutOfResources | Code::TableFull) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
            Ok(_) if sink.failed => return Ok(None),
            Ok(_) => {}
        }
        self.charge_temp(sink.bytes)?;
        Ok(Some(sink.build))
    }

    /// The key of the enclosing row `row`.
    fn probe(&mut self, k: &Keyed, id: usize, row: &[Value]) -> Result<Probe> {
        self.outer.push(row.to_vec());
        let values: Result<Vec<Value>> = k.outer.iter().map(|e| self.eval(e, &[])).collect();
        self.outer.pop();
        let Some(State::Built(build)) = self.keyed.get(&id) else {
            return Ok(Probe::PerRow);
        };
        let mut key = Vec::new();
        for (v, kind) in values?.iter().zip(&build.kinds) {
            if v.is_null() {
                return Ok(Probe::Nothing);
            }
            match (put_key(v, &mut key), kind) {
                // No inner value to equal: no row matches.
                (_, None) => return Ok(Probe::Nothing),
                (Some(k), Some(had)) if k == *had => {}
                _ => return Ok(Probe::PerRow),
            }
        }
        Ok(Probe::Key(key))
    }

    /// The subquery's result for `key` (None: a key no row has), finished
    /// over its rows the first time it is asked for.
    fn keyed_result(&mut self, k: &Keyed, id: usize, key: Option<Vec<u8>>) -> Result<Rows> {
        let Some(State::Built(build)) = self.keyed.get(&id) else {
            return Err(EngineError::Sql(Error::internal(
                "keyed subquery not built",
            )));
        };
        let ordinal = key.and_then(|key| build.keys.find(&key));
        let rows = match ordinal.map(|i| &build.parts[i]) {
            Some(Part::Done(result)) => return Ok(result.clone()),
            Some(Part::Rows(rows)) => rows.clone(),
            None => match &build.empty {
                Some(result) => return Ok(result.clone()),
                None => Arc::new(Vec::new()),
            },
        };
        let result = Arc::new(self.finish_keyed(k, rows)?);
        let bytes: usize = result.iter().map(|r| row_bytes(r)).sum();
        // Kept for the key's next rows where it fits; else finished again.
        if bytes <= self.temp_room() {
            self.charge_temp(bytes)?;
            if let Some(State::Built(build)) = self.keyed.get_mut(&id) {
                match ordinal {
                    Some(i) => build.parts[i] = Part::Done(result.clone()),
                    None => build.empty = Some(result.clone()),
                }
            }
        }
        Ok(result)
    }

    /// Runs the rest of the subquery over one key's rows.
    fn finish_keyed(&mut self, k: &Keyed, rows: Rows) -> Result<Vec<Vec<Value>>> {
        let slot = Arc::as_ptr(&k.rows) as usize;
        self.derived.insert(slot, rows);
        let before = self.memory.statement;
        let result = self.query(&k.finish);
        self.memory.statement = before;
        self.derived.remove(&slot);
        result
    }
}
