//! Running keyed subqueries (plan/semijoin.rs): per row at first, once per
//! distinct key (the result of a run is kept by the enclosing row's key
//! values: the subquery reads nothing else of that row); once the runs
//! reach the plan's threshold, the decorrelated subquery's rows are
//! produced once, split by key into a hash table, and each key's rows are
//! finished into its result the first time it is asked for.
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

/// Where a keyed subquery stands in the statement.
#[derive(Default)]
pub(super) struct State {
    /// Runs per row so far.
    runs: u64,
    /// Results of runs per row, by the enclosing row's key values.
    memo: KeySet,
    results: Vec<Rows>,
    /// None: not tried yet; Some(None): it could not be made.
    build: Option<Option<Box<Build>>>,
    /// What the memo and the build hold (charged as temporary tables).
    bytes: usize,
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

/// What a keyed subquery gives an enclosing row.
enum Answer {
    Rows(Rows),
    /// Only whether it gives any row (EXISTS over a plain subquery).
    Empty(bool),
}

/// The memo key of the enclosing row's key values (NULL included: a run
/// with a NULL key gives what it gives, the same every time); None when
/// one does not hash.
fn memo_key(values: &[Value]) -> Option<Vec<u8>> {
    let mut key = Vec::new();
    for v in values {
        match v {
            Value::Null => key.push(2),
            v => {
                put_key(v, &mut key)?;
            }
        }
    }
    Some(key)
}

/// Where the key values lead in the build.
fn probe(build: &Build, values: &[Value]) -> Probe {
    let mut key = Vec::new();
    for (v, kind) in values.iter().zip(&build.kinds) {
        if v.is_null() {
            return Probe::Nothing;
        }
        match (put_key(v, &mut key), kind) {
            // No inner value to equal: no row matches.
            (_, None) => return Probe::Nothing,
            (Some(k), Some(had)) if k == *had => {}
            _ => return Probe::PerRow,
        }
    }
    Probe::Key(key)
}

impl Exec<'_> {
    /// The rows of subquery `q` for the enclosing row `row`; None where it
    /// is not keyed. Errors as `Env` reports them.
    pub(super) fn keyed_env(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> std::result::Result<Option<Rows>, Error> {
        let answer = self.keyed_answer(q, row, true);
        match self.env_result(answer)? {
            Some(Answer::Rows(rows)) => Ok(Some(rows)),
            Some(Answer::Empty(_)) | None => Ok(None),
        }
    }

    /// Whether subquery `q` gives no row for `row` (EXISTS); None where it
    /// is not keyed.
    pub(super) fn keyed_is_empty(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> std::result::Result<Option<bool>, Error> {
        let answer = self.keyed_answer(q, row, false);
        Ok(self.env_result(answer)?.map(|a| match a {
            Answer::Rows(rows) => rows.is_empty(),
            Answer::Empty(empty) => empty,
        }))
    }

    /// An executor result as `Env` reports it: a lock wait is kept to
    /// surface after the expression unwinds.
    pub(super) fn env_result<T>(&mut self, r: Result<T>) -> std::result::Result<T, Error> {
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

    /// The keyed answer for `row`: kept from an earlier run with the same
    /// key, from the build, or from a run per row (kept).
    fn keyed_answer(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
        rows: bool,
    ) -> Result<Option<Answer>> {
        let Some(k) = q.keyed.as_deref() else {
            return Ok(None);
        };
        let id = q.id();
        self.outer.push(row.to_vec());
        let values: Result<Vec<Value>> = k.outer.iter().map(|e| self.eval(e, &[])).collect();
        self.outer.pop();
        let values = values?;
        let memo = memo_key(&values);
        let state = self.keyed.entry(id).or_default();
        if let Some(i) = memo.as_ref().and_then(|m| state.memo.find(m)) {
            return Ok(Some(Answer::Rows(state.results[i].clone())));
        }
        // A run for EXISTS stops at its first row: more runs pay off.
        let threshold = match rows {
            true => k.threshold,
            false => k.first_row_threshold,
        };
        if state.build.is_none() && state.runs >= threshold {
            let built = self.build_keyed(k, id)?.map(Box::new);
            self.keyed.entry(id).or_default().build = Some(built);
        }
        let found = match self.keyed.get(&id).and_then(|s| s.build.as_ref()) {
            Some(Some(build)) => probe(build, &values),
            _ => Probe::PerRow,
        };
        let key = match found {
            Probe::PerRow => {
                self.exists_only = !rows;
                let answer = self.keyed_per_row(q, id, row, memo);
                self.exists_only = false;
                return answer.map(Some);
            }
            Probe::Nothing => None,
            Probe::Key(key) => Some(key),
        };
        if k.plain && !rows {
            return Ok(Some(Answer::Empty(self.keyed_ordinal(id, key).is_none())));
        }
        self.keyed_result(k, id, key).map(|r| Some(Answer::Rows(r)))
    }

    /// Runs subquery `q` for `row` and keeps the result under `memo`
    /// where it fits.
    fn keyed_per_row(
        &mut self,
        q: &SubqueryRef,
        id: usize,
        row: &[Value],
        memo: Option<Vec<u8>>,
    ) -> Result<Answer> {
        let rows = Arc::new(self.run_with_outer(q, row)?);
        // The result, its key and the set's bookkeeping for it.
        let bytes = rows.iter().map(|r| row_bytes(r)).sum::<usize>()
            + memo.as_ref().map_or(0, |m| m.len() + 64);
        let room = self.keyed_room();
        let state = self.keyed.entry(id).or_default();
        state.runs += 1;
        if let Some(m) = memo.filter(|_| bytes <= room) {
            if let (_, Some(_)) = state.memo.insert_with(|b| b.extend_from_slice(&m)) {
                state.results.push(rows.clone());
                state.bytes += bytes;
                self.charge_temp(bytes)?;
            }
        }
        Ok(Answer::Rows(rows))
    }

    /// What keyed subqueries may still keep: together at most half of the
    /// statement's temporary-table memory, the rest left to its own work
    /// (a GROUP BY met after them, say).
    fn keyed_room(&self) -> usize {
        let used: usize = self.keyed.values().map(|s| s.bytes).sum();
        let share = (self.ctx.memory.temp_table / 2).saturating_sub(used);
        self.temp_room().min(share)
    }

    /// Runs subquery `q` with `row` as the innermost enclosing row; what
    /// it buffers is freed when it returns.
    pub(super) fn run_with_outer(
        &mut self,
        q: &SubqueryRef,
        row: &[Value],
    ) -> Result<Vec<Vec<Value>>> {
        self.outer.push(row.to_vec());
        let before = self.memory.statement;
        let result = self.query(q);
        self.memory.statement = before;
        self.outer.pop();
        result
    }

    /// The ordinal of `key` in the build of keyed subquery `id`.
    fn keyed_ordinal(&self, id: usize, key: Option<Vec<u8>>) -> Option<usize> {
        match self.keyed.get(&id).and_then(|s| s.build.as_ref()) {
            Some(Some(build)) => key.and_then(|key| build.keys.find(&key)),
            _ => None,
        }
    }

    /// Produces the decorrelated rows once and splits them by key; None
    /// when they do not hash or do not fit.
    fn build_keyed(&mut self, k: &Keyed, id: usize) -> Result<Option<Build>> {
        let mut sink = BuildSink {
            inner: &k.inner,
            blind: k.blind,
            build: Build {
                keys: KeySet::default(),
                parts: Vec::new(),
                kinds: vec![None; k.inner.len()],
                empty: None,
            },
            room: self.keyed_room(),
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
        self.keyed.entry(id).or_default().bytes += sink.bytes;
        Ok(Some(sink.build))
    }

    /// The subquery's result for `key` (None: a key no row has), finished
    /// over its rows the first time it is asked for.
    fn keyed_result(&mut self, k: &Keyed, id: usize, key: Option<Vec<u8>>) -> Result<Rows> {
        let ordinal = self.keyed_ordinal(id, key);
        let Some(Some(build)) = self.keyed.get(&id).and_then(|s| s.build.as_ref()) else {
            return Err(EngineError::Sql(Error::internal(
                "keyed subquery not built",
            )));
        };
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
        if bytes <= self.keyed_room() {
            self.charge_temp(bytes)?;
            self.keyed.entry(id).or_default().bytes += bytes;
            if let Some(Some(build)) = self.keyed.get_mut(&id).and_then(|s| s.build.as_mut()) {
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
