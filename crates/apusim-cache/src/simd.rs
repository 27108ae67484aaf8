//! Branch-free searches of one cache set, the two inner loops of every lookup and every RRIP
//! miss (docs/PERFORMANCE.md, "Cache engine").
//!
//! Where a set's search exits and which way an RRIP victim search picks are data-dependent,
//! so early-exit scans mispredict on a realistic LLC stream. These functions compare all ways
//! at once and turn the answers into a bit mask whose lowest set bit is the result. On x86-64
//! with SSE4.1 (the workspace builds for x86-64-v2) they are written with SSE intrinsics: the
//! compiler's own vectorization of the portable loops spent about twice the instructions
//! assembling the bit mask lane by lane. Elsewhere the portable loops below are used; a test
//! checks that both give the same answers.

/// The lowest way of `tags` whose word `w` satisfies `w & mask == value` (branch-free for 8
/// and 16 ways; an early-exit scan otherwise). Public for other set-associative structures
/// with the same tag words, such as the oracle's OPT sets.
#[inline(always)]
pub fn first_match(tags: &[u64], mask: u64, value: u64) -> Option<usize> {
    let bits = match tags.len() {
        16 => match16(tags.try_into().unwrap(), mask, value),
        8 => match8(tags.try_into().unwrap(), mask, value),
        _ => return tags.iter().position(|&t| t & mask == value),
    };
    (bits != 0).then(|| bits.trailing_zeros() as usize / LANE_BITS)
}

/// The way of `values` holding the largest value, and that value: the lowest such way, or
/// with `highest` the highest (branch-free for 16 ways with SSE4.2, a scan otherwise). For the
/// oracle's OPT victim, the resident line whose next use is farthest.
#[inline(always)]
pub fn max_way(values: &[u64], highest: bool) -> (usize, u64) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse4.2"))]
    if let Ok(v) = <&[u64; 16]>::try_from(values) {
        let (max, bits) = x86::max_16(v);
        let lane = if highest {
            31 - bits.leading_zeros()
        } else {
            bits.trailing_zeros()
        };
        return (lane as usize / LANE_BITS, max);
    }
    portable_max_way(values, highest)
}

/// [`max_way`] as a scan (one pass, no early exit).
#[inline(always)]
fn portable_max_way(values: &[u64], highest: bool) -> (usize, u64) {
    let mut best = 0;
    let mut max = values[0];
    for (w, &v) in values.iter().enumerate().skip(1) {
        if v > max || (highest && v == max) {
            max = v;
            best = w;
        }
    }
    (best, max)
}

/// Bits per way in the masks of [`match8`] and [`match16`] (the SSE version packs each
/// 64-bit comparison into two bytes of a byte mask).
#[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
const LANE_BITS: usize = 2;
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.1")))]
const LANE_BITS: usize = 1;

#[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
mod x86 {
    use std::arch::x86_64::*;

    /// Byte mask of eight tag words: bytes 2w and 2w+1 are set when word w matches.
    #[inline(always)]
    pub(super) fn match8(tags: &[u64; 8], mask: u64, value: u64) -> u32 {
        // SAFETY: SSE4.1 is enabled at compile time (cfg above); the eight unaligned 16-byte
        // loads read exactly the 64 bytes of `tags`.
        unsafe {
            let m = _mm_set1_epi64x(mask as i64);
            let v = _mm_set1_epi64x(value as i64);
            let p = tags.as_ptr() as *const __m128i;
            let eq = |i: usize| _mm_cmpeq_epi64(_mm_and_si128(_mm_loadu_si128(p.add(i)), m), v);
            // Each 64-bit lane is all ones or all zeros, so signed saturation keeps it exact:
            // 2 x 2 lanes -> 8 words (each way twice) -> 16 bytes (each way twice).
            let lo = _mm_packs_epi32(eq(0), eq(1));
            let hi = _mm_packs_epi32(eq(2), eq(3));
            _mm_movemask_epi8(_mm_packs_epi16(lo, hi)) as u32
        }
    }

