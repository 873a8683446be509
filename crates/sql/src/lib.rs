//! SQL for lockstep, one directory per stage; each stage uses only the ones
//! listed before it (`tests/layers.rs` fails on an import circle):
//!
//! - `parser/`: MySQL-dialect text to a syntax tree (`Statement`).
//! - `sysvars`: the system variables that exist and their defaults.
//! - `charset`: character sets and collations: names, ids, conversions
//!   (connections, results, and columns declared in a set of their own).
//! - `routine/`: stored programs compiled from the syntax tree and run
//!   over a `Runner` their caller provides.
//! - `expr/`: the bound expression language (`BExpr`, `Func`), its types
//!   (`infer`) and evaluation, time zones, ENUM/SET values, date
//!   arithmetic, user-level locks.
//! - `plan/`: binding names to tables and columns, access-path and join
//!   choice, column pruning; the plan types; DDL to table definitions.
//! - `exec/`: runs a plan against the engine; asks privileges through
//!   `exec::Rights`.
//! - `session/`: a client's session: statement dispatch, transactions,
//!   variables, SHOW and information_schema, accounts and privileges
//!   (`Grants` implements `exec::Rights`), shared prepared statements.
//!
//! A bound expression may hold a subquery, and a plan holds expressions:
//! `expr::SubqueryRef` carries the plan opaquely, and the planner opens it
//! (`Deref` in plan/mod.rs), so `expr` needs nothing from `plan`.

pub mod charset;
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
