//! Privilege checks: which privileges a statement needs on which objects,
//! checked against the session's cached account (`Grants`), and the
//! MySQL errors for what is missing (1142 table, 1044 database, 1227
//! global). Also the SHOW GRANTS text.
//!
//! Hot path: an account with every global privilege (root) passes without
//! looking at the statement; the cache is refreshed only when the
//! accounts' version counter moved.

use crate::parser::{
    self, Expr, GrantLevel, InsertSource, ObjectName, Query, QueryBody, Show, Statement, TableRef,
};
use crate::plan::ddl::quote_ident;
use crate::session::is_system_db;
use lockstep_accounts::{Account, Accounts, Credential, Level, Privs};
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// A session's view of its account.
#[derive(Clone)]
pub struct Grants {
    /// The account with its active roles' privileges added (roles.rs).
    pub account: Arc<Account>,
    /// The session's active roles (SET ROLE), kept while still granted.
    pub roles: Vec<lockstep_accounts::AuthId>,
    version: u64,
    /// Every global privilege: nothing to check.
    superuser: bool,
    /// The login name and the client's host, for error messages.
    pub user: String,
    pub client_host: String,
}

impl Grants {
    pub fn new(account: Arc<Account>, version: u64, user: &str, client_host: &str) -> Grants {
        Grants {
            superuser: account.global.contains(Privs::all_at(Level::Global)),
            account,
            roles: Vec::new(),
            version,
            user: user.to_string(),
            client_host: client_host.to_string(),
        }
    }

    /// An account holding everything (sessions not created by a login).
    pub fn all(user: &str, host: &str) -> Grants {
        let mut a = Account::new(user, "%", Credential::Native([0; 20]));
        a.global = Privs::all_at(Level::Global) | Privs::GRANT_OPTION;
        Grants::new(Arc::new(a), 0, user, host)
    }

    /// Re-reads the account if any account changed since it was cached. A
    /// dropped account keeps its session but loses every privilege.
    pub fn refresh(&mut self, accounts: &Accounts) {
        let v = accounts.version();
        if v == self.version {
            return;
        }
        let (user, host) = (&self.account.user, &self.account.host);
        let own = accounts
            .get(user, host)
            .unwrap_or_else(|| Arc::new(Account::new(user, host, self.account.credential.clone())));
        let roles = crate::session::roles::still_active(accounts, &own, &self.roles);
        let account = match roles.is_empty() {
            true => own,
            false => Arc::new(accounts.with_roles(&own, &roles)),
        };
        *self = Grants::new(account, v, &self.user.clone(), &self.client_host.clone());
        self.roles = roles;
    }

    /// Activates `roles` (SET ROLE, login): privileges are recomputed.
    pub fn set_roles(&mut self, accounts: &Accounts, roles: Vec<lockstep_accounts::AuthId>) {
        self.roles = roles;
        self.version = u64::MAX;
        self.refresh(accounts);
    }

    pub fn superuser(&self) -> bool {
        self.superuser
    }

    /// Whether `(user, host)` is the account these grants are of.
    pub(crate) fn is_account(&self, (user, host): &(String, String)) -> bool {
        self.account.user == *user && self.account.host == *host
    }

    pub(crate) fn who(&self) -> String {
        format!("'{}'@'{}'", self.user, self.client_host)
    }

    pub fn table_denied(&self, what: &str, table: &str) -> Error {
        Error::new(
            Code::TableAccessDenied,
            format!(
                "{what} command denied to user {} for table '{table}'",
                self.who()
            ),
        )
    }

    pub fn database_denied(&self, db: &str) -> Error {
        Error::new(
            Code::DbAccessDenied,
            format!("Access denied for user {} to database '{db}'", self.who()),
        )
    }

    pub fn global_denied(names: &str) -> Error {
        Error::new(
            Code::SpecificAccessDenied,
            format!(
                "Access denied; you need (at least one of) the {names} privilege(s) for this operation"
            ),
        )
    }

    /// Whether the login may see and kill other users' threads.
    pub fn has_global(&self, p: Privs) -> bool {
        self.account.global.contains(p)
    }

