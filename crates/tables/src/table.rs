//! One table: the clustered index (ordered map from encoded primary key to a
//! record with its version chain) and its secondary indexes. Exact-key
//! lookups of clustered records go through a hash over the same records
//! (`point`), scans through the ordered map.
//!
//! Concurrency: the maps are lock-free skip lists, so readers and writers of
//! different rows never share a latch (the hash's sharded latches are held
//! for one probe); each record has its own short mutex
//! around its version chain. Writers must hold the row lock (crates/lock)
//! for a record before adding a version, so a chain has at most one
//! uncommitted version, at its head (5.5).
//!
//! Layout: a row read is a chain of dependent memory loads, each a likely
//! cache miss on a large table, so the record lives inside its skip-list
//! node and a chain of one version (the usual case once purge has run)
//! lives inside the record: node, then row image, with nothing between.

use crate::clustered::Clustered;
use crate::placement::table_data;
use crate::point::PointIndex;
use crate::row::{Columns, Row};
use crate::schema::{TableDef, PRIMARY};
use crate::stats::{PrefixCounter, TableStats, SYNC_LIMIT};
use crate::TxnId;
use crossbeam_skiplist::SkipMap;
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use smallvec::SmallVec;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct Version {
    /// The transaction that wrote this version.
    pub txn: TxnId,
    /// The row, or None where the transaction deleted it.
    pub row: Option<Row>,
}

/// A clustered-index record: its versions, oldest first.
#[derive(Debug, Default)]
pub struct Record {
    chain: Mutex<Chain>,
}

#[derive(Debug, Default)]
struct Chain {
    /// Oldest first; one version is stored inline.
    versions: SmallVec<[Version; 1]>,
    /// Set by purge when the record was removed from the index; a writer
    /// that finds a dead record must insert a fresh one.
    dead: bool,
}

impl Record {
    /// The newest version the reader can see, as its row (None: no visible
    /// version, or the visible version is a delete).
    pub fn read(&self, sees: impl Fn(TxnId) -> bool) -> Option<Row> {
        let chain = self.chain.lock();
        chain
            .versions
            .iter()
            .rev()
            .find(|v| sees(v.txn))
            .and_then(|v| v.row.clone())
    }

    /// Starts loading the newest version's image into cache (see
    /// `Row::prefetch`); skipped when a writer holds the chain.
    pub fn prefetch(&self) {
        if let Some(chain) = self.chain.try_lock() {
            if let Some(Some(row)) = chain.versions.last().map(|v| &v.row) {
                row.prefetch();
            }
        }
    }

    /// The newest version (committed, or the lock holder's own): what a
    /// locking read, UPDATE and DELETE act on.
    pub fn latest(&self) -> Option<Version> {
        self.chain.lock().versions.last().cloned()
    }

    /// Every distinct row image in the chain (for secondary-index checks
    /// and purge).
    pub fn images(&self) -> Vec<Row> {
        row_images(&self.chain.lock().versions)
    }
}

/// One clustered-index entry: encoded primary key and its record.
pub use crate::clustered::Entry;

/// A record found by key. It stays valid while held, even if purge removes
/// it from the index meanwhile (the skip list frees a node only after its
/// last reference is gone).
pub struct RecordRef<'a>(Entry<'a>);

impl std::ops::Deref for RecordRef<'_> {
    type Target = Record;
    fn deref(&self) -> &Record {
        self.0.value()
    }
}

/// A secondary index: entries are index key ++ primary key, stored like
/// primary keys (`clustered::Key`: up to 32 bytes inside the node, so an
/// integer index entry, 18 bytes, is compared without another cache miss;
/// purge's searches for stale entries spent 40% of its time in them).
pub type IndexMap = SkipMap<crate::clustered::Key, ()>;

/// Schema part of a table that DDL replaces: the definition and the
/// secondary indexes. DML holds the read side for one statement.
pub struct Schema {
    pub def: Arc<TableDef>,
    /// Secondary index entries: index key ++ primary key. Position i holds
    /// index i+1 of `def.indexes`.
    pub secondary: Vec<IndexMap>,
}

