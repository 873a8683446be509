//! External sort (MySQL's filesort that spills). An ORDER BY that no index
//! gives buffers projected rows up to `sort_buffer_size`; past it, the full
//! buffer is sorted and written as a run to a temporary file, and the runs
//! are merged k ways at the end (a further pass first while there are more
//! runs than one merge reads at once). Rows come out in the order the
//! in-memory sort gives them: the same comparison (`compare_rows`), and
//! equal keys in arrival order (runs are written in arrival order, and the
//! merge breaks ties by run number).
//!
//! Run files are unlinked as soon as they are created, so they go away
//! with the statement (its end, an error, KILL) and with the process; the
//! server also empties `<datadir>/tmp` at startup. Disk use is bounded by
//! `max_tmp_session_space_usage` (MariaDB's name): past it the statement
//! fails with 1114 ER_RECORD_FILE_FULL, what MySQL 8 reports when its
//! on-disk temporary storage passes its bound (temptable_max_mmap).
//!
//! Rows are written in the stored row format (`lockstep_tables::Row`),
//! projected values followed by the stored sort keys.

use super::{
    compare_rows, row_bytes, sort_rows, Exec, Interrupt, ModifyPlan, ProjectedRow, Result,
    SelectPlan, SortKey,
};
use crate::expr::{BExpr, Func};
use lockstep_engine::Error as EngineError;
use lockstep_tables::Row;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Runs one merge reads at once: bounds open read buffers (and the heap)
/// whatever the number of runs.
pub(super) const FAN_IN: usize = 32;
/// Bytes each run's reader buffers.
const READ_BUFFER: usize = 32 << 10;
/// The directory under the data directory that holds run files.
pub const TMP_DIR: &str = "tmp";

