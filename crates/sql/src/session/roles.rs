//! Running MySQL 8's role statements in a session: who may run them, SET
//! ROLE (the session's active roles, kept in `Grants`), the roles a login
//! starts with, SHOW GRANTS with roles, mandatory_roles and
//! activate_all_roles_on_login, and information_schema's APPLICABLE_ROLES
//! and ENABLED_ROLES. What the statements change is role_changes.rs.

use super::role_changes::{self, id, not_granted, quoted};
use super::{ok, rows, Session, R};
use crate::parser::{RoleSpec, RoleStmt, UserName};
use lockstep_accounts::{Account, Accounts, AuthId, Privs};
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::sync::Arc;

/// The active roles that are still granted (or mandatory) and exist: a
/// REVOKE or DROP ROLE takes them away at the session's next statement.
pub(crate) fn still_active(accounts: &Accounts, own: &Account, roles: &[AuthId]) -> Vec<AuthId> {
    if roles.is_empty() {
        return Vec::new();
    }
    let grantable = accounts.grantable_roles(&own.key());
    roles
        .iter()
        .filter(|r| grantable.contains_key(*r) && accounts.get(&r.0, &r.1).is_some())
        .cloned()
        .collect()
}

/// CURRENT_ROLE(): the active roles, sorted and comma-separated, or NONE.
pub(crate) fn current_role(roles: &[AuthId]) -> String {
    let mut sorted: Vec<&AuthId> = roles.iter().collect();
    sorted.sort();
    if sorted.is_empty() {
        return crate::exec::rights::NO_ROLE.into();
    }
    sorted.into_iter().map(quoted).collect::<Vec<_>>().join(",")
}

/// SHOW GRANTS lines of `own` with the privileges of `using` (and the
/// roles granted to them) added, then the roles granted to `own`.
pub(crate) fn grant_lines(accounts: &Accounts, own: &Account, using: &[AuthId]) -> Vec<String> {
    let merged = accounts.with_roles(own, using);
    let mut lines = crate::session::privileges::show_grants(&merged);
    let to = quoted(&own.key());
    let granted = accounts.roles_of(&own.key()).granted.clone();
    for admin in [false, true] {
        let names: Vec<String> = granted
            .iter()
            .filter(|(_, a)| **a == admin)
            .map(|(r, _)| quoted(r))
            .collect();
        if !names.is_empty() {
            let tail = if admin { " WITH ADMIN OPTION" } else { "" };
            lines.push(format!("GRANT {} TO {to}{tail}", names.join(",")));
        }
    }
    lines
}

/// `'u'@'h', ...` or `u, ...` of mandatory_roles, host '%' by default.
fn parse_role_list(text: &str) -> R<Vec<AuthId>> {
    let unquote = |s: &str| s.trim().trim_matches(['`', '\'', '"']).to_string();
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (u, h) = match item.rsplit_once('@') {
            Some((u, h)) => (unquote(u), unquote(h)),
            None => (unquote(item), "%".to_string()),
        };
        if u.is_empty() || u.len() > 32 || h.len() > 255 {
            return Err(Error::new(
                Code::WrongValueForVar,
                format!("Variable 'mandatory_roles' can't be set to the value of '{text}'"),
            ));
        }
        out.push((u, h));
    }
    Ok(out)
}

impl Session {
    /// Runs a role statement (privileges are checked here).
    pub(super) async fn run_role(&mut self, stmt: &RoleStmt) -> R<Response> {
        match stmt {
            RoleStmt::Set(spec) => self.set_role(spec).map(|()| ok(0)),
            RoleStmt::ShowGrants { user, using } => self.show_grants_using(user, using),
            _ => {
                self.check_role_statement(stmt)?;
                self.commit().await?;
                let mut notes = Vec::new();
                let r = self
                    .engine
                    .change_accounts(|accounts| role_changes::changes(accounts, stmt, &mut notes))
                    .await;
                self.ctx.warnings.extend(notes.into_iter().map(Into::into));
                r.map(|_| ok(0))
            }
        }
    }

