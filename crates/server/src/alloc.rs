//! The process's allocator: mimalloc (glibc's arena locking and chunk
//! consolidation were a quarter of the CPU of sysbench oltp_read_only;
//! the allocator choice of book 10.3.4 / 11.3), with table data in a heap
//! of its own (`lockstep_tables::placement`): rows, keys and index entries
//! in pages no temporary shares, so a range scan walks memory in key order.

use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_int, c_long, c_void};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

// mimalloc's first-class heaps (v3: any thread may allocate from one, and
// `mi_free` frees a block of any heap). Linked in by the mimalloc crate.
extern "C" {
    fn mi_heap_new() -> *mut c_void;
    fn mi_heap_delete(heap: *mut c_void);
    fn mi_heap_malloc_aligned(heap: *mut c_void, size: usize, align: usize) -> *mut c_void;
    fn mi_heap_zalloc_aligned(heap: *mut c_void, size: usize, align: usize) -> *mut c_void;
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_option_get(option: c_int) -> c_long;
}

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the same index in
/// its v2 and v3): milliseconds before freed pages go back to the OS; -1
/// never.
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// Freed memory stays with the process for reuse instead of going back to
/// the OS after mimalloc's default delay (1 s in v3). Returned pages
/// come back as page faults the kernel zeroes: under TPC-C at 64 terminals
/// 0.08 faults per transaction and `clear_page_erms` ~2% of the server's
/// CPU, 0.01 faults without the purge. A database keeps what its peak
/// needed, as InnoDB keeps its buffer pool. Call before the first threads.
pub fn keep_freed_memory() {
    // SAFETY: setting and reading a mimalloc option; any time is allowed.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        debug_assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), -1);
    }
}

pub struct Placed;

/// The table-data heap, made on first use.
static DATA_HEAP: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());

fn data_heap() -> *mut c_void {
    let heap = DATA_HEAP.load(Ordering::Acquire);
    if !heap.is_null() {
        return heap;
    }
    // SAFETY: plain mimalloc calls; a heap that lost the race is empty.
    unsafe {
        let fresh = mi_heap_new();
        if fresh.is_null() {
            return fresh;
        }
        match DATA_HEAP.compare_exchange(
            ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => fresh,
            Err(won) => {
                mi_heap_delete(fresh);
                won
            }
        }
    }
}

/// Table data from its heap (`from_heap`), the rest as mimalloc would.
#[inline]
unsafe fn place(
    layout: Layout,
    from_heap: unsafe extern "C" fn(*mut c_void, usize, usize) -> *mut c_void,
    otherwise: impl FnOnce() -> *mut u8,
) -> *mut u8 {
    if lockstep_tables::placement::is_table_data() {
        let heap = data_heap();
        if !heap.is_null() {
            return from_heap(heap, layout.size(), layout.align()).cast();
        }
    }
    otherwise()
}

// SAFETY: every block comes from mimalloc and goes back to it; `mi_free`
// (under MiMalloc's dealloc and realloc) accepts blocks of any heap.
unsafe impl GlobalAlloc for Placed {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        place(layout, mi_heap_malloc_aligned, || MiMalloc.alloc(layout))
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        place(layout, mi_heap_zalloc_aligned, || {
            MiMalloc.alloc_zeroed(layout)
        })
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        MiMalloc.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        MiMalloc.realloc(ptr, layout, new_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_tables::placement::table_data;

    extern "C" {
        fn mi_heap_contains(heap: *const c_void, p: *const c_void) -> bool;
    }

    fn in_data_heap<T>(b: &T) -> bool {
        // SAFETY: a query on a live heap and a live block.
        unsafe { mi_heap_contains(data_heap(), (b as *const T).cast()) }
    }

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // mimalloc v3's default purge delay is 1000 ms (options.c), which
        // no neighbouring option has: the index names the right option.
        // SAFETY: reading a mimalloc option.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, 1000);
    }

    #[test]
    fn table_data_goes_to_its_own_heap_and_frees_anywhere() {
        // This test binary allocates through `Placed` (main.rs).
        let rows: Vec<Box<[u8; 200]>> =
            table_data(|| (0..64).map(|_| Box::new([7; 200])).collect());
        let temp = Box::new([1u8; 200]);
        assert!(rows.iter().all(|r| in_data_heap(&**r)));
        assert!(!in_data_heap(&*temp));
        // Blocks allocated one after another in the data heap lie one
        // after another (one size class's stride apart): nothing else
        // takes their pages.
        let strides: Vec<usize> = rows
            .windows(2)
            .map(|w| {
                (&*w[1] as *const [u8; 200] as usize)
                    .wrapping_sub(&*w[0] as *const [u8; 200] as usize)
            })
            .collect();
        let adjacent = strides
            .iter()
            .filter(|&&d| (200..=256).contains(&d))
            .count();
        assert!(adjacent >= 56, "strides {strides:?}");
        // Freed from another thread, through the ordinary path.
        std::thread::spawn(move || drop(rows)).join().unwrap();
        let zeroed: Box<[u64; 32]> = table_data(|| Box::new([0; 32]));
        assert!(in_data_heap(&*zeroed) && zeroed.iter().all(|&x| x == 0));
    }
}