/// Runs written to disk since the process started (tests see whether a
/// statement spilled).
pub static RUNS_WRITTEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Empties `<datadir>/tmp` (run files a crash left behind): at startup,
/// before any statement runs.
pub fn clear_tmp(datadir: &Path) {
    let dir = datadir.join(TMP_DIR);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Per ORDER BY key of `p`: where its value is (projected item, or its
/// place among the stored keys), whether it is folded, descending.
pub(super) fn sort_keys(p: &SelectPlan) -> Vec<(SortKey, bool)> {
    let mut stored = 0;
    p.order
        .iter()
        .zip(&p.order_from)
        .map(|((e, desc), from)| {
            let at = match from {
                Some(j) => SortKey::Projected {
                    item: *j,
                    folded: matches!(e, BExpr::Func(Func::FoldCase, _)),
                },
                None => {
                    stored += 1;
                    SortKey::Stored(stored - 1)
                }
            };
            (at, *desc)
        })
        .collect()
}

impl Exec<'_> {
    /// Where this statement's sorts spill.
    pub(super) fn spill_to(&self) -> SpillTo {
        SpillTo {
            dir: self.engine.config.datadir.join(TMP_DIR),
            disk: self.ctx.memory.disk as u64,
            connection_id: self.ctx.connection_id,
            interrupt: self.ctx.interrupt.clone(),
        }
    }

    /// A sort for the rows of `p` (no keys where an index gives the
    /// order: the rows only pass through, spilling if many). With LIMIT
    /// and no count of all rows asked, only the first rows are kept.
    pub(super) fn file_sort(&mut self, p: &SelectPlan, counting: bool) -> Result<FileSort> {
        let keep = match counting {
            true => None,
            false => self.limit_count(&p.limit, &p.offset)?,
        };
        let keys = match p.ordered_by_index {
            true => Vec::new(),
            false => sort_keys(p),
        };
        let limit = self.ctx.memory.sort;
        Ok(FileSort::new(
            keys,
            p.projection.len(),
            limit,
            keep,
            self.spill_to(),
        ))
    }

    /// A sort of values by `keys` (value number, descending; compared as
    /// ORDER BY compares values), each with a number saying where it came
    /// from: the numbers come back in sorted order, ties in the order
    /// given, at most `keep` of them. Past sort_buffer_size the keys spill
    /// to disk, so what such a sort holds is the numbers, not the keys.
    fn sort_numbered(
        &mut self,
        keys: &[(usize, bool)],
        width: usize,
        rows: impl Iterator<Item = Result<Vec<Value>>>,
        keep: Option<usize>,
    ) -> Result<Vec<usize>> {
        let at = keys
            .iter()
            .map(|&(item, desc)| {
                let at = SortKey::Projected {
                    item,
                    folded: false,
                };
                (at, desc)
            })
            .collect();
        let limit = self.ctx.memory.sort;
        let mut sort = FileSort::new(at, width + 1, limit, keep, self.spill_to());
        for (n, row) in rows.enumerate() {
            let mut row = row?;
            debug_assert_eq!(row.len(), width);
            row.push(Value::UInt(n as u64));
            let bytes = row_bytes(&row);
            sort.push((row, Vec::new()), bytes)?;
        }
        let mut sorted = sort.finish()?;
        let mut order = Vec::new();
        while let Some((row, _)) = sorted.next()? {
            let n = row.last().and_then(Value::to_i64).unwrap_or(0);
            self.charge(std::mem::size_of::<usize>())?;
            order.push(n as usize);
        }
        Ok(order)
    }

    /// A UNION's rows in the order of its ORDER BY (item, descending).
    pub(super) fn sort_union(
        &mut self,
        rows: Vec<Vec<Value>>,
        order: &[(usize, bool)],
        keep: Option<usize>,
    ) -> Result<Vec<Vec<Value>>> {
        // Only the ordered columns go to the sort; the rows stay.
        let keyed = rows
            .iter()
            .map(|r| Ok(order.iter().map(|(i, _)| r[*i].clone()).collect()));
        let keys: Vec<(usize, bool)> = order
            .iter()
            .enumerate()
            .map(|(k, (_, d))| (k, *d))
            .collect();
        let sorted = self.sort_numbered(&keys, order.len(), keyed, keep)?;
        Ok(permute(rows, sorted))
    }

    /// The rows an UPDATE or DELETE acts on, in its ORDER BY's order.
    pub(super) fn sort_targets(
        &mut self,
        p: &ModifyPlan,
        rows: Vec<Target>,
    ) -> Result<Vec<Target>> {
        let mut keyed = Vec::with_capacity(rows.len());
        for (_, row) in &rows {
            let mut k = Vec::with_capacity(p.order.len());
            for (e, _) in &p.order {
                k.push(self.eval(e, row)?);
            }
            keyed.push(k);
        }
        let keys: Vec<(usize, bool)> = p
            .order
            .iter()
            .enumerate()
            .map(|(k, (_, d))| (k, *d))
            .collect();
        let keep = match &p.limit {
            Some(l) => Some(super::row_count(&self.eval(l, &[])?)),
            None => None,
        };
        let sorted = self.sort_numbered(&keys, p.order.len(), keyed.into_iter().map(Ok), keep)?;
        Ok(permute(rows, sorted))
    }

    /// The result of `p` from its sort: OFFSET and LIMIT applied, each
    /// row charged to the statement as it is held.
    pub(super) fn sorted_rows(
        &mut self,
        p: &SelectPlan,
        sort: FileSort,
        counting: bool,
    ) -> Result<Vec<Vec<Value>>> {
        if counting {
            self.found_total = Some(sort.total);
        }
        let (skip, wanted) = self.offset_and_limit(p)?;
        let mut sorted = sort.finish()?;
        for _ in 0..skip {
            if sorted.next()?.is_none() {
                break;
            }
        }
        let mut rows = Vec::new();
        while wanted.is_none_or(|w| rows.len() < w) {
            let Some((row, _)) = sorted.next()? else {
                break;
            };
            self.charge(row_bytes(&row))?;
            rows.push(row);
        }
        Ok(rows)
    }
}

/// A row an UPDATE or DELETE acts on: its primary key and values.
pub(super) type Target = (Vec<u8>, Vec<Value>);

/// `items` in the order `order` numbers them (a permutation, or its first
/// part).
fn permute<T>(items: Vec<T>, order: Vec<usize>) -> Vec<T> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|n| slots.get_mut(n).and_then(Option::take))
        .collect()
}

