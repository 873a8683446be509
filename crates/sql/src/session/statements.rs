//! Prepared statements shared between sessions: one parsed and bound copy
//! of each statement text per database, whoever prepared it.
//!
//! Why: with a copy per session, a server with 1024 connections holds 1024
//! copies of `SELECT c FROM sbtest1 WHERE id=?`, and every execution walks
//! its own cold syntax tree and plan. Profiled at 1024 connections (point
//! selects from a multiplexed client), cache misses on per-connection state
//! were what grew the server's CPU per query by half between 256 and 1024
//! connections; the statement's tree and plan were among them. One shared
//! copy stays in the cache for every session. A plan depends only on the
//! catalog and the database it was bound in (`bind::Binder`), so the key is
//! the text and the database, and a DDL (which bumps
//! `Engine::ddl_version`) empties the cache.

use crate::parser::Statement;
use crate::session::Bound;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// One prepared statement as every session that prepared it sees it.
pub(crate) struct SharedStatement {
    pub statement: Arc<Statement>,
    pub params: usize,
    /// None when binding failed at prepare (e.g. the table did not exist
    /// yet) or the statement has no plan (BEGIN, system queries).
    pub plan: Option<Bound>,
    /// `Engine::ddl_version` the plan was bound at.
    pub version: u64,
    /// Plans for ranges of parameter estimates (`replan`), when `plan`
    /// depends on them.
    pub replans: crate::session::replan::Replans,
}

type Key = (Option<String>, String);

/// The server's shared statements (see the module docs). Touched only by
/// COM_STMT_PREPARE, never by executions, so one mutex is enough.
pub struct StatementCache {
    inner: Mutex<Inner>,
    capacity: usize,
}

struct Inner {
    /// DDL version every entry was bound at.
    version: u64,
    map: HashMap<Key, Arc<SharedStatement>>,
}

impl StatementCache {
    pub fn new(capacity: usize) -> StatementCache {
        StatementCache {
            inner: Mutex::new(Inner {
                version: 0,
                map: HashMap::new(),
            }),
            capacity,
        }
    }

    /// The shared copy of `sql` prepared in `database`, if one was bound at
    /// DDL version `version`.
    pub(crate) fn get(
        &self,
        database: Option<&str>,
        sql: &str,
        version: u64,
    ) -> Option<Arc<SharedStatement>> {
        let mut inner = self.inner.lock();
        if inner.version != version {
            if inner.version < version {
                // A DDL since: let go of plans that may hold dropped tables.
                inner.map.clear();
                inner.version = version;
            }
            return None;
        }
        // A borrowed key would need a custom Borrow impl for the tuple; a
        // prepare is rare next to executions, so build the owned one.
        let key = (database.map(str::to_owned), sql.to_owned());
        inner.map.get(&key).cloned()
    }

    /// Shares `s`, prepared from `sql` in `database`. Entries of an older
    /// DDL version are dropped first (their plans may hold dropped tables);
    /// a full cache is emptied rather than managed, since a workload that
    /// prepares that many distinct texts gains nothing from sharing.
    pub(crate) fn put(&self, database: Option<&str>, sql: &str, s: Arc<SharedStatement>) {
        let mut inner = self.inner.lock();
        if inner.version != s.version {
            if s.version < inner.version {
                return;
            }
            inner.map.clear();
            inner.version = s.version;
        }
        if inner.map.len() >= self.capacity {
            inner.map.clear();
        }
        inner
            .map
            .insert((database.map(str::to_owned), sql.to_owned()), s);
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::db::Db;
    use lockstep_types::Value;

    fn shared(version: u64) -> Arc<SharedStatement> {
        let statement = crate::parser::parse("SELECT 1").expect("parses").remove(0);
        Arc::new(SharedStatement {
            statement: Arc::new(statement),
            params: 0,
            plan: None,
            version,
            replans: Default::default(),
        })
    }

    #[test]
    fn entries_live_until_the_ddl_version_moves() {
        let cache = StatementCache::new(8);
        cache.put(Some("d"), "SELECT 1", shared(3));
        assert!(cache.get(Some("d"), "SELECT 1", 3).is_some());
        assert!(
            cache.get(Some("e"), "SELECT 1", 3).is_none(),
            "keyed by database"
        );
        assert!(cache.get(None, "SELECT 1", 3).is_none());
        assert!(cache.get(Some("d"), "SELECT 2", 3).is_none());
        // A newer DDL version empties the cache; an older entry is refused.
        assert!(cache.get(Some("d"), "SELECT 1", 4).is_none());
        assert!(cache.is_empty());
        cache.put(Some("d"), "SELECT 1", shared(3));
        assert!(cache.is_empty());
    }

    #[test]
    fn a_full_cache_starts_over() {
        let cache = StatementCache::new(2);
        cache.put(None, "a", shared(1));
        cache.put(None, "b", shared(1));
        cache.put(None, "c", shared(1));
        assert_eq!(cache.len(), 1);
        assert!(cache.get(None, "c", 1).is_some());
    }

    fn int(v: i64) -> Value {
        Value::Int(v)
    }

    #[test]
    fn sessions_share_one_copy_and_ddl_rebinds() {
        let mut db = Db::new("shared-stmts");
        db.ok("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))");
        db.ok("INSERT INTO t VALUES (1, 'one'), (2, 'two')");
        let sql = "SELECT c FROM t WHERE id = ?";
        let mut other = db.session(2);
        let mut a = db.prepare(None, sql);
        let mut b = db.prepare(Some(&mut other), sql);
        assert_eq!(db.server.statements.len(), 1, "one shared copy");
        assert_eq!(
            db.execute(None, &mut a, &[int(1)]),
            vec![vec![Value::str("one")]]
        );
        assert_eq!(
            db.execute(Some(&mut other), &mut b, &[int(2)]),
            vec![vec![Value::str("two")]]
        );

        // The table is replaced with its columns in another order: both
        // statements bind again, and a new prepare does not get the old plan.
        db.ok("DROP TABLE t");
        db.ok("CREATE TABLE t (c VARCHAR(10), id INT PRIMARY KEY)");
        db.ok("INSERT INTO t VALUES ('uno', 1)");
        assert_eq!(
            db.execute(None, &mut a, &[int(1)]),
            vec![vec![Value::str("uno")]]
        );
        let mut c = db.prepare(Some(&mut other), sql);
        assert_eq!(
            db.execute(Some(&mut other), &mut c, &[int(1)]),
            vec![vec![Value::str("uno")]]
        );
        assert_eq!(
            db.execute(Some(&mut other), &mut b, &[int(1)]),
            vec![vec![Value::str("uno")]]
        );
        other.disconnect();
    }

    #[test]
    fn the_same_text_in_another_database_is_another_statement() {
        let mut db = Db::new("shared-stmts-db");
        db.ok("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))");
        db.ok("INSERT INTO t VALUES (1, 'in d')");
        db.ok("CREATE DATABASE e");
        db.ok("CREATE TABLE e.t (id INT PRIMARY KEY, c VARCHAR(10))");
        db.ok("INSERT INTO e.t VALUES (1, 'in e')");
        let sql = "SELECT c FROM t WHERE id = ?";
        let mut in_d = db.prepare(None, sql);
        db.ok("USE e");
        let mut in_e = db.prepare(None, sql);
        assert_eq!(db.server.statements.len(), 2);
        assert_eq!(
            db.execute(None, &mut in_e, &[int(1)]),
            vec![vec![Value::str("in e")]]
        );
        assert_eq!(
            db.execute(None, &mut in_d, &[int(1)]),
            vec![vec![Value::str("in d")]]
        );
    }
}
