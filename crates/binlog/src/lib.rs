//! The record each committing transaction writes to the log. The log is
//! redo log and binlog in one (brief: "no second log and no XA"), so a
//! record carries what replication needs — GTID, last_committed and
//! sequence_number (5.9, 9.4.3) — and row events that recovery replays.

pub mod gtid;
pub mod mysql;
pub use gtid::{Gtid, GtidSet};
pub mod routine;
pub mod view;
pub mod writeset;
pub use routine::{RoutineDef, RoutineKind};
pub use view::{CheckOption, ViewDef};

use lockstep_accounts::{Account, AccountRoles};
use lockstep_tables::{
    CheckConstraint, ForeignKey, GeneratedColumn, IndexDef, TableComments, TableDef,
};
use lockstep_types::Value;
use serde::{Deserialize, Serialize};

/// 4: column and table definitions carry a collation; 3 and 2 are still
/// read (`lockstep_tables::layout`). 3: column types may be ENUM/SET with their members (DataType::EnumOf,
/// SetOf); otherwise as 2, which is still read. 2: DECIMAL values are a
/// 256-bit mantissa and a scale (65 digits).
pub const FORMAT_VERSION: u8 = 4;
/// Definitions before 4 have no collations.
const FIRST_WITH_COLLATIONS: u8 = 4;
/// The oldest record format still read (its encoding is a subset of 3's).
pub const OLDEST_FORMAT_VERSION: u8 = 2;

/// One committed transaction (or DDL statement) in the log.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TxnRecord {
    pub version: u8,
    /// Source server's uuid: the GTID is server_uuid:gno.
    pub server_uuid: [u8; 16],
    pub gno: u64,
    /// The newest earlier transaction this one conflicts with (writesets);
    /// replay may run it in parallel with everything after that.
    pub last_committed: u64,
    pub sequence_number: u64,
    pub timestamp_us: u64,
    pub events: Vec<Event>,
}

/// Offsets of the fields patched after serialization, once the commit
/// order is known (bincode's fixed-width encoding: u8, 16 bytes, u64...).
const GNO_OFFSET: usize = 1 + 16;
const LAST_COMMITTED_OFFSET: usize = GNO_OFFSET + 8;
const SEQUENCE_OFFSET: usize = LAST_COMMITTED_OFFSET + 8;