/// Where and how much a sort may spill.
#[derive(Clone)]
pub(super) struct SpillTo {
    /// The directory for run files.
    pub dir: PathBuf,
    /// Bytes the statement may write (max_tmp_session_space_usage).
    pub disk: u64,
    pub connection_id: u64,
    pub interrupt: Interrupt,
}

/// A temporary file of runs, unlinked once created: it lives as long as
/// its handle.
struct RunFile {
    file: File,
    /// Bytes written so far.
    len: u64,
}

impl RunFile {
    fn create(to: &SpillTo) -> Result<RunFile> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = match std::fs::create_dir_all(&to.dir) {
            Ok(()) => to.dir.clone(),
            Err(_) => std::env::temp_dir(),
        };
        let path = dir.join(format!(
            "#sort{}_{}_{n}",
            std::process::id(),
            to.connection_id
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error(&path, e))?;
        let _ = std::fs::remove_file(&path);
        Ok(RunFile { file, len: 0 })
    }
}

fn io_error(path: &Path, e: std::io::Error) -> EngineError {
    EngineError::Sql(Error::new(
        Code::ErrorOnWrite,
        format!(
            "Error writing file '{}' (errno: {} - {e})",
            path.display(),
            e.raw_os_error().unwrap_or(0)
        ),
    ))
}

/// One sorted run: a byte range of a run file.
#[derive(Clone, Copy)]
struct Run {
    start: u64,
    end: u64,
}

/// Writes runs into one run file, counting the statement's disk use.
struct RunWriter<'f> {
    out: BufWriter<&'f File>,
    at: u64,
    used: &'f mut u64,
    to: &'f SpillTo,
    scratch: Vec<Value>,
}

impl RunWriter<'_> {
    /// Appends one row: a length, then the row image of `proj ++ keys`.
    fn write(&mut self, (proj, keys): &ProjectedRow) -> Result<()> {
        self.scratch.clear();
        self.scratch.extend(proj.iter().cloned());
        self.scratch.extend(keys.iter().cloned());
        let row = Row::new(&self.scratch);
        let image = row.as_bytes();
        let n = 4 + image.len() as u64;
        *self.used += n;
        if *self.used > self.to.disk {
            return Err(disk_full(self.to.connection_id));
        }
        let len = u32::try_from(image.len()).map_err(|_| disk_full(self.to.connection_id))?;
        let write = |out: &mut BufWriter<&File>| {
            out.write_all(&len.to_le_bytes())?;
            out.write_all(image)
        };
        write(&mut self.out).map_err(|e| io_error(&self.to.dir, e))?;
        self.at += n;
        Ok(())
    }

    fn finish(self) -> Result<u64> {
        self.out
            .into_inner()
            .map_err(|e| io_error(&self.to.dir, e.into_error()))?;
        Ok(self.at)
    }
}

/// 1114 past max_tmp_session_space_usage.
fn disk_full(connection_id: u64) -> EngineError {
    EngineError::Sql(Error::new(
        Code::TableFull,
        format!("The table '/tmp/#sql{connection_id}_sort' is full"),
    ))
}

