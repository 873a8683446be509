use super::parse::{parse, ParseError};
use super::path::{Index, Leg, Path};
use super::*;

fn canon(text: &str) -> String {
    parse(text.as_bytes()).expect(text).to_text()
}

#[test]
fn round_trip_is_canonical() {
    assert_eq!(canon(r#"{"b":[1,2],"a":1}"#), r#"{"a": 1, "b": [1, 2]}"#);
    assert_eq!(
        canon(r#"{"bb":1,"a":2,"c":3}"#),
        r#"{"a": 2, "c": 3, "bb": 1}"#
    );
    assert_eq!(canon(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
    assert_eq!(canon(" [ ] "), "[]");
    assert_eq!(canon("{}"), "{}");
    assert_eq!(
        canon(r#""a\"b\\c\n\u00e9\ud83d\ude00\/""#),
        "\"a\\\"b\\\\c\\né😀/\""
    );
    assert_eq!(canon(r#""\u0001""#), r#""\u0001""#);
    assert_eq!(canon("1.0"), "1.0");
    assert_eq!(canon("1e2"), "100.0");
    assert_eq!(canon("-0.5"), "-0.5");
    assert_eq!(canon("1e300"), "1e300");
    assert_eq!(canon("18446744073709551615"), "18446744073709551615");
    assert_eq!(canon("18446744073709551616"), "1.8446744073709552e19");
    assert_eq!(canon("-9223372036854775808"), "-9223372036854775808");
    for text in [r#"{"a": 1, "b": [1, 2]}"#, "[true, false, null]", r#""x""#] {
        assert_eq!(canon(&canon(text)), canon(text));
    }
}

#[test]
fn number_kinds() {
    assert_eq!(parse(b"5").unwrap(), Json::Int(5));
    assert_eq!(parse(b"9223372036854775808").unwrap(), Json::UInt(1 << 63));
    assert_eq!(parse(b"5.5").unwrap(), Json::Double(5.5));
}

#[test]
fn syntax_errors_say_where() {
    let err = |t: &str| parse(t.as_bytes()).unwrap_err();
    assert_eq!(err(""), ParseError::Syntax("The document is empty.", 0));
    assert_eq!(err("abc"), ParseError::Syntax("Invalid value.", 0));
    assert_eq!(err("[1,]"), ParseError::Syntax("Invalid value.", 3));
    assert_eq!(
        err(r#"{"a":1"#),
        ParseError::Syntax("Missing a comma or '}' after an object member.", 6)
    );
    assert_eq!(
        err("1 2"),
        ParseError::Syntax("The document root must not be followed by other values.", 2)
    );
    assert_eq!(
        err("1."),
        ParseError::Syntax("Miss fraction part in number.", 2)
    );
    assert_eq!(
        err("\"ab"),
        ParseError::Syntax("Missing a closing quotation mark in string.", 3)
    );
    assert_eq!(
        err(r#""\ud800""#),
        ParseError::Syntax("The surrogate pair in string is invalid.", 7)
    );
}

#[test]
fn depth_is_bounded() {
    let ok = "[".repeat(100) + &"]".repeat(100);
    assert!(parse(ok.as_bytes()).is_ok());
    let deep = "[".repeat(101) + &"]".repeat(101);
    assert_eq!(parse(deep.as_bytes()).unwrap_err(), ParseError::TooDeep);
    // Far deeper than the stack would take: stops at the limit.
    let hostile = "[".repeat(1_000_000);
    assert_eq!(parse(hostile.as_bytes()).unwrap_err(), ParseError::TooDeep);
}

#[test]
fn budget_bounds_the_tree() {
    let mut budget = 10;
    let text = format!("[{}1]", "1,".repeat(20));
    let r = parse::parse_bounded(text.as_bytes(), &mut budget);
    assert_eq!(r.unwrap_err(), ParseError::TooBig);
}

#[test]
fn ordering_follows_type_precedence() {
    let j = |t: &str| parse(t.as_bytes()).unwrap();
    let ascending = [
        "null", "-1", "1.5", "2", "\"a\"", "\"b\"", "{}", "[]", "[1]", "[1, 2]", "false", "true",
    ];
    for w in ascending.windows(2) {
        assert_eq!(
            compare(&j(w[0]), &j(w[1])),
            Ordering::Less,
            "{} < {}",
            w[0],
            w[1]
        );
    }
    assert_eq!(compare(&j("1"), &j("1.0")), Ordering::Equal);
    assert_eq!(
        compare(&j("18446744073709551615"), &j("-1")),
        Ordering::Greater
    );
}

#[test]
fn paths_parse() {
    let p = |t: &str| Path::parse(t.as_bytes()).map(|p| p.legs);
    assert_eq!(p("$").unwrap(), vec![]);
    assert_eq!(
        p(r#"$.a."b c"[2][last-1]"#).unwrap(),
        vec![
            Leg::Member("a".into()),
            Leg::Member("b c".into()),
            Leg::Cell(Index::Start(2)),
            Leg::Cell(Index::Last(1)),
        ]
    );
    assert_eq!(
        p("$[1 to last]").unwrap(),
        vec![Leg::Range(Index::Start(1), Index::Last(0))]
    );
    assert_eq!(
        p("$**.a").unwrap(),
        vec![Leg::Descendants, Leg::Member("a".into())]
    );
    assert_eq!(p("$.*[*]").unwrap(), vec![Leg::AnyMember, Leg::AnyCell]);
    for bad in [
        "",
        "a",
        "$.",
        "$[",
        "$[a]",
        "$**",
        "$.1a",
        "$[-1]",
        "$[3 to 1]",
        "$ x",
    ] {
        assert!(p(bad).is_err(), "{bad}");
    }
}

#[test]
fn paths_find() {
    let doc = parse(br#"{"a": [1, [2, 3], {"b": 4}], "c": {"b": 5}}"#).unwrap();
    let find = |t: &str| {
        let p = Path::parse(t.as_bytes()).unwrap();
        p.find(&doc).iter().map(|v| v.to_text()).collect::<Vec<_>>()
    };
    assert_eq!(find("$.a[1][0]"), ["2"]);
    assert_eq!(find("$.a[last]"), [r#"{"b": 4}"#]);
    assert_eq!(find("$.a[0 to 1]"), ["1", "[2, 3]"]);
    assert_eq!(find("$**.b"), ["4", "5"]);
    assert_eq!(find("$.*.b"), ["5"]);
    assert_eq!(find("$.c[0].b"), ["5"]);
    assert!(find("$.x").is_empty());
}

#[test]
fn pretty_layout() {
    let j = parse(br#"{"a":[1,{}],"b":[]}"#).unwrap();
    assert_eq!(
        j.to_pretty(),
        "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"
    );
}

#[test]
fn storage_sizes_match_mysql() {
    let size = |t: &str| storage_size(&parse(t.as_bytes()).unwrap());
    assert_eq!(size(r#"[100, "sakila", [1, 3, 5], 425.05]"#), 45);
    assert_eq!(size(r#"{"a": 1000, "b": "wxyz", "c": "[1, 3, 5, 7]"}"#), 47);
    assert_eq!(size("1"), 3);
}

#[test]
fn sort_keys_order_as_compare() {
    let docs = [
        "null",
        "-1e300",
        "-3",
        "-0.5",
        "0",
        "0.25",
        "2",
        "1e20",
        "\"\"",
        "\"a\"",
        "\"a\\u0000\"",
        "\"ab\"",
        "{}",
        "{\"a\": 1}",
        "[]",
        "[null]",
        "[1]",
        "[1, 2]",
        "[2]",
        "false",
        "true",
    ];
    let key = |t: &str| {
        let mut k = Vec::new();
        sort_key(&parse(t.as_bytes()).unwrap(), &mut k);
        k
    };
    for w in docs.windows(2) {
        let (a, b) = (
            parse(w[0].as_bytes()).unwrap(),
            parse(w[1].as_bytes()).unwrap(),
        );
        assert_eq!(compare(&a, &b), Ordering::Less, "{} < {}", w[0], w[1]);
        assert!(key(w[0]) < key(w[1]), "key {} < {}", w[0], w[1]);
    }
}