/// The first five variants must keep their order: `RowEvent` mirrors them
/// (bincode writes the variant's index).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub enum Event {
    /// Row events; Insert/Update/Delete carry full row images
    /// (binlog_row_image=FULL).
    Insert {
        table: u32,
        row: Vec<Value>,
    },
    Update {
        table: u32,
        before: Vec<Value>,
        after: Vec<Value>,
    },
    Delete {
        table: u32,
        before: Vec<Value>,
    },
    /// binlog_row_image=MINIMAL: primary-key values, then (column, value)
    /// for each changed column.
    UpdateRow {
        table: u32,
        key: Vec<Value>,
        set: Vec<(u16, Value)>,
    },
    /// binlog_row_image=MINIMAL: primary-key values.
    DeleteRow {
        table: u32,
        key: Vec<Value>,
    },
    CreateDatabase {
        name: String,
    },
    DropDatabase {
        name: String,
    },
    CreateTable {
        def: TableDef,
    },
    DropTable {
        table: u32,
    },
    CreateIndex {
        table: u32,
        index: IndexDef,
    },
    DropIndex {
        table: u32,
        name: String,
    },
    Truncate {
        table: u32,
    },
    /// CREATE USER / ALTER USER / GRANT / REVOKE: the account's whole new
    /// state, so replaying it twice changes nothing.
    PutAccount {
        account: Account,
    },
    DropAccount {
        user: String,
        host: String,
    },
    /// ALTER TABLE: the table is rebuilt as `def` (a new table id), each
    /// new column filled from `sources`; logged before the switch, so
    /// recovery redoes it on the rows replayed before it.
    AlterTable {
        table: u32,
        def: TableDef,
        sources: Vec<ColumnSource>,
    },
    /// RENAME TABLE (or ALTER TABLE ... RENAME alone): same id and rows.
    RenameTable {
        table: u32,
        database: String,
        name: String,
    },
    /// The whole list of a table's foreign keys (CREATE TABLE, ALTER TABLE
    /// ADD/DROP FOREIGN KEY), so replaying it twice changes nothing. Added
    /// last: records written before it still decode.
    SetForeignKeys {
        table: u32,
        foreign_keys: Vec<ForeignKey>,
    },
    /// CREATE [OR REPLACE] VIEW / ALTER VIEW: the view's whole definition.
    PutView {
        view: ViewDef,
    },
    DropView {
        database: String,
        name: String,
    },
    /// The whole list of a table's CHECK constraints (CREATE TABLE, ALTER
    /// TABLE ADD/DROP/ALTER CHECK). Added last: older records still decode.
    SetChecks {
        table: u32,
        checks: Vec<CheckConstraint>,
    },
    /// CREATE PROCEDURE / FUNCTION / TRIGGER: the whole definition.
    PutRoutine {
        routine: RoutineDef,
    },
    DropRoutine {
        database: String,
        kind: RoutineKind,
        name: String,
    },
    /// The whole list of a table's generated columns (CREATE TABLE, ALTER
    /// rebuild). Added last: older records still decode.
    SetGenerated {
        table: u32,
        columns: Vec<GeneratedColumn>,
    },
    /// A table's comments, all of them (CREATE TABLE, ALTER). Added after
    /// SetGenerated: older records still decode.
    SetComments {
        table: u32,
        comments: TableComments,
    },
    /// A table's column histograms, all of them (ANALYZE TABLE ... UPDATE
    /// / DROP HISTOGRAM). Added after SetComments: older records still
    /// decode.
    SetHistograms {
        table: u32,
        histograms: Vec<lockstep_tables::histogram::ColumnHistogram>,
    },
    /// CREATE ROLE / GRANT role / SET DEFAULT ROLE: an account's whole role
    /// side (roles granted to it, default roles, lock), so replaying it
    /// twice changes nothing. Added after SetHistograms: older records still
    /// decode.
    PutRoles {
        user: String,
        host: String,
        roles: AccountRoles,
    },
    /// The table's next AUTO_INCREMENT value (CREATE TABLE ...
    /// AUTO_INCREMENT=n, ALTER TABLE ... AUTO_INCREMENT=n), already raised
    /// past the largest value in use. Added after PutRoles: older records
    /// still decode.
    SetAutoIncrement {
        table: u32,
        next: u64,
    },
}

/// Where a column of an altered table takes its existing rows' values.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub enum ColumnSource {
    /// The old table's column at this position, converted to the new
    /// column's type when that differs.
    Column(u32),
    /// One value for every row (an added column's default).
    Value(Value),
    /// 1, 2, 3... in primary-key order (an added AUTO_INCREMENT column,
    /// or a new hidden row id).
    Counter,
    /// The old table's column at this position, a TIMESTAMP becoming a
    /// DATETIME or back: moved by `seconds` (into or out of the zone of
    /// the session that altered it) before it is converted.
    Shifted { column: u32, seconds: i64 },
}

impl Event {
    /// Insert, update or delete of a row (the rest is DDL and accounts).
    pub fn is_row_event(&self) -> bool {
        matches!(
            self,
            Event::Insert { .. }
                | Event::Update { .. }
                | Event::Delete { .. }
                | Event::UpdateRow { .. }
                | Event::DeleteRow { .. }
        )
    }

