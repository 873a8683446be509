//! SQL SECURITY DEFINER: naming another account as DEFINER needs SUPER
//! (MySQL: SUPER or SET_USER_ID, 1227), and DEFINER procedures, functions
//! and triggers run with their definer's grants (1449 when that account
//! no longer exists). INVOKER ones run with the caller's.

use super::privileges::Grants;
use super::{Session, R};
use crate::parser::UserName;
use lockstep_accounts::{Accounts, Privs};
use lockstep_types::error::Code;
use lockstep_types::Error;
use std::sync::Arc;

/// The grants a DEFINER program runs with.
pub(crate) fn definer_grants(accounts: &Accounts, definer: &(String, String)) -> R<Grants> {
    let (user, host) = definer;
    match accounts.get(user, host) {
        Some(a) => Ok(Grants::new(a, accounts.version(), user, host)),
        None => Err(Error::new(
            Code::NoSuchUser,
            format!("The user specified as a definer ('{user}'@'{host}') does not exist"),
        )),
    }
}

/// The session's rights, kept while a DEFINER procedure runs.
pub(super) struct Saved {
    grants: Grants,
    exec_grants: Option<Arc<dyn crate::exec::Rights>>,
    current_user: String,
}

impl Session {
    /// `DEFINER = u@h` naming another account than the current one
    /// needs SUPER (1227).
    pub(super) fn check_definer_clause(&self, given: &Option<UserName>) -> R<()> {
        let Some(u) = given else { return Ok(()) };
        let own = &self.grants.account;
        let named_other = (!u.user.is_empty() || !u.host.is_empty())
            && (u.user != own.user || u.host != own.host);
        if named_other && !self.grants.superuser() && !self.grants.has_global(Privs::SUPER) {
            return Err(Grants::global_denied("SUPER or SET_USER_ID"));
        }
        Ok(())
    }

    /// Takes on `definer`'s rights for a DEFINER procedure; `leave_definer`
    /// gives the session's back.
    pub(super) fn enter_definer(&mut self, definer: &(String, String)) -> R<Saved> {
        let grants = definer_grants(&self.engine.accounts, definer)?;
        let current_user = format!("{}@{}", definer.0, definer.1);
        let exec_grants: Option<Arc<dyn crate::exec::Rights>> = Some(Arc::new(grants.clone()));
        Ok(Saved {
            grants: std::mem::replace(&mut self.grants, grants),
            exec_grants: std::mem::replace(&mut self.ctx.grants, exec_grants),
            current_user: std::mem::replace(&mut self.ctx.current_user, current_user),
        })
    }

    pub(super) fn leave_definer(&mut self, saved: Saved) {
        self.grants = saved.grants;
        self.ctx.grants = saved.exec_grants;
        self.ctx.current_user = saved.current_user;
    }
}
