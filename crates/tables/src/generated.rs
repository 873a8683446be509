//! Generated columns (`col type [GENERATED ALWAYS] AS (expr) [VIRTUAL |
//! STORED]`) as a table keeps them: the SQL layer parses, validates and
//! evaluates the expression; storage keeps its text. Both kinds are
//! materialized in the row and recomputed by every write.

/// One generated column of a table.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GeneratedColumn {
    /// The column's name (its position may move with ALTER).
    pub column: String,
    /// The expression's SQL text, as written.
    pub expr: String,
    /// STORED (else VIRTUAL).
    pub stored: bool,
}
