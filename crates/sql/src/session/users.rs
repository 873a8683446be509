//! CREATE/DROP/ALTER USER, SET PASSWORD, GRANT and REVOKE: each computes
//! the new state of the accounts it touches and hands it to
//! `Engine::change_accounts`, which logs it durably before applying it.
//! Privilege checks ran before (privileges.rs).

use crate::parser::{GrantLevel, PrivList, Statement, UserName, UserSpec};
use crate::session::privileges::{level_kind, Grants};
use lockstep_accounts::{Account, Accounts, Credential, Level, Privs};
use lockstep_engine::{AccountChange, Engine};
use lockstep_protocol::{caching_sha2, native_password};
use lockstep_types::error::Code;
use lockstep_types::Error;

type R<T> = std::result::Result<T, Error>;

/// The plugin of CREATE USER without IDENTIFIED WITH (MySQL 8's default).
pub const DEFAULT_PLUGIN: &str = caching_sha2::PLUGIN_NAME;

/// The stored credential for `password` under `plugin`.
pub fn credential(plugin: &str, password: &str) -> R<Credential> {
    if plugin.eq_ignore_ascii_case(native_password::PLUGIN_NAME) {
        Ok(Credential::Native(native_password::stage2_hash(password)))
    } else if plugin.eq_ignore_ascii_case(caching_sha2::PLUGIN_NAME) {
        Ok(Credential::CachingSha2(caching_sha2::stored_hash(
            password.as_bytes(),
        )))
    } else {
        Err(Error::new(
            Code::PluginIsNotLoaded,
            format!("Plugin '{plugin}' is not loaded"),
        ))
    }
}

fn failed(op: &str, u: &str, h: &str) -> Error {
    Error::new(
        Code::OperationFailed,
        format!("Operation {op} failed for '{u}'@'{h}'"),
    )
}

/// The account a statement names (CURRENT_USER: the session's).
fn target(name: Option<&UserName>, grants: &Grants) -> (String, String) {
    match name {
        Some(n) => (n.user.clone(), n.host.clone()),
        None => (grants.account.user.clone(), grants.account.host.clone()),
    }
}

/// The built-in root follows --root-password; statements do not change it.
fn changeable(accounts: &Accounts, op: &str, u: &str, h: &str) -> R<()> {
    if accounts.is_builtin(u, h) {
        return Err(failed(op, u, h));
    }
    Ok(())
}

/// Runs an account statement; notes (e.g. "already exists" with IF NOT
/// EXISTS) go to `warnings`.
pub async fn run(
    engine: &Engine,
    grants: &Grants,
    db: Option<&str>,
    stmt: &Statement,
    warnings: &mut Vec<crate::exec::Condition>,
) -> R<()> {
    let mut notes = Vec::new();
    let r = engine
        .change_accounts(|accounts| changes(accounts, grants, db, stmt, &mut notes, engine))
        .await;
    warnings.extend(notes.into_iter().map(Into::into));
    r.map(|_| ())
}

fn changes(
    accounts: &Accounts,
    grants: &Grants,
    db: Option<&str>,
    stmt: &Statement,
    notes: &mut Vec<(u16, String)>,
    engine: &Engine,
) -> R<Vec<AccountChange>> {
    let mut out = Vec::new();
    match stmt {
        Statement::CreateUser {
            if_not_exists,
            users,
        } => return create_users(accounts, grants, *if_not_exists, users, notes),
        Statement::DropUser { if_exists, users } => {
            return drop_users(accounts, *if_exists, users, notes)
        }
        Statement::AlterUser { if_exists, users } => {
            for spec in users {
                match alter(accounts, grants, spec, "ALTER USER")? {
                    Some(a) => out.push(AccountChange::Put(a)),
                    None if *if_exists => {
                        let (u, h) = target(spec.name.as_ref(), grants);
                        notes.push((
                            3162,
                            format!("Authorization ID '{u}'@'{h}' does not exist."),
                        ));
                    }
                    None => {
                        let (u, h) = target(spec.name.as_ref(), grants);
                        return Err(failed("ALTER USER", &u, &h));
                    }
                }
            }
        }
        Statement::SetPassword { user, password } => {
            let spec = UserSpec {
                name: user.clone(),
                password: Some(password.clone()),
                plugin: None,
                require_ssl: None,
            };
            match alter(accounts, grants, &spec, "SET PASSWORD")? {
                Some(a) => out.push(AccountChange::Put(a)),
                None => {
                    let (u, h) = target(user.as_ref(), grants);
                    return Err(failed("SET PASSWORD", &u, &h));
                }
            }
        }
        Statement::Grant {
            privileges,
            level,
            users,
            grant_option,
        } => {
            let (scope, p) = resolve_level(engine, level, privileges, db)?;
            let p = match grant_option {
                true => p | Privs::GRANT_OPTION,
                false => p,
            };
            return grant_to(accounts, &scope, p, users);
        }
        Statement::Revoke {
            privileges,
            level,
            users,
        } => return revoke_from(accounts, (engine, db), level.as_ref(), privileges, users),
        _ => return Err(Error::internal("not an account statement")),
    }
    Ok(out)
}

