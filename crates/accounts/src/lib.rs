//! User accounts and their grants: what `CREATE USER`, `GRANT` and friends
//! change, logged and checkpointed like the catalog (see
//! `Engine::change_accounts`), and how a login finds its account (MySQL's
//! most-specific host match).
//!
//! The built-in root account is not stored: it is installed at start from
//! `--root-password` and never logged, so it works as it always did.

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub mod roles;
pub use roles::{AccountRoles, AuthId};

/// A set of privileges (MySQL's static privileges), one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Privs(pub u32);

macro_rules! privileges {
    ($($name:ident = $bit:literal, $text:literal, $levels:expr;)*) => {
        impl Privs {
            $(pub const $name: Privs = Privs(1 << $bit);)*
            /// Every privilege, in the order SHOW GRANTS prints them, with
            /// the levels (bits of `Level::mask`) it can be granted at.
            pub const ALL_NAMED: &'static [(Privs, &'static str, u8)] =
                &[$((Privs::$name, $text, $levels),)*];
        }
    };
}

const G: u8 = 1; // global
const D: u8 = 2; // database
const T: u8 = 4; // table

privileges! {
    SELECT = 0, "SELECT", G | D | T;
    INSERT = 1, "INSERT", G | D | T;
    UPDATE = 2, "UPDATE", G | D | T;
    DELETE = 3, "DELETE", G | D | T;
    CREATE = 4, "CREATE", G | D | T;
    DROP = 5, "DROP", G | D | T;
    RELOAD = 6, "RELOAD", G;
    SHUTDOWN = 7, "SHUTDOWN", G;
    PROCESS = 8, "PROCESS", G;
    FILE = 9, "FILE", G;
    REFERENCES = 10, "REFERENCES", G | D | T;
    INDEX = 11, "INDEX", G | D | T;
    ALTER = 12, "ALTER", G | D | T;
    SHOW_DATABASES = 13, "SHOW DATABASES", G;
    SUPER = 14, "SUPER", G;
    CREATE_TEMPORARY_TABLES = 15, "CREATE TEMPORARY TABLES", G | D;
    LOCK_TABLES = 16, "LOCK TABLES", G | D;
    EXECUTE = 17, "EXECUTE", G | D;
    REPLICATION_SLAVE = 18, "REPLICATION SLAVE", G;
    REPLICATION_CLIENT = 19, "REPLICATION CLIENT", G;
    CREATE_VIEW = 20, "CREATE VIEW", G | D | T;
    SHOW_VIEW = 21, "SHOW VIEW", G | D | T;
    CREATE_ROUTINE = 22, "CREATE ROUTINE", G | D;
    ALTER_ROUTINE = 23, "ALTER ROUTINE", G | D;
    CREATE_USER = 24, "CREATE USER", G;
    EVENT = 25, "EVENT", G | D;
    TRIGGER = 26, "TRIGGER", G | D | T;
    CREATE_TABLESPACE = 27, "CREATE TABLESPACE", G;
    CREATE_ROLE = 28, "CREATE ROLE", G;
    DROP_ROLE = 29, "DROP ROLE", G;
    GRANT_OPTION = 31, "GRANT OPTION", G | D | T;
}

impl Privs {
    pub const NONE: Privs = Privs(0);

    /// Everything grantable at `level` (what ALL [PRIVILEGES] means there),
    /// GRANT OPTION excluded as in MySQL.
    pub fn all_at(level: Level) -> Privs {
        let mut p = Privs::NONE;
        for (priv_, _, levels) in Privs::ALL_NAMED {
            if levels & level.mask() != 0 && *priv_ != Privs::GRANT_OPTION {
                p = p | *priv_;
            }
        }
        p
    }

    /// A privilege by its SQL name ("SELECT", "GRANT OPTION", ...).
    pub fn from_name(name: &str) -> Option<Privs> {
        Privs::ALL_NAMED
            .iter()
            .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
            .map(|(p, _, _)| *p)
    }

    pub fn contains(self, other: Privs) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn without(self, other: Privs) -> Privs {
        Privs(self.0 & !other.0)
    }

    /// Names of the privileges in this set, in SHOW GRANTS order.
    pub fn names(self) -> Vec<&'static str> {
        Privs::ALL_NAMED
            .iter()
            .filter(|(p, _, _)| self.contains(*p))
            .map(|(_, n, _)| *n)
            .collect()
    }
}

impl std::ops::BitOr for Privs {
    type Output = Privs;
    fn bitor(self, o: Privs) -> Privs {
        Privs(self.0 | o.0)
    }
}

