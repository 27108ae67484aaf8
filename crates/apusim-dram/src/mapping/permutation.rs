//! Permutation-based (XOR) bank interleaving (Zhang, Zhu and Zhang, MICRO 2000): decode with a
//! plain field order, then XOR the bank index with as many low row bits. Rows that would all
//! land in one bank under plain slicing (e.g. the rows of a large power-of-two stride) spread
//! over all banks, while the lines of one row stay together, so row-buffer locality is kept.

use super::field_order::{Field, FieldOrder};
use super::{AddressMapper, DecodedAddr};
use crate::spec::Organization;

/// A [`FieldOrder`] with the flattened bank index (bank group and bank) XOR-ed with row bits.
#[derive(Clone, Debug)]
pub struct Permutation {
    name: String,
    base: FieldOrder,
    bg_bits: u32,
    bank_mask: u32,
}

impl Permutation {
    pub fn new(name: &str, order: &[Field], org: &Organization) -> Self {
        Permutation {
            name: name.to_string(),
            base: FieldOrder::new(name, order, org),
            bg_bits: org.bank_groups.trailing_zeros(),
            bank_mask: (org.banks_per_rank() - 1).min(org.rows - 1),
        }
    }
    #[inline]
    fn flip(&self, d: &mut DecodedAddr) {
        let flat = (d.bank << self.bg_bits) | d.bank_group;
        let flat = flat ^ (d.row & self.bank_mask);
        d.bank_group = flat & ((1 << self.bg_bits) - 1);
        d.bank = flat >> self.bg_bits;
    }
}

impl AddressMapper for Permutation {
    fn name(&self) -> &str {
        &self.name
    }
    #[inline]
    fn map(&self, addr: u64) -> DecodedAddr {
        let mut d = self.base.map(addr);
        self.flip(&mut d);
        d
    }
    fn unmap(&self, d: &DecodedAddr) -> u64 {
        let mut p = *d;
        self.flip(&mut p); // XOR is its own inverse
        self.base.unmap(&p)
    }
}
