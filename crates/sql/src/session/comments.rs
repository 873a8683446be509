//! COMMENT clauses as a session runs them: the comments a CREATE TABLE,
//! ALTER TABLE or CREATE INDEX declares (within MySQL's lengths), kept by
//! the engine (a temporary table's by the session), and shown by SHOW
//! CREATE TABLE, SHOW FULL COLUMNS, SHOW INDEX, SHOW TABLE STATUS and
//! information_schema.

use super::{Session, R};
use crate::parser::{AlterAction, CreateTable};
use crate::plan::alter::Altered;
use crate::plan::ddl::quote_ident;
use lockstep_tables::{Table, TableComments, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};
use std::sync::Arc;

/// MySQL's longest comments, in characters.
const TABLE_MAX: usize = 2048;
const COLUMN_MAX: usize = 1024;
const INDEX_MAX: usize = 1024;

/// What a comment belongs to: its limit, error and the message's word.
#[derive(Clone, Copy)]
enum Of {
    Table,
    Column,
    Index,
}

impl Of {
    fn limit(self) -> (usize, Code, &'static str) {
        match self {
            Of::Table => (TABLE_MAX, Code::TooLongTableComment, "table"),
            Of::Column => (COLUMN_MAX, Code::TooLongFieldComment, "field"),
            Of::Index => (INDEX_MAX, Code::TooLongIndexComment, "index"),
        }
    }
}

impl Session {
    /// `text` as a comment of `name`: longer than MySQL's limit is its
    /// error under strict mode, else cut to the limit with that warning.
    fn fit(&mut self, text: &str, of: Of, name: &str) -> R<String> {
        let (max, code, what) = of.limit();
        if text.chars().count() <= max {
            return Ok(text.to_string());
        }
        let message = format!("Comment for {what} '{name}' is too long (max = {max})");
        if self.strict_sql_mode {
            return Err(Error::new(code, message));
        }
        self.ctx
            .warnings
            .push(crate::exec::Condition::warning(code.number(), message));
        Ok(text.chars().take(max).collect())
    }

    /// Table `t`'s comments (a temporary table's are the session's).
    pub(super) fn comments_of(&self, t: &Table) -> Arc<TableComments> {
        if t.temporary {
            let own = self.temp_comments.get(&t.id).cloned();
            return Arc::new(own.unwrap_or_default());
        }
        self.engine.catalog.comments(t.id)
    }

    /// The comments CREATE TABLE declares for its definition `def` (with
    /// LIKE: the source table's).
    pub(super) fn create_comments(&mut self, ct: &CreateTable, def: &TableDef) -> R<TableComments> {
        if let Some(src) = &ct.like {
            let t = self.binder().table(src)?;
            return Ok((*self.comments_of(&t)).clone());
        }
        let mut out = TableComments::default();
        if let Some(c) = &ct.comment {
            out.table = self.fit(c, Of::Table, &ct.name.name)?;
        }
        for spec in &ct.columns {
            if let Some(c) = &spec.comment {
                let c = self.fit(c, Of::Column, &spec.name)?;
                out.set_column(&spec.name, &c);
            }
        }
        if let Some(c) = &ct.primary_comment {
            let c = self.fit(c, Of::Index, "PRIMARY")?;
            out.set_index("PRIMARY", &c);
        }
        // After PRIMARY: a column's own UNIQUE keys, then the key clauses.
        let inline = ct.columns.iter().filter(|c| c.unique).count();
        for (j, ix) in ct.indexes.iter().enumerate() {
            let (Some(c), Some(made)) = (&ix.comment, def.indexes.get(1 + inline + j)) else {
                continue;
            };
            let c = self.fit(c, Of::Index, &made.name)?;
            out.set_index(&made.name, &c);
        }
        Ok(out)
    }

