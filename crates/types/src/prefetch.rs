//! Asking the CPU to start loading memory before it is needed, so that
//! cache misses overlap other work instead of stalling one after another.

/// Requests the cache lines of `len` bytes from address `start`, at most
/// `max_lines` of them. Never faults, whatever the address: a stale or
/// dangling one costs a wasted load, nothing else.
#[inline]
pub fn lines(start: usize, len: usize, max_lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let end = start.saturating_add(len);
        let mut line = start & !63;
        for _ in 0..max_lines {
            if line >= end {
                break;
            }
            // SAFETY: SSE is part of x86_64's baseline, and a prefetch is a
            // hint that never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, len, max_lines);
}

/// The address and size of `v`, for [`lines`] later.
pub fn span<T>(v: &T) -> (usize, usize) {
    (v as *const T as usize, std::mem::size_of::<T>())
}
