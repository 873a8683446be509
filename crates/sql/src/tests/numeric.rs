//! Numeric and string functions at their edges (0, negatives, huge and
//! huge unsigned values, NULL, negative places), each with the result
//! MySQL 8 gives, as a text-protocol client reads it.

use crate::tests::db::Db;

/// `expected` is the text a client reads, "NULL", or "!code" for an error.
const CASES: &[(&str, &str)] = &[
    // ROUND / TRUNCATE: negative places on integers, DECIMAL and DOUBLE.
    ("ROUND(12345,-2)", "12300"),
    ("ROUND(55,-1)", "60"),
    ("ROUND(45,-1)", "50"),
    ("ROUND(44,-1)", "40"),
    ("ROUND(-55,-1)", "-60"),
    ("ROUND(12345,-20)", "0"),
    ("ROUND(12345,-9223372036854775807)", "0"),
    ("ROUND(12345,-9223372036854775808)", "0"),
    ("ROUND(1234.5,-9223372036854775808)", "0"),
    ("ROUND(1234.5e0,-9223372036854775808)", "0"),
    ("ROUND(12345,2)", "12345"),
    ("ROUND(12345,18446744073709551615)", "12345"),
    ("ROUND(18446744073709551615,-1)", "18446744073709551620"),
    ("ROUND(9223372036854775807,-1)", "9223372036854775810"),
    ("ROUND(1234.5,-2)", "1200"),
    ("ROUND(1250.0,-2)", "1300"),
    ("ROUND(-1250.0,-2)", "-1300"),
    ("ROUND(1234.5,-100)", "0"),
    ("ROUND(1.5)", "2"),
    ("ROUND(2.5)", "3"),
    ("ROUND(-2.5)", "-3"),
    ("ROUND(1.298,1)", "1.3"),
    ("ROUND(1.298,0)", "1"),
    ("ROUND(1.5,3)", "1.500"),
    ("ROUND(1.5,40)", "1.500000000000000000000000000000"),
    ("ROUND(2.5e0)", "2"),
    ("ROUND(3.5e0)", "4"),
    ("ROUND(-2.5e0)", "-2"),
    ("ROUND(1250e0,-2)", "1200"),
    ("ROUND(1234.5e0,-2)", "1200"),
    ("ROUND(1e300,-400)", "0"),
    ("ROUND(1.5e0,400)", "1.5"),
    ("ROUND('2.5')", "2"),
    ("ROUND(NULL,1)", "NULL"),
    ("ROUND(1,NULL)", "NULL"),
    ("TRUNCATE(12345,-2)", "12300"),
    ("TRUNCATE(-12345,-2)", "-12300"),
    ("TRUNCATE(12345,-20)", "0"),
    ("TRUNCATE(1.999,1)", "1.9"),
    ("TRUNCATE(-1.999,1)", "-1.9"),
    ("TRUNCATE(1234.5,-2)", "1200"),
    ("TRUNCATE(1.5,3)", "1.500"),
    ("TRUNCATE(1.999e0,1)", "1.9"),
    ("TRUNCATE(-1299e0,-2)", "-1200"),
    // Counts given as huge unsigned or decimal values do not wrap.
    ("LEFT('abcdef',18446744073709551615)", "abcdef"),
    ("RIGHT('abcdef',18446744073709551615)", "abcdef"),
    ("LEFT('abcdef',99999999999999999999)", "abcdef"),
    ("LEFT('abcdef',1e30)", "abcdef"),
    ("LEFT('abcdef',-1)", ""),
    ("LEFT('abcdef',0)", ""),
    ("RIGHT('abcdef',2)", "ef"),
    ("LEFT(NULL,1)", "NULL"),
    ("LEFT('abc',NULL)", "NULL"),
    ("SUBSTRING('abcdef',2,18446744073709551615)", "bcdef"),
    ("SUBSTRING('abcdef',18446744073709551615)", ""),
    ("SUBSTRING('abcdef',-18446744073709551615)", ""),
    ("SUBSTRING('abcdef',-2)", "ef"),
    ("SUBSTRING('abcdef',0)", ""),
    ("LPAD('abc',18446744073709551615,'x')", "NULL"),
    ("LPAD('abc',5,'xy')", "xyabc"),
    ("RPAD('abc',5,'xy')", "abcxy"),
    ("LPAD('abc',2,'x')", "ab"),
    ("LPAD('abc',-1,'x')", "NULL"),
    ("RPAD('abc',-1,'x')", "NULL"),
    ("REPEAT('ab',18446744073709551615)", "NULL"),
    ("REPEAT('',18446744073709551615)", ""),
    ("REPEAT('ab',-1)", ""),
    ("REPEAT('ab',3)", "ababab"),
    ("SPACE(-1)", ""),
    // DOUBLE results that are infinite or NaN are errors.
    ("POW(10,400)", "!1690"),
    ("POW(0,-1)", "!1690"),
    ("POW(-8,0.5)", "!1690"),
    ("POW(2,3)", "8"),
    ("POW(2,-1)", "0.5"),
    ("POW(0,0)", "1"),
    ("EXP(1000)", "!1690"),
    ("EXP(0)", "1"),
    ("EXP(-1000)", "0"),
    ("1e308 * 10", "!1690"),
    ("1e308 + 1e308", "!1690"),
    ("-1e308 - 1e308", "!1690"),
    ("1e308 / 1e-308", "!1690"),
    // Logarithms of arguments <= 0 (or a base <= 1) are NULL.
    ("LN(0)", "NULL"),
    ("LN(-1)", "NULL"),
    ("LN(1)", "0"),
    ("LOG(0)", "NULL"),
    ("LOG(1,100)", "NULL"),
    ("LOG(2,8)", "3"),
    ("LOG(2,0)", "NULL"),
    ("LOG2(8)", "3"),
    ("LOG10(100)", "2"),
    ("LOG10(-5)", "NULL"),
    ("SQRT(-1)", "NULL"),
    ("SQRT(4)", "2"),
    ("SQRT(NULL)", "NULL"),
    // ABS, SIGN, CEIL, FLOOR, MOD, HEX.
    ("ABS(-9223372036854775808)", "!1690"),
    ("ABS(-5)", "5"),
    ("ABS(-1.5)", "1.5"),
    ("ABS(18446744073709551615)", "18446744073709551615"),
    ("ABS(NULL)", "NULL"),
    ("SIGN(-5)", "-1"),
    ("SIGN(0)", "0"),
    ("SIGN(18446744073709551615)", "1"),
    ("SIGN(-0.5)", "-1"),
    ("SIGN(NULL)", "NULL"),
    ("CEIL(1.5)", "2"),
    ("CEIL(-1.5)", "-1"),
    ("FLOOR(-1.5)", "-2"),
    ("FLOOR(1.5)", "1"),
    ("CEIL(99999999999999999999.5)", "100000000000000000000"),
    ("FLOOR(-99999999999999999999.5)", "-100000000000000000000"),
    ("CEIL(1.5e0)", "2"),
    ("FLOOR('1.5')", "1"),
    ("CEIL(18446744073709551615)", "18446744073709551615"),
    (
        "MOD(18446744073709551614,18446744073709551615)",
        "18446744073709551614",
    ),
    ("MOD(-7,3)", "-1"),
    ("MOD(7,-3)", "1"),
    ("MOD(7,0)", "NULL"),
    ("MOD(7.5,2)", "1.5"),
    ("MOD(-9223372036854775808,-1)", "0"),
    ("MOD(7.5e0,2)", "1.5"),
    ("HEX(18446744073709551615)", "FFFFFFFFFFFFFFFF"),
    ("HEX(-1)", "FFFFFFFFFFFFFFFF"),
    ("HEX(255)", "FF"),
    ("HEX(12.5)", "D"),
    ("HEX(1e30)", "FFFFFFFFFFFFFFFF"),
    ("HEX(2.5e0)", "3"),
    ("HEX(-1.5)", "FFFFFFFFFFFFFFFE"),
    // Integer arithmetic at the edges.
    ("9223372036854775807 + 1", "!1690"),
    ("18446744073709551615 + 1", "!1690"),
    ("0 - 18446744073709551615", "!1690"),
    ("-9223372036854775807 - 1", "-9223372036854775808"),
    ("18446744073709551615 DIV 1", "18446744073709551615"),
    ("5 DIV 0", "NULL"),
    ("9223372036854775807 DIV -9223372036854775808", "0"),
    ("18446744073709551615 DIV 1.5", "12297829382473034410"),
    ("18446744073709551615 DIV -2.5", "!1690"),
    ("0 DIV 1e308", "0"),
    ("1e308 DIV 1e308", "1"),
    ("1e308 DIV 2", "!1690"),
    ("0 - -9223372036854775808", "!1690"),
    ("MOD(2,1.5)", "0.5"),
    ("MOD(-9223372036854775808,1.5)", "-0.5"),
    ("MOD(18446744073709551615,1e308)", "1.8446744073709552e19"),
    // A DOUBLE count converts with rint (half to even).
    ("LEFT('abc',2.5e0)", "ab"),
    ("REPEAT('ab',2.5e0)", "abab"),
    ("CAST(2.5e0 AS SIGNED)", "2"),
    ("CAST(3.5e0 AS UNSIGNED)", "4"),
    // CAST to integers.
    ("CAST(18446744073709551615 AS SIGNED)", "-1"),
    ("CAST(-1 AS UNSIGNED)", "18446744073709551615"),
    (
        "CAST(99999999999999999999 AS UNSIGNED)",
        "18446744073709551615",
    ),
    (
        "CAST(99999999999999999999 AS SIGNED)",
        "9223372036854775807",
    ),
    (
        "CAST('18446744073709551615' AS UNSIGNED)",
        "18446744073709551615",
    ),
    ("CAST(1.5 AS SIGNED)", "2"),
    ("CAST(-1.5 AS SIGNED)", "-2"),
];

