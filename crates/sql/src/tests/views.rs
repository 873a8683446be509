//! Views and privileges: reading through a SQL SECURITY DEFINER view
//! needs SELECT on the view, and the definer's (not the invoker's)
//! rights on what the view reads. A user with no rights never sees rows.

use super::db::Db;
use lockstep_accounts::{Account, Credential, Level, Privs};
use lockstep_types::Value;

/// A session logged in as `'name'@'%'` (the account exists).
pub(super) fn login(db: &mut Db, id: u64, name: &str) -> crate::Session {
    let mut s = db.session(id);
    let account = db
        .server
        .engine
        .accounts
        .get(name, "%")
        .expect("account exists");
    s.login(account, name, "localhost");
    s
}

fn err(db: &mut Db, s: &mut crate::Session, sql: &str) -> u16 {
    match db.run_in(s, sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e.number(),
    }
}

#[test]
fn definer_rights_decide_what_a_view_reads() {
    let mut db = Db::new("view-privs");
    // The built-in root, as the server installs it: its session keeps its
    // rights once other accounts exist.
    let mut root = Account::new("root", "%", Credential::Native([0; 20]));
    root.global = Privs::all_at(Level::Global) | Privs::GRANT_OPTION;
    db.server.engine.accounts.set_builtin(root);
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, secret VARCHAR(10))");
    db.ok("INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    db.ok("CREATE USER boss, reader, nobody, invoker");
    db.ok("GRANT SELECT ON d.t TO boss");
    db.ok("CREATE DEFINER = boss VIEW v AS SELECT id FROM t");
    db.ok("CREATE SQL SECURITY INVOKER VIEW vi AS SELECT id FROM t");
    db.ok("GRANT SELECT ON d.v TO reader");
    db.ok("GRANT SELECT ON d.vi TO invoker");

    let mut reader = login(&mut db, 2, "reader");
    let rows = match db.run_in(&mut reader, "SELECT id FROM v ORDER BY id") {
        Ok(lockstep_types::result::Response::Rows(rs)) => rs.rows,
        other => panic!("{other:?}"),
    };
    assert_eq!(rows, vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
    assert_eq!(err(&mut db, &mut reader, "SELECT * FROM t"), 1142);
    assert_eq!(err(&mut db, &mut reader, "SELECT * FROM vi"), 1142);
    assert_eq!(err(&mut db, &mut reader, "DROP VIEW v"), 1142);
    assert_eq!(
        err(&mut db, &mut reader, "CREATE VIEW w AS SELECT 1"),
        1142,
        "CREATE VIEW needs the CREATE VIEW privilege"
    );

    let mut nobody = login(&mut db, 3, "nobody");
    assert_eq!(err(&mut db, &mut nobody, "SELECT * FROM v"), 1142);
    assert_eq!(
        err(&mut db, &mut nobody, "SELECT (SELECT COUNT(*) FROM v)"),
        1142
    );
    assert_eq!(err(&mut db, &mut nobody, "SHOW CREATE VIEW v"), 1142);

    // An INVOKER view checks the invoker's rights on its tables.
    let mut invoker = login(&mut db, 4, "invoker");
    assert_eq!(err(&mut db, &mut invoker, "SELECT * FROM vi"), 1142);

    // The definer losing its rights makes the view unusable (1356).
    db.ok("REVOKE SELECT ON d.t FROM boss");
    assert_eq!(err(&mut db, &mut reader, "SELECT * FROM v"), 1356);
    // CTE names in subqueries are no tables to check.
    db.ok("GRANT SELECT ON d.v TO nobody");
    let cte = "SELECT * FROM v WHERE id IN (WITH c AS (SELECT 1 AS x) SELECT x FROM c)";
    assert_eq!(
        err(&mut db, &mut nobody, cte),
        1356,
        "c is not checked as a table; the view fails on its definer's rights"
    );
    // A definer that does not exist: 1449.
    db.ok("DROP USER boss");
    assert_eq!(err(&mut db, &mut reader, "SELECT * FROM v"), 1449);

    // Creating a view needs SELECT on what it reads.
    db.ok("GRANT CREATE VIEW ON d.* TO nobody");
    assert_eq!(
        err(&mut db, &mut nobody, "CREATE VIEW w AS SELECT id FROM t"),
        1142
    );
    db.run_in(&mut nobody, "CREATE VIEW w AS SELECT 1 AS one")
        .expect("a view reading no table");
}

#[test]
fn prepared_statements_and_views() {
    let mut db = Db::new("view-prepared");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    db.ok("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
    db.ok("CREATE VIEW big AS SELECT id, v FROM t WHERE v > 10");
    let mut p = db.prepare(None, "SELECT id FROM big WHERE v < ? ORDER BY id");
    let rows = db.execute(None, &mut p, &[Value::Int(100)]);
    assert_eq!(rows, vec![vec![Value::Int(2)], vec![Value::Int(3)]]);
    // The view changes under the prepared statement: it binds again.
    db.ok("CREATE OR REPLACE VIEW big AS SELECT id, v FROM t WHERE v > 20");
    let rows = db.execute(None, &mut p, &[Value::Int(100)]);
    assert_eq!(rows, vec![vec![Value::Int(3)]]);
}