    /// The comments table `t` has after an ALTER of clauses `actions`
    /// that makes it `altered`.
    pub(super) fn alter_comments(
        &mut self,
        t: &Table,
        actions: &[AlterAction],
        altered: &Altered,
    ) -> R<TableComments> {
        let mut out = (*self.comments_of(t)).clone();
        for a in actions {
            match a {
                AlterAction::TableComment { comment } => {
                    out.table = self.fit(comment, Of::Table, &altered.def.name)?;
                }
                AlterAction::AddColumn { column, .. } => {
                    let c = column.comment.as_deref().unwrap_or_default();
                    let c = self.fit(c, Of::Column, &column.name)?;
                    out.set_column(&column.name, &c);
                }
                // A new definition: its comment is the one it gives.
                AlterAction::ChangeColumn { old, column, .. } => {
                    out.set_column(old, "");
                    let c = column.comment.as_deref().unwrap_or_default();
                    let c = self.fit(c, Of::Column, &column.name)?;
                    out.set_column(&column.name, &c);
                }
                AlterAction::RenameColumn { from, to } => {
                    let c = out.of_column(from).to_string();
                    out.set_column(from, "");
                    out.set_column(to, &c);
                }
                AlterAction::DropColumn { name } => out.set_column(name, ""),
                AlterAction::RenameIndex { from, to } => {
                    let c = out.of_index(from).to_string();
                    out.set_index(from, "");
                    out.set_index(to, &c);
                }
                _ => {}
            }
        }
        let def = &altered.def;
        out.columns.retain(|(n, _)| {
            def.visible_columns()
                .any(|(_, c)| c.name.eq_ignore_ascii_case(n))
        });
        let added = |n: &str| {
            altered
                .added_keys
                .iter()
                .any(|(a, _)| a.eq_ignore_ascii_case(n))
        };
        // A hidden row id's clustered key is no key of the user's.
        let shown = def
            .indexes
            .iter()
            .skip(usize::from(def.hidden_row_id.is_some()));
        let names: Vec<&str> = shown.map(|i| i.name.as_str()).collect();
        let kept = |n: &str| names.iter().any(|k| k.eq_ignore_ascii_case(n));
        out.indexes.retain(|(n, _)| kept(n) && !added(n));
        for (name, c) in &altered.added_keys {
            let c = self.fit(c, Of::Index, name)?;
            out.set_index(name, &c);
        }
        Ok(out)
    }

    /// Gives the table now named `db`.`name` the comments `comments`
    /// (logged when they differ from the ones it has).
    pub(super) async fn store_comments(
        &mut self,
        db: &str,
        name: &str,
        comments: TableComments,
    ) -> R<()> {
        let Some(t) = self.engine.catalog.table(db, name) else {
            return Ok(());
        };
        if *self.engine.catalog.comments(t.id) == comments {
            return Ok(());
        }
        self.engine.set_comments(&t, comments).await
    }

    /// CREATE / DROP INDEX in place: index `index` of `t` now has comment
    /// `comment` ('' for a dropped one).
    pub(super) async fn set_index_comment(
        &mut self,
        t: &Table,
        index: &str,
        comment: &str,
    ) -> R<()> {
        let comment = self.fit(comment, Of::Index, index)?;
        let mut c = (*self.comments_of(t)).clone();
        c.set_index(index, &comment);
        if t.temporary {
            self.temp_comments.insert(t.id, c);
            return Ok(());
        }
        if *self.engine.catalog.comments(t.id) == c {
            return Ok(());
        }
        self.engine.set_comments(t, c).await
    }

    /// Checks an in-place index comment before the index is made.
    pub(super) fn check_index_comment(&mut self, index: &str, comment: &str) -> R<()> {
        self.fit(comment, Of::Index, index).map(|_| ())
    }
}