/// CREATE USER [IF NOT EXISTS]: the accounts to add (3163 notes for those
/// that exist under IF NOT EXISTS).
fn create_users(
    accounts: &Accounts,
    grants: &Grants,
    if_not_exists: bool,
    users: &[UserSpec],
    notes: &mut Vec<(u16, String)>,
) -> R<Vec<AccountChange>> {
    let mut out = Vec::new();
    for spec in users {
        let (u, h) = target(spec.name.as_ref(), grants);
        if accounts.get(&u, &h).is_some() {
            if if_not_exists {
                notes.push((
                    3163,
                    format!("Authorization ID '{u}'@'{h}' already exists."),
                ));
                continue;
            }
            return Err(failed("CREATE USER", &u, &h));
        }
        let plugin = spec.plugin.as_deref().unwrap_or(DEFAULT_PLUGIN);
        let cred = credential(plugin, spec.password.as_deref().unwrap_or(""))?;
        let mut a = Account::new(&u, &h, cred);
        a.require_ssl = spec.require_ssl.unwrap_or(false);
        out.push(AccountChange::Put(a));
    }
    Ok(out)
}

/// DROP USER [IF EXISTS]: the accounts to drop, and the role grants that
/// name them.
fn drop_users(
    accounts: &Accounts,
    if_exists: bool,
    users: &[UserName],
    notes: &mut Vec<(u16, String)>,
) -> R<Vec<AccountChange>> {
    let mut out = Vec::new();
    for n in users {
        changeable(accounts, "DROP USER", &n.user, &n.host)?;
        if accounts.get(&n.user, &n.host).is_none() {
            if if_exists {
                notes.push((
                    3162,
                    format!("Authorization ID '{}'@'{}' does not exist.", n.user, n.host),
                ));
                continue;
            }
            return Err(failed("DROP USER", &n.user, &n.host));
        }
        out.push(AccountChange::Drop {
            user: n.user.clone(),
            host: n.host.clone(),
        });
    }
    // Grants of the dropped accounts as roles go with them.
    let gone = users.iter().map(crate::session::role_changes::id).collect();
    let unlinked = crate::session::role_changes::unlink(accounts, &gone);
    out.splice(0..0, unlinked);
    Ok(out)
}

/// GRANT `p` at `scope` to each of `users` (which must exist: 1410).
fn grant_to(
    accounts: &Accounts,
    scope: &Scope,
    p: Privs,
    users: &[UserName],
) -> R<Vec<AccountChange>> {
    let mut out = Vec::new();
    for n in users {
        changeable(accounts, "GRANT", &n.user, &n.host)?;
        let Some(current) = accounts.get(&n.user, &n.host) else {
            return Err(Error::new(
                Code::CantCreateUserWithGrant,
                "You are not allowed to create a user with GRANT",
            ));
        };
        let mut a = (*current).clone();
        match scope {
            Scope::Global => a.global = a.global | p,
            Scope::Database(d) => {
                let e = a.databases.entry(d.clone()).or_default();
                *e = *e | p;
            }
            Scope::Table(d, t) => {
                let e = a.tables.entry((d.clone(), t.clone())).or_default();
                *e = *e | p;
            }
        }
        out.push(AccountChange::Put(a));
    }
    Ok(out)
}