    fn need_global(&self, p: Privs, names: &str) -> Result<(), Error> {
        if self.has_global(p) {
            Ok(())
        } else {
            Err(Grants::global_denied(names))
        }
    }

    fn need_table(&self, p: Privs, what: &str, db: &str, table: &str) -> Result<(), Error> {
        // The server's own schemas are readable by all (rows are filtered by
        // privilege there), except mysql, whose grant and account tables
        // need a grant as in MySQL; anything else needs a grant like any
        // table.
        let mysql = db.eq_ignore_ascii_case("mysql");
        let system_read = p == Privs::SELECT && is_system_db(db) && !mysql;
        if system_read || self.account.has_on_table(p, db, table) {
            Ok(())
        } else {
            Err(self.table_denied(what, table))
        }
    }

    fn need_database(&self, p: Privs, db: &str) -> Result<(), Error> {
        if self.account.has_on_database(p, db) {
            Ok(())
        } else {
            Err(self.database_denied(db))
        }
    }

    /// LOCK TABLES of `db`.`table`: LOCK TABLES on the database (1044)
    /// and SELECT on the table (1142).
    pub(crate) fn check_lock_table(&self, db: &str, table: &str) -> Result<(), Error> {
        if self.superuser {
            return Ok(());
        }
        self.need_database(Privs::LOCK_TABLES, db)?;
        self.need_table(Privs::SELECT, "SELECT", db, table)
    }

    /// FLUSH TABLES WITH READ LOCK needs RELOAD.
    pub(crate) fn check_reload(&self) -> Result<(), Error> {
        match self.superuser {
            true => Ok(()),
            false => self.need_global(Privs::RELOAD, "RELOAD"),
        }
    }

    /// USE db / the database of the handshake: any privilege reaching it.
    pub fn check_use(&self, db: &str) -> Result<(), Error> {
        if self.superuser || is_system_db(db) || self.account.touches_database(db) {
            Ok(())
        } else {
            Err(self.database_denied(db))
        }
    }

    /// SHOW DATABASES lists only databases the account reaches (all with
    /// the SHOW DATABASES privilege).
    pub fn sees_database(&self, db: &str) -> bool {
        self.superuser
            || self.has_global(Privs::SHOW_DATABASES)
            || is_system_db(db)
            || self.account.touches_database(db)
    }

    /// SHOW TABLES lists only tables with some privilege on them.
    pub fn sees_table(&self, db: &str, table: &str) -> bool {
        let any = Privs::all_at(Level::Table);
        self.superuser
            || !(self.account.global & any).is_empty()
            || self
                .account
                .databases
                .get(db)
                .is_some_and(|p| !(*p & any).is_empty())
            || self
                .account
                .tables
                .get(&(db.to_string(), table.to_string()))
                .is_some_and(|p| !p.is_empty())
    }

    /// The tables a bound statement reads need SELECT, whatever the
    /// statement (a subquery in SET, DO, a derived table, ...).
    pub fn check_reads(&self, tables: &[Arc<lockstep_tables::Table>]) -> Result<(), Error> {
        if self.superuser {
            return Ok(());
        }
        tables.iter().try_for_each(|t| {
            let def = t.def();
            self.need_table(Privs::SELECT, "SELECT", &def.database, &def.name)
        })
    }

    /// A multi-table UPDATE or DELETE: UPDATE (DELETE) on its targets,
    /// SELECT on the other tables it reads.
    pub fn check_multi(
        &self,
        m: &crate::plan::multi::MultiPlan,
        reads: &[Arc<lockstep_tables::Table>],
    ) -> Result<(), Error> {
        if self.superuser {
            return Ok(());
        }
        let (p, what) = match m.delete {
            true => (Privs::DELETE, "DELETE"),
            false => (Privs::UPDATE, "UPDATE"),
        };
        for t in &m.targets {
            self.need_table(p, what, &t.def.database, &t.def.name)?;
        }
        let target =
            |r: &Arc<lockstep_tables::Table>| m.targets.iter().any(|t| Arc::ptr_eq(&t.table, r));
        let others: Vec<_> = reads.iter().filter(|r| !target(r)).cloned().collect();
        self.check_reads(&others)
    }

