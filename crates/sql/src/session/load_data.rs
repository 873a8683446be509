//! LOAD DATA LOCAL INFILE as one statement spread over several protocol
//! exchanges: `start` checks it and leaves it pending (the connection then
//! asks the client for the file), `data` splits each packet into rows
//! (`exec/load_data.rs`) and inserts them in batches as INSERTs of literal
//! rows (so privileges, constraints, triggers, lock waits and the binlog
//! behave as for INSERT), `end` finishes the statement. The load is
//! atomic: under autocommit it runs in a transaction of its own, inside
//! one it rolls back to where it began on error.

use super::{ok, Session, R};
use crate::exec::load_data::{Field, Splitter};
use crate::parser::{self, Expr, InsertSource, LoadData, LoadTarget, Statement};
use lockstep_engine::txn::Savepoint;
use lockstep_types::error::Code;
use lockstep_types::result::{OkInfo, Response};
use lockstep_types::{Error, Value};

/// Rows per INSERT, and the bytes a batch may hold at most.
const BATCH_ROWS: usize = 1000;
const BATCH_BYTES: usize = 1 << 20;

/// The session's LOAD DATA state.
#[derive(Default)]
pub struct LoadState {
    /// The client set CLIENT_LOCAL_FILES.
    pub client_local_files: bool,
    pub(super) pending: Option<Box<Pending>>,
}

/// A LOAD DATA LOCAL waiting for (or reading) its file.
pub(super) struct Pending {
    load: Box<LoadData>,
    /// The file's field targets (the table's columns if none were named).
    targets: Vec<LoadTarget>,
    splitter: Splitter,
    /// Rows split but not yet inserted, as INSERT rows.
    batch: Vec<Vec<Expr>>,
    batch_bytes: usize,
    /// Lines read (those IGNORE n LINES skips included).
    lines: u64,
    records: u64,
    affected: u64,
    /// The first error; the rest of the file is read and dropped.
    error: Option<Error>,
    /// Where the statement began: None when it opened its own transaction.
    savepoint: Option<Savepoint>,
}

impl Session {
    /// The file name the connection must ask the client for.
    pub fn local_infile(&self) -> Option<Vec<u8>> {
        let p = self.load_data.pending.as_ref()?;
        Some(p.load.file.clone())
    }

    /// LOAD DATA: checked, then pending until the file has been read.
    pub(super) async fn start_load(&mut self, load: &LoadData) -> R<Response> {
        if !load.local {
            return Err(Error::secure_file_priv());
        }
        let enabled = self
            .server
            .globals
            .get("local_infile")
            .and_then(|v| v.to_i64())
            .is_some_and(|v| v != 0);
        if !enabled || !self.load_data.client_local_files {
            return Err(Error::new(
                Code::ClientLocalFilesDisabled,
                "Loading local data is disabled; this must be enabled on both the client and server sides",
            ));
        }
        if let Some(cs) = &load.charset {
            let known = ["utf8mb4", "utf8", "utf8mb3", "binary", "ascii"];
            if !known.iter().any(|k| cs.eq_ignore_ascii_case(k)) {
                return Err(Error::unsupported(format!("LOAD DATA CHARACTER SET {cs}")));
            }
        }
        let targets = self.load_targets(load)?;
        self.grants.check(
            &insert_of(load, Vec::new(), Vec::new()),
            self.ctx.database.as_deref(),
        )?;
        let max_row = self.ctx.memory.statement.max(1 << 16);
        let splitter = Splitter::new(load.format.clone(), max_row)?;
        let savepoint = if self.in_transaction() {
            Some(self.txn.savepoint())
        } else {
            self.explicit = true;
            None
        };
        self.load_data.pending = Some(Box::new(Pending {
            load: Box::new(load.clone()),
            targets,
            splitter,
            batch: Vec::new(),
            batch_bytes: 0,
            lines: 0,
            records: 0,
            affected: 0,
            error: None,
            savepoint,
        }));
        Ok(ok(0))
    }