/// REVOKE from each of `users`: `level` None is REVOKE ALL PRIVILEGES,
/// GRANT OPTION; a privilege not held there is 1141 / 1147.
fn revoke_from(
    accounts: &Accounts,
    (engine, db): (&Engine, Option<&str>),
    level: Option<&GrantLevel>,
    privileges: &PrivList,
    users: &[UserName],
) -> R<Vec<AccountChange>> {
    let mut out = Vec::new();
    for n in users {
        changeable(accounts, "REVOKE", &n.user, &n.host)?;
        let Some(current) = accounts.get(&n.user, &n.host) else {
            return Err(failed("REVOKE", &n.user, &n.host));
        };
        let mut a = (*current).clone();
        let Some(level) = level else {
            // REVOKE ALL PRIVILEGES, GRANT OPTION FROM u
            a.global = Privs::NONE;
            a.databases.clear();
            a.tables.clear();
            out.push(AccountChange::Put(a));
            continue;
        };
        let (scope, p) = resolve_level(engine, level, privileges, db)?;
        let missing = || {
            Error::new(
                Code::NonexistingGrant,
                format!(
                    "There is no such grant defined for user '{}' on host '{}'",
                    n.user, n.host
                ),
            )
        };
        match &scope {
            Scope::Global => a.global = a.global.without(p),
            Scope::Database(d) => {
                let e = a.databases.get_mut(d).ok_or_else(missing)?;
                *e = e.without(p);
                if e.is_empty() {
                    a.databases.remove(d);
                }
            }
            Scope::Table(d, t) => {
                let key = (d.clone(), t.clone());
                let Some(e) = a.tables.get_mut(&key) else {
                    return Err(Error::new(
                        Code::NonexistingTableGrant,
                        format!(
                            "There is no such grant defined for user '{}' on host '{}' on table '{t}'",
                            n.user, n.host
                        ),
                    ));
                };
                *e = e.without(p);
                if e.is_empty() {
                    a.tables.remove(&key);
                }
            }
        }
        out.push(AccountChange::Put(a));
    }
    Ok(out)
}

/// The account after ALTER USER / SET PASSWORD, or None if it does not exist.
fn alter(accounts: &Accounts, grants: &Grants, spec: &UserSpec, op: &str) -> R<Option<Account>> {
    let (u, h) = target(spec.name.as_ref(), grants);
    changeable(accounts, op, &u, &h)?;
    let Some(current) = accounts.get(&u, &h) else {
        return Ok(None);
    };
    let mut a = (*current).clone();
    if spec.password.is_some() || spec.plugin.is_some() {
        let plugin = spec
            .plugin
            .as_deref()
            .unwrap_or(current.credential.plugin());
        a.credential = credential(plugin, spec.password.as_deref().unwrap_or(""))?;
    }
    if let Some(ssl) = spec.require_ssl {
        a.require_ssl = ssl;
    }
    Ok(Some(a))
}

enum Scope {
    Global,
    Database(String),
    Table(String, String),
}

/// Where a GRANT/REVOKE applies and what its privilege list means there;
/// privileges that do not exist at that level are refused as MySQL does.
fn resolve_level(
    engine: &Engine,
    level: &GrantLevel,
    list: &PrivList,
    db: Option<&str>,
) -> R<(Scope, Privs)> {
    let kind = level_kind(level);
    let allowed = Privs::all_at(kind) | Privs::GRANT_OPTION;
    let p = if list.all {
        list.privs | Privs::all_at(kind)
    } else {
        list.privs
    };
    if !allowed.contains(p) {
        return Err(match kind {
            Level::Table => Error::new(
                Code::IllegalGrantForTable,
                "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
            ),
            _ => Error::new(
                Code::WrongUsage,
                "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
            ),
        });
    }
    let scope = match level {
        GrantLevel::Global => Scope::Global,
        GrantLevel::Database(name) => {
            Scope::Database(name.as_deref().or(db).ok_or_else(Error::no_db)?.to_string())
        }
        GrantLevel::Table(t) => {
            let d = t.database.as_deref().or(db).ok_or_else(Error::no_db)?;
            // Like MySQL: a grant on a missing table only if it lets the user create it.
            let exists = engine.catalog.table(d, &t.name).is_some()
                || engine.catalog.view(d, &t.name).is_some()
                || super::user_tables::is_mysql_table(d, &t.name);
            if !exists && !p.contains(Privs::CREATE) {
                return Err(Error::no_such_table(d, &t.name));
            }
            Scope::Table(d.to_string(), t.name.clone())
        }
    };
    Ok((scope, p))
}