    /// Whether `stmt` may run. `db` is the session's current database.
    pub fn check(&self, stmt: &Statement, db: Option<&str>) -> Result<(), Error> {
        if self.superuser {
            return Ok(());
        }
        // Each family answers for its own statement kinds, None for others.
        self.check_data(stmt, db)
            .or_else(|| self.check_schema(stmt, db))
            .or_else(|| self.check_views(stmt, db))
            .or_else(|| self.check_accounts(stmt, db))
            .or_else(|| self.check_session(stmt, db))
            .unwrap_or(Ok(()))
    }

    /// `p` on table `name`, qualified by `db` when unqualified. Unqualified
    /// names without a current database fail in the binder (1046).
    fn on_table(
        &self,
        db: Option<&str>,
        p: Privs,
        what: &str,
        name: &ObjectName,
    ) -> Result<(), Error> {
        match name.database.as_deref().or(db) {
            Some(d) => self.need_table(p, what, d, &name.name),
            None => Ok(()),
        }
    }

    /// SELECT on every table `stmt` reads.
    fn check_reads_of(&self, stmt: &Statement, db: Option<&str>) -> Result<(), Error> {
        tables_read(stmt)
            .iter()
            .try_for_each(|t| self.on_table(db, Privs::SELECT, "SELECT", t))
    }

    /// Queries and row changes.
    fn check_data(&self, stmt: &Statement, db: Option<&str>) -> Option<Result<(), Error>> {
        let on_table = |p, what, name| self.on_table(db, p, what, name);
        let writes = match stmt {
            Statement::Select(_) | Statement::Do(_) => Ok(()),
            Statement::Insert(i) => (|| {
                on_table(Privs::INSERT, "INSERT", &i.table)?;
                if i.replace {
                    on_table(Privs::DELETE, "DELETE", &i.table)?;
                }
                if !i.on_duplicate.is_empty() {
                    on_table(Privs::UPDATE, "UPDATE", &i.table)?;
                }
                Ok(())
            })(),
            // The multi-table forms' targets are known once bound (check_multi).
            Statement::Update(u) if u.multi.is_none() => {
                on_table(Privs::UPDATE, "UPDATE", &u.table)
            }
            Statement::Delete(d) if d.multi.is_none() => {
                on_table(Privs::DELETE, "DELETE", &d.table)
            }
            Statement::Update(_) | Statement::Delete(_) => Ok(()),
            _ => return None,
        };
        Some(writes.and_then(|()| self.check_reads_of(stmt, db)))
    }

    /// Databases, tables and indexes created, changed or dropped.
    fn check_schema(&self, stmt: &Statement, db: Option<&str>) -> Option<Result<(), Error>> {
        let on_table = |p, what, name| self.on_table(db, p, what, name);
        Some(match stmt {
            Statement::CreateDatabase { name, .. } => self.need_database(Privs::CREATE, name),
            Statement::DropDatabase { name, .. } => self.need_database(Privs::DROP, name),
            Statement::CreateTable(ct) if ct.temporary => {
                match ct.name.database.as_deref().or(db) {
                    Some(d) => self.need_database(Privs::CREATE_TEMPORARY_TABLES, d),
                    None => Ok(()),
                }
            }
            Statement::CreateTable(ct) => self.check_create_table(ct, db),
            Statement::DropTable { tables, .. } => tables
                .iter()
                .try_for_each(|t| on_table(Privs::DROP, "DROP", t)),
            Statement::Truncate { table } => on_table(Privs::DROP, "DROP", table),
            // As MySQL: SELECT and INSERT on each table.
            Statement::Histogram { tables, .. } => tables.iter().try_for_each(|t| {
                on_table(Privs::SELECT, "SELECT", t)?;
                on_table(Privs::INSERT, "INSERT", t)
            }),
            Statement::TableMaintenance { tables, op } => tables.iter().try_for_each(|t| {
                on_table(Privs::SELECT, "SELECT", t)?;
                // CHECK TABLE only reads (MySQL: any privilege on the table).
                match op {
                    crate::parser::Maintenance::Check
                    | crate::parser::Maintenance::Checksum { .. } => Ok(()),
                    _ => on_table(Privs::INSERT, "INSERT", t),
                }
            }),
            Statement::CreateIndex { table, .. } | Statement::DropIndex { table, .. } => {
                on_table(Privs::INDEX, "INDEX", table)
            }
            Statement::AlterTable { table, actions, .. } => {
                self.check_alter_table(table, actions, db)
            }
            Statement::RenameTable { renames } => renames.iter().try_for_each(|(from, to)| {
                on_table(Privs::ALTER, "ALTER", from)?;
                self.check_rename(from, to, db)
            }),
            _ => return None,
        })
    }

