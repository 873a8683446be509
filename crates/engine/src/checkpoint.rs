//! Checkpoints (5.14): a consistent snapshot of every table written to
//! disk, after which the log before it can go. Recovery loads the newest
//! intact snapshot and replays the log from the snapshot's start LSN; a
//! damaged newest snapshot falls back to the previous one (whose log is
//! kept until the next checkpoint succeeds).
//!
//! Consistency: the snapshot holds exactly the rows visible to a ReadView
//! created after every transaction that reserved log space before the
//! start LSN has become visible. Transactions after the start LSN may or
//! may not be in it; replaying them is harmless because row events carry
//! full images applied by primary key (5.15).

use lockstep_accounts::{Account, AccountRoles, AuthId};
use lockstep_binlog::{GtidSet, RoutineDef, ViewDef};
use lockstep_tables::histogram::ColumnHistogram;
use lockstep_tables::{CheckConstraint, ForeignKey, GeneratedColumn, Row, TableComments, TableDef};
use lockstep_types::Value;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

// 15: as 14, with collations in column and table definitions (read
// before 15 in the old layout, see `lockstep_tables::layout`).
// 14: as 13; column types may be ENUM/SET with their member lists (new
// DataType variants, so 13 readers must not meet them).
// 13: as 12, with every account's role side (roles granted, default
// roles, lock) after the histograms, as (account, roles) pairs.
// 12: as 11, with every table's column histograms after the comments,
// as (table id, histograms) pairs. 11: as 10, with every table's comments after the generated columns,
// as (table id, comments) pairs. 10: as 09, with every table's generated columns after the CHECK
// constraints, as (table id, columns) pairs. 09: as 08, with the stored programs (procedures, functions, triggers)
// after the views, and every table's CHECK constraints after the table
// list as (table id, constraints) pairs. 08: as 07, with the views after the accounts. 07: as 06, with each table's foreign keys after its definition. 06: as 05, with the executed GTID set (transactions applied from other
// sources included) and the next sequence_number after next_gno. 05: the body's length and CRC,
// then the body written as a stream (the
// header fields, then each table's definition and rows), so that a
// checkpoint never holds a copy of the database in memory; each row is its
// stored image (`tables::Row`) behind its length, written and read back
// without decoding a value. Still read: 04 (the same stream with rows as
// bincode values) and 03 (one bincode blob after a length and CRC).
const MAGIC: &[u8; 8] = b"LSCKPT15";
const MAGIC_14: &[u8; 8] = b"LSCKPT14";
const MAGIC_13: &[u8; 8] = b"LSCKPT13";
const MAGIC_12: &[u8; 8] = b"LSCKPT12";
const MAGIC_11: &[u8; 8] = b"LSCKPT11";
const MAGIC_10: &[u8; 8] = b"LSCKPT10";
const MAGIC_09: &[u8; 8] = b"LSCKPT09";
const MAGIC_08: &[u8; 8] = b"LSCKPT08";
const MAGIC_07: &[u8; 8] = b"LSCKPT07";
const MAGIC_06: &[u8; 8] = b"LSCKPT06";
const MAGIC_05: &[u8; 8] = b"LSCKPT05";
const MAGIC_04: &[u8; 8] = b"LSCKPT04";
const MAGIC_03: &[u8; 8] = b"LSCKPT03";

/// A checkpoint as recovery reads it.
pub struct Snapshot {
    /// Replay the log from here.
    pub start_lsn: u64,
    /// GTID numbers below this are in the snapshot or in the log after it.
    pub next_gno: u64,
    /// GTIDs in the snapshot (empty when read from a format before 06:
    /// then this server's own 1..next_gno-1 are all there was).
    pub gtids: GtidSet,
    /// The next commit's sequence_number (before 06: next_gno, which it
    /// equalled).
    pub next_sequence: u64,
    pub databases: Vec<String>,
    pub tables: Vec<TableSnapshot>,
    /// Stored user accounts with their grants.
    pub accounts: Vec<Account>,
    /// Views (none before format 07).
    pub views: Vec<ViewDef>,
    /// CHECK constraints by table id (none before format 09).
    pub checks: Vec<(u32, Vec<CheckConstraint>)>,
    /// Generated columns by table id (none before format 10).
    pub generated: Vec<(u32, Vec<GeneratedColumn>)>,
    /// COMMENT clauses by table id (none before format 11).
    pub comments: Vec<(u32, TableComments)>,
    /// Column histograms by table id (none before format 12).
    pub histograms: Vec<(u32, Vec<ColumnHistogram>)>,
    /// Stored programs (none before format 09).
    pub routines: Vec<RoutineDef>,
    /// Accounts' role sides (none before format 13).
    pub roles: Vec<(AuthId, AccountRoles)>,
}

pub struct TableSnapshot {
    pub def: TableDef,
    /// Its foreign keys (none before format 07).
    pub foreign_keys: Vec<ForeignKey>,
    pub auto_increment: u64,
    pub next_row_id: u64,
    pub rows: Vec<Row>,
}

