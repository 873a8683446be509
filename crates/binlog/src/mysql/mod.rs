//! MySQL 8 binlog events (v4 header, optional CRC32), as change-data-
//! capture tools read them from COM_BINLOG_DUMP[_GTID]. Framing and the
//! control events are here; TABLE_MAP and ROWS in `rows`, DDL text in
//! `ddl`. Byte layouts follow the MySQL internals documentation.

pub mod ddl;
pub mod histogram_sql;
pub mod json;
pub mod rows;
mod rows_time;
pub mod stream;

use crate::GtidSet;

pub const QUERY: u8 = 2;
pub const ROTATE: u8 = 4;
pub const FORMAT_DESCRIPTION: u8 = 15;
pub const XID: u8 = 16;
pub const TABLE_MAP: u8 = 19;
pub const HEARTBEAT: u8 = 27;
pub const WRITE_ROWS_V2: u8 = 30;
pub const UPDATE_ROWS_V2: u8 = 31;
pub const DELETE_ROWS_V2: u8 = 32;
pub const GTID: u8 = 33;
pub const PREVIOUS_GTIDS: u8 = 35;

pub const HEADER_LEN: usize = 19;
pub const CHECKSUM_LEN: usize = 4;
/// LOG_EVENT_ARTIFICIAL_F: made up by the dump thread, not in the file.
pub const ARTIFICIAL: u16 = 0x20;
pub const SERVER_VERSION: &str = "8.0.36-lockstep";
/// 8.0.36 as immediate_server_version writes it.
const SERVER_VERSION_ID: u32 = 80036;

/// Post-header length of each event type 1..=41, as MySQL 8.0 declares
/// them in its FORMAT_DESCRIPTION_EVENT.
pub const POST_HEADER_LENS: [u8; 41] = [
    56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0,
    10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0,
];

/// One event before framing: its type, header fields and body.
pub struct Header {
    pub type_code: u8,
    pub timestamp: u32,
    pub server_id: u32,
    pub flags: u16,
}

/// The whole event: header, body and (with `checksum`) its CRC32.
/// `end_pos` is the header's log_pos: where the next event starts.
pub fn frame(h: &Header, body: &[u8], end_pos: u32, checksum: bool) -> Vec<u8> {
    let size = HEADER_LEN + body.len() + if checksum { CHECKSUM_LEN } else { 0 };
    let mut o = Vec::with_capacity(size);
    o.extend_from_slice(&h.timestamp.to_le_bytes());
    o.push(h.type_code);
    o.extend_from_slice(&h.server_id.to_le_bytes());
    o.extend_from_slice(&(size as u32).to_le_bytes());
    o.extend_from_slice(&end_pos.to_le_bytes());
    o.extend_from_slice(&h.flags.to_le_bytes());
    o.extend_from_slice(body);
    if checksum {
        let crc = crc32fast::hash(&o);
        o.extend_from_slice(&crc.to_le_bytes());
    }
    debug_assert_eq!(o.len(), size);
    o
}

/// An event framed with a checksum, re-framed without it (the client did
/// not ask for checksums): same log_pos, shorter size.
pub fn strip_checksum(ev: &[u8]) -> Vec<u8> {
    let mut o = ev[..ev.len() - CHECKSUM_LEN].to_vec();
    let size = o.len() as u32;
    o[9..13].copy_from_slice(&size.to_le_bytes());
    if o[4] == FORMAT_DESCRIPTION {
        // The checksum_alg byte is the body's last: now OFF.
        let n = o.len();
        o[n - 1] = 0;
    }
    o
}

/// A length-encoded integer (MySQL's net_field_length).
pub fn put_packed(o: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => o.push(v as u8),
        251..=0xffff => {
            o.push(0xfc);
            o.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            o.push(0xfd);
            o.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            o.push(0xfe);
            o.extend_from_slice(&v.to_le_bytes());
        }
    }
}

pub fn format_description_body(checksum: bool) -> Vec<u8> {
    let mut o = Vec::with_capacity(99);
    o.extend_from_slice(&4u16.to_le_bytes());
    let mut version = [0u8; 50];
    version[..SERVER_VERSION.len()].copy_from_slice(SERVER_VERSION.as_bytes());
    o.extend_from_slice(&version);
    o.extend_from_slice(&0u32.to_le_bytes());
    o.push(HEADER_LEN as u8);
    o.extend_from_slice(&POST_HEADER_LENS);
    o.push(u8::from(checksum));
    o
}