    /// CREATE TABLE: CREATE, REFERENCES on each parent, SELECT on a LIKE
    /// source.
    fn check_create_table(
        &self,
        ct: &crate::parser::CreateTable,
        db: Option<&str>,
    ) -> Result<(), Error> {
        self.on_table(db, Privs::CREATE, "CREATE", &ct.name)?;
        for fk in &ct.foreign_keys {
            let parent = parent_of(fk, &ct.name);
            self.on_table(db, Privs::REFERENCES, "REFERENCES", &parent)?;
        }
        match &ct.like {
            Some(src) => self.on_table(db, Privs::SELECT, "SELECT", src),
            None => Ok(()),
        }
    }

    /// ALTER TABLE: ALTER, REFERENCES on added parents, and what RENAME
    /// TABLE needs when it renames.
    fn check_alter_table(
        &self,
        table: &ObjectName,
        actions: &[crate::parser::AlterAction],
        db: Option<&str>,
    ) -> Result<(), Error> {
        self.on_table(db, Privs::ALTER, "ALTER", table)?;
        for a in actions {
            if let crate::parser::AlterAction::AddForeignKey(fk) = a {
                let parent = parent_of(fk, table);
                self.on_table(db, Privs::REFERENCES, "REFERENCES", &parent)?;
            }
            if let crate::parser::AlterAction::RenameTable { to } = a {
                self.check_rename(table, to, db)?;
            }
        }
        Ok(())
    }

    /// Moving `from` to `to`: DROP on the old name, CREATE and INSERT on
    /// the new one.
    fn check_rename(
        &self,
        from: &ObjectName,
        to: &ObjectName,
        db: Option<&str>,
    ) -> Result<(), Error> {
        self.on_table(db, Privs::DROP, "DROP", from)?;
        self.on_table(db, Privs::CREATE, "CREATE", to)?;
        self.on_table(db, Privs::INSERT, "INSERT", to)
    }

    /// CREATE/ALTER/DROP VIEW and SHOW CREATE VIEW.
    fn check_views(&self, stmt: &Statement, db: Option<&str>) -> Option<Result<(), Error>> {
        let on_table = |p, what, name| self.on_table(db, p, what, name);
        Some(match stmt {
            Statement::CreateView(cv) => (|| {
                on_table(Privs::CREATE_VIEW, "CREATE VIEW", &cv.name)?;
                if cv.or_replace || cv.alter {
                    on_table(Privs::DROP, "DROP", &cv.name)?;
                }
                let other = cv.definer.as_ref().is_some_and(|u| !self.is_self(Some(u)));
                if other {
                    self.need_global(Privs::SUPER, "SUPER or SET_USER_ID")?;
                }
                Ok(())
            })(),
            Statement::DropView { views, .. } => views
                .iter()
                .try_for_each(|v| on_table(Privs::DROP, "DROP", v)),
            Statement::Show(Show::CreateView { view }) => {
                on_table(Privs::SHOW_VIEW, "SHOW VIEW", view)
                    .and_then(|()| on_table(Privs::SELECT, "SELECT", view))
            }
            _ => return None,
        })
    }