/// Format 03's blob: rows as values.
#[derive(Serialize, Deserialize)]
struct Snapshot03 {
    start_lsn: u64,
    next_gno: u64,
    databases: Vec<String>,
    tables: Vec<TableSnapshot03>,
    accounts: Vec<Account>,
}

#[derive(Serialize, Deserialize)]
struct TableSnapshot03 {
    def: TableDef,
    auto_increment: u64,
    next_row_id: u64,
    rows: Vec<Vec<Value>>,
}

pub fn file_name(start_lsn: u64) -> String {
    format!("checkpoint-{start_lsn:020}.snap")
}

/// Checkpoint files in `dir`, newest first.
pub fn list(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let lsn = name
                .strip_prefix("checkpoint-")?
                .strip_suffix(".snap")?
                .parse()
                .ok()?;
            Some((lsn, e.path()))
        })
        .collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.0));
    v
}

/// Counts and checksums the bytes that pass through it.
struct Crc<T> {
    inner: T,
    hasher: crc32fast::Hasher,
    len: u64,
}

impl<T> Crc<T> {
    fn new(inner: T) -> Self {
        Crc {
            inner,
            hasher: crc32fast::Hasher::new(),
            len: 0,
        }
    }
}

impl<W: Write> Write for Crc<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<R: Read> Read for Crc<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
}

/// What a checkpoint holds besides tables: written before them.
#[derive(Clone, Copy)]
pub struct SchemaObjects<'a> {
    pub databases: &'a [String],
    pub accounts: &'a [Account],
    pub views: &'a [ViewDef],
    pub routines: &'a [RoutineDef],
}

/// Tag before each table and each row: one follows, or the list ends.
const MORE: u8 = 1;
const END: u8 = 0;

/// Writes a checkpoint as a stream, table by table and row by row, to a
/// temp file; `finish` makes it durable: fsync, rename, fsync dir. Dropped
/// unfinished (an error, e.g. disk full), it removes the temp file and the
/// previous checkpoints stay untouched.
pub struct SnapshotWriter {
    out: BufWriter<Crc<File>>,
    start_lsn: u64,
    tmp: PathBuf,
    finished: bool,
    /// Written after the table list.
    checks: Vec<(u32, Vec<CheckConstraint>)>,
    /// Written after the CHECK constraints.
    generated: Vec<(u32, Vec<GeneratedColumn>)>,
    /// Written after the generated columns.
    comments: Vec<(u32, TableComments)>,
    /// Written after the comments.
    histograms: Vec<(u32, Vec<ColumnHistogram>)>,
    /// Written after the histograms.
    roles: Vec<(AuthId, AccountRoles)>,
}

fn encode_err(e: bincode::Error) -> std::io::Error {
    std::io::Error::other(e)
}

impl SnapshotWriter {
    pub fn create(
        dir: &Path,
        start_lsn: u64,
        next_gno: u64,
        gtids: &GtidSet,
        next_sequence: u64,
        schema: SchemaObjects<'_>,
    ) -> std::io::Result<Self> {
        let tmp = dir.join(format!("{}{TMP_SUFFIX}", file_name(start_lsn)));
        // Overwritten in place, the spare's cached pages are reused and
        // `finish` cuts off what is left of its old contents.
        let file = if std::fs::rename(dir.join(SPARE_NAME), &tmp).is_ok() {
            File::options().write(true).open(&tmp)
        } else {
            File::create(&tmp)
        }
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        let mut w = SnapshotWriter {
            // Buffered before the CRC: it sees large blocks.
            out: BufWriter::with_capacity(1 << 20, Crc::new(file)),
            start_lsn,
            tmp,
            finished: false,
            checks: Vec::new(),
            generated: Vec::new(),
            comments: Vec::new(),
            histograms: Vec::new(),
            roles: Vec::new(),
        };
        // Past the CRC (length and CRC are filled in by `finish`); from here
        // on, an error drops `w`, which removes the temp file.
        let file = &mut w.out.get_mut().inner;
        file.write_all(MAGIC)?;
        file.write_all(&[0; 12])?;
        w.put(&start_lsn)?;
        w.put(&next_gno)?;
        w.put(gtids)?;
        w.put(&next_sequence)?;
        w.put(schema.databases)?;
        w.put(schema.accounts)?;
        w.put(schema.views)?;
        w.put(schema.routines)?;
        Ok(w)
    }

    fn put<T: Serialize + ?Sized>(&mut self, v: &T) -> std::io::Result<()> {
        bincode::serialize_into(&mut self.out, v).map_err(encode_err)
    }

    /// Starts a table; its rows follow, then `end_table`.
    pub fn table(
        &mut self,
        def: &TableDef,
        foreign_keys: &[ForeignKey],
        auto_increment: u64,
        next_row_id: u64,
    ) -> std::io::Result<()> {
        self.put(&MORE)?;
        self.put(def)?;
        self.put(foreign_keys)?;
        self.put(&auto_increment)?;
        self.put(&next_row_id)
    }

