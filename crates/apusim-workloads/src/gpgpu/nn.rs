//! Nearest neighbours, Rodinia `nn`: one thread per record computes the Euclidean distance of
//! its (latitude, longitude) to a target; the host then picks the k nearest (not traced, as in
//! Rodinia). A streaming kernel: each record is read once and its distance written once.
//! Named in adaptive-gpu-l1-bypassing.txt Table 2 (*nn*, 342,080 records).

use super::{GpgpuParams, Input};
use crate::simt::{first_lanes, Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 256;

pub struct Nn {
    /// Interleaved (latitude, longitude) pairs, as Rodinia's `LatLong` array.
    pub records: Buf<f32>,
    pub distances: Buf<f32>,
    pub target: (f32, f32),
    pub k: usize,
    launched: bool,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Nn {
    let n = p.size_or(342_080).max(1);
    let mut inp = Input::new(p.seed, 13);
    let mut al = Alloc::default();
    let records = al.buf(
        (0..n)
            .flat_map(|_| [inp.range(-90.0, 90.0), inp.range(-180.0, 180.0)])
            .collect(),
    );
    Nn {
        records,
        distances: al.buf(vec![0f32; n]),
        target: (30.0, 90.0),
        k: 10,
        launched: false,
        mem: al.allocated(),
    }
}

/// The distance of one record to the target.
#[inline]
pub fn distance(lat: f32, lng: f32, target: (f32, f32)) -> f32 {
    ((lat - target.0) * (lat - target.0) + (lng - target.1) * (lng - target.1)).sqrt()
}

/// Indices of the `k` nearest records (host side; ties to the lower index).
pub fn nearest(distances: &[f32], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..distances.len()).collect();
    idx.sort_by(|&a, &b| distances[a].total_cmp(&distances[b]).then(a.cmp(&b)));
    idx.truncate(k);
    idx
}

impl Nn {
    pub fn len(&self) -> usize {
        self.distances.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Kernel for Nn {
    fn next_launch(&mut self) -> Option<Launch> {
        if self.launched {
            return None;
        }
        self.launched = true;
        Some(Launch {
            blocks: self.len().div_ceil(THREADS),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.len();
        let base = blk.idx * THREADS;
        let target = self.target;
        let (records, distances) = (&self.records, &mut self.distances);
        blk.phase(|w| {
            // Lane l handles record i = i0 + l (lanes past the last record inactive).
            let i0 = base + w.first_local();
            let live = n.saturating_sub(i0);
            let mask = first_lanes(live);
            let lat_at: [usize; 32] = std::array::from_fn(|l| 2 * (i0 + l));
            let lng_at = lat_at.map(|i| i + 1);
            let lat = w.load_idx(0x00, records, &lat_at, mask);
            let lng = w.load_idx(0x08, records, &lng_at, mask);
            let mut out = [0f32; 32];
            for l in 0..32 {
                out[l] = distance(lat[l], lng[l], target);
            }
            w.compute(6);
            w.store_run(0x10, distances, i0, n, &out);
        });
    }
    fn footprint(&self) -> u64 {
        self.mem
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn finds_the_nearest_records() {
        let (k, trace) = run(new(&params(1000)));
        let want: Vec<f32> = k
            .records
            .data
            .chunks(2)
            .map(|r| distance(r[0], r[1], k.target))
            .collect();
        assert_eq!(k.distances.data, want);
        let near = nearest(&k.distances.data, k.k);
        let worst = near.iter().map(|&i| want[i]).fold(0f32, f32::max);
        assert_eq!(near.len(), 10);
        assert_eq!(want.iter().filter(|&&d| d < worst).count(), 9);
        // 1000 records in 4 blocks: every record read and written exactly once.
        let writes: u64 = trace
            .iter()
            .filter(|a| a.op == apusim_trace::Op::Write)
            .map(|a| a.size as u64)
            .sum();
        assert!(writes >= 4000, "{writes} bytes of distances written");
    }
}
