//! `MemStorage`: log files in memory, for fault-injection tests and a
//! deterministic simulation. It keeps what a file system keeps apart:
//! bytes written (visible to reads) versus bytes synced (survive a crash),
//! and names created or renamed versus names made durable by a directory
//! sync. `crash` returns the storage a restarted process would find.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::storage::{enospc, DirLock, Faults, LogFile, OpenMode, Storage};

/// What a crash keeps of each file's written-but-not-synced changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsynced {
    LoseAll,
    KeepAll,
    /// Per file, chosen from the seed: lose all, keep all, or keep a prefix
    /// of the changes in the order they were made, cut inside a write.
    Seeded(u64),
}

/// One change to a file since its last sync.
#[derive(Debug, Clone)]
enum Change {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

#[derive(Debug, Default, Clone)]
struct Node {
    /// What reads see.
    data: Vec<u8>,
    /// What survives a crash for sure.
    synced: Vec<u8>,
    /// Changes after `synced`, oldest first.
    pending: Vec<Change>,
    /// Open handles: a node without a name stays while one is open.
    opens: usize,
}

fn apply(buf: &mut Vec<u8>, c: &Change) {
    match c {
        Change::Write(off, bytes) => {
            let (a, b) = (*off as usize, *off as usize + bytes.len());
            if buf.len() < b {
                buf.resize(b, 0);
            }
            buf[a..b].copy_from_slice(bytes);
        }
        Change::SetLen(n) => buf.resize(*n as usize, 0),
    }
}

#[derive(Debug, Default)]
struct State {
    /// Set by `crash`: this instance is the lost process's view; every
    /// operation fails, so its threads cannot touch what survived.
    dead: bool,
    dirs: BTreeSet<PathBuf>,
    nodes: HashMap<u64, Node>,
    next_id: u64,
    /// Current names.
    names: BTreeMap<PathBuf, u64>,
    /// Names as of each directory's last sync.
    durable: BTreeMap<PathBuf, u64>,
    locks: BTreeSet<PathBuf>,
    capacity: Option<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    state: Mutex<State>,
    faults: Arc<Faults>,
}

/// In-memory storage; clones share the same files.
#[derive(Debug, Clone, Default)]
pub struct MemStorage {
    inner: Arc<Inner>,
}

fn errno(n: i32) -> io::Error {
    io::Error::from_raw_os_error(n)
}

impl State {
    fn live(&self) -> io::Result<()> {
        if self.dead {
            return Err(errno(libc::EIO));
        }
        Ok(())
    }

    fn parent_exists(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() && !self.dirs.contains(d) => {
                Err(errno(libc::ENOENT))
            }
            _ => Ok(()),
        }
    }

    /// Bytes held by files that have a name.
    fn used(&self) -> u64 {
        let ids: BTreeSet<u64> = self.names.values().copied().collect();
        ids.iter().map(|i| self.nodes[i].data.len() as u64).sum()
    }

    /// ENOSPC if growing some file by `growth` bytes does not fit.
    fn room(&self, growth: u64) -> io::Result<()> {
        match self.capacity {
            Some(cap) if growth > 0 && self.used() + growth > cap => Err(enospc()),
            _ => Ok(()),
        }
    }

    /// Frees a node nothing refers to any more (no name, durable or
    /// current, and no open handle).
    fn gc(&mut self, id: u64) {
        let named = self
            .names
            .values()
            .chain(self.durable.values())
            .any(|&i| i == id);
        if !named && self.nodes.get(&id).is_some_and(|n| n.opens == 0) {
            self.nodes.remove(&id);
        }
    }

    fn node(&mut self, id: u64) -> io::Result<&mut Node> {
        self.live()?;
        Ok(self.nodes.get_mut(&id).expect("open files keep their node"))
    }
}

impl MemStorage {
    pub fn new() -> Self {
        MemStorage::default()
    }

    /// Limits the bytes all named files may hold (`None`: no limit). Writes
    /// that would grow past it fail with ENOSPC until files are removed or
    /// the limit is raised.
    pub fn set_capacity(&self, bytes: Option<u64>) {
        self.inner.state.lock().capacity = bytes;
    }

    /// Bytes held by named files now.
    pub fn used(&self) -> u64 {
        self.inner.state.lock().used()
    }