    /// The field targets: as named (each column must exist), or every
    /// column of the table (1146 if there is none).
    fn load_targets(&self, load: &LoadData) -> R<Vec<LoadTarget>> {
        let table = self.binder().table(&load.table)?;
        let def = table.def();
        let has = |n: &str| {
            def.visible_columns()
                .any(|(_, c)| c.name.eq_ignore_ascii_case(n))
        };
        for t in &load.targets {
            if let LoadTarget::Column(n) = t {
                if !has(n) {
                    return Err(Error::new(
                        Code::BadField,
                        format!("Unknown column '{n}' in 'field list'"),
                    ));
                }
            }
        }
        if !load.targets.is_empty() {
            return Ok(load.targets.clone());
        }
        Ok(def
            .visible_columns()
            .map(|(_, c)| LoadTarget::Column(c.name.clone()))
            .collect())
    }

    /// One packet of the file.
    pub async fn infile_data(&mut self, data: &[u8]) {
        self.feed_load(data, false).await;
    }

    async fn feed_load(&mut self, data: &[u8], last: bool) {
        let Some(mut p) = self.load_data.pending.take() else {
            return;
        };
        if p.error.is_none() {
            let mut rows = Vec::new();
            let fed = p.splitter.feed(data, last, &mut |r| {
                rows.push(r);
                Ok(())
            });
            if let Err(e) = fed {
                p.error = Some(e);
            }
            for fields in rows {
                if let Err(e) = self.load_row(&mut p, fields) {
                    p.error.get_or_insert(e);
                    break;
                }
                if p.batch.len() >= BATCH_ROWS || p.batch_bytes >= BATCH_BYTES {
                    self.insert_batch(&mut p).await;
                }
            }
            if last {
                self.insert_batch(&mut p).await;
            }
        }
        self.load_data.pending = Some(p);
    }

    /// Maps one row's fields to an INSERT row (SET expressions get the
    /// row's variables and columns as literals).
    fn load_row(&mut self, p: &mut Pending, fields: Vec<Field>) -> R<()> {
        p.lines += 1;
        if p.lines <= p.load.skip_lines {
            return Ok(());
        }
        p.records += 1;
        let row_no = p.records;
        let strict = !p.load.ignore;
        if fields.len() < p.targets.len() {
            self.load_warning(
                strict,
                Code::WarnTooFewRecords,
                format!("Row {row_no} doesn't contain data for all columns"),
            )?;
        } else if fields.len() > p.targets.len() {
            self.load_warning(strict, Code::WarnTooManyRecords, format!("Row {row_no} was truncated; it contained more data than there were input columns"))?;
        }
        let mut values = Vec::new();
        let mut vars: Vec<(String, Value)> = Vec::new();
        let mut fields = fields.into_iter();
        for t in &p.targets {
            let v = match fields.next() {
                Some(Some(b)) => {
                    p.batch_bytes += b.len() + 16;
                    Value::Bytes(b)
                }
                Some(None) => Value::Null,
                None if matches!(t, LoadTarget::Var(_)) => Value::Null,
                None => {
                    values.push(Expr::Default);
                    continue;
                }
            };
            match t {
                LoadTarget::Column(name) => {
                    vars.push((format!("\0{}", name.to_ascii_lowercase()), v.clone()));
                    values.push(Expr::Literal(v));
                }
                LoadTarget::Var(name) => vars.push((name.to_ascii_lowercase(), v)),
            }
        }
        for (_, e) in &p.load.set {
            values.push(with_row(e, &vars));
        }
        for (name, v) in vars.into_iter().filter(|(n, _)| !n.starts_with('\0')) {
            self.ctx.user_vars.insert(name, v);
        }
        p.batch.push(values);
        Ok(())
    }

    /// 1261 / 1262: an error in strict mode, a warning with IGNORE.
    fn load_warning(&mut self, strict: bool, code: Code, message: String) -> R<()> {
        if strict {
            return Err(Error::new(code, message));
        }
        self.ctx
            .warnings
            .push(crate::exec::Condition::warning(code.number(), message));
        Ok(())
    }

