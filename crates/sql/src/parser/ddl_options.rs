//! ALGORITHM [=] x and LOCK [=] x of ALTER TABLE, CREATE INDEX and DROP
//! INDEX (MySQL's online DDL clauses), kept for the session to honour.

use super::{Parser, Result};
use crate::parser::ast::{AlterAlgorithm, AlterLock, DdlOptions};
use lockstep_types::error::Code;
use lockstep_types::Error;

impl Parser<'_> {
    /// One ALGORITHM or LOCK clause into `options`; false when the next
    /// word is neither. 1800 / 1801 for a value MySQL does not know.
    pub(super) fn parse_ddl_option(&mut self, options: &mut DdlOptions) -> Result<bool> {
        if self.eat_kw("ALGORITHM") {
            self.eat_eq();
            let v = self.ident_any()?;
            options.algorithm = Some(match v.to_ascii_uppercase().as_str() {
                "DEFAULT" => AlterAlgorithm::Default,
                "INPLACE" => AlterAlgorithm::Inplace,
                "COPY" => AlterAlgorithm::Copy,
                "INSTANT" => AlterAlgorithm::Instant,
                _ => {
                    return Err(Error::new(
                        Code::UnknownAlterAlgorithm,
                        format!("Unknown ALGORITHM '{v}'"),
                    ))
                }
            });
            return Ok(true);
        }
        if self.eat_kw("LOCK") {
            self.eat_eq();
            let v = self.ident_any()?;
            options.lock = Some(match v.to_ascii_uppercase().as_str() {
                "DEFAULT" => AlterLock::Default,
                "NONE" => AlterLock::None,
                "SHARED" => AlterLock::Shared,
                "EXCLUSIVE" => AlterLock::Exclusive,
                _ => {
                    return Err(Error::new(
                        Code::UnknownAlterLock,
                        format!("Unknown LOCK type '{v}'"),
                    ))
                }
            });
            return Ok(true);
        }
        Ok(false)
    }

    /// The ALGORITHM / LOCK clauses after CREATE INDEX and DROP INDEX.
    pub(super) fn parse_ddl_options(&mut self) -> Result<DdlOptions> {
        let mut options = DdlOptions::default();
        while self.parse_ddl_option(&mut options)? {}
        Ok(options)
    }
}