    /// CREATE ROLE needs CREATE ROLE or CREATE USER, DROP ROLE needs DROP
    /// ROLE or CREATE USER; granting or revoking a role needs SUPER (which
    /// stands for ROLE_ADMIN) or the role WITH ADMIN OPTION; another
    /// account's default roles need CREATE USER.
    fn check_role_statement(&self, stmt: &RoleStmt) -> R<()> {
        let g = &self.grants;
        let any = |p: Privs, names: &str| match g.has_global(p) || g.has_global(Privs::CREATE_USER)
        {
            true => Ok(()),
            false => Err(super::privileges::Grants::global_denied(names)),
        };
        match stmt {
            RoleStmt::Create { .. } => any(Privs::CREATE_ROLE, "CREATE USER, CREATE ROLE"),
            RoleStmt::Drop { .. } => any(Privs::DROP_ROLE, "CREATE USER, DROP ROLE"),
            RoleStmt::Grant { roles, .. } | RoleStmt::Revoke { roles, .. } => {
                self.check_role_admin(roles)
            }
            RoleStmt::SetDefault { users, .. } => {
                let own = g.account.key();
                match users.iter().all(|u| id(u) == own) {
                    true => Ok(()),
                    false => any(Privs::CREATE_USER, "CREATE USER"),
                }
            }
            RoleStmt::Set(_) | RoleStmt::ShowGrants { .. } => Ok(()),
        }
    }

    fn check_role_admin(&self, roles: &[UserName]) -> R<()> {
        if self.grants.superuser() || self.grants.has_global(Privs::SUPER) {
            return Ok(());
        }
        let accounts = &self.engine.accounts;
        let own = self.grants.account.key();
        let mut admin = accounts.grantable_roles(&own);
        for r in accounts.closure(&self.grants.roles) {
            admin.extend(accounts.roles_of(&r).granted.clone());
        }
        match roles.iter().all(|r| admin.get(&id(r)) == Some(&true)) {
            true => Ok(()),
            false => Err(super::privileges::Grants::global_denied("ROLE_ADMIN")),
        }
    }

    /// SET ROLE: every named role must be granted to the account (3530).
    fn set_role(&mut self, spec: &RoleSpec) -> R<()> {
        self.grants.refresh(&self.engine.accounts);
        let accounts = &self.engine.accounts;
        let own = self.grants.account.key();
        let roles = role_changes::resolve(accounts, spec, &own)?;
        self.activate(roles);
        Ok(())
    }

    /// After a refresh dropped roles no longer granted, CURRENT_ROLE()
    /// and stored programs see the same (one comparison otherwise).
    pub(super) fn sync_active_roles(&mut self) {
        let stale = match &self.ctx.grants {
            Some(g) => g.active_roles() != self.grants.roles.len(),
            None => false,
        };
        if stale {
            self.ctx.grants = Some(Arc::new(self.grants.clone()));
        }
    }

    fn activate(&mut self, roles: Vec<AuthId>) {
        self.grants.set_roles(&self.engine.accounts, roles);
        self.ctx.grants = Some(Arc::new(self.grants.clone()));
    }

    /// The roles a login starts with: all it may activate under
    /// activate_all_roles_on_login, else its default roles.
    pub(super) fn activate_login_roles(&mut self) {
        let accounts = &self.engine.accounts;
        let own = self.grants.account.key();
        let all = self
            .server
            .globals
            .get("activate_all_roles_on_login")
            .and_then(|v| v.to_i64())
            .is_some_and(|v| v != 0);
        let roles = match all {
            true => accounts.grantable_roles(&own).into_keys().collect(),
            false => accounts.roles_of(&own).defaults.clone(),
        };
        if !roles.is_empty() {
            self.activate(roles);
        }
    }

    /// SHOW GRANTS FOR u USING r, ...: each role must be granted to u.
    fn show_grants_using(&mut self, user: &UserName, using: &[UserName]) -> R<Response> {
        let who = id(user);
        if who != self.grants.account.key() && !self.grants.superuser() {
            let g = &self.grants;
            if !g.account.has_on_database(Privs::SELECT, "mysql") {
                return Err(g.database_denied("mysql"));
            }
        }
        let accounts = &self.engine.accounts;
        let Some(own) = accounts.get(&who.0, &who.1) else {
            return Err(Error::new(
                Code::NonexistingGrant,
                format!(
                    "There is no such grant defined for user '{}' on host '{}'",
                    who.0, who.1
                ),
            ));
        };
        let grantable = accounts.grantable_roles(&who);
        let using: Vec<AuthId> = using.iter().map(id).collect();
        if let Some(r) = using.iter().find(|r| !grantable.contains_key(*r)) {
            return Err(not_granted(r, &who));
        }
        Ok(grants_response(&own, grant_lines(accounts, &own, &using)))
    }

