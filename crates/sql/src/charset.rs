//! Connection character sets as MySQL 8 has them: the session variables
//! character_set_client / _connection / _results and collation_connection
//! (set by the handshake collation, SET NAMES, SET CHARACTER SET or
//! directly), and the conversions they imply at the protocol boundary:
//! statements are decoded from character_set_client into the UTF-8 the
//! parser reads (see `client_text`), result text is encoded into
//! character_set_results. Characters a set cannot hold become '?'.

use encoding_rs::Encoding;
use lockstep_types::error::Code;
use lockstep_types::result::{Response, ResultSet};
use lockstep_types::{Error, Value};
use std::borrow::Cow;
use std::collections::HashMap;

type R<T> = Result<T, Error>;

/// How a connection character set maps to bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Enc {
    Utf8mb4,
    /// UTF-8 without 4-byte sequences.
    Utf8mb3,
    Ascii,
    /// No conversion: bytes are passed through.
    Binary,
    Table(&'static Encoding),
    /// A single-byte set encoding_rs lacks: ASCII below 0x80, then the
    /// characters of bytes 0x80..=0xFF in order.
    High(&'static [char; 128]),
}

/// IBM code page 852 (DOS Central European), bytes 0x80..=0xFF.
static CP852: [char; 128] = [
    '\u{00C7}', '\u{00FC}', '\u{00E9}', '\u{00E2}', '\u{00E4}', '\u{016F}', '\u{0107}', '\u{00E7}',
    '\u{0142}', '\u{00EB}', '\u{0150}', '\u{0151}', '\u{00EE}', '\u{0179}', '\u{00C4}', '\u{0106}',
    '\u{00C9}', '\u{0139}', '\u{013A}', '\u{00F4}', '\u{00F6}', '\u{013D}', '\u{013E}', '\u{015A}',
    '\u{015B}', '\u{00D6}', '\u{00DC}', '\u{0164}', '\u{0165}', '\u{0141}', '\u{00D7}', '\u{010D}',
    '\u{00E1}', '\u{00ED}', '\u{00F3}', '\u{00FA}', '\u{0104}', '\u{0105}', '\u{017D}', '\u{017E}',
    '\u{0118}', '\u{0119}', '\u{00AC}', '\u{017A}', '\u{010C}', '\u{015F}', '\u{00AB}', '\u{00BB}',
    '\u{2591}', '\u{2592}', '\u{2593}', '\u{2502}', '\u{2524}', '\u{00C1}', '\u{00C2}', '\u{011A}',
    '\u{015E}', '\u{2563}', '\u{2551}', '\u{2557}', '\u{255D}', '\u{017B}', '\u{017C}', '\u{2510}',
    '\u{2514}', '\u{2534}', '\u{252C}', '\u{251C}', '\u{2500}', '\u{253C}', '\u{0102}', '\u{0103}',
    '\u{255A}', '\u{2554}', '\u{2569}', '\u{2566}', '\u{2560}', '\u{2550}', '\u{256C}', '\u{00A4}',
    '\u{0111}', '\u{0110}', '\u{010E}', '\u{00CB}', '\u{010F}', '\u{0147}', '\u{00CD}', '\u{00CE}',
    '\u{011B}', '\u{2518}', '\u{250C}', '\u{2588}', '\u{2584}', '\u{0162}', '\u{016E}', '\u{2580}',
    '\u{00D3}', '\u{00DF}', '\u{00D4}', '\u{0143}', '\u{0144}', '\u{0148}', '\u{0160}', '\u{0161}',
    '\u{0154}', '\u{00DA}', '\u{0155}', '\u{0170}', '\u{00FD}', '\u{00DD}', '\u{0163}', '\u{00B4}',
    '\u{00AD}', '\u{02DD}', '\u{02DB}', '\u{02C7}', '\u{02D8}', '\u{00A7}', '\u{00F7}', '\u{00B8}',
    '\u{00B0}', '\u{00A8}', '\u{02D9}', '\u{0171}', '\u{0158}', '\u{0159}', '\u{25A0}', '\u{00A0}',
];

/// A character set a connection may use.
pub struct Charset {
    pub name: &'static str,
    pub default_collation: &'static str,
    pub enc: Enc,
}

const fn cs(name: &'static str, default_collation: &'static str, enc: Enc) -> Charset {
    Charset {
        name,
        default_collation,
        enc,
    }
}

use encoding_rs as e;
/// The character sets conversion is built for (MySQL's latin1 is cp1252).
static CHARSETS: [Charset; 26] = [
    cs("utf8mb4", "utf8mb4_0900_ai_ci", Enc::Utf8mb4),
    cs("utf8mb3", "utf8mb3_general_ci", Enc::Utf8mb3),
    cs("ascii", "ascii_general_ci", Enc::Ascii),
    cs("binary", "binary", Enc::Binary),
    cs("latin1", "latin1_swedish_ci", Enc::Table(e::WINDOWS_1252)),
    cs("latin2", "latin2_general_ci", Enc::Table(e::ISO_8859_2)),
    // ISO-8859-9 and TIS-620 as their Windows supersets.
    cs("latin5", "latin5_turkish_ci", Enc::Table(e::WINDOWS_1254)),
    cs("latin7", "latin7_general_ci", Enc::Table(e::ISO_8859_13)),
    cs("tis620", "tis620_thai_ci", Enc::Table(e::WINDOWS_874)),
    cs("cp1250", "cp1250_general_ci", Enc::Table(e::WINDOWS_1250)),
    cs("cp1251", "cp1251_general_ci", Enc::Table(e::WINDOWS_1251)),
    cs("cp1256", "cp1256_general_ci", Enc::Table(e::WINDOWS_1256)),
    cs("cp1257", "cp1257_general_ci", Enc::Table(e::WINDOWS_1257)),
    cs("cp866", "cp866_general_ci", Enc::Table(e::IBM866)),
    cs("cp852", "cp852_general_ci", Enc::High(&CP852)),
    cs("koi8r", "koi8r_general_ci", Enc::Table(e::KOI8_R)),
    cs("koi8u", "koi8u_general_ci", Enc::Table(e::KOI8_U)),
    cs("greek", "greek_general_ci", Enc::Table(e::ISO_8859_7)),
    cs("hebrew", "hebrew_general_ci", Enc::Table(e::ISO_8859_8)),
    cs("macroman", "macroman_general_ci", Enc::Table(e::MACINTOSH)),
    cs("gbk", "gbk_chinese_ci", Enc::Table(e::GBK)),
    cs("gb18030", "gb18030_chinese_ci", Enc::Table(e::GB18030)),
    cs("big5", "big5_chinese_ci", Enc::Table(e::BIG5)),
    cs("sjis", "sjis_japanese_ci", Enc::Table(e::SHIFT_JIS)),
    cs("ujis", "ujis_japanese_ci", Enc::Table(e::EUC_JP)),
    cs("euckr", "euckr_korean_ci", Enc::Table(e::EUC_KR)),
];

/// MySQL 8's other character sets: known (not 1115) but not convertible.
const OTHER_CHARSETS: [&str; 15] = [
    "armscii8", "cp850", "cp932", "dec8", "eucjpms", "gb2312", "geostd8", "hp8", "keybcs2",
    "macce", "swe7", "ucs2", "utf16", "utf16le", "utf32",
];

/// Collations beyond each set's default and `<set>_bin`.
const EXTRA_COLLATIONS: [&str; 22] = [
    "utf8mb4_general_ci",
    "utf8mb4_unicode_ci",
    "utf8mb4_unicode_520_ci",
    "utf8mb4_0900_bin",
    "utf8mb4_0900_as_cs",
    "utf8mb4_0900_as_ci",
    "utf8mb3_unicode_ci",
    "utf8mb3_unicode_520_ci",
    "latin1_german1_ci",
    "latin1_danish_ci",
    "latin1_german2_ci",
    "latin1_general_ci",
    "latin1_general_cs",
    "latin1_spanish_ci",
    "cp1251_bulgarian_ci",
    "cp1251_ukrainian_ci",
    "cp1251_general_cs",
    "latin2_czech_cs",
    "latin2_croatian_ci",
    "cp1250_czech_cs",
    "cp1250_croatian_ci",
    "cp1250_polish_ci",
];

/// Handshake collation ids (MySQL's numbering) of the collations above.
const COLLATION_IDS: [(u8, &str); 73] = [
    (1, "big5_chinese_ci"),
    (18, "tis620_thai_ci"),
    (30, "latin5_turkish_ci"),
    (41, "latin7_general_ci"),
    (2, "latin2_czech_cs"),
    (3, "dec8_swedish_ci"),
    (5, "latin1_german1_ci"),
    (7, "koi8r_general_ci"),
    (8, "latin1_swedish_ci"),
    (9, "latin2_general_ci"),
    (11, "ascii_general_ci"),
    (12, "ujis_japanese_ci"),
    (13, "sjis_japanese_ci"),
    (14, "cp1251_bulgarian_ci"),
    (15, "latin1_danish_ci"),
    (16, "hebrew_general_ci"),
    (19, "euckr_korean_ci"),
    (21, "latin2_hungarian_ci"),
    (22, "koi8u_general_ci"),
    (23, "cp1251_ukrainian_ci"),
    (25, "greek_general_ci"),
    (26, "cp1250_general_ci"),
    (27, "latin2_croatian_ci"),
    (28, "gbk_chinese_ci"),
    (29, "cp1257_lithuanian_ci"),
    (31, "latin1_german2_ci"),
    (33, "utf8mb3_general_ci"),
    (34, "cp1250_czech_cs"),
    (36, "cp866_general_ci"),
    (40, "cp852_general_ci"),
    (39, "macroman_general_ci"),
    (45, "utf8mb4_general_ci"),
    (46, "utf8mb4_bin"),
    (47, "latin1_bin"),
    (48, "latin1_general_ci"),
    (49, "latin1_general_cs"),
    (50, "cp1251_bin"),
    (51, "cp1251_general_ci"),
    (52, "cp1251_general_cs"),
    (57, "cp1256_general_ci"),
    (59, "cp1257_general_ci"),
    (63, "binary"),
    (65, "ascii_bin"),
    (74, "koi8r_bin"),
    (83, "utf8mb3_bin"),
    (84, "big5_bin"),
    (87, "gbk_bin"),
    (88, "sjis_bin"),
    (94, "latin1_spanish_ci"),
    (192, "utf8mb3_unicode_ci"),
    (224, "utf8mb4_unicode_ci"),
    (44, "cp1250_croatian_ci"),
    (53, "macroman_bin"),
    (58, "cp1257_bin"),
    (66, "cp1250_bin"),
    (67, "cp1256_bin"),
    (68, "cp866_bin"),
    (70, "greek_bin"),
    (71, "hebrew_bin"),
    (75, "koi8u_bin"),
    (77, "latin2_bin"),
    (78, "latin5_bin"),
    (79, "latin7_bin"),
    (81, "cp852_bin"),
    (85, "euckr_bin"),
    (89, "tis620_bin"),
    (91, "ujis_bin"),
    (99, "cp1250_polish_ci"),
    (214, "utf8mb3_unicode_520_ci"),
    (246, "utf8mb4_unicode_520_ci"),
    (248, "gb18030_chinese_ci"),
    (249, "gb18030_bin"),
    (255, "utf8mb4_0900_ai_ci"),
];

/// Ids past the handshake's one byte (MySQL 8's 0900 variants).
const WIDE_COLLATION_IDS: [(u16, &str); 3] = [
    (278, "utf8mb4_0900_as_cs"),
    (305, "utf8mb4_0900_as_ci"),
    (309, "utf8mb4_0900_bin"),
];

/// The description and bytes per character MySQL lists for each set.
const CHARSET_INFO: [(&str, &str, u8); 26] = [
    ("utf8mb4", "UTF-8 Unicode", 4),
    ("utf8mb3", "UTF-8 Unicode", 3),
    ("ascii", "US ASCII", 1),
    ("binary", "Binary pseudo charset", 1),
    ("latin1", "cp1252 West European", 1),
    ("latin2", "ISO 8859-2 Central European", 1),
    ("latin5", "ISO 8859-9 Turkish", 1),
    ("latin7", "ISO 8859-13 Baltic", 1),
    ("tis620", "TIS620 Thai", 1),
    ("cp1250", "Windows Central European", 1),
    ("cp1251", "Windows Cyrillic", 1),
    ("cp1256", "Windows Arabic", 1),
    ("cp1257", "Windows Baltic", 1),
    ("cp866", "DOS Russian", 1),
    ("cp852", "DOS Central European", 1),
    ("koi8r", "KOI8-R Relcom Russian", 1),
    ("koi8u", "KOI8-U Ukrainian", 1),
    ("greek", "ISO 8859-7 Greek", 1),
    ("hebrew", "ISO 8859-8 Hebrew", 1),
    ("macroman", "Mac West European", 1),
    ("gbk", "GBK Simplified Chinese", 2),
    ("gb18030", "China National Standard GB18030", 4),
    ("big5", "Big5 Traditional Chinese", 2),
    ("sjis", "Shift-JIS Japanese", 2),
    ("ujis", "EUC-JP Japanese", 3),
    ("euckr", "EUC-KR Korean", 2),
];

/// A collation as SHOW COLLATION and information_schema list it.
pub struct CollationInfo {
    pub name: String,
    pub charset: &'static str,
    pub id: u16,
    pub is_default: bool,
}

/// Every collation lockstep knows, by character set then id.
pub fn collations() -> Vec<CollationInfo> {
    let id_of = |name: &str| {
        let narrow = COLLATION_IDS.iter().map(|&(i, n)| (u16::from(i), n));
        let mut all = narrow.chain(WIDE_COLLATION_IDS.iter().copied());
        all.find(|(_, n)| *n == name).map(|(i, _)| i)
    };
    let mut out = Vec::new();
    for c in &CHARSETS {
        let mut names = vec![c.default_collation.to_string()];
        if c.name != "binary" {
            names.push(format!("{}_bin", c.name));
        }
        let prefix = format!("{}_", c.name);
        names.extend(
            EXTRA_COLLATIONS
                .iter()
                .filter(|n| n.starts_with(&prefix))
                .map(|n| n.to_string()),
        );
        for name in names {
            // A collation without a MySQL id is not listed (none today).
            let Some(id) = id_of(&name) else { continue };
            let is_default = name == c.default_collation;
            out.push(CollationInfo {
                name,
                charset: c.name,
                id,
                is_default,
            });
        }
    }
    out
}

/// Every character set lockstep converts: (name, default collation,
/// description, bytes per character).
pub fn charsets() -> impl Iterator<Item = (&'static str, &'static str, &'static str, u8)> {
    CHARSETS.iter().map(|c| {
        let (_, description, maxlen) = CHARSET_INFO
            .iter()
            .copied()
            .find(|(n, _, _)| *n == c.name)
            .unwrap_or((c.name, "", 1));
        (c.name, c.default_collation, description, maxlen)
    })
}

/// MySQL 8 names utf8 utf8mb3 (and its collations likewise).
fn canonical(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.strip_prefix("utf8") {
        Some("") => "utf8mb3".into(),
        Some(rest) if rest.starts_with('_') => format!("utf8mb3{rest}"),
        _ => lower,
    }
}

pub fn lookup(name: &str) -> Option<&'static Charset> {
    // The session variables hold canonical names: no allocation per query.
    if let Some(c) = CHARSETS.iter().find(|c| c.name == name) {
        return Some(c);
    }
    let name = canonical(name);
    CHARSETS.iter().find(|c| c.name == name)
}