#[test]
fn functions_at_their_edges_match_mysql() {
    let mut db = Db::new("numeric-edges");
    let mut wrong = Vec::new();
    for (expr, expected) in CASES {
        let got = match db.text(&format!("SELECT {expr}")) {
            Ok(row) => row[0].clone().unwrap_or_else(|| "NULL".into()),
            Err(code) => format!("!{code}"),
        };
        if got != *expected {
            wrong.push(format!("{expr}: got {got}, MySQL gives {expected}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// (expression, result, warning codes) in a SELECT.
const WARNING_CASES: &[(&str, &str, &[u16])] = &[
    ("CAST(12345.678 AS DECIMAL(4,2))", "99.99", &[1264]),
    ("CAST(-12345.678 AS DECIMAL(4,2))", "-99.99", &[1264]),
    ("CAST(99.995 AS DECIMAL(4,2))", "99.99", &[1264]),
    ("CAST(99.994 AS DECIMAL(4,2))", "99.99", &[]),
    ("CAST(1.5 AS DECIMAL(4,2))", "1.50", &[]),
    ("CAST(1e300 AS DECIMAL(10,2))", "99999999.99", &[1264]),
    (
        "CAST('1e500' AS DECIMAL(65,30))",
        "99999999999999999999999999999999999.999999999999999999999999999999",
        &[1292, 1264],
    ),
    (
        "CAST('-1e500' AS DECIMAL(65,30))",
        "-99999999999999999999999999999999999.999999999999999999999999999999",
        &[1292, 1264],
    ),
    ("CAST('abc' AS DECIMAL(5,2))", "0.00", &[1292]),
    ("LN(0)", "NULL", &[3020]),
    ("LOG(-1)", "NULL", &[3020]),
];

#[test]
fn out_of_range_conversions_warn_in_select() {
    let mut db = Db::new("numeric-warnings");
    for (expr, expected, warnings) in WARNING_CASES {
        let row = db
            .text(&format!("SELECT {expr}"))
            .unwrap_or_else(|e| panic!("{expr}: error {e}"));
        let got = row[0].clone().unwrap_or_else(|| "NULL".into());
        assert_eq!(&got, expected, "{expr}");
        assert_eq!(&db.warnings(), warnings, "warnings of {expr}");
    }
}

#[test]
fn out_of_range_cast_is_an_error_in_strict_insert() {
    let mut db = Db::new("numeric-strict");
    db.ok("CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(4,2))");
    assert_eq!(db.err("INSERT INTO t VALUES (1, 12345.678)"), 1264);
    assert_eq!(
        db.err("INSERT INTO t VALUES (1, CAST(12345.678 AS DECIMAL(4,2)))"),
        1264
    );
    db.ok("INSERT INTO t VALUES (1, 1.5)");
    assert_eq!(
        db.err("UPDATE t SET d = CAST(12345.678 AS DECIMAL(4,2))"),
        1264
    );
    // IGNORE keeps the warning and stores the clipped value.
    db.ok("INSERT IGNORE INTO t VALUES (2, CAST(12345.678 AS DECIMAL(4,2)))");
    assert_eq!(db.warnings(), vec![1264]);
    assert_eq!(
        db.text("SELECT d FROM t WHERE id = 2"),
        Ok(vec![Some("99.99".into())])
    );
    // A later SELECT is not strict.
    assert!(db.text("SELECT CAST(12345.678 AS DECIMAL(4,2))").is_ok());
}

/// Every function with every edge argument in every position: each call
/// gives a value or a MySQL error, never a panic, and quickly.
#[test]
fn generated_cross_product_never_fails_badly() {
    const FUNCS: &[(&str, usize)] = &[
        ("ROUND", 2),
        ("TRUNCATE", 2),
        ("ROUND", 1),
        ("ABS", 1),
        ("CEIL", 1),
        ("FLOOR", 1),
        ("SIGN", 1),
        ("SQRT", 1),
        ("EXP", 1),
        ("LN", 1),
        ("LOG", 2),
        ("LOG2", 1),
        ("LOG10", 1),
        ("POW", 2),
        ("MOD", 2),
        ("HEX", 1),
        ("LEFT", 2),
        ("RIGHT", 2),
        ("SUBSTRING", 3),
        ("LPAD", 3),
        ("RPAD", 3),
        ("REPEAT", 2),
        ("SPACE", 1),
        ("INSTR", 2),
    ];
    const EDGES: &[&str] = &[
        "0",
        "-1",
        "1.5",
        "-2.5",
        "2.5e0",
        "NULL",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "99999999999999999999999999999999999999999999999999999999999999999",
        "1e308",
        "-1e308",
        "'abc'",
        "'1e500'",
        "-400",
    ];
    let mut db = Db::new("numeric-cross");
    for (name, arity) in FUNCS {
        for combo in 0..EDGES.len().pow(*arity as u32) {
            let args: Vec<&str> = (0..*arity)
                .map(|i| EDGES[combo / EDGES.len().pow(i as u32) % EDGES.len()])
                .collect();
            let sql = format!("SELECT {name}({})", args.join(","));
            let start = std::time::Instant::now();
            if let Err(code) = db.text(&sql) {
                assert!(
                    matches!(code, 1690 | 1264 | 1292 | 1366),
                    "{sql}: error {code}"
                );
            }
            assert!(start.elapsed().as_millis() < 500, "{sql} is slow");
        }
    }
}