    /// SET GLOBAL mandatory_roles / activate_all_roles_on_login.
    pub(super) fn set_role_variable(&self, name: &str, v: Value) -> R<()> {
        if name == "activate_all_roles_on_login" {
            let on = super::vars::bool_setting(name, &v)?;
            return self.server.globals.set(name, Value::Int(on as i64));
        }
        let text = match &v {
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let roles = parse_role_list(&text)?;
        self.engine.accounts.set_mandatory(roles);
        self.server.globals.set(name, Value::str(&text))
    }
}

/// The SHOW GRANTS result for `own`.
pub(crate) fn grants_response(own: &Account, lines: Vec<String>) -> Response {
    let title = format!("Grants for {}@{}", own.user, own.host);
    let lines = lines.into_iter().map(|l| vec![Value::str(&l)]).collect();
    rows(&[title.as_str()], lines)
}

fn yes(b: bool) -> Value {
    Value::str(if b { "YES" } else { "NO" })
}

/// APPLICABLE_ROLES: the roles granted to the account, and to those
/// roles, transitively, each with the grantee it is granted to.
fn applicable_rows(accounts: &Accounts, own: &AuthId) -> Vec<Vec<Value>> {
    let defaults = accounts.roles_of(own).defaults.clone();
    let required = accounts.mandatory();
    let s = |x: &str| Value::str(x);
    let mut applicable = Vec::new();
    let mut todo: Vec<(AuthId, bool)> = accounts.grantable_roles(own).into_iter().collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut grantee = vec![own.clone(); todo.len()];
    while let (Some((role, admin)), Some(by)) = (todo.pop(), grantee.pop()) {
        if !seen.insert((by.clone(), role.clone())) {
            continue;
        }
        applicable.push(vec![
            s(&own.0),
            s(&own.1),
            s(&by.0),
            s(&by.1),
            s(&role.0),
            s(&role.1),
            yes(admin),
            yes(defaults.contains(&role)),
            yes(required.contains(&role)),
        ]);
        for (next, a) in accounts.roles_of(&role).granted.iter() {
            todo.push((next.clone(), *a));
            grantee.push(role.clone());
        }
    }
    applicable
}

/// information_schema.APPLICABLE_ROLES and ENABLED_ROLES of a session.
pub(super) fn infoschema_tables(cat: &lockstep_engine::catalog::Catalog, session: &Session) {
    use lockstep_types::DataType;
    let accounts = &session.engine.accounts;
    let own = session.grants.account.key();
    let applicable = applicable_rows(accounts, &own);
    let defaults = accounts.roles_of(&own).defaults.clone();
    let required = accounts.mandatory();
    let s = |x: &str| Value::str(x);
    let vc = DataType::VarChar { len: 255 };
    let cols = [
        "USER",
        "HOST",
        "GRANTEE",
        "GRANTEE_HOST",
        "ROLE_NAME",
        "ROLE_HOST",
        "IS_GRANTABLE",
        "IS_DEFAULT",
        "IS_MANDATORY",
    ]
    .map(|c| (c, vc));
    super::infoschema::table(cat, 190, "APPLICABLE_ROLES", &cols, applicable);
    let enabled = accounts
        .closure(&session.grants.roles)
        .into_iter()
        .map(|r| {
            let (d, m) = (defaults.contains(&r), required.contains(&r));
            vec![s(&r.0), s(&r.1), yes(d), yes(m)]
        })
        .collect();
    let cols = ["ROLE_NAME", "ROLE_HOST", "IS_DEFAULT", "IS_MANDATORY"].map(|c| (c, vc));
    super::infoschema::table(cat, 191, "ENABLED_ROLES", &cols, enabled);
}