    /// Accounts and privileges: CREATE USER unless the statement only
    /// touches the user's own account; GRANT OPTION for GRANT/REVOKE.
    fn check_accounts(&self, stmt: &Statement, db: Option<&str>) -> Option<Result<(), Error>> {
        let create_user = || self.need_global(Privs::CREATE_USER, "CREATE USER");
        Some(match stmt {
            Statement::CreateUser { .. } | Statement::DropUser { .. } => create_user(),
            Statement::AlterUser { users, .. } => {
                match users.iter().all(|u| self.is_self(u.name.as_ref())) {
                    true => Ok(()),
                    false => create_user(),
                }
            }
            Statement::SetPassword { user, .. } => match self.is_self(user.as_ref()) {
                true => Ok(()),
                false => create_user(),
            },
            Statement::Grant {
                privileges, level, ..
            }
            | Statement::Revoke {
                privileges,
                level: Some(level),
                ..
            } => {
                let mut p = privileges.privs;
                if privileges.all {
                    p = p | Privs::all_at(level_kind(level));
                }
                self.check_grant(p | Privs::GRANT_OPTION, level, db)
            }
            Statement::Revoke { level: None, .. } => create_user(),
            _ => return None,
        })
    }

    /// USE, SHOW, EXPLAIN, SET and the server-wide statements.
    fn check_session(&self, stmt: &Statement, db: Option<&str>) -> Option<Result<(), Error>> {
        let on_table = |p, what, name| self.on_table(db, p, what, name);
        let global_set = |a: &parser::SetAssignment| {
            matches!(
                &a.target,
                parser::SetTarget::System {
                    scope: parser::Scope::Global,
                    ..
                }
            )
        };
        Some(match stmt {
            Statement::Use { database } => self.check_use(database),
            Statement::Show(Show::Tables { database, .. } | Show::TableStatus { database, .. }) => {
                match database.as_deref().or(db) {
                    Some(d) => self.check_use(d),
                    None => Ok(()),
                }
            }
            Statement::Describe { table, .. }
            | Statement::Show(
                Show::Columns { table, .. } | Show::Index { table } | Show::CreateTable { table },
            ) => on_table(Privs::SELECT, "SELECT", table),
            Statement::Show(Show::Grants { user: Some(u) })
                if u.user != self.account.user || u.host != self.account.host =>
            {
                self.need_database(Privs::SELECT, "mysql")
            }
            Statement::Explain(inner, _) => self.check(inner, db),
            Statement::Set(list) if list.iter().any(global_set) => {
                self.need_global(Privs::SUPER, "SUPER or SYSTEM_VARIABLES_ADMIN")
            }
            Statement::SetTransaction {
                scope: parser::Scope::Global,
                ..
            } => self.need_global(Privs::SUPER, "SUPER or SYSTEM_VARIABLES_ADMIN"),
            Statement::Ignored(text) if starts_with_word(text, "FLUSH") => {
                self.need_global(Privs::RELOAD, "RELOAD")
            }
            Statement::Replica(r) => crate::session::replication::check(self, r),
            _ => return None,
        })
    }

    /// GRANT/REVOKE: the granter must hold what it grants, with GRANT
    /// OPTION, at the level or above.
    fn check_grant(&self, p: Privs, level: &GrantLevel, db: Option<&str>) -> Result<(), Error> {
        match level {
            GrantLevel::Global => {
                if self.has_global(p) {
                    Ok(())
                } else {
                    Err(Grants::global_denied("GRANT OPTION"))
                }
            }
            GrantLevel::Database(name) => match name.as_deref().or(db) {
                Some(d) => self.need_database(p, d),
                None => Err(Error::no_db()),
            },
            GrantLevel::Table(t) => match t.database.as_deref().or(db) {
                Some(d) => self.need_table(p, "GRANT", d, &t.name),
                None => Err(Error::no_db()),
            },
        }
    }

    fn is_self(&self, u: Option<&parser::UserName>) -> bool {
        u.is_none_or(|u| u.user == self.account.user && u.host == self.account.host)
    }
}

