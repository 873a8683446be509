//! Lockstep's log as one virtual MySQL binlog file: each TxnRecord becomes
//! GTID, QUERY (DDL, or BEGIN), TABLE_MAP + ROWS v2, XID events, and
//! positions are byte offsets in that file (as written with CRC32
//! checksums, MySQL's binlog_checksum default). The translator keeps the
//! tables' definitions as the log changes them, to map row images.

use std::collections::HashMap;

use super::{ddl, histogram_sql, rows, Header};
use crate::mysql;
use crate::{Event, GtidSet, TxnRecord};
use lockstep_tables::TableDef;
use lockstep_types::Value;

pub const FILE_NAME: &str = "binlog.000001";
/// Where the first event starts (after the file's magic bytes).
pub const FIRST_POS: u64 = 4;
/// A rows event holds about this many bytes of images (MySQL's
/// binlog-row-event-max-size default).
const ROWS_EVENT_BYTES: usize = 8192;

pub struct Translator {
    tables: HashMap<u32, TableDef>,
    /// Histograms as the stream last saw them (absent: unknown).
    histograms: histogram_sql::Seen,
    pub pos: u64,
    server_id: u32,
}

/// A transaction's events, framed with checksums, and where it starts.
pub struct Txn {
    pub start: u64,
    pub events: Vec<Vec<u8>>,
}

fn header(type_code: u8, timestamp: u32, server_id: u32) -> Header {
    Header {
        type_code,
        timestamp,
        server_id,
        flags: 0,
    }
}

impl Translator {
    /// The position a whole log's translation ends at, from the end of a
    /// translation that started with no previous GTIDs.
    pub fn end_with_previous(end_without: u64, previous: &GtidSet) -> u64 {
        let grow =
            mysql::gtid_set_body(previous).len() - mysql::gtid_set_body(&GtidSet::default()).len();
        end_without + grow as u64
    }

    /// Starts from the tables' current definitions (the log's DDL then
    /// replaces those it changed).
    pub fn new(tables: &[std::sync::Arc<lockstep_tables::Table>], server_id: u32) -> Translator {
        Translator {
            tables: tables.iter().map(|t| (t.id, (*t.def()).clone())).collect(),
            histograms: HashMap::new(),
            pos: FIRST_POS,
            server_id,
        }
    }

