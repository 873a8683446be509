//! Table storage (5.5, 5.6): each table is an ordered clustered index from
//! encoded primary key to a record holding its version chain; secondary
//! indexes map (index key ++ primary key) to nothing and are checked against
//! the clustered record's visible version, as InnoDB does, so they stay
//! correct under MVCC without per-version index entries.

pub mod capture;
pub mod check;
pub mod clustered;
pub mod comments;
pub mod dive;
pub mod foreign;
pub mod generated;
pub mod histogram;
pub mod histogram_json;
pub mod integrity;
pub mod layout;
pub mod placement;
mod point;
pub mod row;
pub mod schema;
pub mod stats;
pub mod table;

pub use check::CheckConstraint;
pub use comments::TableComments;
pub use foreign::{FkAction, ForeignKey};
pub use generated::GeneratedColumn;
pub use row::{Columns, Row};
pub use schema::{ColumnDef, IndexDef, TableDef};
pub use table::{Record, Table, Version};

/// Transaction id as the transaction system assigns it.
pub type TxnId = u64;
