//! bzip2-like block-sorting compression (stand-in for SPEC CPU 2006 401.bzip2, input
//! `source`): each step generates a block of source-code-like text, sorts its rotations
//! (Burrows-Wheeler transform, comparison sort reading the block), and move-to-front codes
//! the last column.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

pub struct Bzip2 {
    pub block: Buf<u8>,
    pub ptr: Buf<u32>,
    pub mtf: Buf<u8>,
    rng: crate::rng::SplitMix64,
}

pub fn new(p: &CpuParams, h: &mut Heap) -> Bzip2 {
    let n = p.size_or(900_000).max(2);
    Bzip2 {
        block: h.buf(vec![0; n]),
        ptr: h.buf(vec![0; n]),
        mtf: h.buf(vec![0; n]),
        rng: rng(p, 13),
    }
}

const WORDS: [&[u8]; 12] = [
    b"int ",
    b"return ",
    b"for (",
    b"i = 0; ",
    b"if (",
    b"x->next",
    b" == NULL",
    b"{\n",
    b"}\n",
    b"static ",
    b"void ",
    b"char *",
];

/// Inverse BWT (the check): rebuild the block from the last column and the primary index.
pub fn inverse_bwt(last: &[u8], primary: usize) -> Vec<u8> {
    let n = last.len();
    let mut count = [0usize; 257];
    for &c in last {
        count[c as usize + 1] += 1;
    }
    for i in 0..256 {
        count[i + 1] += count[i];
    }
    let mut next = vec![0usize; n];
    for (i, &c) in last.iter().enumerate() {
        next[count[c as usize]] = i;
        count[c as usize] += 1;
    }
    let mut out = Vec::with_capacity(n);
    let mut p = next[primary];
    for _ in 0..n {
        out.push(last[p]);
        p = next[p];
    }
    out
}

impl Bzip2 {
    /// The last column of the sorted rotations and the row of the original block.
    pub fn bwt(&self) -> (Vec<u8>, usize) {
        let n = self.block.len();
        let last = self
            .ptr
            .data
            .iter()
            .map(|&p| self.block.data[(p as usize + n - 1) % n])
            .collect();
        let primary = self.ptr.data.iter().position(|&p| p == 0).unwrap_or(0);
        (last, primary)
    }
}

impl CpuKernel for Bzip2 {
    fn step(&mut self, t: &mut Tracer) {
        let n = self.block.len();
        let mut i = 0;
        while i < n {
            let w = WORDS[self.rng.below(WORDS.len() as u64) as usize];
            for &c in w {
                if i < n {
                    t.store(0x00, &mut self.block, i, c);
                    i += 1;
                }
            }
            // An occasional random identifier character.
            if i < n && self.rng.below(4) == 0 {
                let c = b'a' + self.rng.below(26) as u8;
                t.store(0x08, &mut self.block, i, c);
                i += 1;
            }
        }
        for k in 0..n {
            t.store(0x10, &mut self.ptr, k, k as u32);
        }
        let mut idx = std::mem::take(&mut self.ptr.data);
        let block = &self.block;
        idx.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            for k in 0..n {
                let x = t.load(0x20, block, (a + k) % n);
                let y = t.load(0x28, block, (b + k) % n);
                t.exec(0x30, 3);
                if x != y {
                    return x.cmp(&y);
                }
            }
            a.cmp(&b)
        });
        self.ptr.data = idx;
        let mut order: [u8; 256] = std::array::from_fn(|i| i as u8);
        for k in 0..n {
            let p = t.load(0x40, &self.ptr, k) as usize;
            let c = t.load(0x48, &self.block, (p + n - 1) % n);
            let pos = order.iter().position(|&o| o == c).unwrap_or(0);
            order.copy_within(0..pos, 1);
            order[0] = c;
            t.exec(0x50, 2 + pos as u64);
            t.store(0x58, &mut self.mtf, k, pos as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bwt_inverts_to_the_block() {
        let p = CpuParams {
            size: 5000,
            ..CpuParams::default()
        };
        let mut k = new(&p, &mut Heap::new(0));
        k.step(&mut Tracer::collecting(0, u64::MAX));
        let (last, primary) = k.bwt();
        assert_eq!(inverse_bwt(&last, primary), k.block.data);
    }
}
