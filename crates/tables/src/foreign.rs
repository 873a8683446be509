//! Foreign key constraints as the catalog keeps them: columns and the
//! parent table by name (as InnoDB's dictionary does), so that a parent
//! may be dropped and created again while FOREIGN_KEY_CHECKS=0, and an
//! ALTER that moves columns leaves the constraint alone.

/// What a change to a referenced parent row does to its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FkAction {
    /// The default (MySQL 8 records an unnamed rule as NO ACTION); InnoDB
    /// checks it at once, as RESTRICT.
    NoAction,
    Restrict,
    Cascade,
    SetNull,
}

impl FkAction {
    /// The rule's name (information_schema.REFERENTIAL_CONSTRAINTS).
    pub fn name(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        }
    }

    /// Whether the parent's change is refused while children exist.
    pub fn refuses(self) -> bool {
        matches!(self, FkAction::NoAction | FkAction::Restrict)
    }
}

/// One FOREIGN KEY of a child table.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ForeignKey {
    pub name: String,
    /// The child's columns, in constraint order.
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    /// The parent's columns, paired with `columns`.
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

impl ForeignKey {
    /// Whether this constraint references table `db`.`name`.
    pub fn references(&self, db: &str, name: &str) -> bool {
        self.parent_db == db && self.parent_table == name
    }
}
