//! Vocabulary shared by every lockstep crate: SQL values, column data types,
//! and errors that carry a MySQL error code and SQLSTATE.

pub mod datatype;
pub mod decimal;
pub mod enumset;
pub mod error;
pub mod memory;
pub mod names;
pub mod prefetch;
pub mod replica_status;
pub mod result;
pub mod time;
pub mod value;

pub use datatype::DataType;
pub use decimal::Decimal;
pub use error::{Error, Result};
pub use time::{Date, DateTime, Time};
pub use value::Value;