    /// Inserts the batch as one INSERT statement of the load's transaction.
    async fn insert_batch(&mut self, p: &mut Pending) {
        if p.batch.is_empty() || p.error.is_some() {
            return;
        }
        let rows = std::mem::take(&mut p.batch);
        p.batch_bytes = 0;
        // "at row N" counts the file's records, not the batch's rows.
        self.ctx.rows_before = p.records - rows.len() as u64;
        let columns = column_list(p);
        let insert = insert_of(&p.load, columns, rows);
        let done = Box::pin(self.run(&insert, &[], None)).await;
        self.ctx.rows_before = 0;
        match done {
            Ok(Response::Ok(info)) => p.affected += info.affected_rows,
            Ok(_) => {}
            Err(e) => p.error = Some(e),
        }
    }

    /// The end of the file: the statement's result (the statements after
    /// it in its COM_QUERY follow through `next_result`).
    pub async fn infile_end(&mut self) -> R<Response> {
        self.feed_load(&[], true).await;
        let Some(p) = self.load_data.pending.take() else {
            return Err(Error::new(Code::UnknownError, "no LOAD DATA is pending"));
        };
        let r = self.finish_load(&p).await;
        let r = self.count_warnings(r);
        let r = self.to_results_charset(r);
        if r.is_err() {
            self.drop_batch();
        }
        self.end_batch_if_done();
        r
    }

    /// Commits (own transaction) or keeps the rows; on error undoes them.
    async fn finish_load(&mut self, p: &Pending) -> R<Response> {
        if let Some(e) = &p.error {
            match p.savepoint {
                Some(sp) if self.txn.holds(&sp) => self.engine.rollback_to(&mut self.txn, sp),
                Some(_) => {}
                None => {
                    self.engine.rollback(&mut self.txn);
                    self.explicit = false;
                }
            }
            return Err(e.clone());
        }
        if p.savepoint.is_none() {
            self.commit().await?;
        }
        let warnings = self.ctx.warnings.len();
        let (deleted, skipped) = match (p.load.replace, p.load.ignore) {
            (true, _) => (p.affected.saturating_sub(p.records), 0),
            (false, true) => (0, p.records.saturating_sub(p.affected)),
            _ => (0, 0),
        };
        Ok(Response::Ok(OkInfo {
            affected_rows: p.affected,
            last_insert_id: 0,
            warnings: u16::try_from(warnings).unwrap_or(u16::MAX),
            info: format!(
                "Records: {}  Deleted: {deleted}  Skipped: {skipped}  Warnings: {warnings}",
                p.records
            ),
        }))
    }
}

/// LOAD DATA is no prepared statement (1295, as MySQL).
pub(super) fn refuse_prepare(stmt: &Statement) -> R<()> {
    if matches!(stmt, Statement::LoadData(_)) {
        return Err(Error::new(
            Code::UnsupportedPs,
            "This command is not supported in the prepared statement protocol yet",
        ));
    }
    Ok(())
}

/// The INSERT columns: the column targets, then the SET columns.
fn column_list(p: &Pending) -> Vec<String> {
    let named = p.targets.iter().filter_map(|t| match t {
        LoadTarget::Column(c) => Some(c.clone()),
        LoadTarget::Var(_) => None,
    });
    named
        .chain(p.load.set.iter().map(|(c, _)| c.clone()))
        .collect()
}

fn insert_of(load: &LoadData, columns: Vec<String>, rows: Vec<Vec<Expr>>) -> Statement {
    Statement::Insert(Box::new(parser::Insert {
        table: load.table.clone(),
        columns,
        source: InsertSource::Values(rows),
        ignore: load.ignore,
        replace: load.replace,
        on_duplicate: Vec::new(),
        row_alias: None,
    }))
}

/// `e` with the row's variables (`@v`) and loaded columns as literals;
/// `vars` names columns with a leading NUL, so the two never meet.
fn with_row(e: &Expr, vars: &[(String, Value)]) -> Expr {
    let mut e = e.clone();
    let find = |key: String| vars.iter().find(|(n, _)| *n == key).map(|(_, v)| v.clone());
    parser::rewrite_exprs(&mut e, &mut |x| {
        let v = match x {
            Expr::UserVar(n) => find(n.to_ascii_lowercase()),
            Expr::Column { table: None, name } => find(format!("\0{}", name.to_ascii_lowercase())),
            _ => None,
        };
        match v {
            Some(v) => {
                *x = Expr::Literal(v);
                false
            }
            None => true,
        }
    });
    e
}