/// The connection character set `name`: 1115 if MySQL has no such set,
/// 1235 if it has but lockstep cannot convert it.
pub fn connection_charset(name: &str) -> R<&'static Charset> {
    if let Some(c) = lookup(name) {
        return Ok(c);
    }
    if OTHER_CHARSETS.contains(&canonical(name).as_str()) {
        return Err(Error::unsupported(format!(
            "character set {name} for a connection"
        )));
    }
    Err(Error::new(
        Code::UnknownCharacterSet,
        format!("Unknown character set: '{name}'"),
    ))
}

/// The character set a known collation belongs to; 1273 if unknown.
fn collation_charset(collation: &str) -> R<(&'static Charset, String)> {
    let name = canonical(collation);
    let known = |c: &Charset| {
        name == c.default_collation
            || name == format!("{}_bin", c.name)
            || EXTRA_COLLATIONS.contains(&name.as_str())
                && name.starts_with(&format!("{}_", c.name))
    };
    match CHARSETS.iter().find(|c| known(c)) {
        Some(c) => Ok((c, name)),
        None => Err(Error::new(
            Code::UnknownCollation,
            format!("Unknown collation: '{collation}'"),
        )),
    }
}

/// MySQL's id of a collation lockstep knows (None: not listed).
pub fn collation_id(name: &str) -> Option<u8> {
    COLLATION_IDS
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(i, _)| *i)
}

