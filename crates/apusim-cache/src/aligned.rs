//! [`LineWords`]: an array of `u64` words whose first word starts a 64-byte host cache line.
//!
//! The allocator hands out large blocks 16 bytes past a page boundary (glibc's `mmap`ed
//! chunks), so a plain `Vec<u64>` of 16-way sets (128 bytes each) puts every set across three
//! host cache lines, and a look-ahead prefetch of the set's two lines leaves the third (its
//! last two ways) to miss on every lookup. Tag arrays and the oracle's OPT sets use this type
//! instead, so that a set of `8k` words occupies exactly `k` host lines.

use std::ops::{Deref, DerefMut};

/// One 64-byte host cache line of words (the allocation unit; its alignment is the point).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// `len` words starting on a 64-byte boundary; dereferences to `[u64]`.
#[derive(Clone)]
pub struct LineWords {
    lines: Vec<Line>,
    len: usize,
}

impl LineWords {
    /// `len` words, all `fill`.
    pub fn new(len: usize, fill: u64) -> LineWords {
        LineWords {
            lines: vec![Line([fill; 8]); len.div_ceil(8)],
            len,
        }
    }
}

impl Deref for LineWords {
    type Target = [u64];
    #[inline(always)]
    fn deref(&self) -> &[u64] {
        // SAFETY: `Line` is `repr(C)` over `[u64; 8]` with size 64 and no padding, so the
        // `lines` buffer is `8 * lines.len() >= len` initialized, aligned `u64`s, borrowed
        // for the lifetime of `&self`.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<u64>(), self.len) }
    }
}

impl DerefMut for LineWords {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `deref`, borrowed mutably for the lifetime of `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<u64>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_start_a_host_line_and_keep_their_values() {
        for len in [0, 1, 7, 8, 9, 16 * 1024, 262_145] {
            let mut w = LineWords::new(len, 5);
            assert_eq!(w.len(), len);
            assert_eq!(w.as_ptr() as usize % 64, 0, "{len} words");
            assert!(w.iter().all(|&x| x == 5));
            if len > 0 {
                w[len - 1] = 9;
                let c = w.clone();
                assert_eq!((c[len - 1], c.len()), (9, len));
            }
        }
    }
}