/// Rows fed in any order, given back sorted; spills past its buffer.
pub(super) struct FileSort {
    keys: Vec<(SortKey, bool)>,
    buffer: Vec<ProjectedRow>,
    bytes: usize,
    /// sort_buffer_size.
    limit: usize,
    /// ORDER BY ... LIMIT: only the first `keep` rows are wanted, so the
    /// buffer is cut back to them instead of spilling.
    keep: Option<usize>,
    /// How many projected values a row has (the rest are stored keys).
    width: usize,
    to: SpillTo,
    file: Option<RunFile>,
    runs: Vec<Run>,
    /// Bytes written to run files (all passes).
    used: u64,
    /// Rows fed (SQL_CALC_FOUND_ROWS).
    pub total: usize,
}

impl FileSort {
    pub fn new(
        keys: Vec<(SortKey, bool)>,
        width: usize,
        limit: usize,
        keep: Option<usize>,
        to: SpillTo,
    ) -> Self {
        FileSort {
            keys,
            buffer: Vec::new(),
            bytes: 0,
            limit,
            keep,
            width,
            to,
            file: None,
            runs: Vec::new(),
            used: 0,
            total: 0,
        }
    }

    /// Whether any run went to disk.
    #[cfg(test)]
    pub fn spilled(&self) -> bool {
        !self.runs.is_empty()
    }

    /// Adds a row of `bytes` (as exec counts them).
    pub fn push(&mut self, row: ProjectedRow, bytes: usize) -> Result<()> {
        self.total += 1;
        self.bytes += bytes;
        self.buffer.push(row);
        if let Some(keep) = self.keep {
            // Top-N: sorting and cutting at 2N keeps the work n log N.
            if self.buffer.len() >= keep.saturating_mul(2).max(1024) || self.bytes > self.limit {
                self.cut(keep);
            }
        }
        if self.bytes > self.limit && self.buffer.len() > 1 {
            self.spill()?;
        }
        Ok(())
    }

    /// Sorts the buffer and keeps its first `keep` rows.
    fn cut(&mut self, keep: usize) {
        let mut sorted = sort_rows(std::mem::take(&mut self.buffer), &self.keys, false).0;
        sorted.truncate(keep);
        self.bytes = sorted.iter().map(projected_bytes).sum();
        self.buffer = sorted;
    }

    /// Sorts the buffer and writes it as a run.
    fn spill(&mut self) -> Result<()> {
        let sorted = sort_rows(std::mem::take(&mut self.buffer), &self.keys, false).0;
        self.bytes = 0;
        if self.file.is_none() {
            self.file = Some(RunFile::create(&self.to)?);
        }
        let file = self.file.as_mut().expect("created above");
        let start = file.len;
        let mut w = RunWriter {
            out: BufWriter::with_capacity(READ_BUFFER, &file.file),
            at: start,
            used: &mut self.used,
            to: &self.to,
            scratch: Vec::new(),
        };
        let mut tick = 0;
        for row in &sorted {
            self.to
                .interrupt
                .tick(&mut tick)
                .map_err(EngineError::Sql)?;
            w.write(row)?;
        }
        file.len = w.finish()?;
        self.runs.push(Run {
            start,
            end: file.len,
        });
        RUNS_WRITTEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// The rows in order: from memory if nothing spilled, else merged.
    pub fn finish(mut self) -> Result<Sorted> {
        if self.runs.is_empty() {
            let mut rows = sort_rows(std::mem::take(&mut self.buffer), &self.keys, false).0;
            if let Some(keep) = self.keep {
                rows.truncate(keep);
            }
            return Ok(Sorted::Memory(rows.into_iter()));
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        let mut file = self.file.take().expect("runs live in the run file");
        let mut runs = std::mem::take(&mut self.runs);
        // Passes that merge FAN_IN runs into one, until one merge is left.
        while runs.len() > FAN_IN {
            let next = RunFile::create(&self.to)?;
            let mut merged = Vec::new();
            let mut at = 0;
            for group in runs.chunks(FAN_IN) {
                let mut merge = Merge::new(&self, &file, group)?;
                let mut w = RunWriter {
                    out: BufWriter::with_capacity(READ_BUFFER, &next.file),
                    at,
                    used: &mut self.used,
                    to: &self.to,
                    scratch: Vec::new(),
                };
                while let Some(row) = merge.next()? {
                    w.write(&row)?;
                }
                let end = w.finish()?;
                merged.push(Run { start: at, end });
                at = end;
            }
            file = RunFile { len: at, ..next };
            runs = merged;
        }
        let merge = Merge::new(&self, &file, &runs)?;
        Ok(Sorted::Merge(Box::new(Final { merge, _file: file })))
    }
}

/// Bytes of a projected row, as exec counts them.
fn projected_bytes((proj, keys): &ProjectedRow) -> usize {
    row_bytes(proj) + row_bytes(keys)
}

/// Sorted rows, from memory or from a merge of runs.
pub(super) enum Sorted {
    Memory(std::vec::IntoIter<ProjectedRow>),
    Merge(Box<Final>),
}

impl Sorted {
    pub fn next(&mut self) -> Result<Option<ProjectedRow>> {
        match self {
            Sorted::Memory(rows) => Ok(rows.next()),
            Sorted::Merge(m) => m.merge.next(),
        }
    }
}

impl std::fmt::Debug for Sorted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sorted::Memory(rows) => write!(f, "Sorted::Memory({} rows)", rows.len()),
            Sorted::Merge(m) => write!(f, "Sorted::Merge({} runs)", m.merge.heads.len()),
        }
    }
}

