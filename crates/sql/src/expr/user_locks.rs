//! User-level locks: GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS,
//! IS_FREE_LOCK, IS_USED_LOCK, as MySQL has them. A lock is a name held by
//! one connection, any number of times (each GET_LOCK counts, each
//! RELEASE_LOCK gives one back); it is not part of any transaction and goes
//! away when its connection ends. Applications and migration tools use
//! them as advisory locks.

use lockstep_types::error::{Code, Error};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The longest lock name MySQL accepts.
const MAX_NAME: usize = 64;

#[derive(Default)]
pub struct UserLocks {
    held: Mutex<HashMap<String, (u64, u32)>>,
    released: Condvar,
}

/// How a GET_LOCK wait ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Acquired {
    Yes,
    TimedOut,
    Interrupted,
}

fn key(name: &str) -> Result<String, Error> {
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(Error::new(
            Code::UserLockWrongName,
            format!("Incorrect user-level lock name '{name}'."),
        ));
    }
    // MySQL compares lock names case-insensitively.
    Ok(name.to_lowercase())
}

impl UserLocks {
    /// GET_LOCK: takes `name` for connection `owner`, waiting up to
    /// `timeout` (None: for ever) and giving up when `interrupted` says so
    /// (it is asked every few milliseconds).
    pub fn get(
        &self,
        name: &str,
        owner: u64,
        timeout: Option<Duration>,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Acquired, Error> {
        let key = key(name)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut held = self.held.lock();
        loop {
            match held.get_mut(&key) {
                None => {
                    held.insert(key, (owner, 1));
                    return Ok(Acquired::Yes);
                }
                Some((o, n)) if *o == owner => {
                    *n += 1;
                    return Ok(Acquired::Yes);
                }
                Some(_) => {}
            }
            if interrupted() {
                return Ok(Acquired::Interrupted);
            }
            let slice = Duration::from_millis(10);
            let wait = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(Acquired::TimedOut);
                    }
                    left.min(slice)
                }
                None => slice,
            };
            self.released.wait_for(&mut held, wait);
        }
    }

    /// RELEASE_LOCK: Some(true) released (once), Some(false) held by
    /// another connection, None no such lock.
    pub fn release(&self, name: &str, owner: u64) -> Result<Option<bool>, Error> {
        let key = key(name)?;
        let mut held = self.held.lock();
        let Some((o, n)) = held.get_mut(&key) else {
            return Ok(None);
        };
        if *o != owner {
            return Ok(Some(false));
        }
        *n -= 1;
        if *n == 0 {
            held.remove(&key);
            self.released.notify_all();
        }
        Ok(Some(true))
    }

    /// RELEASE_ALL_LOCKS (and a connection's end): how many times locks
    /// were held.
    pub fn release_all(&self, owner: u64) -> u64 {
        let mut held = self.held.lock();
        let mut count = 0;
        held.retain(|_, (o, n)| {
            if *o == owner {
                count += *n as u64;
            }
            *o != owner
        });
        if count > 0 {
            self.released.notify_all();
        }
        count
    }

    /// IS_USED_LOCK: the connection holding `name`.
    pub fn holder(&self, name: &str) -> Result<Option<u64>, Error> {
        let key = key(name)?;
        Ok(self.held.lock().get(&key).map(|(o, _)| *o))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_count_per_owner_and_wait_for_others() {
        let locks = UserLocks::default();
        let mut never = || false;
        let zero = Some(Duration::ZERO);
        assert_eq!(locks.get("a", 1, zero, &mut never), Ok(Acquired::Yes));
        assert_eq!(locks.get("A", 1, zero, &mut never), Ok(Acquired::Yes));
        assert_eq!(locks.get("a", 2, zero, &mut never), Ok(Acquired::TimedOut));
        assert_eq!(locks.holder("a"), Ok(Some(1)));
        assert_eq!(locks.release("a", 2), Ok(Some(false)));
        assert_eq!(locks.release("a", 1), Ok(Some(true)));
        assert_eq!(locks.holder("a"), Ok(Some(1)), "taken twice, given once");
        assert_eq!(locks.release("a", 1), Ok(Some(true)));
        assert_eq!(locks.release("a", 1), Ok(None));
        let mut stop = || true;
        assert_eq!(locks.get("b", 3, zero, &mut never), Ok(Acquired::Yes));
        assert_eq!(
            locks.get("b", 4, None, &mut stop),
            Ok(Acquired::Interrupted)
        );
        assert_eq!(locks.release_all(3), 1);
        assert_eq!(locks.get("b", 4, None, &mut never), Ok(Acquired::Yes));
        assert!(locks.get("", 1, zero, &mut never).is_err());
        assert!(locks.get(&"x".repeat(65), 1, zero, &mut never).is_err());
    }

    #[test]
    fn a_release_wakes_the_waiter() {
        let locks = std::sync::Arc::new(UserLocks::default());
        let mut never = || false;
        locks.get("m", 1, None, &mut never).expect("free");
        let other = locks.clone();
        let waiter = std::thread::spawn(move || {
            let started = Instant::now();
            let got = other.get("m", 2, Some(Duration::from_secs(10)), &mut || false);
            (got, started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(50));
        locks.release("m", 1).expect("held");
        let (got, waited) = waiter.join().expect("waiter");
        assert_eq!(got, Ok(Acquired::Yes));
        assert!(waited < Duration::from_secs(2));
    }
}