pub struct Table {
    pub id: u32,
    schema: RwLock<Schema>,
    /// Exact-key lookups; holds entries of `primary`, so it is declared
    /// (and dropped) first.
    point: PointIndex,
    /// The clustered index, boxed so the entries `point` holds, which
    /// point at the map, stay valid when the table moves.
    primary: Box<Clustered>,
    /// Next AUTO_INCREMENT value.
    pub auto_increment: AtomicU64,
    /// Next hidden row id, for tables without a primary key.
    pub next_row_id: AtomicU64,
    /// Shared by the transactions using the table, exclusive for DDL.
    pub mdl: lockstep_lock::MetadataLock,
    /// Writers against LOCK TABLES ... READ (lockstep_lock::gate).
    pub write_gate: lockstep_lock::WriteGate,
    /// A session's temporary table: not in the catalog, never logged.
    pub temporary: bool,
    /// Index statistics, when counted (see `stats`).
    stats: RwLock<Option<Arc<TableStats>>>,
    /// A planner is counting them: the others plan with what there is.
    counting: std::sync::atomic::AtomicBool,
    /// Column histograms (ANALYZE TABLE ... UPDATE HISTOGRAM).
    pub(crate) histograms: RwLock<Option<Arc<[crate::histogram::ColumnHistogram]>>>,
    /// Keys written while an online ALTER copies the table.
    pub capture: crate::capture::CaptureSlot,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table#{}", self.id)
    }
}

impl Table {
    pub fn new(def: TableDef) -> Table {
        let secondary = (1..def.indexes.len()).map(|_| SkipMap::new()).collect();
        Table {
            id: def.id,
            schema: RwLock::new(Schema {
                def: Arc::new(def),
                secondary,
            }),
            point: PointIndex::new(),
            primary: Box::default(),
            auto_increment: AtomicU64::new(1),
            next_row_id: AtomicU64::new(1),
            mdl: Default::default(),
            write_gate: Default::default(),
            temporary: false,
            stats: RwLock::new(None),
            counting: Default::default(),
            histograms: RwLock::new(None),
            capture: Default::default(),
        }
    }

    /// A temporary table (CREATE TEMPORARY TABLE): its changes are not
    /// logged and it lives only as long as its session holds it.
    pub fn new_temporary(def: TableDef) -> Table {
        Table {
            temporary: true,
            ..Table::new(def)
        }
    }

