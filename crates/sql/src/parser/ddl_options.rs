//! ALGORITHM [=] x and LOCK [=] x of ALTER TABLE, CREATE INDEX and DROP
//! INDEX (MySQL's online DDL clauses), kept for the session to honour.

use super::{Parser, Result};
use crate::parser::ast::{AlterAlgorithm, AlterLock, DdlOptions};
use lockstep_types::error::Code;
use lockstep_types::Error;

const ALGORITHMS: &[(&str, AlterAlgorithm)] = &[
    ("DEFAULT", AlterAlgorithm::Default),
    ("INPLACE", AlterAlgorithm::Inplace),
    ("COPY", AlterAlgorithm::Copy),
    ("INSTANT", AlterAlgorithm::Instant),
];

const LOCKS: &[(&str, AlterLock)] = &[
    ("DEFAULT", AlterLock::Default),
    ("NONE", AlterLock::None),
    ("SHARED", AlterLock::Shared),
    ("EXCLUSIVE", AlterLock::Exclusive),
];

impl Parser<'_> {
    /// One ALGORITHM or LOCK clause into `options`; false when the next
    /// word is neither. 1800 / 1801 for a value MySQL does not know.
    pub(super) fn parse_ddl_option(&mut self, options: &mut DdlOptions) -> Result<bool> {
        if self.eat_kw("ALGORITHM") {
            let named =
                self.ddl_option_value(ALGORITHMS, Code::UnknownAlterAlgorithm, "ALGORITHM")?;
            options.algorithm = Some(named);
        } else if self.eat_kw("LOCK") {
            options.lock =
                Some(self.ddl_option_value(LOCKS, Code::UnknownAlterLock, "LOCK type")?);
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// `[=] value`, one of `choices` (case-insensitive), else `code`.
    fn ddl_option_value<T: Copy>(
        &mut self,
        choices: &[(&str, T)],
        code: Code,
        what: &str,
    ) -> Result<T> {
        self.eat_eq();
        let v = self.ident_any()?;
        choices
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&v))
            .map(|&(_, value)| value)
            .ok_or_else(|| Error::new(code, format!("Unknown {what} '{v}'")))
    }

    /// The ALGORITHM / LOCK clauses after CREATE INDEX and DROP INDEX.
    pub(super) fn parse_ddl_options(&mut self) -> Result<DdlOptions> {
        let mut options = DdlOptions::default();
        while self.parse_ddl_option(&mut options)? {}
        Ok(options)
    }
}
