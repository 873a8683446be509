//! The planner corpus: files under `tests/planner/`, each a fixture and
//! queries with their expected EXPLAIN output or result rows. Blocks are
//! separated by blank lines; `#` starts a comment line. A block is
//!
//! ```text
//! statement            explain / query
//! <one SQL per line>   <SQL, one or more lines>
//!                      ----
//!                      <expected output, one line per row>
//! ```
//!
//! `explain` prints `table: access` per table in join order; `query`
//! prints the result rows, values joined by ` | `, sorted (join order may
//! change the order rows come in). With `UPDATE_PLANNER_TESTS=1` the files
//! are rewritten with the actual output instead of compared.

use crate::tests::db::Db;
use lockstep_types::result::Response;
use lockstep_types::Value;
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/planner")
}

fn render(v: &Value) -> String {
    v.to_string()
}

/// Output lines of a statement: its rows (sorted unless `keep_order`) or
/// its error number.
fn output(db: &mut Db, sql: &str, keep_order: bool) -> Vec<String> {
    match db.run(sql) {
        Ok(Response::Rows(rs)) => {
            let mut lines: Vec<String> = rs
                .rows
                .iter()
                .map(|r| r.iter().map(render).collect::<Vec<_>>().join(" | "))
                .collect();
            if !keep_order {
                lines.sort();
            }
            lines
        }
        Ok(Response::Ok(_)) => vec!["ok".into()],
        Err(e) => vec![format!("error {}: {}", e.number(), e.message)],
    }
}

fn explain(db: &mut Db, sql: &str) -> Vec<String> {
    match db.run(&format!("EXPLAIN FORMAT=TREE {sql}")) {
        Ok(Response::Rows(rs)) => rs.rows.iter().map(|r| render(&r[0])).collect(),
        Ok(Response::Ok(_)) => vec!["no result set".into()],
        Err(e) => vec![format!("error {}: {}", e.number(), e.message)],
    }
}

/// Runs one block; returns its text as it should read (the actual output
/// in place of the expected) and a failure message if they differ.
fn run_block(db: &mut Db, block: &[&str]) -> (Vec<String>, Option<String>) {
    let mut out: Vec<String> = Vec::new();
    let mut lines = block.iter().copied();
    let mut directive = None;
    for line in lines.by_ref() {
        out.push(line.to_string());
        if !line.starts_with('#') {
            directive = Some(line.trim());
            break;
        }
    }
    let rest: Vec<&str> = lines.collect();
    match directive {
        None => (out, None),
        Some("statement") => {
            for sql in &rest {
                out.push(sql.to_string());
                if let Err(e) = db.run(sql) {
                    return (out, Some(format!("{sql}: {e:?}")));
                }
            }
            (out, None)
        }
        Some(kind @ ("explain" | "query" | "query ordered")) => {
            let split = rest.iter().position(|l| *l == "----").unwrap_or(rest.len());
            let sql = rest[..split].join(" ");
            let expected: Vec<String> = rest
                .get(split + 1..)
                .unwrap_or(&[])
                .iter()
                .map(|s| s.to_string())
                .collect();
            let actual = match kind {
                "explain" => explain(db, &sql),
                _ => output(db, &sql, kind == "query ordered"),
            };
            out.extend(rest[..split].iter().map(|s| s.to_string()));
            out.push("----".into());
            out.extend(actual.iter().cloned());
            let failure = (actual != expected).then(|| {
                format!(
                    "{kind} {sql}\nexpected:\n{}\nactual:\n{}",
                    expected.join("\n"),
                    actual.join("\n")
                )
            });
            (out, failure)
        }
        Some(other) => (out, Some(format!("unknown directive {other:?}"))),
    }
}

fn blocks(text: &str) -> Vec<Vec<&str>> {
    let mut out = vec![Vec::new()];
    for line in text.lines() {
        if line.trim().is_empty() {
            if !out.last().is_some_and(|b| b.is_empty()) {
                out.push(Vec::new());
            }
        } else if let Some(b) = out.last_mut() {
            b.push(line);
        }
    }
    out.retain(|b| !b.is_empty());
    out
}

fn run_file(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("planner test file reads");
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("x");
    let mut db = Db::new(&format!("planner-{stem}"));
    let mut rewritten = Vec::new();
    let mut failures = Vec::new();
    for block in blocks(&text) {
        let (out, failure) = run_block(&mut db, &block);
        rewritten.push(out.join("\n"));
        failures.extend(failure.map(|f| format!("{}: {f}", path.display())));
    }
    if std::env::var_os("UPDATE_PLANNER_TESTS").is_some() {
        std::fs::write(path, rewritten.join("\n\n") + "\n").expect("planner test file writes");
        return Vec::new();
    }
    failures
}

