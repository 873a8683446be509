//! Writes outside strict mode: the statement's values that do not fit
//! their columns are adjusted with a warning (`expr::lenient`) when
//! `SessionCtx::strict` is off, i.e. under INSERT IGNORE or an sql_mode
//! without STRICT_TRANS_TABLES / STRICT_ALL_TABLES, as in MySQL.

use super::{Condition, Exec, Result, MAX_WARNINGS};
use crate::expr::lenient::{implicit_default, store_adjusted};
use crate::expr::{store_value, timestamp_in_range, to_utc, zero_date};
use lockstep_engine::Error as EngineError;
use lockstep_tables::ColumnDef;
use lockstep_types::error::Code;
use lockstep_types::{DataType, DateTime, Decimal, Error, Value};

impl Exec<'_> {
    /// `v` as column `c` stores it: adjusted with a warning outside
    /// strict mode, else as strict mode has it (an error when it does not
    /// fit).
    pub(super) fn store_column(&mut self, v: Value, c: &ColumnDef) -> Result<Value> {
        // Stores round extra fractional digits, unless the sql_mode says.
        let v = match self.ctx.dates.truncate_fraction {
            true => zero_date::cut_fraction(v, c.data_type),
            false => v,
        };
        if zero_date::is_date_type(c.data_type) {
            let (dates, strict) = (self.ctx.dates, self.ctx.strict);
            if let Some((v, w)) = zero_date::store(&v, c.data_type, &c.name, dates, strict)? {
                if let Some(w) = w {
                    self.push_warning(w);
                }
                return Ok(v);
            }
        }
        let v = match c.collation {
            0 => v,
            _ => self.in_column_charset(v, c)?,
        };
        let given = decimal_given(&v, c.data_type);
        let (stored, warning) = match self.ctx.strict {
            true => (store_value(v, c.data_type, &c.name)?, None),
            false => store_adjusted(v, c.data_type, &c.name)?,
        };
        match (warning, given, &stored) {
            (Some(w), _, _) => self.push_warning(w),
            // As MySQL: a DECIMAL rounded to the column's scale is a note,
            // in strict mode too.
            (None, Some(given), Value::Decimal(d)) if given != *d => {
                let message = format!("Data truncated for column '{}' at row 1", c.name);
                self.push_warning(Condition::note(1265, message));
            }
            _ => {}
        }
        self.stored_form(stored, c)
    }

    /// Text for a column declared in another character set than utf8mb4
    /// (`expr::column_charset`): 1366 in strict mode, else a warning and
    /// '?' for what the set lacks.
    fn in_column_charset(&mut self, v: Value, c: &ColumnDef) -> Result<Value> {
        let cs = match (&v, crate::charset::non_utf8(c.collation)) {
            (Value::Bytes(_), Some(cs)) if c.data_type.is_string() => cs,
            _ => return Ok(v),
        };
        let Value::Bytes(b) = v else {
            return Ok(v);
        };
        match crate::expr::column_charset::store(b, cs, &c.name) {
            Ok(b) => Ok(Value::Bytes(b)),
            Err((e, _)) if self.ctx.strict => Err(EngineError::Sql(e)),
            Err((e, kept)) => {
                self.push_warning((e.code.number(), e.message));
                Ok(Value::Bytes(kept))
            }
        }
    }

    /// A value of column `c`'s type as the row holds it: a TIMESTAMP
    /// given in the session time zone is stored in UTC, and must be in the
    /// type's range of instants (else 1292, or outside strict mode the
    /// zero value with warning 1264, as in MySQL). Every writer of a
    /// column value goes through here (`Func::FromUtc` reads it back).
    pub(super) fn stored_form(&mut self, v: Value, c: &ColumnDef) -> Result<Value> {
        if !matches!(c.data_type, DataType::Timestamp { .. }) {
            return Ok(v);
        }
        let utc = to_utc(v.clone(), c.data_type, self.ctx.tz_offset);
        if timestamp_in_range(&utc) {
            return Ok(utc);
        }
        if self.ctx.strict {
            return Err(EngineError::Sql(zero_date::incorrect(
                &v,
                c.data_type,
                &c.name,
            )));
        }
        let out_of_range = format!("Out of range value for column '{}' at row 1", c.name);
        self.push_warning((Code::WarnDataOutOfRange.number(), out_of_range));
        Ok(Value::DateTime(DateTime::default()))
    }

    /// CURRENT_TIMESTAMP for column `c` (DEFAULT or ON UPDATE): now in
    /// the session time zone, stored as the column stores it.
    pub(super) fn column_now(&mut self, c: &ColumnDef) -> Result<Value> {
        // The clock is cut to the column's digits, never rounded.
        let fsp = match c.data_type {
            DataType::DateTime { fsp } | DataType::Timestamp { fsp } => fsp,
            _ => 6,
        };
        let now = Value::DateTime(self.now_local().truncate(fsp));
        let v = store_value(now, c.data_type, &c.name)?;
        self.stored_form(v, c)
    }

    /// The clock in the session time zone.
    pub(super) fn now_local(&self) -> DateTime {
        self.ctx.clock().shifted(self.ctx.tz_offset)
    }

    /// NULL written to NOT NULL column `c`: 1048, or outside strict mode
    /// when `lenient` (the caller knows: MySQL still refuses it for a
    /// single-row INSERT) the type's implicit default with warning 1048.
    pub(super) fn null_into_not_null(&mut self, c: &ColumnDef, lenient: bool) -> Result<Value> {
        let error = Error::new(Code::BadNull, format!("Column '{}' cannot be null", c.name));
        if self.ctx.strict || !lenient {
            return Err(EngineError::Sql(error));
        }
        let Some(v) = implicit_default(c.data_type) else {
            return Err(EngineError::Sql(error));
        };
        self.push_warning((error.code.number(), error.message));
        Ok(v)
    }

    /// A value assigned by UPDATE (SET c = v) to column `c`.
    pub(super) fn assign_column(&mut self, v: Value, c: &ColumnDef) -> Result<Value> {
        let v = match v.is_null() && !c.nullable && !c.auto_increment {
            true => self.null_into_not_null(c, true)?,
            false => v,
        };
        self.store_column(v, c)
    }

    fn push_warning(&mut self, w: impl Into<Condition>) {
        if self.ctx.warnings.len() < MAX_WARNINGS {
            self.ctx.warnings.push(w.into());
        }
    }
}

/// The number a value for a DECIMAL column of type `ty` is, before it is
/// rounded to the column's scale (None: not such a column, or not a
/// number).
fn decimal_given(v: &Value, ty: DataType) -> Option<Decimal> {
    if !matches!(ty, DataType::Decimal { .. }) {
        return None;
    }
    match v {
        Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        other => other.to_decimal(),
    }
}
