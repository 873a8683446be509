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

// 03: DECIMAL values are a 256-bit mantissa and a scale, and the snapshot
// carries the accounts. Older snapshots are not read: their DECIMAL values
// have another encoding.
const MAGIC: &[u8; 8] = b"LSCKPT03";

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

/// Writes the snapshot durably: temp file, fsync, rename, fsync dir. On
/// failure (e.g. disk full) the temp file is removed and the previous
/// checkpoints are untouched.
pub fn write(dir: &Path, snap: &Snapshot) -> std::io::Result<PathBuf> {
    let body = bincode::serialize(snap).map_err(std::io::Error::other)?;
    let crc = crc32fast::hash(&body);
    let path = dir.join(file_name(snap.start_lsn));
    let tmp = dir.join(format!("{}{TMP_SUFFIX}", file_name(snap.start_lsn)));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(&(body.len() as u64).to_le_bytes())?;
        f.write_all(&crc.to_le_bytes())?;
        f.write_all(&body)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(path)
}

const TMP_SUFFIX: &str = ".tmp";

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
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.len() < 20 || &bytes[..8] != MAGIC {
        return Err("bad header: not a checkpoint file".into());
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
    let crc = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
    let body = bytes.get(20..20 + len).ok_or("truncated")?;
    if crc32fast::hash(body) != crc {
        return Err("crc mismatch".into());
    }
    bincode::deserialize(body).map_err(|e| e.to_string())
}