    /// The table the event changes, if it names one by id.
    pub fn table(&self) -> Option<u32> {
        match self {
            Event::Insert { table, .. }
            | Event::Update { table, .. }
            | Event::Delete { table, .. }
            | Event::UpdateRow { table, .. }
            | Event::DeleteRow { table, .. }
            | Event::DropTable { table }
            | Event::CreateIndex { table, .. }
            | Event::DropIndex { table, .. }
            | Event::Truncate { table }
            | Event::AlterTable { table, .. }
            | Event::RenameTable { table, .. }
            | Event::SetForeignKeys { table, .. }
            | Event::SetChecks { table, .. }
            | Event::SetGenerated { table, .. }
            | Event::SetComments { table, .. }
            | Event::SetHistograms { table, .. }
            | Event::SetAutoIncrement { table, .. } => Some(*table),
            Event::CreateDatabase { .. }
            | Event::DropDatabase { .. }
            | Event::CreateTable { .. }
            | Event::PutAccount { .. }
            | Event::DropAccount { .. }
            | Event::PutRoles { .. }
            | Event::PutView { .. }
            | Event::DropView { .. }
            | Event::PutRoutine { .. }
            | Event::DropRoutine { .. } => None,
        }
    }
}

impl TxnRecord {
    pub fn encode(&self) -> Vec<u8> {
        bincode::serialize(self).expect("serializing plain data into a Vec cannot fail")
    }

    pub fn decode(bytes: &[u8]) -> Result<TxnRecord, String> {
        let legacy = bytes.first().is_some_and(|&v| v < FIRST_WITH_COLLATIONS);
        let record: TxnRecord =
            lockstep_tables::layout::legacy_layout(legacy, || bincode::deserialize(bytes))
                .map_err(|e| e.to_string())?;
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&record.version) {
            return Err(format!("unknown record format {}", record.version));
        }
        Ok(record)
    }

    pub fn gtid(&self) -> Gtid {
        Gtid {
            server_uuid: self.server_uuid,
            gno: self.gno,
        }
    }

    /// The GTID of an encoded record, read without decoding its events
    /// (None: too short or another format).
    pub fn peek_gtid(bytes: &[u8]) -> Option<Gtid> {
        let known = (OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(bytes.first()?);
        if bytes.len() < SEQUENCE_OFFSET + 8 || !known {
            return None;
        }
        let server_uuid = bytes[1..GNO_OFFSET].try_into().ok()?;
        let gno = u64::from_le_bytes(bytes[GNO_OFFSET..GNO_OFFSET + 8].try_into().ok()?);
        Some(Gtid { server_uuid, gno })
    }

    /// The source's commit time of an encoded record, without decoding
    /// its events (a relay log writer reports it per batch).
    pub fn peek_timestamp_us(bytes: &[u8]) -> Option<u64> {
        Self::peek_gtid(bytes)?;
        let at = SEQUENCE_OFFSET + 8;
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    }

    /// Writes the commit-order fields into an encoded record.
    pub fn patch_order(bytes: &mut [u8], gno: u64, last_committed: u64, sequence_number: u64) {
        bytes[GNO_OFFSET..GNO_OFFSET + 8].copy_from_slice(&gno.to_le_bytes());
        bytes[LAST_COMMITTED_OFFSET..LAST_COMMITTED_OFFSET + 8]
            .copy_from_slice(&last_committed.to_le_bytes());
        bytes[SEQUENCE_OFFSET..SEQUENCE_OFFSET + 8].copy_from_slice(&sequence_number.to_le_bytes());
    }
}

/// The row events of a transaction in progress, encoded as each change is
/// made rather than kept as values until commit: an update or delete then
/// borrows the old row image instead of cloning it, the image is freed as
/// soon as it is written here, and commit encodes nothing but the header.
/// The bytes are exactly those `TxnRecord::encode` writes for the same
/// events (a test holds the two to it), so readers decode either alike.
#[derive(Default)]
pub struct PendingEvents {
    /// Room for the record's header, then the events one after another.
    bytes: Vec<u8>,
    count: u64,
}

