//! COMMENT clauses as a table keeps them: the table's own comment and
//! its columns' and indexes' comments, each by name (positions move with
//! ALTER). Empty comments are not kept: a name without an entry has ''.

/// A table's comments. `columns` and `indexes` hold (name, comment) pairs
/// with non-empty comments only, in no particular order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TableComments {
    pub table: String,
    pub columns: Vec<(String, String)>,
    pub indexes: Vec<(String, String)>,
}

impl TableComments {
    pub fn is_empty(&self) -> bool {
        self.table.is_empty() && self.columns.is_empty() && self.indexes.is_empty()
    }

    /// Column `name`'s comment ('' without one).
    pub fn of_column(&self, name: &str) -> &str {
        find(&self.columns, name)
    }

    /// Index `name`'s comment ('' without one).
    pub fn of_index(&self, name: &str) -> &str {
        find(&self.indexes, name)
    }

    /// Sets column `name`'s comment (an empty one removes it).
    pub fn set_column(&mut self, name: &str, comment: &str) {
        set(&mut self.columns, name, comment)
    }

    /// Sets index `name`'s comment (an empty one removes it).
    pub fn set_index(&mut self, name: &str, comment: &str) {
        set(&mut self.indexes, name, comment)
    }
}

/// Column and index names compare case-insensitively, as MySQL's do.
fn find<'a>(list: &'a [(String, String)], name: &str) -> &'a str {
    list.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map_or("", |(_, c)| c.as_str())
}

fn set(list: &mut Vec<(String, String)>, name: &str, comment: &str) {
    list.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    if !comment.is_empty() {
        list.push((name.to_string(), comment.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive_and_empty_removes() {
        let mut c = TableComments::default();
        c.set_column("Abc", "x");
        assert_eq!(c.of_column("aBC"), "x");
        c.set_column("ABC", "y");
        assert_eq!(c.columns, vec![("ABC".to_string(), "y".to_string())]);
        c.set_column("abc", "");
        assert!(c.is_empty());
        assert_eq!(c.of_index("i"), "");
    }
}
