//! SQL as a user with rights on one table only (fz.u): nothing it runs may
//! read the table it has no right to (fz.s), and every statement that
//! needs a privilege it lacks must fail. The process's allocations are
//! counted against a memory budget, and no input may push them past it
//! (the server's checks must stop a statement before that).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::sync::OnceLock;

/// The budget the harness runs under, and the most it may ever reach
/// (statements are checked where they buffer, so a little beyond the
/// budget is normal: one row, one packet).
const BUDGET: usize = 256 << 20;
const CEILING: usize = BUDGET + (64 << 20);

struct Counted;

static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every block comes from the system allocator and goes back to it.
unsafe impl GlobalAlloc for Counted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            lockstep_types::memory::note(layout.size() as isize);
            PEAK.fetch_max(lockstep_types::memory::in_use(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        lockstep_types::memory::note(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOC: Counted = Counted;

static HARNESS: OnceLock<Mutex<lockstep_fuzz::SqlHarness>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let harness = HARNESS.get_or_init(|| {
        lockstep_types::memory::set_budget(BUDGET);
        Mutex::new(lockstep_fuzz::SqlHarness::unprivileged())
    });
    harness
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .run_unprivileged(sql);
    let peak = PEAK.load(Ordering::Relaxed);
    assert!(peak <= CEILING, "{peak} bytes allocated running {sql:?}");
});