/// A borrowed row event: serializes exactly as the `Event` variant of the
/// same name (same names, fields and order; bincode writes a variant's
/// index and a slice as it writes a Vec).
#[derive(Serialize)]
pub enum RowEvent<'a> {
    Insert {
        table: u32,
        row: &'a [Value],
    },
    Update {
        table: u32,
        before: &'a [Value],
        after: &'a [Value],
    },
    Delete {
        table: u32,
        before: &'a [Value],
    },
    UpdateRow {
        table: u32,
        key: &'a [Value],
        set: &'a [(u16, Value)],
    },
    DeleteRow {
        table: u32,
        key: &'a [Value],
    },
}

/// Bytes of a record before its first event: the fixed fields and the
/// event count (bincode: u8, 16 bytes, four u64, then the Vec's u64 length).
const HEADER_LEN: usize = SEQUENCE_OFFSET + 8 + 8 + 8;

impl PendingEvents {
    pub fn push(&mut self, event: RowEvent<'_>) {
        if self.bytes.is_empty() {
            self.bytes.resize(HEADER_LEN, 0);
        }
        bincode::serialize_into(&mut self.bytes, &event)
            .expect("serializing plain data into a Vec cannot fail");
        self.count += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Where the events stand now, for `truncate` (statement rollback).
    pub fn mark(&self) -> (usize, u64) {
        (self.bytes.len(), self.count)
    }

    /// Drops the events pushed since `mark`.
    pub fn truncate(&mut self, (len, count): (usize, u64)) {
        debug_assert!(len <= self.bytes.len() && count <= self.count);
        self.bytes.truncate(len);
        self.count = count;
    }

    /// The encoded record (order fields zero, for `TxnRecord::patch_order`).
    pub fn into_record(mut self, server_uuid: [u8; 16], timestamp_us: u64) -> Vec<u8> {
        assert!(self.count > 0, "a record of no events is never written");
        let header = TxnRecord {
            version: FORMAT_VERSION,
            server_uuid,
            gno: 0,
            last_committed: 0,
            sequence_number: 0,
            timestamp_us,
            events: Vec::new(),
        };
        // Written in place, over the room left for it.
        debug_assert_eq!(
            bincode::serialized_size(&header).ok(),
            Some(HEADER_LEN as u64)
        );
        bincode::serialize_into(&mut self.bytes[..HEADER_LEN], &header)
            .expect("the header has a fixed length");
        self.bytes[HEADER_LEN - 8..HEADER_LEN].copy_from_slice(&self.count.to_le_bytes());
        self.bytes
    }
}

pub fn format_uuid(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Human-readable form of a record, as `lockstep binlog` prints it.
pub fn describe(lsn: u64, r: &TxnRecord, tables: &dyn Fn(u32) -> String) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# at {lsn}\n#GTID {}:{}  last_committed={}  sequence_number={}  ts_us={}",
        format_uuid(&r.server_uuid),
        r.gno,
        r.last_committed,
        r.sequence_number,
        r.timestamp_us
    );
    for e in &r.events {
        describe_event(&mut s, e, tables);
    }
    s
}

/// `@1=v1 @2=v2 ...`: a row's values by position, as mysqlbinlog prints them.
fn row_values(v: &[Value]) -> String {
    let shown: Vec<String> = v
        .iter()
        .enumerate()
        .map(|(i, x)| match x.is_null() {
            true => format!("@{}=NULL", i + 1),
            false => format!("@{}={x}", i + 1),
        })
        .collect();
    shown.join(" ")
}

/// One `###` line for a row event; schema and account events go to
/// `describe_schema_event`.
fn describe_event(out: &mut String, e: &Event, tables: &dyn Fn(u32) -> String) {
    use std::fmt::Write;
    let _ = match e {
        Event::Insert { table, row: r } => {
            writeln!(
                out,
                "### INSERT INTO {} SET {}",
                tables(*table),
                row_values(r)
            )
        }
        Event::Update {
            table,
            before,
            after,
        } => writeln!(
            out,
            "### UPDATE {} WHERE {} SET {}",
            tables(*table),
            row_values(before),
            row_values(after)
        ),
        Event::Delete { table, before } => writeln!(
            out,
            "### DELETE FROM {} WHERE {}",
            tables(*table),
            row_values(before)
        ),
        Event::UpdateRow { table, key, set } => {
            let set: Vec<String> = set
                .iter()
                .map(|(c, v)| format!("@{}={}", c + 1, v))
                .collect();
            writeln!(
                out,
                "### UPDATE {} WHERE PRIMARY=({}) SET {}",
                tables(*table),
                row_values(key),
                set.join(" ")
            )
        }
        Event::DeleteRow { table, key } => {
            writeln!(
                out,
                "### DELETE FROM {} WHERE PRIMARY=({})",
                tables(*table),
                row_values(key)
            )
        }
        _ => {
            describe_schema_event(out, e, tables);
            Ok(())
        }
    };
}

