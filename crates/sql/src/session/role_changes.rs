//! What CREATE/DROP ROLE, GRANT/REVOKE of roles and SET DEFAULT ROLE
//! change: each computes the new role sides (and accounts) it touches and
//! hands them to `Engine::change_accounts`, which logs them before they
//! apply. Nothing changes when any part of a statement fails.

use crate::parser::{RoleSpec, RoleStmt, UserName};
use crate::session::users::{credential, DEFAULT_PLUGIN};
use lockstep_accounts::{Account, AccountRoles, Accounts, AuthId};
use lockstep_engine::AccountChange;
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::collections::{BTreeMap, BTreeSet};

type R<T> = std::result::Result<T, Error>;

pub(crate) fn id(n: &UserName) -> AuthId {
    (n.user.clone(), n.host.clone())
}

/// `user`@`host` as MySQL quotes authorization IDs in role messages.
pub(crate) fn quoted(id: &AuthId) -> String {
    format!("`{}`@`{}`", id.0, id.1)
}

fn failed(op: &str, ids: &[AuthId]) -> Error {
    let list: Vec<String> = ids.iter().map(|(u, h)| format!("'{u}'@'{h}'")).collect();
    Error::new(
        Code::OperationFailed,
        format!("Operation {op} failed for {}", list.join(",")),
    )
}

pub(crate) fn unknown(id: &AuthId) -> Error {
    Error::new(
        Code::UnknownAuthid,
        format!("Unknown authorization ID {}", quoted(id)),
    )
}

pub(crate) fn not_granted(role: &AuthId, to: &AuthId) -> Error {
    Error::new(
        Code::RoleNotGranted,
        format!("{} is not granted to {}", quoted(role), quoted(to)),
    )
}

fn mandatory(role: &AuthId) -> Error {
    Error::new(
        Code::MandatoryRole,
        format!(
            "The role {} is a mandatory role and can't be revoked or dropped. The restriction can be lifted by excluding the role identifier from the global variable mandatory_roles.",
            quoted(role)
        ),
    )
}

/// Role sides being edited by one statement, emitted once each at the end.
struct Edits<'a> {
    accounts: &'a Accounts,
    sides: BTreeMap<AuthId, AccountRoles>,
}

impl<'a> Edits<'a> {
    fn new(accounts: &'a Accounts) -> Self {
        Edits {
            accounts,
            sides: BTreeMap::new(),
        }
    }

    fn side(&mut self, id: &AuthId) -> &mut AccountRoles {
        let accounts = self.accounts;
        self.sides
            .entry(id.clone())
            .or_insert_with(|| (*accounts.roles_of(id)).clone())
    }

    fn into_changes(self, out: &mut Vec<AccountChange>, skip: &BTreeSet<AuthId>) {
        for ((user, host), roles) in self.sides {
            if !skip.contains(&(user.clone(), host.clone())) {
                out.push(AccountChange::Roles { user, host, roles });
            }
        }
    }
}

/// The changes of an account-changing role statement.
pub(crate) fn changes(
    accounts: &Accounts,
    stmt: &RoleStmt,
    notes: &mut Vec<(u16, String)>,
) -> R<Vec<AccountChange>> {
    match stmt {
        RoleStmt::Create {
            if_not_exists,
            roles,
        } => create(accounts, *if_not_exists, roles, notes),
        RoleStmt::Drop { if_exists, roles } => {
            let ids: Vec<AuthId> = roles.iter().map(id).collect();
            drop_roles(accounts, *if_exists, &ids, notes, "DROP ROLE")
        }
        RoleStmt::Grant { roles, to, admin } => grant(accounts, roles, to, *admin),
        RoleStmt::Revoke { roles, from } => revoke(accounts, roles, from),
        RoleStmt::SetDefault { spec, users } => set_default(accounts, spec, users),
        RoleStmt::Set(_) | RoleStmt::ShowGrants { .. } => {
            Err(Error::internal("not an account-changing role statement"))
        }
    }
}

fn create(
    accounts: &Accounts,
    if_not_exists: bool,
    roles: &[UserName],
    notes: &mut Vec<(u16, String)>,
) -> R<Vec<AccountChange>> {
    let (mut out, mut seen, mut bad) = (Vec::new(), BTreeSet::new(), Vec::new());
    for r in roles {
        let (u, h) = id(r);
        if accounts.get(&u, &h).is_some() || !seen.insert((u.clone(), h.clone())) {
            if if_not_exists {
                notes.push((
                    3163,
                    format!("Authorization ID '{u}'@'{h}' already exists."),
                ));
            } else {
                bad.push((u, h));
            }
            continue;
        }
        // No password, and locked: a role cannot log in.
        out.push(AccountChange::Put(Account::new(
            &u,
            &h,
            credential(DEFAULT_PLUGIN, "")?,
        )));
        let roles = AccountRoles {
            locked: true,
            ..AccountRoles::default()
        };
        out.push(AccountChange::Roles {
            user: u,
            host: h,
            roles,
        });
    }
    if !bad.is_empty() {
        return Err(failed("CREATE ROLE", &bad));
    }
    Ok(out)
}

