//! What character_set_results means for the parts of a reply other than
//! row values: the collation id and length text columns are described
//! with, and the encoding of column names and error messages.

use super::charset::{self, Charset, Enc};
use lockstep_protocol::charset::{ResultCharset, TextEncoder};
use lockstep_types::Value;
use std::borrow::Cow;
use std::collections::HashMap;

/// Longest character of `cs` in bytes (MySQL's mbmaxlen).
pub fn maxlen(cs: &Charset) -> u8 {
    match cs.name {
        "utf8mb4" | "gb18030" => 4,
        "utf8mb3" | "ujis" => 3,
        "gbk" | "big5" | "sjis" | "euckr" => 2,
        _ => 1,
    }
}

/// How text columns are described: in character_set_results, under the
/// connection collation when that belongs to the same set (SET NAMES x
/// COLLATE y makes y the results' collation), else the set's default;
/// NULL: as stored (utf8mb4_0900_ai_ci).
pub fn result_charset(vars: &HashMap<String, Value>) -> ResultCharset {
    if !vars.contains_key("character_set_results") {
        return ResultCharset::default();
    }
    let unconverted = ResultCharset {
        own: Some(collation_maxlen),
        ..ResultCharset::default()
    };
    let Some(results) = charset::session_charset(vars, "character_set_results") else {
        return unconverted;
    };
    if results.enc == Enc::Binary {
        return unconverted;
    }
    let same_set = |c: &&str| {
        c.strip_prefix(results.name)
            .is_some_and(|rest| rest.starts_with('_') || rest.is_empty())
    };
    let connection = match vars.get("collation_connection") {
        Some(Value::Bytes(b)) => std::str::from_utf8(b).ok(),
        _ => None,
    };
    let collation = connection
        .filter(same_set)
        .and_then(charset::collation_id)
        .or_else(|| charset::collation_id(results.default_collation))
        .map_or(ResultCharset::default().collation, u16::from);
    let utf8 = matches!(results.enc, Enc::Utf8mb4 | Enc::Binary);
    ResultCharset {
        collation,
        maxlen: maxlen(results),
        encoder: (!utf8).then_some(results as &'static dyn TextEncoder),
        own: None,
    }
}

/// The longest character of a stored collation's set, in bytes.
fn collation_maxlen(collation: u16) -> u8 {
    maxlen(charset::of_collation(collation).0)
}

/// Bytes of a text parameter made UTF-8 from character_set_client.
pub fn param_text(vars: &HashMap<String, Value>, bytes: &mut Vec<u8>) {
    let Some(client) = charset::session_charset(vars, "character_set_client") else {
        return;
    };
    if matches!(client.enc, Enc::Utf8mb4 | Enc::Utf8mb3 | Enc::Binary) {
        return;
    }
    if let Cow::Owned(text) = charset::decode(bytes, client) {
        *bytes = text.into_bytes();
    }
}

impl TextEncoder for Charset {
    fn encode<'a>(&self, s: &'a str) -> Cow<'a, [u8]> {
        charset::encode(s, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, Value> {
        let mut v = HashMap::new();
        for (k, x) in pairs {
            v.insert(k.to_string(), Value::str(x));
        }
        v
    }

    #[test]
    fn names_and_messages_are_encoded() {
        let mut v = HashMap::new();
        charset::set_names(&mut v, "latin1", None).unwrap();
        let rc = result_charset(&v);
        assert_eq!(&*rc.text("caf\u{e9}"), b"caf\xe9");
        assert_eq!(&*rc.text("plain"), b"plain");
        let rc = result_charset(&HashMap::new());
        assert_eq!(&*rc.text("caf\u{e9}"), "caf\u{e9}".as_bytes());
    }

    #[test]
    fn text_parameters_are_decoded() {
        let mut v = HashMap::new();
        let mut b = b"caf\xe9".to_vec();
        param_text(&v, &mut b);
        assert_eq!(b, b"caf\xe9");
        charset::set_names(&mut v, "latin1", None).unwrap();
        param_text(&v, &mut b);
        assert_eq!(b, "caf\u{e9}".as_bytes());
    }

    #[test]
    fn results_collation_follows_mysql() {
        let rc = |v: &HashMap<String, Value>| {
            let r = result_charset(v);
            (r.collation, r.maxlen)
        };
        assert_eq!(rc(&HashMap::new()), (255, 4));
        let mut v = HashMap::new();
        charset::set_names(&mut v, "latin1", None).unwrap();
        assert_eq!(rc(&v), (8, 1));
        charset::set_names(&mut v, "latin1", Some("latin1_bin")).unwrap();
        assert_eq!(rc(&v), (47, 1));
        charset::set_names(&mut v, "utf8", None).unwrap();
        assert_eq!(rc(&v), (33, 3));
        charset::set_names(&mut v, "utf8mb4", Some("utf8mb4_general_ci")).unwrap();
        assert_eq!(rc(&v), (45, 4));
        // Results in another set than the connection: its default.
        let v = vars(&[
            ("character_set_results", "cp1251"),
            ("collation_connection", "utf8mb4_bin"),
        ]);
        assert_eq!(rc(&v), (51, 1));
        let mut v = v;
        v.insert("character_set_results".into(), Value::Null);
        assert_eq!(rc(&v), (255, 4));
    }
}