/// The charset and collation of the handshake's collation id (None:
/// an id lockstep does not convert; the connection stays utf8mb4).
pub fn from_collation_id(id: u8) -> Option<(&'static Charset, &'static str)> {
    let (_, name) = COLLATION_IDS.iter().find(|(i, _)| *i == id)?;
    let (cs, _) = collation_charset(name).ok()?;
    Some((cs, name))
}

/// The id of a collation lockstep knows (one byte or wide).
fn any_collation_id(name: &str) -> Option<u16> {
    let narrow = COLLATION_IDS.iter().map(|&(i, n)| (u16::from(i), n));
    let mut all = narrow.chain(WIDE_COLLATION_IDS.iter().copied());
    all.find(|(_, n)| *n == name).map(|(i, _)| i)
}

/// The server default collation, utf8mb4_0900_ai_ci, which catalogs store
/// as 0.
pub const DEFAULT_COLLATION_ID: u16 = 255;

/// A collation id as catalogs store it (the default as 0).
fn stored_id(id: u16) -> u16 {
    if id == DEFAULT_COLLATION_ID {
        0
    } else {
        id
    }
}

/// A stored collation id's character set and collation name (0 and ids
/// lockstep does not know: utf8mb4_0900_ai_ci).
pub fn of_collation(id: u16) -> (&'static Charset, &'static str) {
    let narrow = COLLATION_IDS.iter().map(|&(i, n)| (u16::from(i), n));
    let mut all = narrow.chain(WIDE_COLLATION_IDS.iter().copied());
    let name = match id {
        0 => None,
        id => all.find(|(i, _)| *i == id).map(|(_, n)| n),
    };
    match name.and_then(|n| collation_charset(n).ok()) {
        Some((cs, _)) => (cs, name.unwrap_or(cs.default_collation)),
        None => (&CHARSETS[0], CHARSETS[0].default_collation),
    }
}

