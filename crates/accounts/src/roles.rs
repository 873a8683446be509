//! MySQL 8 roles. A role is an account: CREATE ROLE makes a locked one
//! (it cannot log in), and any account can be granted to another. What an
//! account holds besides its privileges — the roles granted to it, its
//! default roles, the lock — is kept beside the account (`AccountRoles`),
//! logged and checkpointed as its own record so the account's encoding
//! stays as it was.
//!
//! A session's privileges are its account's plus those of its active
//! roles and of every role granted to those, transitively (`with_roles`).

use crate::{Account, Accounts, Privs};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// An account's name: (user, host).
pub type AuthId = (String, String);

/// The role side of one account.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountRoles {
    /// Made by CREATE ROLE: logins are refused.
    pub locked: bool,
    /// Roles granted to this account, each with its WITH ADMIN OPTION.
    pub granted: BTreeMap<AuthId, bool>,
    /// Roles activated at login (SET DEFAULT ROLE), in the order given.
    pub defaults: Vec<AuthId>,
}

impl AccountRoles {
    pub fn is_empty(&self) -> bool {
        *self == AccountRoles::default()
    }
}

impl Accounts {
    /// The role side of an account (empty when it has none).
    pub fn roles_of(&self, id: &AuthId) -> Arc<AccountRoles> {
        self.roles.read().get(id).cloned().unwrap_or_default()
    }

    /// Replaces an account's role side; the engine's counterpart of `put`.
    pub fn put_roles(&self, id: AuthId, roles: AccountRoles) {
        let mut map = self.roles.write();
        if roles.is_empty() {
            map.remove(&id);
        } else {
            map.insert(id, Arc::new(roles));
        }
        drop(map);
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Every account with a role side, in key order.
    pub fn all_roles(&self) -> Vec<(AuthId, Arc<AccountRoles>)> {
        let map = self.roles.read();
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Sets mandatory_roles (not logged: a server setting).
    pub fn set_mandatory(&self, roles: Vec<AuthId>) {
        *self.mandatory.write() = roles;
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    pub fn mandatory(&self) -> Vec<AuthId> {
        self.mandatory.read().clone()
    }

    /// Whether logins to the account are refused (a role).
    pub fn is_locked(&self, user: &str, host: &str) -> bool {
        let id = (user.to_string(), host.to_string());
        self.roles.read().get(&id).is_some_and(|r| r.locked)
    }

    fn exists(&self, id: &AuthId) -> bool {
        self.get(&id.0, &id.1).is_some()
    }

    /// The roles an account may activate: those granted to it and the
    /// mandatory ones that exist, each with whether it may administer it.
    pub fn grantable_roles(&self, id: &AuthId) -> BTreeMap<AuthId, bool> {
        let mut out = self.roles_of(id).granted.clone();
        for m in self.mandatory() {
            if self.exists(&m) && m != *id {
                out.entry(m).or_insert(false);
            }
        }
        out
    }

    /// Whether `to` is `from` or is granted to it, directly or through
    /// other roles (what a new grant must not close into a loop).
    pub fn reaches(&self, from: &AuthId, to: &AuthId) -> bool {
        self.closure(std::slice::from_ref(from)).contains(to)
    }

    /// `start` and every role granted to them, transitively; each once.
    pub fn closure(&self, start: &[AuthId]) -> BTreeSet<AuthId> {
        let map = self.roles.read();
        let mut seen: BTreeSet<AuthId> = BTreeSet::new();
        let mut todo: Vec<AuthId> = start.to_vec();
        while let Some(id) = todo.pop() {
            if let Some(r) = map.get(&id) {
                todo.extend(r.granted.keys().filter(|k| !seen.contains(*k)).cloned());
            }
            seen.insert(id);
        }
        seen
    }

    /// `own` with the privileges of the `active` roles (and the roles
    /// granted to them) added; roles that no longer exist add nothing.
    pub fn with_roles(&self, own: &Account, active: &[AuthId]) -> Account {
        let mut merged = own.clone();
        for id in self.closure(active) {
            let Some(role) = self.get(&id.0, &id.1) else {
                continue;
            };
            merged.global = merged.global | role.global;
            for (db, p) in &role.databases {
                let e = merged.databases.entry(db.clone()).or_insert(Privs::NONE);
                *e = *e | *p;
            }
            for (t, p) in &role.tables {
                let e = merged.tables.entry(t.clone()).or_insert(Privs::NONE);
                *e = *e | *p;
            }
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Credential;

    fn id(u: &str) -> AuthId {
        (u.to_string(), "%".to_string())
    }

    fn put(a: &Accounts, u: &str, global: Privs) {
        let mut acct = Account::new(u, "%", Credential::Native([0; 20]));
        acct.global = global;
        a.put(acct);
    }

    fn grant(a: &Accounts, role: &str, to: &str) {
        let mut r = (*a.roles_of(&id(to))).clone();
        r.granted.insert(id(role), false);
        a.put_roles(id(to), r);
    }

    #[test]
    fn privileges_flow_through_granted_roles() {
        let a = Accounts::default();
        put(&a, "u", Privs::NONE);
        put(&a, "r1", Privs::SELECT);
        put(&a, "r2", Privs::INSERT);
        grant(&a, "r2", "r1");
        grant(&a, "r1", "u");
        let u = a.get("u", "%").expect("u");
        assert_eq!(a.with_roles(&u, &[]).global, Privs::NONE);
        let m = a.with_roles(&u, &[id("r1")]);
        assert_eq!(m.global, Privs::SELECT | Privs::INSERT);
        assert!(a.reaches(&id("u"), &id("r2")));
        assert!(!a.reaches(&id("r2"), &id("u")));
        // A dropped role takes its privileges and its grants with it.
        a.remove("r2", "%");
        assert_eq!(a.with_roles(&u, &[id("r1")]).global, Privs::SELECT);
    }

    #[test]
    fn mandatory_roles_are_grantable_when_they_exist() {
        let a = Accounts::default();
        put(&a, "u", Privs::NONE);
        put(&a, "m", Privs::SELECT);
        a.set_mandatory(vec![id("m"), id("missing")]);
        let g = a.grantable_roles(&id("u"));
        assert_eq!(g.keys().cloned().collect::<Vec<_>>(), vec![id("m")]);
        let v = a.version();
        a.put_roles(id("u"), AccountRoles::default());
        assert!(a.version() > v);
        assert!(a.all_roles().is_empty());
    }
}