fn run_topic(name: &str) {
    let failures = run_file(&corpus_dir().join(format!("{name}.test")));
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn equalities() {
    run_topic("equalities");
}

#[test]
fn subqueries() {
    run_topic("subqueries");
}

#[test]
fn semijoin_nest() {
    run_topic("semijoin_nest");
}

#[test]
fn join_order() {
    run_topic("join_order");
}

#[test]
fn outer_joins() {
    run_topic("outer_joins");
}

#[test]
fn antijoins() {
    run_topic("antijoins");
}

#[test]
fn derived_tables() {
    run_topic("derived_tables");
}

#[test]
fn hints() {
    run_topic("hints");
}

#[test]
fn tpcc() {
    run_topic("tpcc");
}

/// Text-protocol cost of a point select and of joins (parse, plan and
/// run): `cargo test --release -p lockstep-sql planning_cost -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn planning_cost() {
    let mut db = Db::new("planning-cost");
    for sql in [
        "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), KEY k_1 (k))",
        "INSERT INTO sbtest1 VALUES (5, 1, 'c', 'pad')",
        "CREATE TABLE w (w_id INT PRIMARY KEY, w_tax INT)",
        "CREATE TABLE c (c_w_id INT, c_d_id INT, c_id INT, c_last CHAR(16), PRIMARY KEY (c_w_id, c_d_id, c_id))",
        "INSERT INTO w VALUES (1, 1)",
        "INSERT INTO c VALUES (1, 2, 3, 'x')",
    ] {
        db.ok(sql);
    }
    let queries = [
        "SELECT c FROM sbtest1 WHERE id=5",
        "SELECT c_last, w_tax FROM c, w WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 2 AND c_id = 3",
        "SELECT COUNT(*) FROM sbtest1 a, sbtest1 b, sbtest1 c, sbtest1 d WHERE a.id = b.k AND b.id = c.k AND c.id = d.k AND d.id = 5",
    ];
    // The best of many short batches: the machine is shared.
    for sql in queries {
        let best = (0..40)
            .map(|_| {
                let start = std::time::Instant::now();
                for _ in 0..500 {
                    db.ok(sql);
                }
                start.elapsed().as_nanos() / 500
            })
            .min()
            .unwrap_or(0);
        println!("{best:>8} ns  {sql}");
    }
}

/// A prepared statement's plan binds once with its parameters unknown:
/// `w_id = ?` still reaches customer's key through `c_w_id = w_id`.
#[test]
fn parameters_propagate() {
    let mut db = Db::new("planner-params");
    db.ok("CREATE TABLE w (w_id INT PRIMARY KEY, w_tax INT)");
    db.ok("CREATE TABLE c (c_w_id INT, c_d_id INT, c_id INT, c_last CHAR(8), PRIMARY KEY (c_w_id, c_d_id, c_id))");
    db.ok("INSERT INTO w VALUES (1, 10), (2, 20)");
    db.ok("INSERT INTO c VALUES (1, 2, 3, 'a'), (2, 2, 3, 'b'), (1, 2, 4, 'c')");
    let sql = "SELECT c_last, w_tax FROM c, w WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
    let stmt = crate::parser::parse(sql).expect("parses").remove(0);
    let crate::parser::Statement::Select(q) = stmt else {
        panic!("a query");
    };
    let engine = std::sync::Arc::clone(&db.server.engine);
    let mut binder = crate::plan::bind::Binder::new(&engine.catalog, Some("d".into()));
    let plan = binder.bind_query(&q).expect("binds");
    let crate::plan::QueryBody::Select(s) = &plan.body else {
        panic!("a select");
    };
    let explained: Vec<String> = crate::plan::explain(&s.source)
        .into_iter()
        .map(|(t, a)| format!("{t}: {a}"))
        .collect();
    assert_eq!(
        explained,
        [
            "c: 1 point lookup(s) on PRIMARY",
            "w: 1 point lookup(s) on PRIMARY"
        ]
    );
    // Every condition is guaranteed by a key: none is checked per row
    // (unless a parameter's value is not an exact integer key).
    let mut scans = Vec::new();
    scans_of(&s.source, &mut scans);
    assert_eq!(scans.len(), 2);
    for scan in scans {
        assert!(scan.filter.is_none(), "{}: {:?}", scan.alias, scan.filter);
        assert!(scan.range_check.is_some(), "{}", scan.alias);
    }
    assert!(s.filter.is_none(), "{:?}", s.filter);
    let mut p = db.prepare(None, sql);
    let rows = db.execute(None, &mut p, &[Value::Int(2), Value::Int(2), Value::Int(3)]);
    assert_eq!(rows.len(), 1);
    assert_eq!(render(&rows[0][0]), "b");
    assert_eq!(render(&rows[0][1]), "20");
}

fn scans_of<'a>(src: &'a crate::plan::Source, out: &mut Vec<&'a crate::plan::TableScan>) {
    match src {
        crate::plan::Source::Table(t) => out.push(t),
        crate::plan::Source::Join { left, right, .. } => {
            scans_of(left, out);
            scans_of(right, out);
        }
        _ => {}
    }
}