/// The executor checks stored programs' statements through these.
impl crate::exec::Rights for Grants {
    fn for_program(
        &self,
        accounts: &Accounts,
        definer: Option<&(String, String)>,
    ) -> Result<Box<dyn crate::exec::Rights>, Error> {
        let mut g = match definer {
            Some(d) if !self.is_account(d) => crate::session::definer_grants(accounts, d)?,
            _ => self.clone(),
        };
        g.refresh(accounts);
        Ok(Box::new(g))
    }

    fn check(&self, stmt: &Statement, db: Option<&str>) -> Result<(), Error> {
        Grants::check(self, stmt, db)
    }

    fn check_reads(&self, tables: &[Arc<lockstep_tables::Table>]) -> Result<(), Error> {
        Grants::check_reads(self, tables)
    }

    fn current_role(&self) -> String {
        crate::session::current_role(&self.roles)
    }

    fn active_roles(&self) -> usize {
        self.roles.len()
    }
}

fn starts_with_word(text: &str, word: &str) -> bool {
    text.split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
}

pub fn level_kind(level: &GrantLevel) -> Level {
    match level {
        GrantLevel::Global => Level::Global,
        GrantLevel::Database(_) => Level::Database,
        GrantLevel::Table(_) => Level::Table,
    }
}

/// Every base table a statement reads: FROM items, joins, derived
/// tables, unions and subqueries in any expression.
fn tables_read(stmt: &Statement) -> Vec<ObjectName> {
    let mut out = Vec::new();
    match stmt {
        Statement::Select(q) | Statement::Do(q) => from_tables(q, &mut out),
        Statement::Insert(i) => {
            if let InsertSource::Query(q) = &i.source {
                from_tables(q, &mut out);
            }
        }
        _ => {}
    }
    // The visitor reaches nested subqueries too, each reported once.
    parser::visit_statement(stmt, &mut |e| match e {
        Expr::Subquery(q) | Expr::Exists { query: q, .. } | Expr::InSubquery { query: q, .. } => {
            from_tables(q, &mut out)
        }
        _ => {}
    });
    // A name a WITH clause defines is no table (the binder checks what the
    // common table expression itself reads).
    if let Statement::Select(q) = stmt {
        out.retain(|n| n.database.is_some() || !q.with.iter().any(|c| c.name == n.name));
    }
    out
}

/// The FROM tables of a query (derived tables and unions included, not
/// subqueries in expressions: the visitor reports those).
fn from_tables(q: &Query, out: &mut Vec<ObjectName>) {
    let start = out.len();
    q.with.iter().for_each(|c| from_tables(&c.query, out));
    match &q.body {
        QueryBody::Select(s) => s.from.iter().for_each(|t| table_ref(t, out)),
        QueryBody::Union { left, right, .. } => {
            from_tables(left, out);
            from_tables(right, out);
        }
    }
    // A name this query's WITH defines is no table (a WITH in a subquery
    // or derived table too).
    if !q.with.is_empty() {
        let inner: Vec<ObjectName> = out
            .drain(start..)
            .filter(|n| n.database.is_some() || !q.with.iter().any(|c| c.name == n.name))
            .collect();
        out.extend(inner);
    }
}

fn table_ref(t: &TableRef, out: &mut Vec<ObjectName>) {
    match t {
        TableRef::Table { name, .. } => out.push(name.clone()),
        TableRef::Derived { query, .. } => from_tables(query, out),
        TableRef::Lateral(l) => l.query().into_iter().for_each(|q| from_tables(q, out)),
        TableRef::Join { left, right, .. } => {
            table_ref(left, out);
            table_ref(right, out);
        }
    }
}

/// `user`@`host` as SHOW GRANTS quotes it.
fn quoted_account(a: &Account) -> String {
    format!("{}@{}", quote_ident(&a.user), quote_ident(&a.host))
}