    pub fn row(&mut self, row: &Row) -> std::io::Result<()> {
        let bytes = row.as_bytes();
        let len = u32::try_from(bytes.len()).expect("a row image is below 4 GiB");
        self.out.write_all(&[MORE])?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(bytes)
    }

    pub fn end_table(&mut self) -> std::io::Result<()> {
        self.put(&END)
    }

    /// The CHECK constraints to write after the tables.
    pub fn set_checks(&mut self, checks: Vec<(u32, Vec<CheckConstraint>)>) {
        self.checks = checks;
    }

    /// The generated columns to write after the CHECK constraints.
    pub fn set_generated(&mut self, generated: Vec<(u32, Vec<GeneratedColumn>)>) {
        self.generated = generated;
    }

    /// The tables' comments to write after the generated columns.
    pub fn set_comments(&mut self, comments: Vec<(u32, TableComments)>) {
        self.comments = comments;
    }

    /// The tables' histograms to write after the comments.
    pub fn set_histograms(&mut self, histograms: Vec<(u32, Vec<ColumnHistogram>)>) {
        self.histograms = histograms;
    }

    /// The accounts' role sides to write after the histograms.
    pub fn set_roles(&mut self, roles: Vec<(AuthId, AccountRoles)>) {
        self.roles = roles;
    }

    /// Ends the table list, writes the CHECK constraints and generated
    /// columns, fills in the
    /// body's length and CRC, and makes the file durable under its final
    /// name.
    pub fn finish(mut self) -> std::io::Result<PathBuf> {
        self.put(&END)?;
        let checks = std::mem::take(&mut self.checks);
        self.put(&checks)?;
        let generated = std::mem::take(&mut self.generated);
        self.put(&generated)?;
        let comments = std::mem::take(&mut self.comments);
        self.put(&comments)?;
        let histograms = std::mem::take(&mut self.histograms);
        self.put(&histograms)?;
        let roles = std::mem::take(&mut self.roles);
        self.put(&roles)?;
        self.out.flush()?;
        let body = self.out.get_mut();
        let (len, crc) = (body.len, body.hasher.clone().finalize());
        let file = &mut body.inner;
        // Cuts off the rest of a recycled spare (no-op on a new file).
        let end = file.stream_position()?;
        file.set_len(end)?;
        file.seek(SeekFrom::Start(MAGIC.len() as u64))?;
        file.write_all(&len.to_le_bytes())?;
        file.write_all(&crc.to_le_bytes())?;
        file.sync_all()?;
        let dir = self
            .tmp
            .parent()
            .expect("the temp file is in the data directory");
        let path = dir.join(file_name(self.start_lsn));
        std::fs::rename(&self.tmp, &path)?;
        File::open(dir)?.sync_all()?;
        self.finished = true;
        Ok(path)
    }
}

impl Drop for SnapshotWriter {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

const TMP_SUFFIX: &str = ".tmp";

/// A checkpoint no longer needed waits under this name to be overwritten by
/// the next one (`keep_as_spare`): writing into a file whose pages are still
/// cached costs a fraction of filling a new one here, where every page a new
/// file gets first faults in memory the hypervisor had taken back (~150 ms
/// of CPU per 64 MiB, ~2 s per checkpoint of TPC-C's 10 warehouses). Not a
/// `checkpoint-*` name: recovery never reads it.
const SPARE_NAME: &str = "checkpoint.spare";

/// Keeps the checkpoint at `path`, which recovery no longer needs, as the
/// spare the next checkpoint overwrites; deletes it if there is a spare.
pub fn keep_as_spare(path: &Path) -> std::io::Result<()> {
    let spare = path.with_file_name(SPARE_NAME);
    if spare.exists() {
        std::fs::remove_file(path)
    } else {
        std::fs::rename(path, spare)
    }
}

/// Loads the newest intact checkpoint, falling back to older ones, and says
/// on stderr which file was damaged and which one is used instead. Removes
/// temp files of checkpoints that never completed.
pub fn load_newest(dir: &Path) -> Result<Option<Snapshot>, String> {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("checkpoint-") && name.ends_with(TMP_SUFFIX) {
            std::fs::remove_file(e.path())
                .map_err(|err| format!("removing incomplete checkpoint {name}: {err}"))?;
            eprintln!("lockstep: recovery: removed incomplete checkpoint {name}");
        }
    }
    let mut damaged = Vec::new();
    for (lsn, path) in list(dir) {
        match read(&path) {
            Ok(snap) => {
                for d in damaged {
                    eprintln!("lockstep: recovery: {d}, using {}", file_name(lsn));
                }
                return Ok(Some(snap));
            }
            Err(e) => damaged.push(format!("{} damaged ({e})", file_name(lsn))),
        }
    }
    for d in damaged {
        eprintln!(
            "lockstep: recovery: {d}, no intact checkpoint left: replaying the log from its start"
        );
    }
    Ok(None)
}