    pub fn schema(&self) -> RwLockReadGuard<'_, Schema> {
        self.schema.read()
    }

    pub fn schema_mut(&self) -> RwLockWriteGuard<'_, Schema> {
        self.schema.write()
    }

    pub fn def(&self) -> Arc<TableDef> {
        self.schema.read().def.clone()
    }

    pub fn record(&self, key: &[u8]) -> Option<RecordRef<'_>> {
        self.point.get(key).map(RecordRef)
    }

    /// Clustered entries with keys in the given bounds, in key order (or
    /// reverse), each holding its own reference on its record.
    pub fn range<'a>(
        &'a self,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
        reverse: bool,
    ) -> crate::clustered::Range<'a> {
        self.primary.range(lower, upper, reverse)
    }

    /// Visits the clustered records with keys in the given bounds without
    /// holding references (consistent reads; see `Clustered::scan` for
    /// what `visit` must not do).
    pub fn scan<E>(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reverse: bool,
        visit: impl FnMut(&[u8], &Record) -> Result<bool, E>,
    ) -> Result<(), E> {
        self.primary.scan(lower, upper, reverse, visit)
    }

    /// The first clustered key in the given bounds.
    pub fn first_key(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Option<Vec<u8>> {
        self.primary.first_key(lower, upper)
    }

    pub fn approximate_rows(&self) -> usize {
        self.primary.len()
    }

    /// Counts the index statistics now (ANALYZE TABLE): one pass over each
    /// index. Entries of row versions not yet purged count too; the
    /// numbers are estimates for the planner, not answers.
    pub fn analyze(&self) -> Arc<TableStats> {
        let schema = self.schema();
        let def = &schema.def;
        let mut indexes = Vec::with_capacity(def.indexes.len());
        let keys = self.approximate_rows();
        let mut primary = PrefixCounter::new(def.indexes[PRIMARY].columns.len(), keys);
        let mut rows = 0u64;
        let _ = self
            .primary
            .scan::<()>(Bound::Unbounded, Bound::Unbounded, false, |key, _| {
                primary.push(key);
                rows += 1;
                Ok(true)
            });
        indexes.push(primary.finish());
        for (i, map) in schema.secondary.iter().enumerate() {
            let mut counter = PrefixCounter::new(def.indexes[i + 1].columns.len(), keys);
            map.iter().for_each(|e| counter.push(e.key()));
            indexes.push(counter.finish());
        }
        let stats = Arc::new(TableStats { rows, indexes });
        *self.stats.write() = Some(stats.clone());
        stats
    }

    /// The index statistics for planning: counted again when the table
    /// changed by a tenth since (a small table at once; a large one by the
    /// engine's statistics thread or ANALYZE TABLE, its older counts
    /// returned meanwhile).
    pub fn stats(&self) -> Option<Arc<TableStats>> {
        let rows = self.approximate_rows();
        let current = self.stats.read().clone();
        match current {
            Some(s) if s.fresh(rows) => Some(s),
            stale if rows > SYNC_LIMIT || self.temporary => stale,
            stale => {
                if self.counting.swap(true, Ordering::Acquire) {
                    return stale;
                }
                let counted = self.analyze();
                self.counting.store(false, Ordering::Release);
                Some(counted)
            }
        }
    }

    /// Distinct values of the first `columns` key columns of index
    /// `index` as last counted (MySQL's CARDINALITY), else the rows.
    pub fn cardinality(&self, index: usize, columns: usize) -> u64 {
        let counted = self.stats().and_then(|s| {
            let ix = s.indexes.get(index)?;
            ix.distinct.get(columns.checked_sub(1)?).copied()
        });
        counted.unwrap_or(self.approximate_rows() as u64)
    }

    /// Whether this table is past `SYNC_LIMIT` rows (where a query never
    /// counts it) and its counts are missing or a tenth off its rows.
    pub fn stats_need_background_count(&self) -> bool {
        let rows = self.approximate_rows();
        if rows <= SYNC_LIMIT || self.temporary {
            return false;
        }
        !self.stats.read().as_ref().is_some_and(|s| s.fresh(rows))
    }

    /// Counts the statistics for the background thread, unless a count of
    /// this table is already running.
    pub fn count_stats_in_background(&self) {
        if self.counting.swap(true, Ordering::Acquire) {
            return;
        }
        self.analyze();
        self.counting.store(false, Ordering::Release);
    }

    /// Appends a version to the record at `key`, creating the record if
    /// needed. The caller holds the row lock for `key`. Versions that no
    /// view can reach any more (older than the newest version below the
    /// purge horizon) are dropped on the way, so chains stay short without
    /// a separate pass (9.5.4: periodic work amortized into small pieces).
    /// Returns the version it replaced: the same transaction's earlier
    /// write of this row, which a statement rollback restores.
    pub fn push_version(&self, key: &[u8], version: Version, horizon: TxnId) -> Option<Version> {
        loop {
            // Look up first: updates find the record without copying the key.
            let entry = match self.point.get(key) {
                Some(entry) => entry,
                None => table_data(|| {
                    let entry = self
                        .primary
                        .get_or_insert_with(key.to_vec(), Record::default);
                    // Before any version goes in: see `point`.
                    self.index_point(&entry);
                    entry
                }),
            };
            let mut chain = entry.value().chain.lock();
            if chain.dead {
                drop(chain);
                self.unlink(&entry);
                continue;
            }
            // Rewriting its own version in one transaction replaces it.
            let replaced = match chain.versions.last_mut() {
                Some(last) if last.txn == version.txn => Some(std::mem::replace(last, version)),
                _ => {
                    chain.versions.push(version);
                    None
                }
            };
            trim(&mut chain.versions, horizon);
            drop(chain);
            self.capture.note(key);
            return replaced;
        }
    }

    /// Undoes `txn`'s version at `key` (rollback). Returns the row image
    /// that was removed, if any.
    pub fn undo_version(&self, key: &[u8], txn: TxnId) -> Option<Version> {
        let record = self.record(key)?;
        let mut chain = record.chain.lock();
        if chain.versions.last().is_some_and(|v| v.txn == txn) {
            chain.versions.pop()
        } else {
            None
        }
    }

    /// Restores a version removed by a statement rollback inside a
    /// transaction that had already written the row earlier.
    pub fn restore_version(&self, key: &[u8], version: Version) {
        self.push_version(key, version, 0);
    }

    /// Purge: drops the record at `key` from the index when its only
    /// remaining version is a delete every view sees. Returns whether it
    /// was removed.
    pub fn purge_record(&self, key: &[u8], horizon: TxnId) -> bool {
        let Some(RecordRef(entry)) = self.record(key) else {
            return false;
        };
        let mut chain = entry.value().chain.lock();
        trim(&mut chain.versions, horizon);
        if removable(&chain.versions, horizon) && !chain.dead {
            chain.dead = true;
            drop(chain);
            self.unlink(&entry);
            return true;
        }
        false
    }

    /// Purge's first look at the record at `key`, in one lookup: drops the
    /// versions no view can reach, then says whether the record is now
    /// removable (`purge_record` removes it, under the gap check) or still
    /// live with these row images.
    pub fn purge_check(&self, key: &[u8], horizon: TxnId) -> PurgeCheck {
        let Some(record) = self.record(key) else {
            return PurgeCheck::Missing;
        };
        let mut chain = record.chain.lock();
        trim(&mut chain.versions, horizon);
        if removable(&chain.versions, horizon) {
            return PurgeCheck::Removable;
        }
        PurgeCheck::Live(row_images(&chain.versions))
    }

    /// Purge of an update: drops the versions of the record at `key` that no
    /// view can reach any more.
    pub fn trim_record(&self, key: &[u8], horizon: TxnId) {
        if let Some(record) = self.record(key) {
            trim(&mut record.chain.lock().versions, horizon);
        }
    }

    /// Loads a committed row directly (recovery and checkpoint load): the
    /// version is written by transaction 0, which every view sees.
    pub fn load_row(&self, key: Vec<u8>, row: Option<Row>) {
        table_data(|| {
            let record = Record::default();
            record.chain.lock().versions.push(Version { txn: 0, row });
            let entry = self.primary.insert(key, record);
            self.index_point(&entry);
        })
    }

    /// Removes the record at `key` outright (recovery replay of a delete).
    pub fn remove_record(&self, key: &[u8]) {
        if let Some(RecordRef(entry)) = self.record(key) {
            entry.value().chain.lock().dead = true;
            self.unlink(&entry);
        }
    }

    /// Drops every row (TRUNCATE within the catalog's exclusive DDL lock).
    pub fn clear(&self) {
        self.point.clear();
        self.primary.clear();
        for index in self.schema.write().secondary.iter() {
            index.clear();
        }
        self.auto_increment.store(1, Ordering::SeqCst);
    }

    /// Adds the secondary entries of `row`, stored under primary key `pk`.
    pub fn index_row<R: Columns + ?Sized>(&self, schema: &Schema, pk: &[u8], row: &R) {
        table_data(|| {
            for (i, index) in schema.secondary.iter().enumerate() {
                index.insert(
                    crate::clustered::key_of(schema.def.secondary_entry(i + 1, row, pk)),
                    (),
                );
            }
        })
    }

    pub fn primary_len(&self) -> usize {
        self.primary.len()
    }

    /// Makes a clustered entry findable by exact key.
    fn index_point(&self, entry: &Entry<'_>) {
        // SAFETY: `entry` is from `self.primary`, which is boxed (it does
        // not move with the table) and dropped after `self.point`.
        unsafe { self.point.insert(entry) }
    }

    /// Removes a dead record from both the skip list and the hash.
    fn unlink(&self, entry: &Entry<'_>) {
        entry.remove();
        self.point.remove(entry);
    }
}

