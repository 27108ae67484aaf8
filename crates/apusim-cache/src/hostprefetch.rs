//! The host prefetch hint ([`prefetch`]) the hot structures issue ahead of their random
//! accesses: the engine's tag array, the hash index of wide sets, the set views and the
//! policies' per-way state. Every one of them uses it, so it sits below them all.

/// Prefetch hint for `v[i]` (never faults; a no-op off x86-64).
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    let p = v.as_ptr().wrapping_add(i);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