    /// A file's current contents (written, synced or not), if it exists.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.inner.state.lock();
        let id = st.names.get(path)?;
        Some(st.nodes[id].data.clone())
    }

    /// Bytes written to a file since its last sync (a length change counts
    /// one), if it exists.
    pub fn unsynced(&self, path: &Path) -> Option<u64> {
        let st = self.inner.state.lock();
        let id = st.names.get(path)?;
        Some(st.nodes[id].pending.iter().map(change_len).sum())
    }

    /// The names in `dir` now, sorted.
    pub fn names(&self, dir: &Path) -> Vec<String> {
        let mut v = self.list(dir).unwrap_or_default();
        v.sort();
        v
    }

    /// Simulates a power loss: returns what a restarted process finds (names
    /// made durable by a directory sync; each file's synced bytes plus what
    /// `how` keeps of the rest), and kills this instance: every later
    /// operation on it or its open files fails with EIO. Fault switches and
    /// locks do not survive; the capacity does.
    pub fn crash(&self, how: Unsynced) -> MemStorage {
        let mut st = self.inner.state.lock();
        st.dead = true;
        let mut rng = how_seed(how);
        let mut next = State {
            dirs: st.dirs.clone(),
            capacity: st.capacity,
            ..State::default()
        };
        for (path, id) in &st.durable {
            let n = &st.nodes[id];
            let mut data = n.synced.clone();
            let keep = match how {
                Unsynced::LoseAll => 0,
                Unsynced::KeepAll => u64::MAX,
                Unsynced::Seeded(_) => seeded_keep(&mut rng, &n.pending),
            };
            keep_prefix(&mut data, &n.pending, keep);
            let nid = next.next_id;
            next.next_id += 1;
            next.nodes.insert(
                nid,
                Node {
                    synced: data.clone(),
                    data,
                    ..Node::default()
                },
            );
            next.names.insert(path.clone(), nid);
            next.durable.insert(path.clone(), nid);
        }
        MemStorage {
            inner: Arc::new(Inner {
                state: Mutex::new(next),
                faults: Arc::new(Faults::default()),
            }),
        }
    }
}

fn how_seed(how: Unsynced) -> u64 {
    match how {
        Unsynced::Seeded(s) => s,
        _ => 0,
    }
}

/// splitmix64: a small, seedable generator (no dependency for tests).
fn next_rand(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How many bytes of `pending` (in order) one file keeps: none, all, or a
/// prefix cut at a random byte.
fn seeded_keep(rng: &mut u64, pending: &[Change]) -> u64 {
    let total: u64 = pending.iter().map(change_len).sum();
    match next_rand(rng) % 3 {
        0 => 0,
        1 => u64::MAX,
        _ => next_rand(rng) % (total + 1),
    }
}

/// A write counts its bytes; a length change counts as one byte.
fn change_len(c: &Change) -> u64 {
    match c {
        Change::Write(_, b) => b.len() as u64,
        Change::SetLen(_) => 1,
    }
}

/// Applies the first `keep` bytes' worth of `pending` to `data`.
fn keep_prefix(data: &mut Vec<u8>, pending: &[Change], mut keep: u64) {
    for c in pending {
        if keep == 0 {
            return;
        }
        let n = change_len(c);
        match c {
            Change::Write(off, b) if keep < n => {
                apply(data, &Change::Write(*off, b[..keep as usize].to_vec()));
                return;
            }
            _ => apply(data, c),
        }
        keep -= n;
    }
}

struct MemFile {
    inner: Arc<Inner>,
    id: u64,
    writable: bool,
}

impl MemFile {
    fn check_writable(&self) -> io::Result<()> {
        if !self.writable {
            return Err(errno(libc::EBADF));
        }
        Ok(())
    }

    /// Records a change: visible now, durable at the next sync.
    fn change(&self, st: &mut State, c: Change) -> io::Result<()> {
        let n = st.node(self.id)?;
        apply(&mut n.data, &c);
        n.pending.push(c);
        Ok(())
    }
}

impl LogFile for MemFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let mut st = self.inner.state.lock();
        let data = &st.node(self.id)?.data;
        let a = (off as usize).min(data.len());
        let n = buf.len().min(data.len() - a);
        buf[..n].copy_from_slice(&data[a..a + n]);
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
        self.check_writable()?;
        let mut st = self.inner.state.lock();
        let len = st.node(self.id)?.data.len() as u64;
        let growth = (off + buf.len() as u64).saturating_sub(len);
        let torn = self.inner.faults.on_write(buf.len() as u64, growth)?;
        st.room(growth)?;
        if let Some(k) = torn {
            self.change(&mut st, Change::Write(off, buf[..k as usize].to_vec()))?;
            return Err(Faults::torn_error());
        }
        self.change(&mut st, Change::Write(off, buf.to_vec()))?;
        Ok(buf.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check_writable()?;
        let mut st = self.inner.state.lock();
        let growth = len.saturating_sub(st.node(self.id)?.data.len() as u64);
        if growth > 0 && self.inner.faults.is_full() {
            return Err(enospc());
        }
        st.room(growth)?;
        self.change(&mut st, Change::SetLen(len))
    }

    fn size(&self) -> io::Result<u64> {
        let mut st = self.inner.state.lock();
        Ok(st.node(self.id)?.data.len() as u64)
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.inner.state.lock();
        st.live()?;
        self.inner.faults.on_sync()?;
        let n = st.node(self.id)?;
        for c in std::mem::take(&mut n.pending) {
            apply(&mut n.synced, &c);
        }
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }
}

