//! Where table data is allocated. Records, keys, index entries and row
//! images live as long as their rows; the statements that create them also
//! allocate and free many short-lived buffers (parsed values, undo and
//! write-set copies). In one heap the two interleave: a bulk insert leaves
//! consecutive keys scattered over pages that temporaries also used, and a
//! range scan then misses cache (and, in a virtual machine, the TLB) on
//! every row. The server's allocator (crates/server, `alloc.rs`) sends
//! every allocation made inside [`table_data`] to a heap of its own, so
//! rows inserted in key order sit in key order in memory, as in a B-tree
//! page (book 5.5 on the clustered index; InnoDB gets this from its pages).
//! Without that allocator the scope is only a hint, and nothing changes.

use std::cell::Cell;

thread_local! {
    static TABLE_DATA: Cell<bool> = const { Cell::new(false) };
}

/// Whether allocations on this thread are table data now.
#[inline]
pub fn is_table_data() -> bool {
    // During thread teardown the flag may be gone: ordinary memory then.
    TABLE_DATA.try_with(Cell::get).unwrap_or(false)
}

/// Runs `f` with its allocations marked as table data.
#[inline]
pub fn table_data<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            TABLE_DATA.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(TABLE_DATA.with(|c| c.replace(true)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_nests_and_restores_even_on_panic() {
        assert!(!is_table_data());
        table_data(|| {
            assert!(is_table_data());
            table_data(|| assert!(is_table_data()));
            assert!(is_table_data());
        });
        assert!(!is_table_data());
        let caught = std::panic::catch_unwind(|| table_data(|| panic!("inside")));
        assert!(caught.is_err());
        assert!(!is_table_data());
    }
}
