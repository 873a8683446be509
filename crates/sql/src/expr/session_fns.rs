//! Functions that read the session or the server rather than (only) their
//! arguments: DATABASE(), USER(), NOW(), LAST_INSERT_ID(), FOUND_ROWS(),
//! GET_LOCK() and the other user locks, UUID(). They are evaluated before
//! the NULL-in, NULL-out rule of the other functions applies.

use super::{count_arg, to_datetime, user_lock, uuid_v1, Env, Func};
use lockstep_types::time::DateTime;
use lockstep_types::{Error, Value};

/// The value of a session function, or None when `f` is not one.
pub(super) fn eval_session(
    f: Func,
    vals: &[Value],
    env: &mut dyn Env,
) -> Result<Option<Value>, Error> {
    let n = |i: usize| vals.get(i).map(count_arg).unwrap_or(0);
    Ok(Some(match f {
        Func::Database => env
            .database()
            .map(|d| Value::str(&d))
            .unwrap_or(Value::Null),
        Func::Version => env.system_var(false, "version")?,
        Func::ConnectionId => Value::UInt(env.connection_id()),
        Func::LastInsertId => Value::UInt(env.last_insert_id()),
        Func::Now => Value::DateTime(DateTime::now().truncate(n(0).clamp(0, 6) as u8)),
        Func::CurDate => Value::Date(DateTime::now().date),
        Func::UnixTimestamp => match vals.first() {
            None => Value::Int(DateTime::now().to_unix_micros() / 1_000_000),
            Some(v) => to_datetime(v)
                .map(|d| Value::Int(d.to_unix_micros() / 1_000_000))
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
