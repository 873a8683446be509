//! Session state tracking (CLIENT_SESSION_TRACK; MySQL's session_track_*
//! variables): what statements changed of the session, reported in the
//! OK packet that ends them. Pools and proxies read it to follow a
//! session without asking (the default database, autocommit, the
//! character sets, whether a transaction is open).
//!
//! Only statements that can change session state take a before-image
//! (SET, CALL, temporary table DDL; USE reports itself), so a SELECT pays
//! one match and, with transaction state tracking off, one flag test.

use super::{system_var, variable_text, Session};
use crate::parser::{SetTarget, Statement};
use lockstep_types::result::{Response, StateChange};
use lockstep_types::{Error, Value};
use std::collections::HashMap;

/// What the tracker keeps between statements.
#[derive(Default)]
pub(super) struct Tracker {
    /// Changes not yet reported.
    changes: Vec<StateChange>,
    /// The open transaction was started by BEGIN / START TRANSACTION.
    pub began: bool,
    /// A result set went out in the open transaction, and one of them
    /// read a table.
    sent_rows: bool,
    read_tables: bool,
    /// session_track_transaction_info is STATE.
    transaction_state: bool,
    /// The transaction state last reported.
    last_state: Option<[u8; 8]>,
}

/// The session variables before a statement that may change them.
pub(super) struct Before(HashMap<String, Value>);

impl Tracker {
    fn push(&mut self, change: StateChange) {
        if !self.changes.contains(&change) {
            self.changes.push(change);
        }
    }
}

/// SET session_track_transaction_info: OFF or STATE (1231 otherwise;
/// CHARACTERISTICS is not built and refused rather than ignored).
pub(super) fn check_transaction_info(name: &str, v: &Value) -> Result<Value, Error> {
    // An enum variable: its name, or its number.
    let text = match v {
        Value::Int(0) => "OFF".to_string(),
        Value::Int(1) => "STATE".to_string(),
        _ => v.to_string().to_ascii_uppercase(),
    };
    match text.as_str() {
        "OFF" | "STATE" => Ok(Value::str(&text)),
        "CHARACTERISTICS" => Err(Error::unsupported(
            "session_track_transaction_info = CHARACTERISTICS",
        )),
        _ => Err(Error::new(
            lockstep_types::error::Code::WrongValueForVar,
            format!("Variable '{name}' can't be set to the value of '{v}'"),
        )),
    }
}

/// SET session_track_gtids: OFF only (OWN_GTID and ALL_GTIDS are not
/// built, and refused rather than ignored).
pub(super) fn check_gtids(v: &Value) -> Result<Value, Error> {
    match v.to_string().eq_ignore_ascii_case("OFF") || matches!(v, Value::Int(0)) {
        true => Ok(Value::str("OFF")),
        false => Err(Error::unsupported(format!("session_track_gtids = {v}"))),
    }
}

impl Session {
    /// The before-image of a statement that may change session state.
    pub(super) fn track_before(&self, stmt: &Statement) -> Option<Before> {
        let may_change = match stmt {
            Statement::Set(_) | Statement::SetTransaction { .. } | Statement::Routine(_) => true,
            Statement::CreateTable(ct) => ct.temporary,
            Statement::DropTable { temporary, .. } => *temporary,
            _ => false,
        };
        may_change.then(|| Before(self.ctx.session_vars.clone()))
    }

    /// Records what `stmt` changed since `before`.
    pub(super) fn track_after(&mut self, stmt: &Statement, before: Before, done: bool) {
        let now = &self.ctx.session_vars;
        let mut changed: Vec<String> = now
            .iter()
            .filter(|(k, v)| before.0.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .chain(before.0.keys().filter(|k| !now.contains_key(*k)).cloned())
            .collect();
        changed.sort();
        let tracked = self.text_var("session_track_system_variables");
        for name in &changed {
            if !is_tracked(&tracked, name) {
                continue;
            }
            let value = system_var(&self.server, &self.ctx, false, name)
                .map(|v| variable_text(name, &v))
                .unwrap_or_default();
            let name = name.clone();
            self.track.push(StateChange::SystemVariable { name, value });
        }
        let user_vars = matches!(stmt, Statement::Set(a)
            if a.iter().any(|a| matches!(a.target, SetTarget::User(_))));
        let temporary = done
            && matches!(
                stmt,
                Statement::CreateTable(_) | Statement::DropTable { .. }
            );
        if !changed.is_empty() || user_vars || temporary {
            self.track_state_change();
        }
        self.track.transaction_state = self
            .text_var("session_track_transaction_info")
            .eq_ignore_ascii_case("STATE");
    }

    /// USE / COM_INIT_DB / a login naming a database.
    pub(super) fn track_schema(&mut self, db: &str) {
        if self.bool_var("session_track_schema") {
            self.track.push(StateChange::Schema(db.to_string()));
        }
        self.track_state_change();
    }

    fn track_state_change(&mut self) {
        if self.bool_var("session_track_state_change") {
            self.track.push(StateChange::StateChanged);
        }
    }

    /// After every statement: the transaction state, when tracked and
    /// changed (eight places: T/I started explicitly or implicitly, r/R
    /// non-transactional/transactional reads, w/W writes, s unsafe
    /// statements, S a result set sent, L LOCK TABLES).
    pub(super) fn track_transaction(&mut self, r: &Result<Response, Error>) {
        if !self.explicit {
            self.track.began = false;
            self.track.sent_rows = false;
            self.track.read_tables = false;
        }
        if !self.track.transaction_state {
            return;
        }
        let open = self.explicit || (!self.autocommit && self.txn.under_way());
        if open && matches!(r, Ok(Response::Rows(_))) {
            self.track.sent_rows = true;
            // Tables in use after a result: it read them (a write alone
            // is W, not R, as MySQL and MariaDB report it).
            let summary = self.txn.summary();
            self.track.read_tables |= summary.is_some_and(|s| s.tables_in_use > 0);
        }
        let flag = |on: bool, c: u8| if on { c } else { b'_' };
        let state = [
            match (open, self.track.began) {
                (false, _) => b'_',
                (true, true) => b'T',
                (true, false) => b'I',
            },
            b'_', // every table is transactional
            flag(open && self.track.read_tables, b'R'),
            b'_',
            flag(open && self.txn.has_writes(), b'W'),
            b'_', // rows are logged: no statement is unsafe
            flag(open && self.track.sent_rows, b'S'),
            flag(self.table_locks.active(), b'L'),
        ];
        if self.track.last_state != Some(state) {
            self.track.last_state = Some(state);
            let text = String::from_utf8_lossy(&state).into_owned();
            self.track.push(StateChange::TransactionState(text));
        }
    }

    /// What the statements since the last OK changed (CLIENT_SESSION_TRACK).
    pub fn take_state_changes(&mut self) -> Vec<StateChange> {
        std::mem::take(&mut self.track.changes)
    }

    fn text_var(&self, name: &str) -> String {
        system_var(&self.server, &self.ctx, false, name)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }

    fn bool_var(&self, name: &str) -> bool {
        system_var(&self.server, &self.ctx, false, name)
            .ok()
            .and_then(|v| v.truth())
            .unwrap_or(false)
    }
}

/// Whether session_track_system_variables (a comma list, `*` for all)
/// names `name`.
fn is_tracked(list: &str, name: &str) -> bool {
    list.split(',')
        .map(str::trim)
        .any(|n| n == "*" || n.eq_ignore_ascii_case(name))
}
