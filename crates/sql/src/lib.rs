//! SQL for lockstep, one directory per stage; each stage uses only the ones
//! listed before it:
//!
//! - `parser/`: MySQL-dialect text to a syntax tree (`Statement`).
//! - `sysvars`: the system variables that exist and their defaults.
//! - `expr/`: the bound expression language (`BExpr`, `Func`) and its
//!   evaluation, date arithmetic, user-level locks.
//! - `plan/`: binding names to tables and columns, access-path and join
//!   choice, column pruning; the plan types; DDL to table definitions.
//! - `exec/`: runs a plan against the engine.
//! - `session/`: a client's session: statement dispatch, transactions,
//!   variables, SHOW and information_schema, accounts and privileges,
//!   shared prepared statements.
//!
//! A bound expression may hold a subquery, so `expr` names the plan type
//! of one (`expr::SubqueryRef`); that is the one reference upward.

pub mod enumset;
pub mod exec;
pub mod expr;
pub mod parser;
pub mod plan;
pub mod routine;
pub mod session;
pub mod sysvars;

pub use session::vars::Globals;
pub use session::{Prepared, Server, Session};

#[cfg(test)]
mod tests;