/// Reads and verifies a snapshot file.
pub fn read(path: &Path) -> Result<Snapshot, String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    let mut header = [0u8; 20];
    file.read_exact(&mut header)
        .map_err(|_| "bad header: not a checkpoint file")?;
    if &header[..8] == MAGIC_03 {
        return read_03(&header[8..], file);
    }
    let format = match &header[..8] {
        m if m == MAGIC => Format::V15,
        m if m == MAGIC_14 || m == MAGIC_13 => Format::V13,
        m if m == MAGIC_12 => Format::V12,
        m if m == MAGIC_11 => Format::V11,
        m if m == MAGIC_10 => Format::V10,
        m if m == MAGIC_09 => Format::V09,
        m if m == MAGIC_08 => Format::V08,
        m if m == MAGIC_07 => Format::V07,
        m if m == MAGIC_06 => Format::V06,
        m if m == MAGIC_05 => Format::V05,
        m if m == MAGIC_04 => Format::V04,
        _ => return Err("bad header: not a checkpoint file".into()),
    };
    let len = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(header[16..].try_into().expect("4 bytes"));
    // Checksummed below the buffer: the CRC sees large blocks.
    let mut body = BufReader::with_capacity(1 << 20, Crc::new(file.take(len)));
    let mut bounded = Bounded {
        inner: &mut body,
        limit: len,
    };
    let legacy = format < Format::V15;
    let parsed = lockstep_tables::layout::legacy_layout(legacy, || read_body(&mut bounded, format));
    // Whatever the parse met, the CRC covers the whole body: a flipped byte
    // is reported as such, not as whatever it made the decoder see.
    let drained = std::io::copy(&mut body, &mut std::io::sink());
    let body = body.into_inner();
    if body.len != len {
        return Err("truncated".into());
    }
    if body.hasher.finalize() != crc {
        return Err("crc mismatch".into());
    }
    drained.map_err(|e| e.to_string())?;
    parsed.map_err(|e| format!("damaged body: {e}"))
}

/// A checkpoint body's reader and its length, the bound on any one value.
struct Bounded<R> {
    inner: R,
    limit: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

/// The streamed formats still read, oldest first.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Format {
    V04,
    V05,
    V06,
    V07,
    V08,
    V09,
    V10,
    V11,
    V12,
    V13,
    V15,
}

/// Reads the stream: rows are stored images from 05 (before, bincode
/// values); the GTID set follows next_gno from 06; each table's foreign
/// keys follow its definition from 07; the views follow the accounts
/// from 08.
/// One bincode value. No length the decoder meets may ask for more than the
/// body holds: a flipped byte in a length must fail the parse (then the
/// CRC), not allocate exabytes and abort the process.
fn get<T: serde::de::DeserializeOwned, R: Read>(r: &mut Bounded<R>) -> bincode::Result<T> {
    use bincode::Options;
    let options = bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(r.limit);
    options.deserialize_from(&mut r.inner)
}

/// A field that formats before `since` do not have: its default there.
fn get_since<T: serde::de::DeserializeOwned + Default, R: Read>(
    r: &mut Bounded<R>,
    format: Format,
    since: Format,
) -> bincode::Result<T> {
    match format >= since {
        true => get(r),
        false => Ok(T::default()),
    }
}

fn read_body<R: Read>(r: &mut Bounded<R>, format: Format) -> bincode::Result<Snapshot> {
    let start_lsn = get(r)?;
    let next_gno = get(r)?;
    let (gtids, next_sequence) = match format >= Format::V06 {
        true => (get(r)?, get(r)?),
        false => (GtidSet::default(), next_gno),
    };
    let mut snap = Snapshot {
        start_lsn,
        next_gno,
        gtids,
        next_sequence,
        databases: get(r)?,
        accounts: get(r)?,
        views: get_since(r, format, Format::V08)?,
        routines: get_since(r, format, Format::V09)?,
        tables: Vec::new(),
        checks: Vec::new(),
        generated: Vec::new(),
        comments: Vec::new(),
        histograms: Vec::new(),
        roles: Vec::new(),
    };
    while get::<u8, _>(r)? == MORE {
        snap.tables.push(read_table(r, format)?);
    }
    snap.checks = get_since(r, format, Format::V09)?;
    snap.generated = get_since(r, format, Format::V10)?;
    snap.comments = get_since(r, format, Format::V11)?;
    snap.histograms = get_since(r, format, Format::V12)?;
    snap.roles = get_since(r, format, Format::V13)?;
    Ok(snap)
}

/// One table: its definition, counters and rows.
fn read_table<R: Read>(r: &mut Bounded<R>, format: Format) -> bincode::Result<TableSnapshot> {
    let mut t = TableSnapshot {
        def: get(r)?,
        foreign_keys: get_since(r, format, Format::V07)?,
        auto_increment: get(r)?,
        next_row_id: get(r)?,
        rows: Vec::new(),
    };
    let mut buf = Vec::new();
    while get::<u8, _>(r)? == MORE {
        let row = match format >= Format::V05 {
            true => read_row_image(r, &mut buf)?,
            false => Row::new(&get::<Vec<Value>, _>(r)?),
        };
        t.rows.push(row);
    }
    Ok(t)
}