    /// The new RRPVs of a 16-way set aged until its largest value is `distant`, and the mask
    /// of ways at `distant` afterwards.
    #[inline(always)]
    pub(super) fn rrip_age_16(set: &mut [u8; 16], distant: u8) -> u32 {
        // SAFETY: SSE2 is part of x86-64; the load and store touch exactly the 16 bytes of
        // `set`.
        unsafe {
            let p = set.as_mut_ptr() as *mut __m128i;
            let v = _mm_loadu_si128(p);
            let mut m = _mm_max_epu8(v, _mm_srli_si128(v, 8));
            m = _mm_max_epu8(m, _mm_srli_si128(m, 4));
            m = _mm_max_epu8(m, _mm_srli_si128(m, 2));
            m = _mm_max_epu8(m, _mm_srli_si128(m, 1));
            let age = distant.saturating_sub(_mm_cvtsi128_si32(m) as u8);
            let aged = _mm_add_epi8(v, _mm_set1_epi8(age as i8));
            _mm_storeu_si128(p, aged);
            let at_distant = _mm_cmpeq_epi8(_mm_max_epu8(aged, _mm_set1_epi8(distant as i8)), aged);
            _mm_movemask_epi8(at_distant) as u32
        }
    }

    /// The largest of 16 `u64`s and the byte mask of the words equal to it (bytes 2w and
    /// 2w+1 for word w, as in [`match8`]).
    #[cfg(target_feature = "sse4.2")]
    #[inline(always)]
    pub(super) fn max_16(v: &[u64; 16]) -> (u64, u32) {
        // SAFETY: SSE4.2 is enabled at compile time (cfg above); the eight unaligned 16-byte
        // loads read exactly the 128 bytes of `v`.
        unsafe {
            // `pcmpgtq` compares signed: flipping the top bit orders unsigned values.
            let bias = _mm_set1_epi64x(i64::MIN);
            let p = v.as_ptr() as *const __m128i;
            let x: [__m128i; 8] =
                std::array::from_fn(|i| _mm_xor_si128(_mm_loadu_si128(p.add(i)), bias));
            let max2 = |a, b| _mm_blendv_epi8(b, a, _mm_cmpgt_epi64(a, b));
            let m = max2(
                max2(max2(x[0], x[1]), max2(x[2], x[3])),
                max2(max2(x[4], x[5]), max2(x[6], x[7])),
            );
            let m = max2(m, _mm_unpackhi_epi64(m, m));
            let m = _mm_unpacklo_epi64(m, m);
            let eq = |i: usize| _mm_cmpeq_epi64(x[i], m);
            let lo = _mm_packs_epi16(_mm_packs_epi32(eq(0), eq(1)), _mm_packs_epi32(eq(2), eq(3)));
            let hi = _mm_packs_epi16(_mm_packs_epi32(eq(4), eq(5)), _mm_packs_epi32(eq(6), eq(7)));
            let mask = _mm_movemask_epi8(lo) as u32 | (_mm_movemask_epi8(hi) as u32) << 16;
            ((_mm_cvtsi128_si64(m) as u64) ^ (1 << 63), mask)
        }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
#[inline(always)]
fn match8(tags: &[u64; 8], mask: u64, value: u64) -> u32 {
    x86::match8(tags, mask, value)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
#[inline(always)]
fn match16(tags: &[u64; 16], mask: u64, value: u64) -> u32 {
    let (lo, hi) = tags.split_at(8);
    x86::match8(lo.try_into().unwrap(), mask, value)
        | x86::match8(hi.try_into().unwrap(), mask, value) << 16
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.1")))]
#[inline(always)]
fn match8(tags: &[u64; 8], mask: u64, value: u64) -> u32 {
    portable_match(tags, mask, value)
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.1")))]
#[inline(always)]
fn match16(tags: &[u64; 16], mask: u64, value: u64) -> u32 {
    portable_match(tags, mask, value)
}

/// One bit per way (bit w for way w).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse4.1"),
    allow(dead_code)
)]
#[inline(always)]
fn portable_match(tags: &[u64], mask: u64, value: u64) -> u32 {
    tags.iter()
        .enumerate()
        .fold(0, |m, (w, &t)| m | u32::from(t & mask == value) << w)
}

/// The SRRIP victim of a full 16-way set whose RRPVs are at most `distant`: age every line
/// until the largest RRPV is `distant` (none if a line is there already), then take the lowest
/// way at `distant` (drp-reuse-probability-shared-llc.txt §2.1, after Jaleel et al.).
#[inline(always)]
pub(crate) fn rrip_victim_16(set: &mut [u8; 16], distant: u8) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
    let at_distant = x86::rrip_age_16(set, distant);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.1")))]
    let at_distant = portable_rrip_age(set, distant);
    at_distant.trailing_zeros() as usize
}

/// `x86::rrip_age_16` as a portable loop (one bit per way).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse4.1"),
    allow(dead_code)
)]
#[inline(always)]
fn portable_rrip_age(set: &mut [u8; 16], distant: u8) -> u32 {
    let max = set.iter().copied().fold(0, u8::max);
    let age = distant.saturating_sub(max);
    let mut at_distant = 0u32;
    for (w, v) in set.iter_mut().enumerate() {
        *v += age;
        at_distant |= u32::from(*v >= distant) << w;
    }
    at_distant
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Tag words drawn from few distinct lines (so matches are common) with random metadata
    /// bits above bit 48.
    fn tag_words(n: usize) -> impl Strategy<Value = Vec<u64>> {
        proptest::collection::vec((0u64..6, any::<u16>()), n)
            .prop_map(|v| v.into_iter().map(|(l, m)| l | (m as u64) << 48).collect())
    }

    proptest! {
        #[test]
        fn first_match_is_the_lowest_matching_way(
            tags in prop_oneof![tag_words(16), tag_words(8), tag_words(5)],
            line in 0u64..6,
        ) {
            let mask = (1u64 << 48) - 1;
            let want = tags.iter().position(|&t| t & mask == line);
            prop_assert_eq!(first_match(&tags, mask, line), want);
            let exact = tags[tags.len() / 2];
            let want = tags.iter().position(|&t| t == exact);
            prop_assert_eq!(first_match(&tags, u64::MAX, exact), want);
        }

        #[test]
        fn max_way_is_the_lowest_or_highest_largest_way(
            values in prop_oneof![
                // Few distinct values (ties), values with the top bit set, and NEVER.
                proptest::collection::vec(prop_oneof![0u64..4, Just(u64::MAX), Just(1 << 63), any::<u64>()], 16),
                proptest::collection::vec(any::<u64>(), 16),
                proptest::collection::vec(0u64..3, 1..20),
            ],
        ) {
            let max = *values.iter().max().unwrap();
            let first = values.iter().position(|&v| v == max).unwrap();
            let last = values.iter().rposition(|&v| v == max).unwrap();
            prop_assert_eq!(max_way(&values, false), (first, max));
            prop_assert_eq!(max_way(&values, true), (last, max));
            prop_assert_eq!(portable_max_way(&values, true), (last, max));
        }

        #[test]
        fn rrip_victim_16_ages_like_the_portable_loop(
            rrpv in proptest::collection::vec(0u8..=15, 16),
            distant in prop_oneof![Just(3u8), Just(7u8), Just(15u8)],
        ) {
            let clipped: Vec<u8> = rrpv.iter().map(|&v| v.min(distant)).collect();
            let mut a: [u8; 16] = clipped.clone().try_into().unwrap();
            let mut b = a;
            let bits = portable_rrip_age(&mut b, distant);
            prop_assert_eq!(rrip_victim_16(&mut a, distant), bits.trailing_zeros() as usize);
            prop_assert_eq!(a, b);
        }
    }
}