/// The stored character set of a text column or a table whose stored
/// collation is `id`, when it is not utf8mb4 (None: values need no
/// conversion or check).
pub fn non_utf8(id: u16) -> Option<&'static Charset> {
    if id == 0 {
        return None;
    }
    let (cs, _) = of_collation(id);
    (cs.enc != Enc::Utf8mb4).then_some(cs)
}

/// The character set a column or table may be declared with: 1115 for a
/// name MySQL does not know, 1235 for one lockstep does not convert.
fn declared_charset(name: &str) -> R<&'static Charset> {
    match connection_charset(name) {
        Ok(cs) if cs.enc == Enc::Binary => Err(Error::unsupported(
            "the binary character set as a table default",
        )),
        Ok(cs) => Ok(cs),
        Err(e) if e.code == Code::UnknownCharacterSet => Err(e),
        Err(_) => Err(Error::unsupported(format!(
            "character set {name} for a column"
        ))),
    }
}

/// The stored collation id a column or table declares with CHARACTER SET
/// `charset` and/or COLLATE `collation`; `inherited` without either.
/// 1115 unknown set, 1273 unknown collation, 1253 a collation of another
/// set, as MySQL.
pub fn declared_collation(
    charset: Option<&str>,
    collation: Option<&str>,
    inherited: u16,
) -> R<u16> {
    let set = charset.map(declared_charset).transpose()?;
    let name = match (set, collation) {
        (None, None) => return Ok(inherited),
        (Some(cs), None) => cs.default_collation.to_string(),
        (set, Some(c)) => {
            let (owner, name) = collation_charset(c)?;
            if let Some(cs) = set.filter(|cs| cs.name != owner.name) {
                return Err(Error::new(
                    Code::CollationCharsetMismatch,
                    format!(
                        "COLLATION '{name}' is not valid for CHARACTER SET '{}'",
                        cs.name
                    ),
                ));
            }
            name
        }
    };
    let id = any_collation_id(&name).ok_or_else(|| {
        Error::new(
            Code::UnknownCollation,
            format!("Unknown collation: '{name}'"),
        )
    })?;
    Ok(stored_id(id))
}