    fn frame_all(&mut self, events: Vec<(Header, Vec<u8>)>) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(events.len());
        for (h, body) in events {
            let end = self.pos + (mysql::HEADER_LEN + body.len() + mysql::CHECKSUM_LEN) as u64;
            out.push(mysql::frame(&h, &body, end as u32, true));
            self.pos = end;
        }
        out
    }

    /// FORMAT_DESCRIPTION and PREVIOUS_GTIDS, the file's first events.
    pub fn file_start(&mut self, previous: &GtidSet) -> Vec<Vec<u8>> {
        debug_assert_eq!(self.pos, FIRST_POS);
        let id = self.server_id;
        self.frame_all(vec![
            (
                header(mysql::FORMAT_DESCRIPTION, 0, id),
                mysql::format_description_body(true),
            ),
            (
                header(mysql::PREVIOUS_GTIDS, 0, id),
                mysql::gtid_set_body(previous),
            ),
        ])
    }

    /// One record's events; Err: it cannot be expressed (an unknown
    /// table, or binlog_row_image=MINIMAL images).
    pub fn txn(&mut self, r: &TxnRecord) -> Result<Txn, String> {
        let ts = (r.timestamp_us / 1_000_000) as u32;
        let mut body = Vec::new();
        let has_rows = r.events.iter().any(Event::is_row_event);
        for e in r.events.iter().filter(|e| !e.is_row_event()) {
            for (db, sql) in self.ddl_statements(e)? {
                body.push((
                    header(mysql::QUERY, ts, self.server_id),
                    mysql::query_body(&db, &sql),
                ));
            }
            self.apply_ddl(e);
        }
        if has_rows || body.is_empty() {
            body.push((
                header(mysql::QUERY, ts, self.server_id),
                mysql::query_body("", "BEGIN"),
            ));
            self.rows(r, ts, &mut body)?;
            let end = if has_rows {
                (mysql::XID, mysql::xid_body(r.sequence_number))
            } else {
                (mysql::QUERY, mysql::query_body("", "COMMIT"))
            };
            body.push((header(end.0, ts, self.server_id), end.1));
        }
        let rest: u64 = body
            .iter()
            .map(|(_, b)| (mysql::HEADER_LEN + b.len() + mysql::CHECKSUM_LEN) as u64)
            .sum();
        let info = mysql::GtidInfo {
            uuid: r.server_uuid,
            gno: r.gno,
            last_committed: r.last_committed,
            sequence_number: r.sequence_number,
            commit_us: r.timestamp_us,
            transaction_length: rest + mysql::gtid_event_len(rest, true),
        };
        let mut all = vec![(
            header(mysql::GTID, ts, self.server_id),
            mysql::gtid_body(&info),
        )];
        all.extend(body);
        let start = self.pos;
        let events = self.frame_all(all);
        debug_assert_eq!(self.pos - start, info.transaction_length);
        Ok(Txn { start, events })
    }

    /// Row events in runs of one table and kind, each run a TABLE_MAP and
    /// rows events of about ROWS_EVENT_BYTES, the last flagged STMT_END.
    fn rows(&self, r: &TxnRecord, ts: u32, out: &mut Vec<(Header, Vec<u8>)>) -> Result<(), String> {
        let mut run: Vec<&[Value]> = Vec::new();
        let mut kind: Option<(u32, u8)> = None;
        for e in r.events.iter().filter(|e| e.is_row_event()) {
            let (table, code, images): (u32, u8, Vec<&[Value]>) = match e {
                Event::Insert { table, row } => (*table, mysql::WRITE_ROWS_V2, vec![row]),
                Event::Update {
                    table,
                    before,
                    after,
                } => (*table, mysql::UPDATE_ROWS_V2, vec![before, after]),
                Event::Delete { table, before } => (*table, mysql::DELETE_ROWS_V2, vec![before]),
                _ => {
                    return Err(
                        "records logged with binlog_row_image=MINIMAL have no full row \
                                images; the MySQL binlog stream needs binlog_row_image=FULL"
                            .into(),
                    )
                }
            };
            if kind.is_some_and(|k| k != (table, code)) {
                self.flush_run(kind.take().expect("checked"), &run, ts, out)?;
                run.clear();
            }
            kind = Some((table, code));
            run.extend(images);
        }
        if let Some(k) = kind {
            self.flush_run(k, &run, ts, out)?;
        }
        Ok(())
    }

    fn flush_run(
        &self,
        (table, code): (u32, u8),
        images: &[&[Value]],
        ts: u32,
        out: &mut Vec<(Header, Vec<u8>)>,
    ) -> Result<(), String> {
        let def = self
            .tables
            .get(&table)
            .ok_or_else(|| format!("table #{table} is not known to the stream"))?;
        out.push((
            header(mysql::TABLE_MAP, ts, self.server_id),
            rows::table_map_body(def),
        ));
        let update = code == mysql::UPDATE_ROWS_V2;
        let per = if update { 2 } else { 1 };
        let width = def.columns.len().max(1);
        let row_bytes = images
            .first()
            .map_or(1, |r| r.iter().map(value_size).sum::<usize>().max(width));
        let chunk = (ROWS_EVENT_BYTES / row_bytes / per).max(1) * per;
        let n = images.len().div_ceil(chunk);
        for (k, part) in images.chunks(chunk).enumerate() {
            let flags = if k + 1 == n { rows::STMT_END } else { 0 };
            let body = rows::rows_body(def, flags, update, part);
            out.push((header(code, ts, self.server_id), body));
        }
        Ok(())
    }

    /// (default database, statement) of each QUERY event a DDL event
    /// becomes: histograms as MySQL logs them (the replica builds its own
    /// from its rows), the rest from `ddl`.
    fn ddl_statements(&self, e: &Event) -> Result<Vec<(String, String)>, String> {
        if let Event::SetHistograms { table, histograms } = e {
            let def = self
                .tables
                .get(table)
                .ok_or_else(|| format!("table #{table} is not known to the stream"))?;
            let before = self.histograms.get(table).cloned().flatten();
            let sqls = histogram_sql::statements(def, &before, histograms);
            return Ok(sqls
                .into_iter()
                .map(|s| (def.database.clone(), s))
                .collect());
        }
        let tables = &self.tables;
        let stmt = ddl::statement(e, &|id| tables.get(&id).cloned())?;
        Ok(stmt.into_iter().collect())
    }

    /// Keeps the definitions in step with the DDL just translated.
    fn apply_ddl(&mut self, e: &Event) {
        match e {
            Event::CreateTable { def } => {
                self.tables.insert(def.id, def.clone());
                self.histograms.insert(def.id, Some(Vec::new()));
            }
            Event::DropTable { table } => {
                self.tables.remove(table);
                self.histograms.remove(table);
            }
            Event::AlterTable { table, def, .. } => {
                self.tables.remove(table);
                self.tables.insert(def.id, def.clone());
                if let Some(h) = self.histograms.remove(table) {
                    self.histograms.insert(def.id, h);
                }
            }
            Event::SetHistograms { table, histograms } => {
                self.histograms
                    .insert(*table, histogram_sql::known(histograms));
            }
            Event::RenameTable {
                table,
                database,
                name,
            } => {
                if let Some(d) = self.tables.get_mut(table) {
                    d.database = database.clone();
                    d.name = name.clone();
                }
            }
            Event::CreateIndex { table, index } => {
                if let Some(d) = self.tables.get_mut(table) {
                    d.indexes.push(index.clone());
                }
            }
            Event::DropIndex { table, name } => {
                if let Some(d) = self.tables.get_mut(table) {
                    d.indexes.retain(|i| &i.name != name);
                }
            }
            Event::DropDatabase { name } => self.tables.retain(|_, d| &d.database != name),
            _ => {}
        }
    }
}

fn value_size(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => b.len() + 2,
        _ => 8,
    }
}