/// A row image with its length before it. The length is not trusted before
/// the CRC is checked (after the parse): `take` reads no further than the
/// body does.
fn read_row_image<R: Read>(r: &mut Bounded<R>, buf: &mut Vec<u8>) -> bincode::Result<Row> {
    let len = get::<u32, _>(r)? as u64;
    buf.clear();
    r.take(len).read_to_end(buf)?;
    (buf.len() as u64 == len)
        .then(|| Row::from_bytes(buf))
        .flatten()
        .ok_or_else(|| Box::new(bincode::ErrorKind::Custom("damaged row image".into())))
}

/// Format 03: length, CRC (in `header`), then one bincode blob.
fn read_03(header: &[u8], mut file: impl Read) -> Result<Snapshot, String> {
    let len = u64::from_le_bytes(header[..8].try_into().expect("8 bytes")) as usize;
    let crc = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    let mut body = Vec::new();
    file.read_to_end(&mut body).map_err(|e| e.to_string())?;
    let body = body.get(..len).ok_or("truncated")?;
    if crc32fast::hash(body) != crc {
        return Err("crc mismatch".into());
    }
    let old: Snapshot03 =
        lockstep_tables::layout::legacy_layout(true, || bincode::deserialize(body))
            .map_err(|e| e.to_string())?;
    Ok(Snapshot {
        start_lsn: old.start_lsn,
        next_gno: old.next_gno,
        gtids: GtidSet::default(),
        next_sequence: old.next_gno,
        databases: old.databases,
        accounts: old.accounts,
        views: Vec::new(),
        checks: Vec::new(),
        generated: Vec::new(),
        comments: Vec::new(),
        histograms: Vec::new(),
        routines: Vec::new(),
        roles: Vec::new(),
        tables: old
            .tables
            .into_iter()
            .map(|t| TableSnapshot {
                def: t.def,
                foreign_keys: Vec::new(),
                auto_increment: t.auto_increment,
                next_row_id: t.next_row_id,
                rows: t.rows.iter().map(|r| Row::new(r)).collect(),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        let def = TableDef {
            id: 7,
            database: "d".into(),
            name: "t".into(),
            columns: Vec::new(),
            indexes: Vec::new(),
            hidden_row_id: None,
            collation: 0,
        };
        let rows = (0..1000)
            .map(|i| Row::new(&[Value::Int(i), Value::str(&"x".repeat(i as usize % 50))]))
            .collect();
        Snapshot {
            start_lsn: 4242,
            next_gno: 17,
            gtids: {
                let mut g = GtidSet::default();
                g.insert_range([3; 16], 1, 16);
                g.insert_range([9; 16], 5, 8);
                g
            },
            next_sequence: 21,
            databases: vec!["d".into()],
            tables: vec![TableSnapshot {
                def,
                foreign_keys: vec![lockstep_tables::ForeignKey {
                    name: "t_ibfk_1".into(),
                    columns: vec!["v".into()],
                    parent_db: "db".into(),
                    parent_table: "p".into(),
                    parent_columns: vec!["id".into()],
                    on_delete: lockstep_tables::FkAction::Cascade,
                    on_update: lockstep_tables::FkAction::NoAction,
                }],
                auto_increment: 1001,
                next_row_id: 3,
                rows,
            }],
            accounts: Vec::new(),
            views: vec![ViewDef {
                database: "d".into(),
                name: "v".into(),
                columns: vec!["a".into()],
                query: "select 1".into(),
                algorithm: "UNDEFINED".into(),
                definer: ("root".into(), "%".into()),
                security_definer: true,
                check_option: lockstep_binlog::CheckOption::None,
            }],
            checks: vec![(
                7,
                vec![CheckConstraint {
                    name: "t_chk_1".into(),
                    expr: "v > 0".into(),
                    enforced: false,
                }],
            )],
            generated: vec![(
                7,
                vec![GeneratedColumn {
                    column: "g".into(),
                    expr: "v + 1".into(),
                    stored: true,
                }],
            )],
            comments: vec![(
                7,
                TableComments {
                    table: "it's t".into(),
                    columns: vec![("v".into(), "the v".into())],
                    indexes: vec![("PRIMARY".into(), "pk".into())],
                },
            )],
            histograms: Vec::new(),
            routines: vec![RoutineDef {
                database: "d".into(),
                name: "p".into(),
                kind: lockstep_binlog::RoutineKind::Procedure,
                definer: ("root".into(), "%".into()),
                definition: "() SELECT 1".into(),
                table: String::new(),
                created: 5,
            }],
            roles: vec![(
                ("u".into(), "%".into()),
                AccountRoles {
                    locked: false,
                    granted: [(("r".into(), "%".into()), true)].into(),
                    defaults: vec![("r".into(), "%".into())],
                },
            )],
        }
    }

    fn write(dir: &Path, snap: &Snapshot) -> PathBuf {
        let mut w = SnapshotWriter::create(
            dir,
            snap.start_lsn,
            snap.next_gno,
            &snap.gtids,
            snap.next_sequence,
            SchemaObjects {
                databases: &snap.databases,
                accounts: &snap.accounts,
                views: &snap.views,
                routines: &snap.routines,
            },
        )
        .expect("create");
        for t in &snap.tables {
            w.table(&t.def, &t.foreign_keys, t.auto_increment, t.next_row_id)
                .expect("table");
            for row in &t.rows {
                w.row(row).expect("row");
            }
            w.end_table().expect("end");
        }
        w.set_checks(snap.checks.clone());
        w.set_generated(snap.generated.clone());
        w.set_comments(snap.comments.clone());
        w.set_roles(snap.roles.clone());
        w.finish().expect("finish")
    }

    fn same(a: &Snapshot, b: &Snapshot) {
        assert_eq!((a.start_lsn, a.next_gno), (b.start_lsn, b.next_gno));
        assert_eq!(a.databases, b.databases);
        assert_eq!(a.views, b.views);
        assert_eq!(a.roles, b.roles);
        assert_eq!(a.routines, b.routines);
        assert_eq!(a.generated, b.generated);
        assert_eq!(a.comments, b.comments);
        assert_eq!(a.tables.len(), b.tables.len());
        for (x, y) in a.tables.iter().zip(&b.tables) {
            assert_eq!(x.def.name, y.def.name);
            assert_eq!(
                (x.auto_increment, x.next_row_id),
                (y.auto_increment, y.next_row_id)
            );
            assert_eq!(x.rows, y.rows);
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lockstep-ckpt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn streamed_checkpoint_reads_back_and_detects_damage() {
        let dir = temp_dir("stream");
        let snap = snapshot();
        let path = write(&dir, &snap);
        let back = read(&path).expect("intact");
        same(&back, &snap);
        assert_eq!(back.gtids, snap.gtids, "format 06 keeps the GTID set");
        assert_eq!(back.next_sequence, 21);
        assert_eq!(
            back.tables[0].foreign_keys, snap.tables[0].foreign_keys,
            "format 07 keeps the foreign keys"
        );
        assert_eq!(
            back.checks, snap.checks,
            "format 09 keeps the CHECK constraints"
        );
        assert!(!dir
            .join(format!("{}{TMP_SUFFIX}", file_name(4242)))
            .exists());

        let mut bytes = std::fs::read(&path).expect("read");
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x40;
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(read(&path).err().as_deref(), Some("crc mismatch"));
        bytes[mid] ^= 0x40;
        std::fs::write(&path, &bytes[..bytes.len() - 10]).expect("write");
        assert_eq!(read(&path).err().as_deref(), Some("truncated"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_retired_checkpoint_is_overwritten_by_the_next_one() {
        let dir = temp_dir("spare");
        // A retired checkpoint longer than the next one: its tail must go.
        let old = dir.join(file_name(1));
        std::fs::write(&old, vec![0xa5; 1 << 20]).expect("write");
        keep_as_spare(&old).expect("spare");
        assert!(!old.exists() && dir.join(SPARE_NAME).exists());
        let snap = snapshot();
        let path = write(&dir, &snap);
        assert!(!dir.join(SPARE_NAME).exists(), "the spare was used");
        assert!(std::fs::metadata(&path).expect("stat").len() < 1 << 20);
        same(&read(&path).expect("intact"), &snap);
        // A second retired file with a spare already there is deleted.
        let other = dir.join(file_name(2));
        std::fs::write(&other, b"x").expect("write");
        keep_as_spare(&path).expect("spare");
        keep_as_spare(&other).expect("delete");
        assert!(!other.exists());
        assert_eq!(list(&dir), Vec::new());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The same snapshot with rows as values, as formats 03 and 04 hold them.
    fn as_03(snap: &Snapshot) -> Snapshot03 {
        Snapshot03 {
            start_lsn: snap.start_lsn,
            next_gno: snap.next_gno,
            databases: snap.databases.clone(),
            accounts: Vec::new(),
            tables: snap
                .tables
                .iter()
                .map(|t| TableSnapshot03 {
                    def: t.def.clone(),
                    auto_increment: t.auto_increment,
                    next_row_id: t.next_row_id,
                    rows: t.rows.iter().map(Row::to_values).collect(),
                })
                .collect(),
        }
    }

    /// A checkpoint file of an older format: magic, body length and CRC,
    /// body.
    fn write_old(dir: &Path, magic: &[u8; 8], body: &[u8], start_lsn: u64) -> PathBuf {
        let mut file = magic.to_vec();
        file.extend((body.len() as u64).to_le_bytes());
        file.extend(crc32fast::hash(body).to_le_bytes());
        file.extend(body);
        let path = dir.join(file_name(start_lsn));
        std::fs::write(&path, &file).expect("write");
        path
    }

    #[test]
    fn format_04_is_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v04");
            let snap = snapshot();
            let old = as_03(&snap);
            let mut body = Vec::new();
            for v in [old.start_lsn, old.next_gno] {
                body.extend(bincode::serialize(&v).expect("serialize"));
            }
            body.extend(bincode::serialize(&old.databases).expect("serialize"));
            body.extend(bincode::serialize(&old.accounts).expect("serialize"));
            for t in &old.tables {
                body.push(MORE);
                body.extend(bincode::serialize(&t.def).expect("serialize"));
                body.extend(bincode::serialize(&t.auto_increment).expect("serialize"));
                body.extend(bincode::serialize(&t.next_row_id).expect("serialize"));
                for row in &t.rows {
                    body.push(MORE);
                    body.extend(bincode::serialize(row).expect("serialize"));
                }
                body.push(END);
            }
            body.push(END);
            let path = write_old(&dir, MAGIC_04, &body, snap.start_lsn);
            let back = read(&path).expect("format 04");
            same(&back, &without_views(&snap));
            assert!(back.gtids.is_empty(), "before 06 there was no GTID set");
            assert_eq!(back.next_sequence, snap.next_gno);
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    #[test]
    fn format_06_is_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v06");
            let snap = snapshot();
            let mut body = Vec::new();
            let mut put = |b: Vec<u8>| body.extend(b);
            put(bincode::serialize(&snap.start_lsn).expect("serialize"));
            put(bincode::serialize(&snap.next_gno).expect("serialize"));
            put(bincode::serialize(&snap.gtids).expect("serialize"));
            put(bincode::serialize(&snap.next_sequence).expect("serialize"));
            put(bincode::serialize(&snap.databases).expect("serialize"));
            put(bincode::serialize(&snap.accounts).expect("serialize"));
            for t in &snap.tables {
                put(vec![MORE]);
                put(bincode::serialize(&t.def).expect("serialize"));
                put(bincode::serialize(&t.auto_increment).expect("serialize"));
                put(bincode::serialize(&t.next_row_id).expect("serialize"));
                for row in &t.rows {
                    put(vec![MORE]);
                    put((row.as_bytes().len() as u32).to_le_bytes().to_vec());
                    put(row.as_bytes().to_vec());
                }
                put(vec![END]);
            }
            put(vec![END]);
            let path = write_old(&dir, MAGIC_06, &body, snap.start_lsn);
            let back = read(&path).expect("format 06");
            same(&back, &without_views(&snap));
            assert_eq!(back.gtids, snap.gtids);
            assert!(back.tables[0].foreign_keys.is_empty(), "06 had none");
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    #[test]
    fn format_03_is_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v03");
            let snap = snapshot();
            let body = bincode::serialize(&as_03(&snap)).expect("serialize");
            let path = write_old(&dir, MAGIC_03, &body, snap.start_lsn);
            same(&read(&path).expect("format 03"), &without_views(&snap));
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    fn without_views(snap: &Snapshot) -> Snapshot {
        let tables = snap
            .tables
            .iter()
            .map(|t| TableSnapshot {
                def: t.def.clone(),
                foreign_keys: t.foreign_keys.clone(),
                auto_increment: t.auto_increment,
                next_row_id: t.next_row_id,
                rows: t.rows.clone(),
            })
            .collect();
        Snapshot {
            gtids: snap.gtids.clone(),
            databases: snap.databases.clone(),
            accounts: snap.accounts.clone(),
            views: Vec::new(),
            checks: Vec::new(),
            generated: Vec::new(),
            comments: Vec::new(),
            histograms: Vec::new(),
            routines: Vec::new(),
            roles: Vec::new(),
            tables,
            ..*snap
        }
    }

    /// The body's fields before the views, as every format since 06 writes them.
    fn header_fields(snap: &Snapshot) -> Vec<u8> {
        let mut prefix = Vec::new();
        for v in [snap.start_lsn, snap.next_gno] {
            prefix.extend(bincode::serialize(&v).expect("serialize"));
        }
        prefix.extend(bincode::serialize(&snap.gtids).expect("serialize"));
        prefix.extend(bincode::serialize(&snap.next_sequence).expect("serialize"));
        prefix.extend(bincode::serialize(&snap.databases).expect("serialize"));
        prefix.extend(bincode::serialize(&snap.accounts).expect("serialize"));
        prefix
    }

    #[test]
    fn format_07_is_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v07");
            let snap = without_views(&snapshot());
            let path = write(&dir, &snap);
            let file = std::fs::read(&path).expect("read");
            // 07 is 09 without the (here empty) view and routine lists after
            // the accounts.
            let prefix = header_fields(&snap);
            let body08 = &file[20..];
            assert_eq!(&body08[..prefix.len()], &prefix[..]);
            let mut body = prefix.clone();
            body.extend(&body08[prefix.len() + 16..]);
            std::fs::remove_file(&path).expect("remove");
            let path = write_old(&dir, MAGIC_07, &body, snap.start_lsn);
            let back = read(&path).expect("format 07");
            same(&back, &snap);
            assert_eq!(back.gtids, snap.gtids);
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    #[test]
    fn format_08_is_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v08");
            let mut snap = snapshot();
            snap.roles.clear();
            snap.routines.clear();
            snap.generated.clear();
            snap.comments.clear();
            let path = write(&dir, &snap);
            let file = std::fs::read(&path).expect("read");
            // 08 is 09 without the (here empty) routine list after the views
            // and without the CHECK constraints after the table list.
            let mut prefix = header_fields(&snap);
            prefix.extend(bincode::serialize(&snap.views).expect("serialize"));
            let tail = bincode::serialize(&snap.checks).expect("serialize");
            let body09 = &file[20..];
            assert_eq!(&body09[..prefix.len()], &prefix[..]);
            let mut body = prefix.clone();
            body.extend(&body09[prefix.len() + 8..body09.len() - tail.len()]);
            std::fs::remove_file(&path).expect("remove");
            let path = write_old(&dir, MAGIC_08, &body, snap.start_lsn);
            let back = read(&path).expect("format 08");
            assert!(back.checks.is_empty(), "08 had none");
            snap.checks.clear();
            same(&back, &snap);
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    #[test]
    fn format_09_is_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v09");
            let mut snap = snapshot();
            snap.roles.clear();
            snap.generated.clear();
            snap.comments.clear();
            let path = write(&dir, &snap);
            let file = std::fs::read(&path).expect("read");
            // 09 is 10 without the (here empty: its length only) list of
            // generated columns at the end, nor 11's (empty) comments after it,
            // nor 12's (empty) histograms, nor 13's (empty) role sides.
            let body = &file[20..file.len() - 32];
            std::fs::remove_file(&path).expect("remove");
            let path = write_old(&dir, MAGIC_09, body, snap.start_lsn);
            let back = read(&path).expect("format 09");
            assert_eq!(back.checks, snap.checks);
            same(&back, &snap);
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    /// `snap` written, then rewritten under an older `magic` without the
    /// `empty_lists` (each its length only) the newer formats end with,
    /// and read back.
    fn read_as_older(dir: &Path, snap: &Snapshot, magic: &[u8; 8], empty_lists: usize) -> Snapshot {
        let path = write(dir, snap);
        let file = std::fs::read(&path).expect("read");
        let body = &file[20..file.len() - 8 * empty_lists];
        std::fs::remove_file(&path).expect("remove");
        let path = write_old(dir, magic, body, snap.start_lsn);
        read(&path).expect("an older format")
    }

    #[test]
    fn formats_10_to_12_are_still_read() {
        // Definitions in the layout before collations (format 15).
        lockstep_tables::layout::legacy_layout(true, || {
            let dir = temp_dir("v10-12");
            // 10 is 11 without the comments at the end, 11 is 12 without the
            // histograms after them, 12 is 13 without the role sides after
            // those (all here empty: their lengths only).
            for (magic, empty_lists) in [(MAGIC_10, 3), (MAGIC_11, 2), (MAGIC_12, 1)] {
                let mut snap = snapshot();
                snap.roles.clear();
                if magic != MAGIC_12 {
                    snap.histograms.clear();
                }
                if magic == MAGIC_10 {
                    snap.comments.clear();
                }
                let back = read_as_older(&dir, &snap, magic, empty_lists);
                assert_eq!(back.generated, snap.generated);
                assert_eq!(back.comments, snap.comments);
                assert_eq!(back.histograms.len(), snap.histograms.len());
                assert!(back.roles.is_empty());
                same(&back, &snap);
            }
            let _ = std::fs::remove_dir_all(&dir);
        })
    }

    #[test]
    fn enum_members_round_trip_and_format_13_is_still_read() {
        use lockstep_types::enumset::Members;
        let dir = temp_dir("v14");
        let mut snap = snapshot();
        let members = Members::intern(vec!["a".into(), "it's".into()]).expect("intern");
        snap.tables[0].def.columns.push(lockstep_tables::ColumnDef {
            name: "e".into(),
            data_type: lockstep_types::DataType::EnumOf { members },
            nullable: true,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
            collation: 0,
        });
        // 15: definitions carry collations (latin1_swedish_ci here).
        snap.tables[0].def.collation = 8;
        snap.tables[0].def.columns.last_mut().expect("e").collation = 8;
        let path = write(&dir, &snap);
        let back = read(&path).expect("format 15");
        assert_eq!(back.tables[0].def, snap.tables[0].def);
        snap.tables[0].def.collation = 0;
        // 13 is 14 without ENUM/SET member lists.
        snap.tables[0].def.columns.clear();
        std::fs::remove_file(&path).expect("remove");
        let file = lockstep_tables::layout::legacy_layout(true, || write(&dir, &snap));
        let file = std::fs::read(file).expect("read");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = write_old(&dir, MAGIC_13, &file[20..], snap.start_lsn);
        same(&read(&path).expect("format 13"), &snap);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
