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

use crate::accounts::Account;
use lockstep_tables::TableDef;
use lockstep_types::Value;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"LSCKPT02";
/// Snapshots written before accounts existed: read, never written.
const MAGIC_V1: &[u8; 8] = b"LSCKPT01";

#[derive(Serialize, Deserialize)]
pub struct Snapshot {
    /// Replay the log from here.
    pub start_lsn: u64,
    /// GTID numbers below this are in the snapshot or in the log after it.
    pub next_gno: u64,
    pub databases: Vec<String>,
    pub tables: Vec<TableSnapshot>,
    /// Stored user accounts with their grants.
    pub accounts: Vec<Account>,
}

/// The LSCKPT01 layout: a Snapshot without accounts.
#[derive(Deserialize)]
struct SnapshotV1 {
    start_lsn: u64,
    next_gno: u64,
    databases: Vec<String>,
    tables: Vec<TableSnapshot>,
}

#[derive(Serialize, Deserialize)]
pub struct TableSnapshot {
    pub def: TableDef,
    pub auto_increment: u64,
    pub next_row_id: u64,
    pub rows: Vec<Vec<Value>>,
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

/// Writes the snapshot durably: temp file, fsync, rename, fsync dir.
pub fn write(dir: &Path, snap: &Snapshot) -> std::io::Result<PathBuf> {
    let body = bincode::serialize(snap).map_err(std::io::Error::other)?;
    let crc = crc32fast::hash(&body);
    let path = dir.join(file_name(snap.start_lsn));
    let tmp = dir.join(format!("{}.tmp", file_name(snap.start_lsn)));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(&(body.len() as u64).to_le_bytes())?;
        f.write_all(&crc.to_le_bytes())?;
        f.write_all(&body)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(path)
}

/// Reads and verifies a snapshot file.
pub fn read(path: &Path) -> Result<Snapshot, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.len() < 20 || (&bytes[..8] != MAGIC && &bytes[..8] != MAGIC_V1) {
        return Err("not a checkpoint file".into());
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
    let crc = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
    let body = bytes
        .get(20..20 + len)
        .ok_or("checkpoint file is truncated")?;
    if crc32fast::hash(body) != crc {
        return Err("checkpoint checksum mismatch".into());
    }
    if &bytes[..8] == MAGIC_V1 {
        let v1: SnapshotV1 = bincode::deserialize(body).map_err(|e| e.to_string())?;
        return Ok(Snapshot {
            start_lsn: v1.start_lsn,
            next_gno: v1.next_gno,
            databases: v1.databases,
            tables: v1.tables,
            accounts: Vec::new(),
        });
    }
    bincode::deserialize(body).map_err(|e| e.to_string())
}