impl std::ops::BitAnd for Privs {
    type Output = Privs;
    fn bitand(self, o: Privs) -> Privs {
        Privs(self.0 & o.0)
    }
}

/// Where a grant applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Global,
    Database,
    Table,
}

impl Level {
    fn mask(self) -> u8 {
        match self {
            Level::Global => G,
            Level::Database => D,
            Level::Table => T,
        }
    }
}

/// How an account proves its identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Credential {
    /// mysql_native_password: SHA1(SHA1(password)).
    Native([u8; 20]),
    /// caching_sha2_password: a salted, iterated SHA256 of the password
    /// (see lockstep_protocol::caching_sha2::stored_hash); empty for an
    /// empty password.
    CachingSha2(Vec<u8>),
}

impl Credential {
    pub fn plugin(&self) -> &'static str {
        match self {
            Credential::Native(_) => "mysql_native_password",
            Credential::CachingSha2(_) => "caching_sha2_password",
        }
    }
}

/// One `'user'@'host'` account and everything granted to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub user: String,
    pub host: String,
    pub credential: Credential,
    pub global: Privs,
    /// Database-level grants by database name.
    pub databases: BTreeMap<String, Privs>,
    /// Table-level grants by (database, table).
    pub tables: BTreeMap<(String, String), Privs>,
    /// REQUIRE SSL: logins over plain text are refused.
    pub require_ssl: bool,
}

impl Account {
    pub fn new(user: &str, host: &str, credential: Credential) -> Account {
        Account {
            user: user.to_string(),
            host: host.to_string(),
            credential,
            global: Privs::NONE,
            databases: BTreeMap::new(),
            tables: BTreeMap::new(),
            require_ssl: false,
        }
    }

    pub fn key(&self) -> (String, String) {
        (self.user.clone(), self.host.clone())
    }

    /// Whether `need` is held on table `db`.`table` at any level.
    pub fn has_on_table(&self, need: Privs, db: &str, table: &str) -> bool {
        if self.global.contains(need) {
            return true;
        }
        let mut have = self.global;
        if let Some(p) = self.databases.get(db) {
            have = have | *p;
        }
        if let Some(p) = self.tables.get(&(db.to_string(), table.to_string())) {
            have = have | *p;
        }
        have.contains(need)
    }

    /// Whether `need` is held on database `db` (global or database level).
    pub fn has_on_database(&self, need: Privs, db: &str) -> bool {
        self.global.contains(need)
            || (self.global | self.databases.get(db).copied().unwrap_or_default()).contains(need)
    }

    /// Whether any privilege at all reaches `db` (what USE requires).
    pub fn touches_database(&self, db: &str) -> bool {
        !self.global.without(Privs::GRANT_OPTION).is_empty()
            || self.databases.get(db).is_some_and(|p| !p.is_empty())
            || self
                .tables
                .iter()
                .any(|((d, _), p)| d == db && !p.is_empty())
    }
}

/// Whether a login from `peer` matches the account host `pattern`:
/// `%` and `_` wildcards, exact addresses, and `localhost` for loopback
/// peers (the client's address is all lockstep knows; no DNS).
pub fn host_matches(pattern: &str, peer: IpAddr) -> bool {
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(peer),
        v4 => v4,
    };
    if pattern.eq_ignore_ascii_case("localhost") {
        return peer.is_loopback();
    }
    wildcard_match(pattern.as_bytes(), peer.to_string().as_bytes())
}

/// SQL LIKE-style matching with `%` and `_` (no escapes: host names have
/// none), ASCII case-insensitive. Iterative: on a mismatch only the last
/// `%` is retried one byte further, so a pattern of many `%`s costs at most
/// O(len(p) * len(s)) per login attempt, not exponential time.
fn wildcard_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    // Pattern position after the last `%` seen, and where its match ends.
    let mut retry: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'%') => {
                pi += 1;
                retry = Some((pi, si));
            }
            Some(&c) if c == b'_' || c.eq_ignore_ascii_case(&s[si]) => {
                pi += 1;
                si += 1;
            }
            _ => match retry {
                Some((after, start)) => {
                    retry = Some((after, start + 1));
                    pi = after;
                    si = start + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'%')
}

/// Sort key of an account for login matching, most specific first (as
/// MySQL sorts its user table): hosts without wildcards, then patterns
/// with a longer literal prefix, then '%'; a named user before the
/// anonymous one.
fn specificity(a: &Account) -> (u8, usize, bool) {
    let host = a.host.as_bytes();
    let literal = host
        .iter()
        .take_while(|c| **c != b'%' && **c != b'_')
        .count();
    let rank = if literal == host.len() {
        0
    } else if host == b"%" {
        2
    } else {
        1
    };
    (rank, usize::MAX - literal, a.user.is_empty())
}