fn grant_line(p: Privs, level_text: &str, level: Level, a: &Account) -> String {
    let grant_option = p.contains(Privs::GRANT_OPTION);
    let p = p.without(Privs::GRANT_OPTION);
    // MySQL 8 spells out global privileges; at lower levels all of them
    // read ALL PRIVILEGES.
    let list = if p.is_empty() {
        "USAGE".to_string()
    } else if level != Level::Global && p.contains(Privs::all_at(level)) {
        "ALL PRIVILEGES".to_string()
    } else {
        p.names().join(", ")
    };
    let mut s = format!("GRANT {list} ON {level_text} TO {}", quoted_account(a));
    if grant_option {
        s.push_str(" WITH GRANT OPTION");
    }
    s
}

/// SHOW GRANTS lines of an account, in MySQL's format and order.
pub fn show_grants(a: &Account) -> Vec<String> {
    let mut lines = vec![grant_line(a.global, "*.*", Level::Global, a)];
    for (db, p) in &a.databases {
        if !p.is_empty() {
            lines.push(grant_line(
                *p,
                &format!("{}.*", quote_ident(db)),
                Level::Database,
                a,
            ));
        }
    }
    for ((db, t), p) in &a.tables {
        if !p.is_empty() {
            let level = format!("{}.{}", quote_ident(db), quote_ident(t));
            lines.push(grant_line(*p, &level, Level::Table, a));
        }
    }
    lines
}

