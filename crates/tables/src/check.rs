//! CHECK constraints (MySQL 8.0.16+) as a table keeps them: the SQL layer
//! parses, validates and evaluates the expression; storage keeps its text.

/// `CONSTRAINT name CHECK (expr) [NOT] ENFORCED`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckConstraint {
    /// Unique in the table's database (generated: `<table>_chk_<n>`).
    pub name: String,
    /// The expression's SQL text, as written.
    pub expr: String,
    pub enforced: bool,
}
