//! SQL from text to result: parse, bind, execute in a real session against
//! a temporary engine with a small schema (see lockstep_fuzz::SqlHarness).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Mutex;
use std::sync::OnceLock;

static HARNESS: OnceLock<Mutex<lockstep_fuzz::SqlHarness>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let harness = HARNESS.get_or_init(|| Mutex::new(lockstep_fuzz::SqlHarness::new()));
    harness
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .run(sql);
});
