//! SQL for lockstep: the MySQL-dialect parser, the binder that resolves
//! names and picks access paths, the executor, and client sessions.

pub mod bind;
pub mod datetime;
pub mod ddl;
pub mod equalities;
pub mod exec;
pub mod expr;
pub mod infoschema;
pub mod join_order;
pub mod keyset;
pub mod parser;
pub mod plan;
pub mod privileges;
pub mod prune;
pub mod session;
pub mod statements;
pub mod user_locks;
pub mod users;
pub mod vars;

pub use session::{Prepared, Server, Session};
pub use vars::Globals;

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod numeric_tests;
#[cfg(test)]
mod order_tests;
#[cfg(test)]
mod planner_tests;
#[cfg(test)]
mod temporary_tests;
#[cfg(test)]
mod test_db;
#[cfg(test)]
mod transaction_tests;