/// The last merge, with the file its runs are in.
pub(super) struct Final {
    merge: Merge,
    _file: RunFile,
}

/// Reads one run sequentially through a buffer.
struct RunReader {
    file: File,
    at: u64,
    end: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl RunReader {
    /// The next row of the run, split into projection and keys.
    fn next(&mut self, width: usize) -> Result<Option<ProjectedRow>> {
        let Some(len) = self.take(4)? else {
            return Ok(None);
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let image = self.take(len)?.ok_or_else(damaged)?;
        let row = Row::from_bytes(image).ok_or_else(damaged)?;
        let mut proj = row.to_values();
        let keys = proj.split_off(width.min(proj.len()));
        Ok(Some((proj, keys)))
    }

    /// The next `n` bytes of the run (None at its end).
    fn take(&mut self, n: usize) -> Result<Option<&[u8]>> {
        if self.buf.len() - self.pos < n {
            if self.at >= self.end {
                return match self.buf.len() == self.pos {
                    true => Ok(None),
                    false => Err(damaged()),
                };
            }
            self.buf.drain(..self.pos);
            self.pos = 0;
            let want = (n.max(READ_BUFFER) - self.buf.len()) as u64;
            let want = want.min(self.end - self.at) as usize;
            let old = self.buf.len();
            self.buf.resize(old + want, 0);
            self.file
                .read_exact_at(&mut self.buf[old..], self.at)
                .map_err(|_| damaged())?;
            self.at += want as u64;
            if self.buf.len() < n {
                return Err(damaged());
            }
        }
        self.pos += n;
        Ok(Some(&self.buf[self.pos - n..self.pos]))
    }
}

fn damaged() -> EngineError {
    EngineError::Sql(Error::internal("a sort run file could not be read back"))
}

/// A k-way merge of runs: a binary heap of run numbers ordered by each
/// run's head row (ties: the earlier run first, which keeps the sort
/// stable).
struct Merge {
    readers: Vec<RunReader>,
    heads: Vec<Option<ProjectedRow>>,
    heap: Vec<usize>,
    keys: Vec<(SortKey, bool)>,
    width: usize,
    interrupt: Interrupt,
    tick: u32,
}

impl Merge {
    fn new(sort: &FileSort, file: &RunFile, runs: &[Run]) -> Result<Merge> {
        let mut m = Merge {
            readers: Vec::with_capacity(runs.len()),
            heads: Vec::with_capacity(runs.len()),
            heap: Vec::with_capacity(runs.len()),
            keys: sort.keys.clone(),
            width: sort.width,
            interrupt: sort.to.interrupt.clone(),
            tick: 0,
        };
        for run in runs {
            let file = file
                .file
                .try_clone()
                .map_err(|e| io_error(&sort.to.dir, e))?;
            let mut r = RunReader {
                file,
                at: run.start,
                end: run.end,
                buf: Vec::new(),
                pos: 0,
            };
            m.heads.push(r.next(m.width)?);
            m.readers.push(r);
        }
        for i in 0..runs.len() {
            if m.heads[i].is_some() {
                m.heap.push(i);
                m.sift_up(m.heap.len() - 1);
            }
        }
        Ok(m)
    }

    fn less(&self, x: usize, y: usize) -> bool {
        let (Some(a), Some(b)) = (&self.heads[x], &self.heads[y]) else {
            unreachable!("the heap holds runs with a head row")
        };
        compare_rows(a, b, &self.keys, |_| None).then(x.cmp(&y)) == Ordering::Less
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.less(self.heap[i], self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            for c in [l, r] {
                if c < self.heap.len() && self.less(self.heap[c], self.heap[least]) {
                    least = c;
                }
            }
            if least == i {
                return;
            }
            self.heap.swap(i, least);
            i = least;
        }
    }

    /// The least head row; its run's next row takes its place.
    fn next(&mut self) -> Result<Option<ProjectedRow>> {
        let Some(&top) = self.heap.first() else {
            return Ok(None);
        };
        self.interrupt
            .tick(&mut self.tick)
            .map_err(EngineError::Sql)?;
        let next = self.readers[top].next(self.width)?;
        let row = std::mem::replace(&mut self.heads[top], next);
        if self.heads[top].is_none() {
            let last = self.heap.pop().expect("not empty");
            if !self.heap.is_empty() {
                self.heap[0] = last;
            }
        }
        self.sift_down(0);
        debug_assert!(row.is_some(), "heap entries have a head");
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok<T>(r: Result<T>) -> T {
        match r {
            Ok(t) => t,
            Err(EngineError::Sql(e)) => panic!("{}: {}", e.number(), e.message),
            Err(_) => panic!("a lock wait in a sort"),
        }
    }

    /// Rows of (number or NULL, text in mixed case, arrival number): the
    /// arrival number is not a key, so equal keys show whether the sort
    /// kept arrival order.
    fn rows(n: usize, seed: u64) -> Vec<ProjectedRow> {
        let mut x = seed;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        (0..n)
            .map(|i| {
                let num = match next() % 10 {
                    0 => Value::Null,
                    r => Value::Int((r as i64) * 7 - 30),
                };
                let text = ["a", "B", "b", "A", "é", "E", "ab", ""][next() as usize % 8];
                let proj = vec![num, Value::str(text), Value::Int(i as i64)];
                (proj, vec![Value::Int((next() % 5) as i64)])
            })
            .collect()
    }

    fn keys(desc: bool) -> Vec<(SortKey, bool)> {
        vec![
            (SortKey::Stored(0), false),
            (
                SortKey::Projected {
                    item: 0,
                    folded: false,
                },
                desc,
            ),
            (
                SortKey::Projected {
                    item: 1,
                    folded: true,
                },
                !desc,
            ),
        ]
    }

    fn spill_to(dir: &Path) -> SpillTo {
        SpillTo {
            dir: dir.to_path_buf(),
            disk: u64::MAX,
            connection_id: 7,
            interrupt: Interrupt::default(),
        }
    }

    fn test_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lockstep-filesort-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn drain(mut sorted: Sorted) -> Vec<ProjectedRow> {
        let mut out = Vec::new();
        while let Some(row) = ok(sorted.next()) {
            out.push(row);
        }
        out
    }

    /// Sorts `input` through a FileSort with a `limit`-byte buffer.
    fn external(
        input: &[ProjectedRow],
        keys: &[(SortKey, bool)],
        limit: usize,
        to: SpillTo,
    ) -> (Vec<ProjectedRow>, bool) {
        let mut sort = FileSort::new(keys.to_vec(), 3, limit, None, to);
        for row in input {
            ok(sort.push(row.clone(), projected_bytes(row)));
        }
        let spilled = sort.spilled();
        (drain(ok(sort.finish())), spilled)
    }

    #[test]
    fn spilled_sorts_match_the_in_memory_sort_with_nulls_desc_collations_and_ties() {
        let dir = test_dir("match");
        for (n, limit, desc) in [
            (500, 4 << 10, false),
            (3000, 20 << 10, true),
            (1, 10, false),
            (0, 10, true),
        ] {
            let input = rows(n, n as u64 + 1);
            let want = sort_rows(input.clone(), &keys(desc), false).0;
            let (got, spilled) = external(&input, &keys(desc), limit, spill_to(&dir));
            assert_eq!(spilled, n > 1, "{n} rows in {limit} bytes spill");
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{n} rows, desc {desc}"
            );
        }
        let left: Vec<_> = std::fs::read_dir(&dir).expect("made").collect();
        assert!(left.is_empty(), "run files are unlinked: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn more_runs_than_one_merge_reads_take_a_second_pass() {
        let dir = test_dir("passes");
        let input = rows(20_000, 3);
        // About 10 rows a run: some 2,000 runs, two passes of FAN_IN.
        let limit = 10 * projected_bytes(&input[0]);
        let want = sort_rows(input.clone(), &keys(false), false).0;
        let (got, spilled) = external(&input, &keys(false), limit, spill_to(&dir));
        assert!(spilled);
        assert_eq!(got.len(), want.len());
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_keys_pass_rows_through_in_arrival_order() {
        let dir = test_dir("through");
        let input = rows(2000, 5);
        let (got, spilled) = external(&input, &[], 1 << 10, spill_to(&dir));
        assert!(spilled);
        assert_eq!(format!("{got:?}"), format!("{input:?}"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn top_n_keeps_the_first_rows_without_spilling() {
        let input = rows(10_000, 9);
        let want = sort_rows(input.clone(), &keys(true), false).0;
        let mut sort = FileSort::new(
            keys(true),
            3,
            1 << 20,
            Some(25),
            spill_to(&test_dir("topn")),
        );
        for row in &input {
            ok(sort.push(row.clone(), projected_bytes(row)));
        }
        assert!(!sort.spilled(), "25 rows fit the buffer");
        let got = drain(ok(sort.finish()));
        assert_eq!(format!("{got:?}"), format!("{:?}", &want[..25]));
    }

    #[test]
    fn disk_past_its_bound_is_1114_and_kill_stops_a_merge() {
        let dir = test_dir("bounds");
        let input = rows(5000, 11);
        let mut to = spill_to(&dir);
        to.disk = 4 << 10;
        let mut sort = FileSort::new(keys(false), 3, 1 << 10, None, to);
        let err = input
            .iter()
            .try_for_each(|r| sort.push(r.clone(), projected_bytes(r)))
            .expect_err("past the disk bound");
        assert!(matches!(err, EngineError::Sql(e) if e.number() == 1114));

        let to = spill_to(&dir);
        let killed = to.interrupt.killed.clone();
        let mut sort = FileSort::new(keys(false), 3, 1 << 10, None, to);
        for row in &input {
            ok(sort.push(row.clone(), projected_bytes(row)));
        }
        let mut sorted = ok(sort.finish());
        ok(sorted.next()).expect("a row");
        killed.store(true, std::sync::atomic::Ordering::Relaxed);
        let err = (0..Interrupt::EVERY + 1)
            .try_for_each(|_| sorted.next().map(drop))
            .expect_err("KILL QUERY stops the merge");
        assert!(matches!(err, EngineError::Sql(e) if e.number() == 1317));
        drop(sorted);
        assert!(std::fs::read_dir(&dir).expect("made").next().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
