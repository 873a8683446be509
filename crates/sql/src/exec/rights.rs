//! What the executor asks of privileges: statements inside stored
//! functions and triggers run within a statement and are checked here as
//! at top level. The session's `Grants` implement it
//! (session/privileges.rs), so the executor does not depend on the session.

use crate::parser::Statement;
use lockstep_accounts::Accounts;
use lockstep_tables::Table;
use lockstep_types::Error;
use std::sync::Arc;

/// CURRENT_ROLE() with no role active.
pub const NO_ROLE: &str = "NONE";

pub trait Rights: Send + Sync {
    /// The rights a stored program's statements run with, brought up to
    /// date with account changes: `definer`'s (SQL SECURITY DEFINER and
    /// triggers) unless that is this account, else these (INVOKER).
    fn for_program(
        &self,
        accounts: &Accounts,
        definer: Option<&(String, String)>,
    ) -> Result<Box<dyn Rights>, Error>;
    /// The statement-level check (1142, 1044, ...) in database `db`.
    fn check(&self, stmt: &Statement, db: Option<&str>) -> Result<(), Error>;
    /// SELECT on every table read.
    fn check_reads(&self, tables: &[Arc<Table>]) -> Result<(), Error>;
    /// CURRENT_ROLE(): the active roles as MySQL lists them.
    fn current_role(&self) -> String;
    /// How many roles are active (the session notices a stale copy).
    fn active_roles(&self) -> usize;
}
