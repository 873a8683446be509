//! JSON through a real session: hostile sizes and nesting end in a MySQL
//! error or NULL, never in unbounded memory or a stack overflow; JSON
//! results and columns carry the JSON type; prepared statements bind JSON.

use crate::tests::db::Db;
use lockstep_types::result::Response;
use lockstep_types::{DataType, Value};

#[test]
fn growing_documents_hit_the_memory_cap() {
    let mut db = Db::new("json_grow");
    db.ok("SET SESSION query_memory_limit = 1048576");
    db.ok("SET @j = '[]'");
    // Appending in a loop, or doubling by merging: once the value passes
    // the cap the statement fails with 1041 (or its result is NULL with
    // warning 1301, as MySQL past max_allowed_packet).
    for (start, step) in [
        (
            "[]",
            "SET @j = JSON_ARRAY_APPEND(@j, '$', REPEAT('x', 50000))",
        ),
        ("[1, 2, 3]", "SET @j = JSON_MERGE_PRESERVE(@j, @j, @j, @j)"),
        (
            "{}",
            "SET @j = JSON_SET(@j, CONCAT('$.k', LENGTH(@j)), REPEAT('y', 40000))",
        ),
    ] {
        db.ok(&format!("SET @j = '{start}'"));
        let stopped = (0..60).any(|_| match db.run(step) {
            Err(e) => {
                assert_eq!(e.number(), 1041, "{step}");
                true
            }
            Ok(_) => db.rows("SELECT @j IS NULL")[0][0] == Value::Int(1),
        });
        assert!(stopped, "{step}");
    }
    // A document of many small values is bounded by the cap when parsed.
    let many = format!(
        "SELECT JSON_LENGTH(CONCAT('[', REPEAT('1,', {}), '1]'))",
        400_000
    );
    assert_eq!(db.err(&many), 1041);
    db.ok("SET SESSION query_memory_limit = DEFAULT");
    assert_eq!(db.rows(&many), vec![vec![Value::Int(400_001)]]);
}

#[test]
fn nesting_is_bounded() {
    let mut db = Db::new("json_deep");
    assert_eq!(
        db.err("SELECT JSON_VALID(1) + JSON_DEPTH(REPEAT('[', 1000000))"),
        3157
    );
    assert_eq!(
        db.err("SELECT CAST(REPEAT('{\"a\":', 200000) AS JSON)"),
        3157
    );
    db.ok("SET @d = CONCAT(REPEAT('[', 99), REPEAT(']', 99))");
    assert_eq!(
        db.rows("SELECT JSON_DEPTH(JSON_ARRAY(CAST(@d AS JSON)))"),
        vec![vec![Value::Int(100)]]
    );
    assert_eq!(
        db.err("SELECT JSON_SET(CAST(@d AS JSON), '$[0]', JSON_ARRAY(CAST(@d AS JSON)))"),
        3157
    );
    assert_eq!(
        db.err(
            "SELECT JSON_ARRAY_APPEND(CAST(@d AS JSON), '$[0][0]', JSON_ARRAY(CAST(@d AS JSON)))"
        ),
        3157
    );
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, j JSON)");
    db.ok("INSERT INTO t VALUES (1, @d)");
    assert_eq!(db.err("SELECT JSON_ARRAYAGG(JSON_ARRAY(j)) FROM t"), 3157);
    let deep_sql = format!("SELECT {}1{}", "JSON_ARRAY(".repeat(101), ")".repeat(101));
    assert!(db.run(&deep_sql).is_err());
}

#[test]
fn json_results_have_the_json_type() {
    let mut db = Db::new("json_types");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, j JSON)");
    db.ok("INSERT INTO t VALUES (1, '{\"b\":1,\"a\":[1,2]}')");
    let Response::Rows(rs) =
        db.ok("SELECT j, JSON_OBJECT('a', 1), j->'$.a', j->>'$.b', JSON_LENGTH(j) FROM t")
    else {
        panic!("rows expected");
    };
    let types: Vec<DataType> = rs.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(&types[..3], &[DataType::Json; 3]);
    assert_eq!(types[3], DataType::Text { max_len: u32::MAX });
    assert_eq!(rs.rows[0][0], Value::str("{\"a\": [1, 2], \"b\": 1}"));
    // A prepared statement: a parameter is a string (a document where a
    // document is expected, a JSON string where a value is).
    let mut p = db.prepare(
        None,
        "SELECT JSON_EXTRACT(?, ?), JSON_ARRAY(?), JSON_CONTAINS(j, ?) FROM t",
    );
    let params = [
        Value::str("{\"a\": [5]}"),
        Value::str("$.a[0]"),
        Value::str("[1]"),
        Value::str("{\"b\": 1}"),
    ];
    let rows = db.execute(None, &mut p, &params);
    assert_eq!(
        rows,
        vec![vec![
            Value::str("5"),
            Value::str("[\"[1]\"]"),
            Value::Int(1)
        ]]
    );
    assert_eq!(db.err("INSERT INTO t VALUES (2, '{')"), 3140);
    assert_eq!(db.err("UPDATE t SET j = 'nope'"), 3140);
    db.ok("UPDATE t SET j = JSON_REMOVE(j, '$.a')");
    assert_eq!(
        db.rows("SELECT j FROM t"),
        vec![vec![Value::str("{\"b\": 1}")]]
    );
}
