//! SQL scripts: files under `tests/scripts/`, one per topic, each a
//! sequence of statements with the output they must give, run through
//! sessions on a scratch engine (no socket). The format:
//!
//! ```text
//! # a comment, kept where it is
//! > SELECT a, b FROM t ORDER BY a
//! a | b
//! 1 | NULL
//!
//! @2> UPDATE t SET b = 1
//! error 1205 (HY000): Lock wait timeout exceeded; try restarting transaction
//! ```
//!
//! `>` runs in session 1, `@N>` in session N (opened on first use, in
//! database `d`); `@N:user>` opens session N logged in as `'user'@'%'`. A result set prints its column names, then its rows in
//! the order they came (scripts say ORDER BY); an OK prints `ok` with the
//! rows affected, the info text and the warning count when there are any;
//! an error prints its number, SQLSTATE and message. The expected output
//! runs to the next blank line. With `UPDATE_SQL_SCRIPTS=1` the files are
//! rewritten with the actual output instead of compared.

use crate::tests::db::Db;
use crate::Session;
use lockstep_types::result::Response;
use lockstep_types::value::format_float;
use lockstep_types::{DataType, Error, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts")
}

/// What a statement gave, as the script prints it: a value with line
/// breaks (SHOW CREATE TABLE) continues on the next lines.
fn render(result: Result<Response, Error>) -> Vec<String> {
    render_lines(result)
        .iter()
        .flat_map(|l| l.split('\n').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn render_lines(result: Result<Response, Error>) -> Vec<String> {
    match result {
        Ok(Response::Rows(rs)) => {
            let header = rs.columns.iter().map(|c| c.name.as_str());
            let mut out = vec![header.collect::<Vec<_>>().join(" | ")];
            for row in &rs.rows {
                // A FLOAT column prints as the protocol sends it.
                let cell = |(v, c): (&Value, &lockstep_protocol::Column)| match (v, c.data_type) {
                    (Value::Double(d), DataType::Float) => format_float(*d),
                    _ => v.to_string(),
                };
                let cells: Vec<String> = row.iter().zip(rs.columns.iter()).map(cell).collect();
                out.push(cells.join(" | "));
            }
            out
        }
        Ok(Response::Ok(ok)) => {
            let mut line = "ok".to_string();
            if ok.affected_rows > 0 {
                line += &format!(", {} affected", ok.affected_rows);
            }
            if !ok.info.is_empty() {
                line += &format!(", {}", ok.info);
            }
            if ok.warnings > 0 {
                line += &format!(", {} warnings", ok.warnings);
            }
            vec![line]
        }
        Err(e) => vec![format!(
            "error {} ({}): {}",
            e.number(),
            e.sqlstate(),
            e.message
        )],
    }
}

/// One statement of a script and the output written after it.
struct Step<'a> {
    comments: Vec<&'a str>,
    session: u64,
    /// `@N:user>`: the account session N logs in as when it opens.
    login: Option<&'a str>,
    sql: &'a str,
    expected: Vec<&'a str>,
}

fn parse(text: &str) -> Result<Vec<Step<'_>>, String> {
    let mut steps: Vec<Step> = Vec::new();
    let mut comments = Vec::new();
    let mut in_output = false;
    for (n, line) in text.lines().enumerate() {
        if let Some((session, login, sql)) = statement(line) {
            let comments = std::mem::take(&mut comments);
            steps.push(Step {
                comments,
                session,
                login,
                sql,
                expected: Vec::new(),
            });
            in_output = true;
        } else if line.trim().is_empty() {
            in_output = false;
        } else if in_output {
            steps
                .last_mut()
                .expect("output follows a statement")
                .expected
                .push(line);
        } else if line.starts_with('#') {
            comments.push(line);
        } else {
            return Err(format!(
                "line {}: neither a statement nor a comment: {line}",
                n + 1
            ));
        }
    }
    Ok(steps)
}

/// `> sql` (session 1), `@N> sql` or `@N:user> sql`.
fn statement(line: &str) -> Option<(u64, Option<&str>, &str)> {
    if let Some(sql) = line.strip_prefix("> ") {
        return Some((1, None, sql));
    }
    let (n, sql) = line.strip_prefix('@')?.split_once("> ")?;
    let (n, login) = match n.split_once(':') {
        Some((n, user)) => (n, Some(user)),
        None => (n, None),
    };
    Some((n.parse().ok()?, login, sql))
}