/// What purge found at a clustered key (`Table::purge_check`).
pub enum PurgeCheck {
    /// No record (already removed).
    Missing,
    /// Only a delete every view sees is left: the record can go.
    Removable,
    /// The record stays; these are its row images.
    Live(Vec<Row>),
}

/// The row images of a chain (deletes have none).
fn row_images(versions: &[Version]) -> Vec<Row> {
    versions.iter().filter_map(|v| v.row.clone()).collect()
}

/// A record whose versions are all gone, or whose only version is a delete
/// that every view sees, can leave the index.
fn removable(versions: &[Version], horizon: TxnId) -> bool {
    match versions {
        [] => true,
        [only] => only.row.is_none() && only.txn < horizon,
        _ => false,
    }
}

/// Keeps the newest version that every view sees and everything newer;
/// older versions are unreachable.
fn trim(versions: &mut SmallVec<[Version; 1]>, horizon: TxnId) {
    if versions.len() < 2 {
        return;
    }
    if let Some(pos) = versions.iter().rposition(|v| v.txn < horizon) {
        if pos > 0 {
            versions.drain(..pos);
            // Back into the record: one version needs no allocation.
            if versions.len() == 1 && versions.spilled() {
                versions.shrink_to_fit();
            }
        }
    }
}

/// Which secondary index a position of `Schema::secondary` belongs to.
pub fn secondary_position(index: usize) -> usize {
    debug_assert!(index != PRIMARY);
    index - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnDef, IndexDef};
    use lockstep_types::{DataType, Value};

    fn table() -> Table {
        Table::new(TableDef {
            id: 1,
            database: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef {
                name: "id".into(),
                data_type: DataType::Int { unsigned: false },
                nullable: false,
                default: None,
                auto_increment: false,
                default_now: false,
                on_update_now: false,
                collation: 0,
            }],
            indexes: vec![IndexDef {
                name: "PRIMARY".into(),
                columns: vec![0],
                unique: true,
            }],
            hidden_row_id: None,
            collation: 0,
        })
    }

    fn row(v: i64) -> Option<Row> {
        Some(Row::new(&[Value::Int(v)]))
    }

    /// Each transaction writes row "k" with its own id as the value.
    fn push_writes(t: &Table, txns: impl IntoIterator<Item = TxnId>, horizon: TxnId) {
        for txn in txns {
            let version = Version {
                txn,
                row: row(txn as i64),
            };
            t.push_version(b"k", version, horizon);
        }
    }

    #[test]
    fn readers_see_their_version() {
        let t = table();
        t.push_version(
            b"k",
            Version {
                txn: 5,
                row: row(1),
            },
            0,
        );
        t.push_version(
            b"k",
            Version {
                txn: 9,
                row: row(2),
            },
            0,
        );
        let rec = t.record(b"k").expect("record was inserted");
        let v = |r: Option<Row>| r.map(|r| r.get(0).to_i64().expect("int"));
        assert_eq!(v(rec.read(|id| id < 9)), Some(1));
        assert_eq!(v(rec.read(|_| true)), Some(2));
        assert_eq!(v(rec.read(|_| false)), None);
        t.undo_version(b"k", 9);
        assert_eq!(v(rec.read(|_| true)), Some(1));
    }

    #[test]
    fn purge_of_an_update_leaves_one_inline_version() {
        let t = table();
        push_writes(&t, [3, 7], 0);
        let rec = t.record(b"k").expect("record was inserted");
        // A view older than 7 still needs version 3.
        t.trim_record(b"k", 5);
        assert_eq!(rec.chain.lock().versions.len(), 2);
        t.trim_record(b"k", 8);
        let chain = rec.chain.lock();
        assert_eq!(chain.versions.len(), 1);
        assert_eq!(chain.versions[0].txn, 7);
        assert!(!chain.versions.spilled(), "one version lives in the record");
    }

    #[test]
    fn purge_check_says_what_purge_may_do() {
        let t = table();
        assert!(matches!(t.purge_check(b"k", 100), PurgeCheck::Missing));
        push_writes(&t, [3, 7], 0);
        // A view older than 7 keeps both images.
        match t.purge_check(b"k", 5) {
            PurgeCheck::Live(images) => assert_eq!(images.len(), 2),
            _ => panic!("an updated row stays"),
        }
        t.push_version(b"k", Version { txn: 9, row: None }, 0);
        // The delete is not yet visible to every view.
        match t.purge_check(b"k", 9) {
            PurgeCheck::Live(images) => {
                assert_eq!(images.len(), 1, "trimmed to the row before the delete")
            }
            _ => panic!("a delete some view cannot see keeps the record"),
        }
        assert!(matches!(t.purge_check(b"k", 10), PurgeCheck::Removable));
        assert!(t.purge_record(b"k", 10));
        assert!(matches!(t.purge_check(b"k", 10), PurgeCheck::Missing));
    }

    #[test]
    fn trim_keeps_what_views_need() {
        let t = table();
        push_writes(&t, 1..=10, 6);
        let rec = t.record(b"k").expect("record was inserted");
        assert_eq!(rec.chain.lock().versions.first().map(|v| v.txn), Some(5));
        t.push_version(b"k", Version { txn: 11, row: None }, 100);
        assert!(t.purge_record(b"k", 100));
        assert!(t.record(b"k").is_none());
        t.push_version(
            b"k",
            Version {
                txn: 12,
                row: row(1),
            },
            100,
        );
        assert!(t.record(b"k").is_some());
    }

    /// The hash and the skip list hold the same records: every linked
    /// record is found by key, as that very node, and nothing else is.
    fn assert_point_index_agrees(t: &Table) {
        let mut linked = 0;
        for entry in t.range(Bound::Unbounded, Bound::Unbounded, false) {
            let found = t
                .record(entry.key())
                .expect("a linked record is found by key");
            assert!(
                std::ptr::eq(&*found, entry.value()),
                "found as the same node"
            );
            linked += 1;
        }
        assert_eq!(
            t.point.len(),
            linked,
            "no unlinked record stays in the hash"
        );
    }

    #[test]
    fn point_lookups_follow_inserts_purge_recovery_and_truncate() {
        let t = table();
        let key = |i: u32| i.to_be_bytes().to_vec();
        for i in 0..1000 {
            t.push_version(
                &key(i),
                Version {
                    txn: 1,
                    row: row(1),
                },
                0,
            );
        }
        assert_point_index_agrees(&t);
        // Delete and purge every third row, then write some of them again.
        for i in (0..1000).step_by(3) {
            t.push_version(&key(i), Version { txn: 2, row: None }, 0);
            assert!(t.purge_record(&key(i), 3));
            assert!(t.record(&key(i)).is_none());
        }
        for i in (0..1000).step_by(6) {
            t.push_version(
                &key(i),
                Version {
                    txn: 4,
                    row: row(4),
                },
                5,
            );
        }
        assert_point_index_agrees(&t);
        // Recovery replaces and removes records outright.
        for i in 0..100 {
            t.load_row(key(i), row(7));
        }
        for i in 100..200 {
            t.remove_record(&key(i));
        }
        assert_point_index_agrees(&t);
        let v = t.record(&key(1)).and_then(|r| r.read(|_| true));
        assert_eq!(v.map(|r| r.get(0).to_i64().expect("int")), Some(7));
        t.clear();
        assert!(t.record(&key(1)).is_none());
        assert_point_index_agrees(&t);
        // The table can move with records in it: the hash's entries point
        // at the boxed skip list, not into the table.
        t.push_version(
            &key(1),
            Version {
                txn: 9,
                row: row(9),
            },
            0,
        );
        let moved = Box::new(t);
        assert_point_index_agrees(&moved);
    }

    #[test]
    fn writers_and_purge_racing_on_keys_leave_the_hash_exact() {
        let t = table();
        let keys: Vec<Vec<u8>> = (0u32..16).map(|i| i.to_be_bytes().to_vec()).collect();
        std::thread::scope(|s| {
            // One writer per key set, as the row lock guarantees: insert,
            // delete, again, with txn ids rising so purge can remove.
            for half in keys.chunks(8) {
                let t = &t;
                s.spawn(move || {
                    for round in 0..2_000u64 {
                        for k in half {
                            let txn = 2 * round + 1;
                            t.push_version(k, Version { txn, row: row(1) }, txn);
                            t.push_version(
                                k,
                                Version {
                                    txn: txn + 1,
                                    row: None,
                                },
                                txn,
                            );
                        }
                    }
                });
            }
            // Purge and readers race with them.
            let t = &t;
            let keys = &keys;
            s.spawn(move || {
                for round in 0..4_000u64 {
                    for k in keys {
                        t.purge_record(k, 2 * round);
                        if let Some(r) = t.record(k) {
                            r.read(|_| true);
                        }
                    }
                }
            });
        });
        assert_point_index_agrees(&t);
        for k in &keys {
            t.purge_record(k, u64::MAX);
        }
        assert_point_index_agrees(&t);
        assert_eq!(t.point.len(), 0, "every record was deleted and purged");
    }
}
