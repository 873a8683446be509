//! Syntax of the FROM items that may read the items to their left:
//! `LATERAL (subquery) alias [(columns)]` and `JSON_TABLE(...) alias`.

use super::ast::{Expr, Query};
use lockstep_types::DataType;

#[derive(Clone, Debug, PartialEq)]
pub enum LateralRef {
    Query {
        query: Box<Query>,
        alias: String,
        /// The derived table's column names, when written.
        columns: Vec<String>,
    },
    JsonTable(JsonTable),
}

impl LateralRef {
    pub fn alias(&self) -> &str {
        match self {
            LateralRef::Query { alias, .. } => alias,
            LateralRef::JsonTable(t) => &t.alias,
        }
    }

    /// The subquery of a LATERAL derived table.
    pub fn query(&self) -> Option<&Query> {
        match self {
            LateralRef::Query { query, .. } => Some(query),
            LateralRef::JsonTable(_) => None,
        }
    }
}

/// `JSON_TABLE(expr, path COLUMNS (...)) [AS] alias`.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonTable {
    pub expr: Expr,
    pub path: String,
    pub columns: Vec<JtColumn>,
    pub alias: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum JtColumn {
    /// `name FOR ORDINALITY`.
    Ordinality(String),
    Path(JtPathColumn),
    /// `NESTED [PATH] path COLUMNS (...)`.
    Nested {
        path: String,
        columns: Vec<JtColumn>,
    },
}

/// `name type [EXISTS] PATH path [on empty] [on error]`.
#[derive(Clone, Debug, PartialEq)]
pub struct JtPathColumn {
    pub name: String,
    pub ty: DataType,
    pub path: String,
    pub exists: bool,
    pub on_empty: JtOn,
    pub on_error: JtOn,
}

/// What an ON EMPTY or ON ERROR clause answers.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum JtOn {
    #[default]
    Null,
    Error,
    /// DEFAULT 'json text'.
    Default(String),
}