/// A stored collation as CREATE TABLE would declare it (CREATE TABLE ...
/// SELECT gives its columns those of the query's).
pub fn spec_of(collation: u16) -> crate::parser::CharsetSpec {
    let name = (collation != 0).then(|| of_collation(collation).1.to_string());
    crate::parser::CharsetSpec {
        charset: None,
        collation: name,
    }
}

/// UTF-8 text checked against a column's character set: the first
/// character it cannot hold, if any.
pub fn first_unrepresentable(s: &str, cs: &Charset) -> Option<char> {
    if s.is_ascii() {
        return None;
    }
    match cs.enc {
        Enc::Utf8mb4 | Enc::Binary => None,
        Enc::Utf8mb3 => s.chars().find(|&c| (c as u32) >= 0x10000),
        Enc::Ascii => s.chars().find(|c| !c.is_ascii()),
        _ => {
            let mut buf = [0u8; 4];
            s.chars()
                .find(|c| !c.is_ascii() && &*encode(c.encode_utf8(&mut buf), cs) == b"?")
        }
    }
}

/// Bytes in a column's character set as the UTF-8 it is stored in; None
/// when they are not valid in it (MySQL's 1366).
pub fn decode_strict(b: &[u8], cs: &Charset) -> Option<String> {
    match cs.enc {
        Enc::Utf8mb4 | Enc::Binary => String::from_utf8(b.to_vec()).ok(),
        Enc::Utf8mb3 => String::from_utf8(b.to_vec())
            .ok()
            .filter(|s| s.chars().all(|c| (c as u32) < 0x10000)),
        Enc::Ascii => b
            .is_ascii()
            .then(|| String::from_utf8_lossy(b).into_owned()),
        Enc::Table(enc) => enc
            .decode_without_bom_handling_and_without_replacement(b)
            .map(|s| s.into_owned()),
        Enc::High(_) => Some(decode(b, cs).into_owned()),
    }
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// SET NAMES cs [COLLATE c]: client, connection and results all `cs`.
pub fn set_names(vars: &mut HashMap<String, Value>, cs: &str, collation: Option<&str>) -> R<()> {
    let charset = if cs.eq_ignore_ascii_case("default") {
        &CHARSETS[0]
    } else {
        connection_charset(cs)?
    };
    let collation = match collation {
        None => charset.default_collation.to_string(),
        Some(c) => {
            let (owner, name) = collation_charset(c)?;
            if owner.name != charset.name {
                return Err(Error::new(
                    Code::CollationCharsetMismatch,
                    format!(
                        "COLLATION '{name}' is not valid for CHARACTER SET '{}'",
                        charset.name
                    ),
                ));
            }
            name
        }
    };
    for v in [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ] {
        vars.insert(v.into(), text(charset.name));
    }
    vars.insert("collation_connection".into(), text(&collation));
    Ok(())
}

/// SET CHARACTER SET cs: client and results `cs`, the connection back to
/// the database's character set (utf8mb4 here).
pub fn set_character_set(vars: &mut HashMap<String, Value>, cs: &str) -> R<()> {
    set_names(vars, cs, None)?;
    vars.insert("character_set_connection".into(), text("utf8mb4"));
    vars.insert(
        "collation_connection".into(),
        text(CHARSETS[0].default_collation),
    );
    Ok(())
}

/// SET of one of the four connection variables (true: `name` is one and
/// was set).
pub fn set_variable(vars: &mut HashMap<String, Value>, name: &str, value: &Value) -> R<bool> {
    let wrong = || {
        Error::new(
            Code::WrongValueForVar,
            format!("Variable '{name}' can't be set to the value of '{value}'"),
        )
    };
    let given = match value {
        Value::Null if name == "character_set_results" => {
            vars.insert(name.into(), Value::Null);
            return Ok(true);
        }
        Value::Null => return Err(wrong()),
        v => v.to_string(),
    };
    match name {
        "character_set_client" | "character_set_results" | "character_set_connection" => {
            let cs = connection_charset(&given)?;
            vars.insert(name.into(), text(cs.name));
            if name == "character_set_connection" {
                vars.insert("collation_connection".into(), text(cs.default_collation));
            }
        }
        "collation_connection" => {
            let (cs, collation) = collation_charset(&given)?;
            vars.insert(name.into(), text(&collation));
            vars.insert("character_set_connection".into(), text(cs.name));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The session's character set `var` (None: NULL, no conversion).
pub fn session_charset(vars: &HashMap<String, Value>, var: &str) -> Option<&'static Charset> {
    match vars.get(var) {
        None => Some(&CHARSETS[0]),
        Some(Value::Bytes(b)) => lookup(std::str::from_utf8(b).ok()?),
        Some(_) => None,
    }
}

/// UTF-8 text in `cs`, '?' for what it cannot hold.
pub fn encode<'a>(s: &'a str, cs: &Charset) -> Cow<'a, [u8]> {
    let subst = |keep: &dyn Fn(char) -> bool| -> Cow<'a, [u8]> {
        if s.chars().all(keep) {
            return Cow::Borrowed(s.as_bytes());
        }
        let t: String = s.chars().map(|c| if keep(c) { c } else { '?' }).collect();
        Cow::Owned(t.into_bytes())
    };
    match cs.enc {
        Enc::Utf8mb4 | Enc::Binary => Cow::Borrowed(s.as_bytes()),
        Enc::Utf8mb3 => subst(&|c| (c as u32) < 0x10000),
        Enc::Ascii => subst(&|c| c.is_ascii()),
        Enc::Table(enc) => encode_table(s, enc),
        Enc::High(high) => encode_high(s, high),
    }
}

