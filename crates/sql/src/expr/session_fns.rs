//! Functions that read the session or the server rather than (only) their
//! arguments: DATABASE(), USER(), NOW(), LAST_INSERT_ID(), FOUND_ROWS(),
//! GET_LOCK() and the other user locks, UUID(). They are evaluated before
//! the NULL-in, NULL-out rule of the other functions applies.
//!
//! The clock functions and FROM_UNIXTIME / UNIX_TIMESTAMP(dt) read the
//! session time zone (`Env::tz_offset`); the UTC_ ones do not.

use super::{count_arg, datetime, text, to_datetime, user_lock, uuid_v1, Env, Func};
use lockstep_types::time::{DateTime, Time};
use lockstep_types::{Error, Value};

/// CURTIME(fsp) / UTC_TIME(fsp): the time of day of `now`.
fn time_of(now: DateTime, fsp: u8) -> Value {
    let now = now.truncate(fsp);
    let t = Time {
        negative: false,
        hour: now.hour as u32,
        minute: now.minute,
        second: now.second,
        micro: now.micro,
    };
    Value::Bytes(t.format(fsp).into_bytes())
}

/// FROM_UNIXTIME(secs[, format]) in the session time zone.
fn from_unixtime(vals: &[Value], offset: i64) -> Value {
    let d = match datetime::from_unixtime(&vals[0]) {
        Value::DateTime(d) => Value::DateTime(d.shifted(offset)),
        other => other,
    };
    match vals.get(1) {
        Some(fmt) if !fmt.is_null() => datetime::format(&d, &text(fmt)),
        Some(_) => Value::Null,
        None => d,
    }
}

/// The value of a session function, or None when `f` is not one.
pub(super) fn eval_session(
    f: Func,
    vals: &[Value],
    env: &mut dyn Env,
) -> Result<Option<Value>, Error> {
    let n = |i: usize| vals.get(i).map(count_arg).unwrap_or(0);
    let fsp = || n(0).clamp(0, 6) as u8;
    let offset = env.tz_offset();
    let clock = env.clock();
    let local_now = || clock.shifted(offset);
    Ok(Some(match f {
        Func::Database => env
            .database()
            .map(|d| Value::str(&d))
            .unwrap_or(Value::Null),
        Func::Version => env.system_var(false, "version")?,
        Func::ConnectionId => Value::UInt(env.connection_id()),
        Func::LastInsertId => Value::UInt(env.last_insert_id()),
        Func::Now => Value::DateTime(local_now().truncate(fsp())),
        Func::SysDate => Value::DateTime(DateTime::now().shifted(offset).truncate(fsp())),
        Func::UtcTimestamp => Value::DateTime(clock.truncate(fsp())),
        Func::CurDate => Value::Date(local_now().date),
        Func::UtcDate => Value::Date(clock.date),
        Func::CurTime => time_of(local_now(), fsp()),
        Func::UtcTime => time_of(clock, fsp()),
        Func::FromUnixtime => from_unixtime(vals, env.tz_offset()),
        Func::UnixTimestamp => match vals.first() {
            None => Value::Int(clock.to_unix_micros() / 1_000_000),
            // A date and time in the session zone.
            Some(v) => to_datetime(v)
                .map(|d| Value::Int(d.shifted(-env.tz_offset()).to_unix_micros() / 1_000_000))
                .unwrap_or(Value::Null),
        },
        Func::User => Value::str(&env.user()),
        Func::CurrentUser => Value::str(&env.current_user()),
        Func::CurrentRole => Value::str(&env.current_role()),
        Func::FoundRows => Value::UInt(env.found_rows()),
        Func::RowCount => Value::Int(env.row_count()),
        Func::ReleaseAllLocks => match env.user_locks() {
            Some(locks) => Value::Int(locks.release_all(env.connection_id()) as i64),
            None => Value::Int(0),
        },
        Func::GetLock | Func::ReleaseLock | Func::IsFreeLock | Func::IsUsedLock => {
            user_lock(f, vals, env)?
        }
        Func::Uuid => Value::str(&uuid_v1()),
        _ => return Ok(None),
    }))
}