/// The accounts of a node, with a version counter that moves on every
/// change so sessions can keep a cached copy of their own account.
#[derive(Default)]
pub struct Accounts {
    stored: RwLock<BTreeMap<(String, String), Arc<Account>>>,
    builtin: RwLock<Option<Arc<Account>>>,
    version: AtomicU64,
    /// Role grants, default roles and locks by account (roles.rs).
    roles: RwLock<BTreeMap<AuthId, Arc<AccountRoles>>>,
    /// The global mandatory_roles, granted to every account.
    mandatory: RwLock<Vec<AuthId>>,
}

impl Accounts {
    /// Bumped by every change; compare with a cached value before reusing
    /// an account.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Installs the built-in account (root), which is never logged.
    pub fn set_builtin(&self, account: Account) {
        *self.builtin.write() = Some(Arc::new(account));
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    pub fn is_builtin(&self, user: &str, host: &str) -> bool {
        self.builtin
            .read()
            .as_ref()
            .is_some_and(|a| a.user == user && a.host == host)
    }

    /// The account `'user'@'host'` exactly.
    pub fn get(&self, user: &str, host: &str) -> Option<Arc<Account>> {
        if let Some(b) = self.builtin.read().as_ref() {
            if b.user == user && b.host == host {
                return Some(b.clone());
            }
        }
        self.stored
            .read()
            .get(&(user.to_string(), host.to_string()))
            .cloned()
    }

    /// The account a login by `user` from `peer` is checked against.
    pub fn find_login(&self, user: &str, peer: IpAddr) -> Option<Arc<Account>> {
        let builtin = self.builtin.read().clone();
        let stored = self.stored.read();
        let mut candidates: Vec<&Arc<Account>> = stored
            .values()
            .chain(builtin.iter())
            .filter(|a| (a.user == user || a.user.is_empty()) && host_matches(&a.host, peer))
            .collect();
        candidates.sort_by_key(|a| specificity(a));
        candidates.first().map(|a| (*a).clone())
    }

    /// Stored accounts (not the built-in one), in key order.
    pub fn stored(&self) -> Vec<Arc<Account>> {
        self.stored.read().values().cloned().collect()
    }

    /// Every account, the built-in one first.
    pub fn all(&self) -> Vec<Arc<Account>> {
        let mut v: Vec<_> = self.builtin.read().iter().cloned().collect();
        v.extend(self.stored());
        v
    }

    /// Installs an account. Only the engine calls this, once the change is
    /// logged (`Engine::change_accounts`) or while it replays the log.
    pub fn put(&self, account: Account) {
        self.stored.write().insert(account.key(), Arc::new(account));
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Removes an account; the engine's counterpart of `put`.
    pub fn remove(&self, user: &str, host: &str) {
        let key = (user.to_string(), host.to_string());
        self.stored.write().remove(&key);
        self.roles.write().remove(&key);
        self.version.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acct(user: &str, host: &str) -> Account {
        Account::new(user, host, Credential::Native([0; 20]))
    }

    #[test]
    fn host_patterns() {
        let lo: IpAddr = "127.0.0.1".parse().expect("ip");
        let other: IpAddr = "10.1.2.3".parse().expect("ip");
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().expect("ip");
        assert!(host_matches("%", lo));
        assert!(host_matches("localhost", lo));
        assert!(host_matches("localhost", mapped));
        assert!(host_matches("LOCALHOST", "::1".parse().expect("ip")));
        assert!(!host_matches("localhost", other));
        assert!(host_matches("127.0.0.1", lo));
        assert!(host_matches("127.0.0.1", mapped));
        assert!(!host_matches("127.0.0.2", lo));
        assert!(host_matches("10.1.%", other));
        assert!(host_matches("10.1._.3", other));
        assert!(!host_matches("10.2.%", other));
    }

    #[test]
    fn wildcards_keep_their_meaning() {
        let m = |p: &str, s: &str| wildcard_match(p.as_bytes(), s.as_bytes());
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("%", ""));
        assert!(m("%%", "abc"));
        assert!(m("a%c", "abc"));
        assert!(m("a%c", "ac"));
        assert!(!m("a%c", "ab"));
        assert!(m("A_C", "abc"));
        assert!(!m("a_c", "ac"));
        assert!(m("%.example.COM", "db.Example.com"));
        assert!(!m("%.example.com", "example.com"));
        assert!(m("%a%b%", "xxaxxbxx"));
        assert!(!m("%a%b%", "xxbxxaxx"));
        assert!(m("1%1", "1.2.3.1"));
        assert!(!m("1%1", "1.2.3.2"));
    }

    #[test]
    fn many_percent_signs_cost_little() {
        // Thirty '%' then a literal: the old recursive matcher tried every
        // way of splitting the address between them (seconds per login).
        let pattern = format!("{}z", "%".repeat(30));
        let peer = "255.255.255.255.255.255.255.255.255.255.255.255";
        let start = std::time::Instant::now();
        for _ in 0..100 {
            assert!(!wildcard_match(pattern.as_bytes(), peer.as_bytes()));
        }
        let pattern = format!("{}_%_%5", "%_".repeat(40));
        assert!(wildcard_match(pattern.as_bytes(), peer.as_bytes()));
        assert!(
            start.elapsed() < std::time::Duration::from_millis(50),
            "{:?}",
            start.elapsed()
        );
        let addr = "255.255.255.254".parse().expect("ip");
        assert!(!host_matches(&format!("{}z", "%".repeat(30)), addr));
    }

    #[test]
    fn most_specific_account_wins() {
        let a = Accounts::default();
        let lo: IpAddr = "127.0.0.1".parse().expect("ip");
        let mut any = acct("u", "%");
        any.global = Privs::SELECT;
        a.put(any);
        assert_eq!(a.find_login("u", lo).expect("match").host, "%");
        a.put(acct("u", "127.%"));
        assert_eq!(a.find_login("u", lo).expect("match").host, "127.%");
        a.put(acct("u", "127.0.%"));
        assert_eq!(a.find_login("u", lo).expect("match").host, "127.0.%");
        a.put(acct("u", "localhost"));
        assert_eq!(a.find_login("u", lo).expect("match").host, "localhost");
        // A remote peer only matches the patterns.
        let remote: IpAddr = "10.0.0.1".parse().expect("ip");
        assert_eq!(a.find_login("u", remote).expect("match").host, "%");
        assert!(a.find_login("nobody", remote).is_none());
        // A named user beats the anonymous one on an equally specific host.
        a.put(acct("", "localhost"));
        assert_eq!(a.find_login("u", lo).expect("match").user, "u");
        assert_eq!(a.find_login("x", lo).expect("match").user, "");
        a.remove("u", "localhost");
        assert_eq!(a.find_login("u", lo).expect("match").user, "");
    }

    #[test]
    fn levels_combine() {
        let mut u = acct("u", "%");
        u.databases
            .insert("db".into(), Privs::SELECT | Privs::INSERT);
        u.tables
            .insert(("db".into(), "t".into()), Privs::UPDATE | Privs::DELETE);
        u.tables.insert(("other".into(), "t".into()), Privs::SELECT);
        assert!(u.has_on_table(Privs::SELECT, "db", "x"));
        assert!(u.has_on_table(Privs::SELECT | Privs::UPDATE, "db", "t"));
        assert!(!u.has_on_table(Privs::UPDATE, "db", "x"));
        assert!(u.has_on_table(Privs::SELECT, "other", "t"));
        assert!(!u.has_on_table(Privs::SELECT, "other", "u"));
        assert!(u.has_on_database(Privs::INSERT, "db"));
        assert!(!u.has_on_database(Privs::CREATE, "db"));
        assert!(u.touches_database("other"));
        assert!(!u.touches_database("third"));
        u.global = Privs::CREATE;
        assert!(u.has_on_database(Privs::CREATE, "third"));
        assert!(u.touches_database("third"));
    }

    #[test]
    fn privilege_names_and_levels() {
        assert_eq!(Privs::from_name("grant option"), Some(Privs::GRANT_OPTION));
        assert_eq!(
            Privs::from_name("SHOW DATABASES"),
            Some(Privs::SHOW_DATABASES)
        );
        assert_eq!(Privs::from_name("FLY"), None);
        let db = Privs::all_at(Level::Database);
        assert!(db.contains(Privs::SELECT | Privs::EXECUTE));
        assert!(!db.contains(Privs::SUPER));
        assert!(!db.contains(Privs::GRANT_OPTION));
        let t = Privs::all_at(Level::Table);
        assert!(!t.contains(Privs::EXECUTE));
        assert_eq!(
            (Privs::INSERT | Privs::SELECT).names(),
            vec!["SELECT", "INSERT"]
        );
    }
}