/// One `###` line for an event that changes the catalog or the accounts.
fn describe_schema_event(out: &mut String, e: &Event, tables: &dyn Fn(u32) -> String) {
    use std::fmt::Write;
    let _ = match e {
        Event::CreateDatabase { name } => writeln!(out, "### CREATE DATABASE `{name}`"),
        Event::DropDatabase { name } => writeln!(out, "### DROP DATABASE `{name}`"),
        Event::CreateTable { def } => {
            let cols: Vec<String> = def
                .columns
                .iter()
                .map(|c| format!("`{}` {}", c.name, c.data_type))
                .collect();
            writeln!(
                out,
                "### CREATE TABLE `{}`.`{}` ({}) /* table#{} */",
                def.database,
                def.name,
                cols.join(", "),
                def.id
            )
        }
        Event::DropTable { table } => writeln!(out, "### DROP TABLE {}", tables(*table)),
        Event::CreateIndex { table, index } => writeln!(
            out,
            "### CREATE {}INDEX `{}` ON {} (columns {:?})",
            if index.unique { "UNIQUE " } else { "" },
            index.name,
            tables(*table),
            index.columns
        ),
        Event::DropIndex { table, name } => {
            writeln!(out, "### DROP INDEX `{name}` ON {}", tables(*table))
        }
        Event::Truncate { table } => writeln!(out, "### TRUNCATE TABLE {}", tables(*table)),
        Event::PutAccount { account } => writeln!(
            out,
            "### ACCOUNT '{}'@'{}' ({})",
            account.user,
            account.host,
            account.credential.plugin()
        ),
        Event::DropAccount { user, host } => writeln!(out, "### DROP USER '{user}'@'{host}'"),
        Event::PutRoles { user, host, roles } => writeln!(
            out,
            "### ROLES OF '{user}'@'{host}' ({} granted, {} default{})",
            roles.granted.len(),
            roles.defaults.len(),
            if roles.locked { ", locked" } else { "" }
        ),
        Event::AlterTable { table, def, .. } => writeln!(
            out,
            "### ALTER TABLE {} -> `{}`.`{}` ({} columns) /* table#{} */",
            tables(*table),
            def.database,
            def.name,
            def.columns.len(),
            def.id
        ),
        Event::RenameTable {
            table,
            database,
            name,
        } => writeln!(
            out,
            "### RENAME TABLE {} TO `{database}`.`{name}`",
            tables(*table)
        ),
        Event::SetForeignKeys {
            table,
            foreign_keys,
        } => {
            let names: Vec<&str> = foreign_keys.iter().map(|f| f.name.as_str()).collect();
            writeln!(
                out,
                "### FOREIGN KEYS OF {}: {}",
                tables(*table),
                names.join(", ")
            )
        }
        Event::PutView { view } => writeln!(
            out,
            "### VIEW `{}`.`{}` AS {}",
            view.database, view.name, view.query
        ),
        Event::DropView { database, name } => {
            writeln!(out, "### DROP VIEW `{database}`.`{name}`")
        }
        Event::SetChecks { table, checks } => {
            let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
            writeln!(
                out,
                "### CHECKS OF {}: {}",
                tables(*table),
                names.join(", ")
            )
        }
        Event::SetGenerated { table, columns } => {
            let names: Vec<&str> = columns.iter().map(|c| c.column.as_str()).collect();
            writeln!(
                out,
                "### GENERATED OF {}: {}",
                tables(*table),
                names.join(", ")
            )
        }
        Event::SetComments { table, .. } => {
            writeln!(out, "### COMMENTS OF {}", tables(*table))
        }
        Event::SetAutoIncrement { table, next } => {
            writeln!(out, "### AUTO_INCREMENT OF {} = {next}", tables(*table))
        }
        Event::SetHistograms { table, histograms } => {
            let names: Vec<&str> = histograms.iter().map(|h| h.column.as_str()).collect();
            let names = names.join(", ");
            writeln!(out, "### HISTOGRAMS OF {}: {names}", tables(*table))
        }
        Event::PutRoutine { routine } => writeln!(
            out,
            "### {} `{}`.`{}`",
            routine.kind.keyword(),
            routine.database,
            routine.name
        ),
        Event::DropRoutine {
            database,
            kind,
            name,
        } => writeln!(out, "### DROP {} `{database}`.`{name}`", kind.keyword()),
        Event::Insert { .. }
        | Event::Update { .. }
        | Event::Delete { .. }
        | Event::UpdateRow { .. }
        | Event::DeleteRow { .. } => Ok(()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_fields_patch_in_place() {
        let r = TxnRecord {
            version: FORMAT_VERSION,
            server_uuid: [7; 16],
            gno: 0,
            last_committed: 0,
            sequence_number: 0,
            timestamp_us: 5,
            events: vec![Event::Insert {
                table: 3,
                row: vec![Value::Int(1), Value::str("x")],
            }],
        };
        let mut bytes = r.encode();
        TxnRecord::patch_order(&mut bytes, 42, 40, 42);
        let back = TxnRecord::decode(&bytes).expect("valid record");
        assert_eq!(
            (back.gno, back.last_committed, back.sequence_number),
            (42, 40, 42)
        );
        assert_eq!(back.events, r.events);
        assert_eq!(TxnRecord::peek_timestamp_us(&bytes), Some(5));
    }

    #[test]
    fn pending_events_encode_as_the_record_of_the_same_events() {
        let (a, b) = (
            vec![Value::Int(1), Value::str("x"), Value::Null],
            vec![Value::Int(1), Value::str("yz"), Value::Double(2.5)],
        );
        let key = vec![Value::Int(1)];
        let set = vec![(1u16, Value::str("yz")), (2, Value::Double(2.5))];
        let owned = vec![
            Event::Insert {
                table: 3,
                row: a.clone(),
            },
            Event::Update {
                table: 3,
                before: a.clone(),
                after: b.clone(),
            },
            Event::UpdateRow {
                table: 4,
                key: key.clone(),
                set: set.clone(),
            },
            Event::DeleteRow {
                table: 4,
                key: key.clone(),
            },
            Event::Delete {
                table: 3,
                before: b.clone(),
            },
        ];
        let mut pending = PendingEvents::default();
        assert!(pending.is_empty());
        pending.push(RowEvent::Insert { table: 3, row: &a });
        pending.push(RowEvent::Update {
            table: 3,
            before: &a,
            after: &b,
        });
        // A statement rolled back in between leaves no trace.
        let mark = pending.mark();
        pending.push(RowEvent::Insert { table: 9, row: &b });
        pending.truncate(mark);
        pending.push(RowEvent::UpdateRow {
            table: 4,
            key: &key,
            set: &set,
        });
        pending.push(RowEvent::DeleteRow {
            table: 4,
            key: &key,
        });
        pending.push(RowEvent::Delete {
            table: 3,
            before: &b,
        });
        let record = TxnRecord {
            version: FORMAT_VERSION,
            server_uuid: [9; 16],
            gno: 0,
            last_committed: 0,
            sequence_number: 0,
            timestamp_us: 77,
            events: owned,
        };
        assert_eq!(pending.into_record([9; 16], 77), record.encode());
    }
}
