//! The rules MySQL applies to the names of databases, tables and columns.

use crate::error::{Code, Error};

/// Most characters in a database, table or column name (MySQL's NAME_CHAR_LEN).
pub const MAX_NAME_CHARS: usize = 64;

/// What a name is for: it picks the error a bad one gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    Database,
    Table,
    Column,
    Index,
    /// A stored procedure, function or trigger.
    Routine,
}

/// Refuses a name MySQL refuses: longer than 64 characters (1059), or
/// empty, ending in a space or holding a NUL (1102, 1103, 1166, 1280 or
/// 1458).
pub fn check_name(kind: NameKind, name: &str) -> Result<(), Error> {
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::new(
            Code::TooLongIdent,
            format!("Identifier name '{name}' is too long"),
        ));
    }
    if !name.is_empty() && !name.ends_with(' ') && !name.contains('\0') {
        return Ok(());
    }
    let (code, word) = match kind {
        NameKind::Database => (Code::WrongDbName, "database"),
        NameKind::Table => (Code::WrongTableName, "table"),
        NameKind::Column => (Code::WrongColumnName, "column"),
        NameKind::Index => (Code::WrongNameForIndex, "index"),
        NameKind::Routine => (Code::SpWrongName, "routine"),
    };
    Err(Error::new(code, format!("Incorrect {word} name '{name}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_mysql_rules() {
        let code = |k, n: &str| check_name(k, n).err().map(|e| e.number());
        assert_eq!(code(NameKind::Database, "shop"), None);
        assert_eq!(code(NameKind::Table, "a b"), None);
        assert_eq!(code(NameKind::Column, &"é".repeat(64)), None);
        assert_eq!(code(NameKind::Database, ""), Some(1102));
        assert_eq!(code(NameKind::Database, "d "), Some(1102));
        assert_eq!(code(NameKind::Table, "t "), Some(1103));
        assert_eq!(code(NameKind::Table, "a\0b"), Some(1103));
        assert_eq!(code(NameKind::Column, ""), Some(1166));
        assert_eq!(code(NameKind::Column, &"x".repeat(65)), Some(1059));
        assert_eq!(code(NameKind::Database, &"x".repeat(65)), Some(1059));
        assert_eq!(code(NameKind::Index, ""), Some(1280));
        assert_eq!(code(NameKind::Index, "i "), Some(1280));
        assert_eq!(code(NameKind::Routine, "p "), Some(1458));
    }
}
