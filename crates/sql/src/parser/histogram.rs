//! The HISTOGRAM clauses of ANALYZE TABLE (after its table list):
//! `UPDATE HISTOGRAM ON c [, c] [WITH n BUCKETS] [MANUAL UPDATE]` and
//! `DROP HISTOGRAM ON c [, c]`.

use super::{Parser, Result, Tok};
use crate::parser::ast::{ObjectName, Statement};
use lockstep_tables::histogram::{DEFAULT_BUCKETS, MAX_BUCKETS};
use lockstep_types::error::Code;
use lockstep_types::Error;

impl Parser<'_> {
    pub(super) fn parse_histogram(&mut self, tables: Vec<ObjectName>) -> Result<Statement> {
        let update = self.eat_kw("UPDATE");
        if !update {
            self.expect_kw("DROP")?;
        }
        self.expect_kw("HISTOGRAM")?;
        self.expect_kw("ON")?;
        let mut columns = vec![self.ident()?];
        while self.eat(&Tok::Comma) {
            columns.push(self.ident()?);
        }
        let mut buckets = update.then_some(DEFAULT_BUCKETS);
        if update && self.is_kw("USING") {
            return Err(self.unsupported("ANALYZE TABLE ... UPDATE HISTOGRAM USING DATA"));
        }
        if update && self.eat_kw("WITH") {
            buckets = Some(self.bucket_count()?);
            self.expect_kw("BUCKETS")?;
        }
        if update && self.is_kw("AUTO") {
            return Err(self.unsupported("ANALYZE TABLE ... AUTO UPDATE"));
        }
        if update && self.eat_kw("MANUAL") {
            self.expect_kw("UPDATE")?;
        }
        Ok(Statement::Histogram {
            tables,
            columns,
            buckets,
        })
    }

    /// `n` of WITH n BUCKETS: 1 to 1024, else MySQL's 1690.
    fn bucket_count(&mut self) -> Result<u32> {
        if !self.is(&Tok::Int) {
            return Err(self.error());
        }
        let n = self.text_at(0).parse::<u32>().ok();
        self.advance();
        match n {
            Some(n) if (1..=MAX_BUCKETS).contains(&n) => Ok(n),
            _ => Err(Error::new(
                Code::DataOutOfRange,
                "Number of buckets value is out of range in 'ANALYZE TABLE'",
            )),
        }
    }
}
