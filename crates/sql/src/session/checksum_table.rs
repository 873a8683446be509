//! CHECKSUM TABLE: a checksum of the rows the statement's snapshot sees,
//! independent of row order and of how a value is held in memory, so a
//! primary and its replicas holding the same rows give the same number
//! (the cluster tests compare them). Each row's CRC-32 covers its values
//! in column order (NULL distinct from every value, strings by their
//! bytes, others by their text); the table's checksum is the sum of the
//! rows' CRCs modulo 2^32, as MySQL sums per-row checksums. The number is
//! lockstep's own: MySQL's depends on its row format.

use super::{rows, Session, R};
use crate::parser::ObjectName;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::ops::Bound;

impl Session {
    pub(super) async fn checksum_tables(
        &mut self,
        tables: &[ObjectName],
        quick: bool,
    ) -> R<Response> {
        let mut out = Vec::new();
        for name in tables {
            let shown = Value::str(&self.qualified(name));
            // A view has no rows of its own: NULL, as MySQL gives.
            let view = self.temporary_table(name).is_none() && self.binder().view(name).is_some();
            let sum = match quick || view {
                // No live checksum is kept (InnoDB: NULL too).
                true => Ok(Value::Null),
                false => self.checksum_one(name).map(Value::UInt),
            };
            let sum = sum.unwrap_or_else(|e| {
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(e.code.number(), e.message));
                Value::Null
            });
            out.push(vec![shown, sum]);
        }
        if !self.in_transaction() {
            // The statement's snapshot ends with it.
            self.engine.commit(&mut self.txn).await?;
        }
        Ok(rows(&["Table", "Checksum"], out))
    }

    fn checksum_one(&mut self, name: &ObjectName) -> R<u64> {
        let t = match self.temporary_table(name) {
            Some(t) => t,
            None => self.binder().table(name)?,
        };
        let interrupt = self.ctx.interrupt.clone();
        let (mut sum, mut seen, mut buf) = (0u32, 0u32, Vec::new());
        let mut visit = |_: &[u8], row: lockstep_tables::row::Row| {
            seen = seen.wrapping_add(1);
            if seen % crate::exec::Interrupt::EVERY == 0 {
                interrupt.check().map_err(lockstep_engine::Error::Sql)?;
            }
            sum = sum.wrapping_add(row_crc(&row.to_values(), &mut buf));
            Ok(true)
        };
        let (lo, hi) = (Bound::Unbounded, Bound::Unbounded);
        let scanned = self
            .engine
            .scan_primary(&mut self.txn, &t, lo, hi, false, None, &mut visit);
        scanned.map_err(|e| match e {
            lockstep_engine::Error::Sql(e) => e,
            // A consistent read takes no lock.
            lockstep_engine::Error::LockWait(_) => {
                Error::internal("lock wait in a consistent read")
            }
        })?;
        Ok(u64::from(sum))
    }
}

/// The CRC-32 of one row's values (`buf` is reused between rows).
fn row_crc(values: &[Value], buf: &mut Vec<u8>) -> u32 {
    buf.clear();
    for v in values {
        match v {
            Value::Null => buf.push(0),
            Value::Bytes(b) => {
                buf.push(1);
                buf.extend_from_slice(&(b.len() as u64).to_le_bytes());
                buf.extend_from_slice(b);
            }
            other => {
                let text = other.to_string();
                buf.push(2);
                buf.extend_from_slice(&(text.len() as u64).to_le_bytes());
                buf.extend_from_slice(text.as_bytes());
            }
        }
    }
    crc32fast::hash(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_checksum_tells_null_from_empty_and_ignores_integer_kinds() {
        let mut buf = Vec::new();
        let mut crc = |v: &[Value]| row_crc(v, &mut buf);
        assert_ne!(crc(&[Value::Null]), crc(&[Value::str("")]));
        assert_eq!(crc(&[Value::Int(5)]), crc(&[Value::UInt(5)]));
        assert_ne!(
            crc(&[Value::str("ab"), Value::str("c")]),
            crc(&[Value::str("a"), Value::str("bc")])
        );
    }
}