fn encode_high<'a>(s: &'a str, high: &[char; 128]) -> Cow<'a, [u8]> {
    if s.is_ascii() {
        return Cow::Borrowed(s.as_bytes());
    }
    let byte = |c: char| match c {
        c if c.is_ascii() => c as u8,
        // p < 128, so 0x80 + p is a byte.
        c => high
            .iter()
            .position(|&h| h == c)
            .map_or(b'?', |p| 0x80 + p as u8),
    };
    Cow::Owned(s.chars().map(byte).collect())
}

fn encode_table<'a>(s: &'a str, enc: &'static Encoding) -> Cow<'a, [u8]> {
    if s.is_ascii() {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut encoder = enc.new_encoder();
    let mut out = Vec::with_capacity(s.len() + 8);
    let mut rest = s;
    loop {
        let need = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len() * 4 + 8);
        out.reserve(need);
        let (result, read) =
            encoder.encode_from_utf8_to_vec_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            e::EncoderResult::InputEmpty => return Cow::Owned(out),
            e::EncoderResult::Unmappable(_) => out.push(b'?'),
            e::EncoderResult::OutputFull => {}
        }
    }
}

/// Text of a connection character set as UTF-8 (undecodable bytes '?').
pub fn decode<'a>(b: &'a [u8], cs: &Charset) -> Cow<'a, str> {
    match cs.enc {
        Enc::Table(enc) if !b.is_ascii() => {
            let (text, _) = enc.decode_without_bom_handling(b);
            match text.contains('\u{FFFD}') {
                true => Cow::Owned(text.replace('\u{FFFD}', "?")),
                false => Cow::Owned(text.into_owned()),
            }
        }
        Enc::High(high) if !b.is_ascii() => Cow::Owned(
            b.iter()
                .map(|&c| match c {
                    0..=0x7F => c as char,
                    _ => high[usize::from(c - 0x80)],
                })
                .collect(),
        ),
        Enc::Ascii if !b.is_ascii() => Cow::Owned(
            b.iter()
                .map(|&c| if c.is_ascii() { c as char } else { '?' })
                .collect(),
        ),
        _ => String::from_utf8_lossy(b),
    }
}