/// PREVIOUS_GTIDS and COM_BINLOG_DUMP_GTID share this encoding: n_sids,
/// then per source its uuid, n_intervals and [start, end) pairs.
pub fn gtid_set_body(set: &GtidSet) -> Vec<u8> {
    let mut o = Vec::new();
    let sources: Vec<_> = set.intervals().collect();
    o.extend_from_slice(&(sources.len() as u64).to_le_bytes());
    for (uuid, iv) in sources {
        o.extend_from_slice(uuid);
        o.extend_from_slice(&(iv.len() as u64).to_le_bytes());
        for &(lo, hi) in iv {
            o.extend_from_slice(&lo.to_le_bytes());
            o.extend_from_slice(&(hi + 1).to_le_bytes());
        }
    }
    o
}

/// What a GTID event says about its transaction.
pub struct GtidInfo {
    pub uuid: [u8; 16],
    pub gno: u64,
    pub last_committed: u64,
    pub sequence_number: u64,
    pub commit_us: u64,
    /// Bytes of the whole transaction, this event included.
    pub transaction_length: u64,
}

pub fn gtid_body(g: &GtidInfo) -> Vec<u8> {
    let mut o = Vec::with_capacity(64);
    o.push(0); // no statement-based parts
    o.extend_from_slice(&g.uuid);
    o.extend_from_slice(&g.gno.to_le_bytes());
    o.push(2); // LOGICAL_TIMESTAMP_TYPECODE
    o.extend_from_slice(&g.last_committed.to_le_bytes());
    o.extend_from_slice(&g.sequence_number.to_le_bytes());
    // immediate_commit_timestamp (7 bytes; top bit clear: the original
    // one is the same), transaction_length, immediate_server_version.
    o.extend_from_slice(&g.commit_us.to_le_bytes()[..7]);
    put_packed(&mut o, g.transaction_length);
    o.extend_from_slice(&SERVER_VERSION_ID.to_le_bytes());
    o
}

/// Size of a framed GTID event for a transaction of `rest` bytes after it
/// (transaction_length includes the GTID event, whose size depends on it).
pub fn gtid_event_len(rest: u64, checksum: bool) -> u64 {
    let base = (HEADER_LEN + if checksum { CHECKSUM_LEN } else { 0 }) as u64 + 42 + 7 + 4;
    let mut len = base + 1;
    loop {
        let mut o = Vec::new();
        put_packed(&mut o, rest + len);
        if base + o.len() as u64 == len {
            return len;
        }
        len = base + o.len() as u64;
    }
}

/// QUERY_EVENT: `db` is the default database, `sql` the statement.
pub fn query_body(db: &str, sql: &str) -> Vec<u8> {
    let mut status = Vec::new();
    status.push(0); // Q_FLAGS2_CODE
    status.extend_from_slice(&0u32.to_le_bytes());
    status.push(1); // Q_SQL_MODE_CODE
    status.extend_from_slice(&0u64.to_le_bytes());
    status.push(6); // Q_CATALOG_NZ_CODE
    status.push(3);
    status.extend_from_slice(b"std");
    status.push(4); // Q_CHARSET_CODE: client, connection, server
    for _ in 0..3 {
        status.extend_from_slice(&255u16.to_le_bytes());
    }
    let db = &db.as_bytes()[..db.len().min(255)];
    let mut o = Vec::with_capacity(13 + status.len() + db.len() + 1 + sql.len());
    o.extend_from_slice(&0u32.to_le_bytes()); // thread id
    o.extend_from_slice(&0u32.to_le_bytes()); // exec time
    o.push(db.len() as u8);
    o.extend_from_slice(&0u16.to_le_bytes()); // error code
    o.extend_from_slice(&(status.len() as u16).to_le_bytes());
    o.extend_from_slice(&status);
    o.extend_from_slice(db);
    o.push(0);
    o.extend_from_slice(sql.as_bytes());
    o
}

pub fn xid_body(xid: u64) -> Vec<u8> {
    xid.to_le_bytes().to_vec()
}

pub fn rotate_body(position: u64, file: &str) -> Vec<u8> {
    let mut o = position.to_le_bytes().to_vec();
    o.extend_from_slice(file.as_bytes());
    o
}

/// HEARTBEAT_LOG_EVENT: the current file's name (log_pos: the position).
pub fn heartbeat_body(file: &str) -> Vec<u8> {
    file.as_bytes().to_vec()
}

#[cfg(test)]
mod tests;
