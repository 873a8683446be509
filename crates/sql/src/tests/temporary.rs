//! CREATE TEMPORARY TABLE: a session's own tables.

use crate::tests::db::Db;
use lockstep_types::Value;

#[test]
fn temporary_tables_belong_to_their_session_and_hide_permanent_ones() {
    let mut db = Db::new("temporary");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))");
    db.ok("INSERT INTO t VALUES (1, 'permanent')");
    db.ok("CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v VARCHAR(10), KEY kv (v))");
    db.ok("INSERT INTO t VALUES (7, 'temp'), (8, 'x')");
    assert_eq!(
        db.rows("SELECT id FROM t WHERE v = 'temp'"),
        vec![vec![Value::Int(7)]]
    );
    assert_eq!(db.err("CREATE TEMPORARY TABLE t (id INT)"), 1050);
    db.ok("CREATE TEMPORARY TABLE IF NOT EXISTS t (id INT)");
    // Another session sees the permanent table only.
    let mut other = db.session(2);
    let seen = db.run_in(&mut other, "SELECT v FROM t").expect("select");
    match seen {
        lockstep_protocol::Response::Rows(rs) => {
            assert_eq!(rs.rows, vec![vec![Value::str("permanent")]])
        }
        r => panic!("{r:?}"),
    }
    // Indexes on a temporary table: built and dropped, never logged.
    db.ok("CREATE INDEX i ON t (v)");
    assert_eq!(db.err("CREATE INDEX i ON t (v)"), 1061);
    assert_eq!(db.rows("SELECT COUNT(*) FROM t WHERE v = 'temp'").len(), 1);
    db.ok("DROP INDEX i ON t");
    assert_eq!(db.err("ALTER TABLE t ADD COLUMN w INT"), 1235);
    // Transactions roll temporary rows back too.
    db.ok("BEGIN");
    db.ok("DELETE FROM t WHERE id = 7");
    db.ok("ROLLBACK");
    assert_eq!(db.rows("SELECT COUNT(*) FROM t"), vec![vec![Value::Int(2)]]);
    let create = db.rows("SHOW CREATE TABLE t");
    assert!(create[0][1]
        .to_string()
        .starts_with("CREATE TEMPORARY TABLE"));
    db.ok("TRUNCATE TABLE t");
    assert_eq!(db.rows("SELECT COUNT(*) FROM t"), vec![vec![Value::Int(0)]]);
    db.ok("DROP TEMPORARY TABLE t");
    assert_eq!(db.err("DROP TEMPORARY TABLE t"), 1051);
    // The permanent table is back, untouched.
    assert_eq!(
        db.rows("SELECT v FROM t"),
        vec![vec![Value::str("permanent")]]
    );
    db.ok("CREATE TEMPORARY TABLE tmp LIKE t");
    db.ok("INSERT INTO tmp SELECT * FROM t");
    db.ok("DROP TABLE tmp");
    assert_eq!(db.err("SELECT * FROM tmp"), 1146);
    other.disconnect();
}