/// A constraint's parent, in the child's database unless it names one.
fn parent_of(fk: &crate::parser::ForeignKeySpec, child: &ObjectName) -> ObjectName {
    ObjectName {
        database: fk.parent.database.clone().or(child.database.clone()),
        name: fk.parent.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(a: Account) -> Grants {
        Grants::new(Arc::new(a), 0, "u", "localhost")
    }

    fn stmt(sql: &str) -> Statement {
        parser::parse(sql).expect("parses").remove(0)
    }

    fn code(r: Result<(), Error>) -> Option<u16> {
        r.err().map(|e| e.number())
    }

    #[test]
    fn statements_need_their_privileges() {
        let mut a = Account::new("u", "%", Credential::Native([0; 20]));
        a.databases.insert("db".into(), Privs::SELECT);
        a.tables
            .insert(("db".into(), "t".into()), Privs::INSERT | Privs::UPDATE);
        let g = grants(a);
        let db = Some("db");
        assert_eq!(code(g.check(&stmt("SELECT * FROM t"), db)), None);
        assert_eq!(
            code(g.check(&stmt("SELECT * FROM other.x"), db)),
            Some(1142)
        );
        assert_eq!(
            code(g.check(&stmt("SELECT (SELECT 1 FROM other.x)"), db)),
            Some(1142)
        );
        assert_eq!(
            code(g.check(
                &stmt("SELECT * FROM t WHERE a IN (SELECT b FROM other.y)"),
                db
            )),
            Some(1142)
        );
        assert_eq!(code(g.check(&stmt("INSERT INTO t VALUES (1)"), db)), None);
        assert_eq!(
            code(g.check(&stmt("INSERT INTO u VALUES (1)"), db)),
            Some(1142)
        );
        assert_eq!(
            code(g.check(&stmt("REPLACE INTO t VALUES (1)"), db)),
            Some(1142)
        );
        assert_eq!(code(g.check(&stmt("UPDATE t SET a = 1"), db)), None);
        assert_eq!(code(g.check(&stmt("DELETE FROM t"), db)), Some(1142));
        assert_eq!(code(g.check(&stmt("CREATE DATABASE x"), db)), Some(1044));
        assert_eq!(code(g.check(&stmt("DROP TABLE t"), db)), Some(1142));
        assert_eq!(code(g.check(&stmt("USE db"), None)), None);
        assert_eq!(code(g.check(&stmt("USE nope"), None)), Some(1044));
        assert_eq!(code(g.check(&stmt("SET GLOBAL x = 1"), db)), Some(1227));
        assert_eq!(code(g.check(&stmt("SET @x = 1"), db)), None);
        assert_eq!(code(g.check(&stmt("CREATE USER v"), db)), Some(1227));
        assert_eq!(code(g.check(&stmt("FLUSH PRIVILEGES"), db)), Some(1227));
        assert_eq!(code(g.check(&stmt("SET PASSWORD = 'x'"), db)), None);
        assert_eq!(
            code(g.check(&stmt("ALTER USER u IDENTIFIED BY 'x'"), db)),
            None
        );
        assert_eq!(
            code(g.check(&stmt("ALTER USER v IDENTIFIED BY 'x'"), db)),
            Some(1227)
        );
        assert_eq!(
            code(g.check(&stmt("GRANT SELECT ON db.* TO v"), db)),
            Some(1044)
        );
        assert_eq!(
            code(g.check(&stmt("SELECT * FROM information_schema.tables"), db)),
            None
        );
        // The account and grant tables hold password hashes: a grant needed.
        for q in [
            "SELECT * FROM mysql.user",
            "SELECT Db FROM mysql.db",
            "SELECT 1 FROM t WHERE EXISTS (SELECT * FROM mysql.tables_priv)",
        ] {
            assert_eq!(code(g.check(&stmt(q), db)), Some(1142), "{q}");
        }
        assert!(g.sees_database("db") && !g.sees_database("other"));
        assert!(g.sees_table("db", "x") && !g.sees_table("other", "x"));
        assert_eq!(
            code(g.check(&stmt("SHOW TABLES FROM nope"), db)),
            Some(1044)
        );
        let root = Grants::all("root", "localhost");
        assert!(root.superuser());
        assert_eq!(code(root.check(&stmt("DROP DATABASE x"), None)), None);
    }

    #[test]
    fn select_on_the_mysql_schema_reads_its_tables() {
        let mut a = Account::new("u", "%", Credential::Native([0; 20]));
        a.databases.insert("mysql".into(), Privs::SELECT);
        let g = grants(a);
        assert_eq!(code(g.check(&stmt("SELECT * FROM mysql.user"), None)), None);
        let mut a = Account::new("u", "%", Credential::Native([0; 20]));
        a.tables
            .insert(("mysql".into(), "db".into()), Privs::SELECT);
        let g = grants(a);
        assert_eq!(code(g.check(&stmt("SELECT * FROM mysql.db"), None)), None);
        assert_eq!(
            code(g.check(&stmt("SELECT * FROM mysql.user"), None)),
            Some(1142)
        );
    }

    #[test]
    fn grant_option_lets_a_user_grant_what_it_has() {
        let mut a = Account::new("u", "%", Credential::Native([0; 20]));
        a.databases
            .insert("db".into(), Privs::SELECT | Privs::GRANT_OPTION);
        let g = grants(a);
        assert_eq!(
            code(g.check(&stmt("GRANT SELECT ON db.* TO v"), None)),
            None
        );
        assert_eq!(
            code(g.check(&stmt("GRANT SELECT ON db.t TO v"), None)),
            None
        );
        assert_eq!(
            code(g.check(&stmt("GRANT INSERT ON db.* TO v"), None)),
            Some(1044)
        );
        assert_eq!(
            code(g.check(&stmt("GRANT SELECT ON *.* TO v"), None)),
            Some(1227)
        );
    }

    #[test]
    fn show_grants_format() {
        let mut a = Account::new("u", "%", Credential::Native([0; 20]));
        assert_eq!(show_grants(&a), vec!["GRANT USAGE ON *.* TO `u`@`%`"]);
        a.global = Privs::PROCESS;
        a.databases
            .insert("db".into(), Privs::INSERT | Privs::SELECT);
        a.databases.insert(
            "all".into(),
            Privs::all_at(Level::Database) | Privs::GRANT_OPTION,
        );
        a.tables.insert(("db".into(), "t".into()), Privs::DELETE);
        assert_eq!(
            show_grants(&a),
            vec![
                "GRANT PROCESS ON *.* TO `u`@`%`",
                "GRANT ALL PRIVILEGES ON `all`.* TO `u`@`%` WITH GRANT OPTION",
                "GRANT SELECT, INSERT ON `db`.* TO `u`@`%`",
                "GRANT DELETE ON `db`.`t` TO `u`@`%`",
            ]
        );
    }
}