impl Drop for MemFile {
    fn drop(&mut self) {
        let mut st = self.inner.state.lock();
        if let Some(n) = st.nodes.get_mut(&self.id) {
            n.opens -= 1;
        }
        st.gc(self.id);
    }
}

struct MemLock {
    inner: Arc<Inner>,
    dir: PathBuf,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.inner.state.lock().locks.remove(&self.dir);
    }
}

impl Storage for MemStorage {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.inner.state.lock();
        st.live()?;
        for d in dir.ancestors().filter(|d| !d.as_os_str().is_empty()) {
            st.dirs.insert(d.to_path_buf());
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let st = self.inner.state.lock();
        st.live()?;
        if !st.dirs.contains(dir) {
            return Err(errno(libc::ENOENT));
        }
        let names = st.names.keys().filter(|p| p.parent() == Some(dir));
        Ok(names
            .filter_map(|p| p.file_name()?.to_str().map(String::from))
            .collect())
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn LogFile>> {
        let mut st = self.inner.state.lock();
        st.live()?;
        st.parent_exists(path)?;
        let id = match (st.names.get(path).copied(), mode) {
            (Some(id), OpenMode::CreateTruncate) => {
                let n = st.node(id)?;
                apply(&mut n.data, &Change::SetLen(0));
                n.pending.push(Change::SetLen(0));
                id
            }
            (Some(id), _) => id,
            (None, OpenMode::Read | OpenMode::Write) => return Err(errno(libc::ENOENT)),
            (None, _) => {
                let id = st.next_id;
                st.next_id += 1;
                st.nodes.insert(id, Node::default());
                st.names.insert(path.to_path_buf(), id);
                id
            }
        };
        st.node(id)?.opens += 1;
        Ok(Arc::new(MemFile {
            inner: self.inner.clone(),
            id,
            writable: mode != OpenMode::Read,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.inner.state.lock();
        st.live()?;
        st.parent_exists(to)?;
        let id = st.names.remove(from).ok_or_else(|| errno(libc::ENOENT))?;
        if let Some(old) = st.names.insert(to.to_path_buf(), id) {
            st.gc(old);
        }
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut st = self.inner.state.lock();
        st.live()?;
        let id = st.names.remove(path).ok_or_else(|| errno(libc::ENOENT))?;
        st.gc(id);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut st = self.inner.state.lock();
        st.live()?;
        if !st.dirs.contains(dir) {
            return Err(errno(libc::ENOENT));
        }
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        let was: Vec<u64> = st
            .durable
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(_, &id)| id)
            .collect();
        st.durable.retain(|p, _| !in_dir(p));
        let now: Vec<(PathBuf, u64)> = st
            .names
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, &id)| (p.clone(), id))
            .collect();
        st.durable.extend(now);
        for id in was {
            st.gc(id);
        }
        Ok(())
    }

    fn lock(&self, dir: &Path) -> io::Result<Option<DirLock>> {
        let mut st = self.inner.state.lock();
        st.live()?;
        if !st.locks.insert(dir.to_path_buf()) {
            return Ok(None);
        }
        Ok(Some(Box::new(MemLock {
            inner: self.inner.clone(),
            dir: dir.to_path_buf(),
        })))
    }

    fn faults(&self) -> &Faults {
        &self.inner.faults
    }
}