/// A comment as SHOW CREATE TABLE quotes it (MySQL's escapes: '' for a
/// quote, backslash escapes for backslash, NUL, newline and return).
pub(crate) fn quote_comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for ch in text.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// SHOW CREATE TABLE's text with the comments: each column's and key's
/// at the end of its entry, the table's after the table options.
pub(crate) fn add_to_create(text: String, def: &TableDef, comments: &TableComments) -> String {
    if comments.is_empty() {
        return text;
    }
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    // Each entry's first line and comment: the columns, then the keys.
    let mut entries: Vec<(String, &str)> = def
        .visible_columns()
        .map(|(_, c)| {
            (
                format!("  {} ", quote_ident(&c.name)),
                comments.of_column(&c.name),
            )
        })
        .collect();
    for (n, ix) in def.indexes.iter().enumerate() {
        let start = match n {
            0 if def.hidden_row_id.is_some() => continue,
            0 => "  PRIMARY KEY (".to_string(),
            _ if ix.unique => format!("  UNIQUE KEY {} (", quote_ident(&ix.name)),
            _ => format!("  KEY {} (", quote_ident(&ix.name)),
        };
        entries.push((start, comments.of_index(&ix.name)));
    }
    // Found in order, each after the one before; an entry ends on the line
    // before the next one starts (a default may hold a line break).
    let mut starts = Vec::with_capacity(entries.len() + 1);
    let mut from = 1;
    for (start, _) in &entries {
        let found = (from..lines.len()).find(|&i| lines[i].starts_with(start.as_str()));
        let at = found.unwrap_or(from);
        starts.push(at);
        from = at + 1;
    }
    let close = (from..lines.len()).find(|&i| lines[i].starts_with(") ENGINE="));
    starts.push(close.unwrap_or(lines.len()));
    for (k, (_, comment)) in entries.iter().enumerate() {
        if !comment.is_empty() && starts[k + 1] > starts[k] {
            append_comment(&mut lines[starts[k + 1] - 1], comment);
        }
    }
    let mut out = lines.join("\n");
    if !comments.table.is_empty() {
        out.push_str(" COMMENT=");
        out.push_str(&quote_comment(&comments.table));
    }
    out
}

/// Appends ` COMMENT '...'` to an entry's last line, before its comma.
fn append_comment(line: &mut String, comment: &str) {
    let comma = line.ends_with(',');
    if comma {
        line.pop();
    }
    line.push_str(" COMMENT ");
    line.push_str(&quote_comment(comment));
    if comma {
        line.push(',');
    }
}

/// SHOW TABLE STATUS's columns, as MySQL 8 names them.
pub(super) const TABLE_STATUS: [&str; 18] = [
    "Name",
    "Engine",
    "Version",
    "Row_format",
    "Rows",
    "Avg_row_length",
    "Data_length",
    "Max_data_length",
    "Index_length",
    "Data_free",
    "Auto_increment",
    "Create_time",
    "Update_time",
    "Check_time",
    "Collation",
    "Checksum",
    "Create_options",
    "Comment",
];

/// One table's row of SHOW TABLE STATUS.
pub(super) fn table_status_row(t: &Table, comments: &TableComments) -> Vec<Value> {
    let def = t.def();
    let auto = match def.auto_increment_column() {
        Some(_) => Value::UInt(t.auto_increment.load(std::sync::atomic::Ordering::Relaxed)),
        None => Value::Null,
    };
    vec![
        Value::str(&def.name),
        Value::str("InnoDB"),
        Value::Int(10),
        Value::str("Dynamic"),
        Value::Int(t.approximate_rows() as i64),
        Value::Int(0),
        Value::Int(16384),
        Value::Int(0),
        Value::Int(0),
        Value::Int(0),
        auto,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::str(super::charset::of_collation(def.collation).1),
        Value::Null,
        Value::str(""),
        Value::str(&comments.table),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_quoted_as_mysql_does() {
        assert_eq!(quote_comment("it's a\\b\nc"), "'it''s a\\\\b\\nc'");
        assert_eq!(quote_comment(""), "''");
    }

    #[test]
    fn a_comment_ends_an_entry_that_spans_lines() {
        let text =
            "CREATE TABLE `t` (\n  `a` varchar(3) DEFAULT 'x\ny',\n  `b` int\n) ENGINE=InnoDB";
        let mut def = TableDef {
            id: 1,
            database: "d".into(),
            name: "t".into(),
            columns: Vec::new(),
            indexes: Vec::new(),
            hidden_row_id: None,
            collation: 0,
        };
        for name in ["a", "b"] {
            def.columns.push(lockstep_tables::ColumnDef {
                name: name.into(),
                data_type: lockstep_types::DataType::Int { unsigned: false },
                nullable: true,
                default: None,
                auto_increment: false,
                default_now: false,
                on_update_now: false,
                collation: 0,
            });
        }
        let mut c = TableComments::default();
        c.set_column("a", "ca");
        c.set_column("b", "cb");
        let out = add_to_create(text.into(), &def, &c);
        assert_eq!(
            out,
            "CREATE TABLE `t` (\n  `a` varchar(3) DEFAULT 'x\ny' COMMENT 'ca',\n  `b` int COMMENT 'cb'\n) ENGINE=InnoDB"
        );
    }
}