/// Result text re-encoded into character_set_results; when that is NULL
/// (None) or binary, each text column in its own character set (as MySQL
/// sends a latin1 column's latin1 bytes). The columns to convert are found
/// once per result: utf8mb4 columns under utf8mb4 results cost nothing.
pub fn encode_results(r: &mut Response, results: Option<&'static Charset>) {
    let Response::Rows(rs) = r else { return };
    match results {
        Some(cs) if !matches!(cs.enc, Enc::Utf8mb4 | Enc::Binary) => {
            let all = |_: &lockstep_types::result::Column| Some(cs);
            encode_rows(rs, all)
        }
        Some(cs) if cs.enc == Enc::Utf8mb4 => {}
        _ => encode_rows(rs, |c| non_utf8(c.collation)),
    }
}

/// Text columns' values in the set `target` gives for each (None: as is).
fn encode_rows(
    rs: &mut ResultSet,
    target: impl Fn(&lockstep_types::result::Column) -> Option<&'static Charset>,
) {
    let text_cols: Vec<(usize, &Charset)> = (0..rs.columns.len())
        .filter(|&i| rs.columns[i].data_type.is_string())
        .filter_map(|i| target(&rs.columns[i]).map(|cs| (i, cs)))
        .collect();
    if text_cols.is_empty() {
        return;
    }
    for row in &mut rs.rows {
        for &(i, cs) in &text_cols {
            if let Some(Value::Bytes(b)) = row.get_mut(i) {
                if let Ok(s) = std::str::from_utf8(b) {
                    if let Cow::Owned(v) = encode(s, cs) {
                        *b = v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cp852_round_trips_every_byte() {
        let cs = lookup("cp852").unwrap();
        let bytes: Vec<u8> = (0..=255).collect();
        let text = decode(&bytes, cs);
        assert_eq!(text.chars().count(), 256);
        assert_eq!(&*encode(&text, cs), &bytes[..]);
        assert_eq!(&*encode("\u{159}\u{10D}", cs), b"\xfd\x9f");
        assert_eq!(&*encode("\u{20AC}", cs), b"?");
        let (c, name) = from_collation_id(40).unwrap();
        assert_eq!((c.name, name), ("cp852", "cp852_general_ci"));
    }
}