fn write_back(steps: &[Step], actual: &[Vec<String>]) -> String {
    let mut out = String::new();
    for (step, lines) in steps.iter().zip(actual) {
        for c in &step.comments {
            out += &format!("{c}\n");
        }
        let prefix = match (step.session, step.login) {
            (1, _) => ">".to_string(),
            (n, Some(user)) => format!("@{n}:{user}>"),
            (n, None) => format!("@{n}>"),
        };
        out += &format!("{prefix} {}\n", step.sql);
        for l in lines {
            out += &format!("{l}\n");
        }
        out += "\n";
    }
    out
}

fn run_script(name: &str) {
    let path = scripts_dir().join(format!("{name}.test"));
    let text = std::fs::read_to_string(&path).expect("script reads");
    let steps = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut db = Db::new(&format!("script-{name}"));
    if steps.iter().any(|s| s.login.is_some()) {
        // The built-in root, as the server installs it: root sessions keep
        // their rights once other accounts exist.
        use lockstep_accounts::{Account, Credential, Level, Privs};
        let mut root = Account::new("root", "%", Credential::Native([0; 20]));
        root.global = Privs::all_at(Level::Global) | Privs::GRANT_OPTION;
        db.server.engine.accounts.set_builtin(root);
    }
    let mut others: BTreeMap<u64, Session> = BTreeMap::new();
    let mut actual = Vec::new();
    let mut failures = Vec::new();
    for step in &steps {
        let results = match step.session {
            1 => db.run_all(None, step.sql),
            n => {
                let s = others.entry(n).or_insert_with(|| match step.login {
                    Some(user) => crate::tests::views::login(&mut db, n, user),
                    None => db.session(n),
                });
                db.run_all(Some(s), step.sql)
            }
        };
        // A CALL's result sets come first, each printed in turn.
        let lines: Vec<String> = results.into_iter().flat_map(render).collect();
        if lines != step.expected {
            failures.push(format!(
                "{} {}\nexpected:\n{}\nactual:\n{}",
                path.display(),
                step.sql,
                step.expected.join("\n"),
                lines.join("\n")
            ));
        }
        actual.push(lines);
    }
    if std::env::var_os("UPDATE_SQL_SCRIPTS").is_some() {
        std::fs::write(&path, write_back(&steps, &actual)).expect("script writes");
        return;
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn parse_keeps_comments_sessions_and_outputs() {
    let text = "# c\n> SELECT 1\n1\n1\n\n@3> COMMIT\nok\n";
    let steps = parse(text).expect("parses");
    assert_eq!(steps.len(), 2);
    assert_eq!(
        (steps[0].comments.clone(), steps[0].session),
        (vec!["# c"], 1)
    );
    assert_eq!(steps[0].expected, vec!["1", "1"]);
    assert_eq!((steps[1].session, steps[1].sql), (3, "COMMIT"));
    let again = write_back(&steps, &[vec!["1".into(), "1".into()], vec!["ok".into()]]);
    assert_eq!(again, "# c\n> SELECT 1\n1\n1\n\n@3> COMMIT\nok\n\n");
    assert!(parse("SELECT 1\n").is_err(), "a statement needs its marker");
}

macro_rules! scripts {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_script(stringify!($name));
            }
        )*
        const LISTED: &[&str] = &[$(stringify!($name)),*];
    };
}

scripts!(
    transactions,
    names,
    semantics,
    select_into,
    found_rows,
    insert_row_alias,
    skip_locked,
    lock_tables,
    ddl,
    errors,
    show,
    alter,
    subqueries,
    grouping,
    hash_join,
    full_group_by,
    index_hints,
    explain,
    json,
    enum_set,
    foreign_keys,
    window,
    rollup,
    replication,
    cdc_vars,
    views,
    ctes,
    multi_table_dml,
    check_constraints,
    view_dml,
    routine_text,
    routines,
    triggers,
    charsets,
    charset_columns,
    binary_charset,
    string_arith_warnings,
    sql_mode,
    type_limits,
    functions_builtin,
    comments,
    reflection,
    generated_columns,
    driver_fidelity,
    subquery_semijoin,
    auto_increment,
    lateral,
    json_table,
    histogram,
    explain_filtered,
    roles,
    group_concat_order,
    check_view,
    json_bool,
    engine_foreign_keys,
    min_max_collation,
    row_numbers,
    values_rows,
    sql_mode_lenient,
    system_tables,
    update_ignore,
    user_tables,
    zero_dates,
    decimal_rounding,
    float_text,
    temporal_text,
    range_estimates,
    fraction_rounding,
    temporal_literals,
    global_default,
    statement_clock,
    time_cast,
    time_zone,
);

/// A script file nobody listed above would never run.
#[test]
fn every_script_file_is_listed() {
    let dir = std::fs::read_dir(scripts_dir()).expect("the scripts folder is in the crate");
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".test") {
            assert!(LISTED.contains(&stem), "{name} is not in the scripts! list");
        }
    }
}