/// Drops accounts (roles or users) and every grant of them to others and
/// every default role naming them. Mandatory roles cannot go.
pub(crate) fn drop_roles(
    accounts: &Accounts,
    if_exists: bool,
    ids: &[AuthId],
    notes: &mut Vec<(u16, String)>,
    op: &str,
) -> R<Vec<AccountChange>> {
    let mut gone = BTreeSet::new();
    let mut bad = Vec::new();
    let required = accounts.mandatory();
    for r in ids {
        if required.contains(r) {
            return Err(mandatory(r));
        }
        if accounts.get(&r.0, &r.1).is_none() || accounts.is_builtin(&r.0, &r.1) {
            if if_exists {
                let text = format!("Authorization ID '{}'@'{}' does not exist.", r.0, r.1);
                notes.push((3162, text));
            } else {
                bad.push(r.clone());
            }
            continue;
        }
        gone.insert(r.clone());
    }
    if !bad.is_empty() {
        return Err(failed(op, &bad));
    }
    let mut out = unlink(accounts, &gone);
    out.extend(
        gone.into_iter()
            .map(|(user, host)| AccountChange::Drop { user, host }),
    );
    Ok(out)
}

/// The role sides that name accounts in `gone` (granted or default),
/// without them: what dropping those accounts changes elsewhere.
pub(crate) fn unlink(accounts: &Accounts, gone: &BTreeSet<AuthId>) -> Vec<AccountChange> {
    let mut edits = Edits::new(accounts);
    for (holder, side) in accounts.all_roles() {
        let names_gone = |r: &AuthId| gone.contains(r);
        if side.granted.keys().any(names_gone) || side.defaults.iter().any(names_gone) {
            let s = edits.side(&holder);
            s.granted.retain(|r, _| !gone.contains(r));
            s.defaults.retain(|r| !gone.contains(r));
        }
    }
    let mut out = Vec::new();
    edits.into_changes(&mut out, gone);
    out
}

fn grant(
    accounts: &Accounts,
    roles: &[UserName],
    to: &[UserName],
    admin: bool,
) -> R<Vec<AccountChange>> {
    let exists = |i: &AuthId| accounts.get(&i.0, &i.1).is_some();
    let to: Vec<AuthId> = to.iter().map(id).collect();
    let roles: Vec<AuthId> = roles.iter().map(id).collect();
    if let Some(missing) = to.iter().chain(&roles).find(|i| !exists(i)) {
        return Err(unknown(missing));
    }
    let mut edits = Edits::new(accounts);
    for grantee in &to {
        for role in &roles {
            // The grant closes a loop if the grantee is already reached
            // from the role (or is the role).
            if accounts.reaches(role, grantee) {
                return Err(Error::new(
                    Code::RoleGrantedToItself,
                    format!(
                        "User account {} is directly or indirectly granted to the role {}. The GRANT would create a loop",
                        quoted(grantee),
                        quoted(role)
                    ),
                ));
            }
            let held = edits.side(grantee).granted.entry(role.clone()).or_default();
            *held |= admin;
        }
    }
    let mut out = Vec::new();
    edits.into_changes(&mut out, &BTreeSet::new());
    Ok(out)
}

fn revoke(accounts: &Accounts, roles: &[UserName], from: &[UserName]) -> R<Vec<AccountChange>> {
    let exists = |i: &AuthId| accounts.get(&i.0, &i.1).is_some();
    let from: Vec<AuthId> = from.iter().map(id).collect();
    let roles: Vec<AuthId> = roles.iter().map(id).collect();
    if let Some(missing) = from.iter().chain(&roles).find(|i| !exists(i)) {
        return Err(unknown(missing));
    }
    let required = accounts.mandatory();
    let mut edits = Edits::new(accounts);
    for holder in &from {
        for role in &roles {
            if required.contains(role) {
                return Err(mandatory(role));
            }
            let side = edits.side(holder);
            if side.granted.remove(role).is_none() {
                return Err(not_granted(role, holder));
            }
            side.defaults.retain(|d| d != role);
        }
    }
    let mut out = Vec::new();
    edits.into_changes(&mut out, &BTreeSet::new());
    Ok(out)
}

/// The roles `spec` names for `holder`, each once: a named role must be
/// granted to it (or mandatory), else 3530.
pub(crate) fn resolve(accounts: &Accounts, spec: &RoleSpec, holder: &AuthId) -> R<Vec<AuthId>> {
    let grantable = accounts.grantable_roles(holder);
    Ok(match spec {
        RoleSpec::None => Vec::new(),
        RoleSpec::Default => accounts.roles_of(holder).defaults.clone(),
        RoleSpec::All { except } => {
            let except: Vec<AuthId> = except.iter().map(id).collect();
            let mut all = grantable.into_keys().collect::<Vec<_>>();
            all.retain(|r| !except.contains(r));
            all
        }
        RoleSpec::List(names) => {
            let mut list: Vec<AuthId> = Vec::new();
            for r in names.iter().map(id) {
                if !grantable.contains_key(&r) {
                    return Err(not_granted(&r, holder));
                }
                if !list.contains(&r) {
                    list.push(r);
                }
            }
            list
        }
    })
}

/// SET DEFAULT ROLE / ALTER USER ... DEFAULT ROLE: the roles must be
/// granted (or mandatory); setting another account's needs CREATE USER
/// (checked by the caller).
fn set_default(accounts: &Accounts, spec: &RoleSpec, users: &[UserName]) -> R<Vec<AccountChange>> {
    let mut edits = Edits::new(accounts);
    for u in users {
        let holder = id(u);
        if accounts.get(&holder.0, &holder.1).is_none() {
            return Err(unknown(&holder));
        }
        let list = resolve(accounts, spec, &holder)?;
        edits.side(&holder).defaults = list;
    }
    let mut out = Vec::new();
    edits.into_changes(&mut out, &BTreeSet::new());
    Ok(out)
}
