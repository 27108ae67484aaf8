//! GPGPU kernels: real algorithms on deterministic generated inputs, executed by the
//! [`crate::simt`] layer into coalesced shader-data transactions.
//!
//! The set covers drp-reuse-probability-shared-llc.txt Table 2 (cfd, blackscholes, fastwalsh,
//! reduction), gpu-access-criticality-dram-scheduling.txt Table 3 (lbm, cfd, bfs, fastwalsh,
//! blackscholes, reduction), most of adaptive-gpu-l1-bypassing.txt Table 2 (matrixmul, spmv,
//! bfs, kmeans, bitonic, backprop, sort, histogram, nw — also without scratchpad, §5.3.1;
//! not yet: nn, srad, dct, lud) and one or more kernels of each cache-behaviour type A–E of
//! tap-tlp-aware-llc.txt §2.2 / Table 6 (see [`KernelInfo::behaviour`]). [`KERNELS`] lists
//! them; [`generate`] builds one as a streaming [`AccessSource`].

use crate::rng::SplitMix64;
use crate::simt::{Kernel, SimtBlocks, SimtConfig, SimtSource};
use crate::WorkloadError;
use apusim_registry::{Entry, ParamKind, ParamSpec, Value};
use apusim_trace::{AccessSource, BlockSource};
use std::sync::LazyLock;

pub mod backprop;
pub mod bfs;
pub mod bitonic;
pub mod blackscholes;
pub mod cfd;
pub mod dct;
pub mod fastwalsh;
pub mod histogram;
pub mod hotspot;
pub mod kmeans;
pub mod lbm;
pub mod lud;
pub mod matrixmul;
pub mod nn;
pub mod nw;
pub mod reduction;
pub mod sobol;
pub mod sort;
pub mod spmv;
pub mod srad;

/// Cache-behaviour type of tap-tlp-aware-llc.txt §2.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Behaviour {
    /// Compute bound: few memory instructions, MPKI and CPI near ideal.
    A,
    /// Thrashing / working set far beyond the cache: high MPKI and CPI.
    B,
    /// Cache friendly: more cache lowers MPKI and CPI.
    C,
    /// Cache sensitive but latency tolerant: MPKI falls with cache size, CPI does not.
    D,
    /// Thrashing but latency tolerant: high MPKI, CPI near ideal.
    E,
}

impl Behaviour {
    pub const ALL: [Behaviour; 5] = [
        Behaviour::A,
        Behaviour::B,
        Behaviour::C,
        Behaviour::D,
        Behaviour::E,
    ];
    pub fn letter(self) -> char {
        match self {
            Behaviour::A => 'A',
            Behaviour::B => 'B',
            Behaviour::C => 'C',
            Behaviour::D => 'D',
            Behaviour::E => 'E',
        }
    }
}

/// Parameters of a GPGPU workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpgpuParams {
    /// Problem size in the kernel's own unit ([`KernelInfo::size_unit`]); 0 = the kernel's
    /// default ([`KernelInfo::default_size`]).
    pub size: usize,
    /// Seed of the generated input.
    pub seed: u64,
    /// The GPU the kernel runs on.
    pub gpu: SimtConfig,
}

impl Default for GpgpuParams {
    fn default() -> Self {
        GpgpuParams {
            size: 0,
            seed: 1,
            gpu: SimtConfig::default(),
        }
    }
}

impl GpgpuParams {
    /// The size to use: `size`, or `default` when `size` is 0.
    pub fn size_or(&self, default: usize) -> usize {
        if self.size == 0 {
            default
        } else {
            self.size
        }
    }
}

/// One GPGPU kernel of the registry.
#[derive(Clone, Copy)]
pub struct KernelInfo {
    /// Name on the command line.
    pub name: &'static str,
    /// What it computes.
    pub description: &'static str,
    /// The benchmark and paper table it stands in for.
    pub paper_source: &'static str,
    /// Cache-behaviour type (tap-tlp-aware-llc.txt Table 6, or by its measured behaviour).
    pub behaviour: Behaviour,
    /// Meaning of [`GpgpuParams::size`].
    pub size_unit: &'static str,
    /// Size used when [`GpgpuParams::size`] is 0.
    pub default_size: usize,
    /// Dimensions of the problem: `size` is the side of a `dims`-dimensional domain (1: it
    /// counts elements).
    pub dims: u32,
    build: fn(&GpgpuParams) -> Generated,
    program: fn(&GpgpuParams) -> Box<dyn BlockSource>,
}

/// A generated GPGPU workload: its source and the global memory its kernel allocated.
pub struct Generated {
    pub source: Box<dyn AccessSource>,
    /// Bytes of global memory allocated ([`Kernel::footprint`]; the lines touched are a subset
    /// of `simt::GLOBAL_BASE .. GLOBAL_BASE + footprint`).
    pub footprint: u64,
}

impl KernelInfo {
    /// The problem size for a study scaled by `scale`: the default size with `scale ×` the
    /// elements, i.e. the side grown by `scale^(1/dims)` (rounded; the kernel then rounds to its
    /// own granularity). `scale` 0 or 1 is the default size.
    pub fn scaled_size(&self, scale: u64) -> usize {
        if scale <= 1 {
            return self.default_size;
        }
        let f = (scale as f64).powf(1.0 / self.dims as f64);
        (self.default_size as f64 * f).round() as usize
    }
}

impl std::fmt::Debug for KernelInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelInfo")
            .field("name", &self.name)
            .field("behaviour", &self.behaviour)
            .finish()
    }
}

/// Box a kernel as the source of the workload `name`.
fn boxed<K: Kernel + 'static>(k: K, name: &str, p: &GpgpuParams) -> Generated {
    let prov = format!("kernel={name} size={} seed={}", p.size, p.seed);
    let footprint = k.footprint();
    Generated {
        source: Box::new(SimtSource::new(k, name, &prov, p.gpu)),
        footprint,
    }
}

fn as_program<K: Kernel + 'static>(k: K, name: &str, p: &GpgpuParams) -> Box<dyn BlockSource> {
    let prov = format!("kernel={name} size={} seed={}", p.size, p.seed);
    Box::new(SimtBlocks::new(k, name, &prov, p.gpu.clock_mhz))
}

macro_rules! info {
    ($ctor:path, $name:literal, $ty:ident, $default:expr, $dims:literal, $unit:literal, $desc:literal, $src:literal) => {
        KernelInfo {
            name: $name,
            description: $desc,
            paper_source: $src,
            behaviour: Behaviour::$ty,
            size_unit: $unit,
            default_size: $default,
            dims: $dims,
            build: |p| boxed($ctor(p), $name, p),
            program: |p| as_program($ctor(p), $name, p),
        }
    };
}

/// The thirteen benchmarks of adaptive-gpu-l1-bypassing Table 2, in its order (by memory
/// intensity): the kernels of that paper's studies, functional and timed.
pub const BYPASS_TABLE2: &[&str] = &[
    "matrixmul-nospm",
    "spmv",
    "bfs-rodinia",
    "nn",
    "kmeans",
    "bitonic",
    "srad",
    "backprop",
    "dct",
    "sort",
    "histogram",
    "nw",
    "lud",
];

/// The kernels that exist only as adaptive-gpu-l1-bypassing Table 2's versions of kernels
/// apusim already has (its matrixmul without scratchpad, its bfs on Rodinia's graph): the
/// pools that pick stand-ins by behaviour (tap's type characterization) leave them out.
pub const TABLE2_ONLY: &[&str] = &["matrixmul-nospm", "bfs-rodinia"];

/// Every GPGPU kernel.
pub const KERNELS: &[KernelInfo] = &[
    info!(matrixmul::new, "matrixmul", B, 512, 2, "matrix side n (multiple of 16)",
        "dense C = A·B with 16×16 scratchpad tiles (CUDA SDK matrixMul)",
        "tap Table 6 type B mm"),
    info!(matrixmul::new_nospm, "matrixmul-nospm", B, 512, 2, "matrix side n (multiple of 16)",
        "dense C = A·B, one thread per element reading A and B from global memory (no scratchpad)",
        "adaptive-gpu-l1-bypassing Table 2 matrixmul 512×512 (MI 395.6: no scratchpad)"),
    info!(spmv::new, "spmv", E, 4096, 1, "matrix rows (CSR, ~12 non-zeros per row)",
        "CSR sparse matrix-vector product, one thread per row (scalar kernel)",
        "adaptive-gpu-l1-bypassing Table 2 spmv"),
    info!(bfs::new, "bfs", E, 65536, 1, "graph nodes (power-law, ~8 edges per node)",
        "level-synchronous breadth-first search (Rodinia bfs: two kernels per level)",
        "tap Table 6 type E; gpu-access-criticality Table 3 BFS"),
    info!(bfs::new_uniform, "bfs-rodinia", E, 1_000_000, 1, "graph nodes (uniform, 2-4 links each way, ~6 neighbours)",
        "level-synchronous breadth-first search on Rodinia's own uniform random graph (graphgen, graph1MW_6)",
        "adaptive-gpu-l1-bypassing Table 2 bfs 1M (Rodinia's input graph)"),
    info!(nn::new, "nn", D, 342_080, 1, "records (latitude, longitude)",
        "nearest neighbours: one thread per record computes its distance to a target (Rodinia nn)",
        "adaptive-gpu-l1-bypassing Table 2 nn 342080"),
    info!(kmeans::new, "kmeans", D, 16384, 1, "points (34 features, 5 clusters)",
        "k-means clustering: nearest-centroid assignment on the GPU, centroid update on the host",
        "adaptive-gpu-l1-bypassing Table 2 kmeans (Rodinia)"),
    info!(backprop::new, "backprop", E, 8192, 1, "input-layer units (16 hidden units)",
        "one training step of a two-layer perceptron: forward layer and weight adjustment",
        "adaptive-gpu-l1-bypassing Table 2 backprop 8192×16; tap Table 6 type E"),
    info!(hotspot::new, "hotspot", B, 512, 2, "grid side (multiple of 16)",
        "thermal simulation: 5-point stencil over temperature and power grids, 4 iterations",
        "tap Table 6 type B hotspot (Rodinia)"),
    info!(srad::new, "srad", B, 512, 2, "image side (multiple of 16)",
        "speckle-reducing anisotropic diffusion: derivative/coefficient and update kernels, 2 iterations (Rodinia srad v2)",
        "adaptive-gpu-l1-bypassing Table 2 srad (Rodinia)"),
    info!(lud::new, "lud", B, 512, 2, "matrix side (multiple of 16)",
        "blocked LU decomposition: diagonal, perimeter and internal 16×16-tile kernels per step (Rodinia lud)",
        "adaptive-gpu-l1-bypassing Table 2 lud (Rodinia)"),
    info!(nw::new, "nw", B, 512, 2, "sequence length (multiple of 16)",
        "Needleman-Wunsch alignment, anti-diagonal 16×16 tiles in scratchpad (Rodinia nw)",
        "adaptive-gpu-l1-bypassing Table 2 nw 512×512 and §5.3.1; tap Table 6 type B needle"),
    info!(nw::new_nospm, "nw-nospm", B, 512, 2, "sequence length (multiple of 16)",
        "Needleman-Wunsch rewritten without scratchpad: every cell reads its neighbours from global memory",
        "adaptive-gpu-l1-bypassing §5.3.1 nw-noSPM"),
    info!(lbm::new, "lbm", E, 64, 3, "lattice side (D3Q19 lattice side³ cells)",
        "lattice-Boltzmann D3Q19 stream-and-collide (BGK), two time steps",
        "gpu-access-criticality Table 3 LBM; tap Table 6 type E lbm (Parboil)"),
    info!(cfd::new, "cfd", E, 97152, 1, "unstructured-mesh cells (4 neighbours each)",
        "Euler-equation flux computation over an unstructured mesh (Rodinia euler3d compute_flux + time_step)",
        "drp Table 2 cfd (759 blocks × 128); gpu-access-criticality Table 3 CFD; tap Table 6 type E"),
    info!(reduction::new, "reduction", D, 1 << 20, 1, "elements",
        "parallel sum reduction with scratchpad tree (CUDA SDK reduction kernel 6)",
        "drp Table 2 reduction (64 × 256); gpu-access-criticality Table 3; tap Table 6 type D"),
    info!(blackscholes::new, "blackscholes", D, 1 << 20, 1, "options",
        "Black-Scholes European call/put pricing (CUDA SDK BlackScholes, grid-stride loop)",
        "drp Table 2 blackscholes (480 × 128); gpu-access-criticality Table 3; tap Table 6 type D"),
    info!(dct::new, "dct", A, 2048, 2, "image side (multiple of 8)",
        "8×8 block DCT-II as D·X·Dᵀ, one 64-thread group per block (AMD APP SDK DCT)",
        "adaptive-gpu-l1-bypassing Table 2 dct 2048×2048"),
    info!(fastwalsh::new, "fastwalsh", A, 1 << 20, 1, "elements (power of two)",
        "fast Walsh-Hadamard transform, radix-4 global stages (CUDA SDK fastWalshTransform)",
        "drp Table 2 fastwalsh; gpu-access-criticality Table 3; tap Table 6 type A"),
    info!(histogram::new, "histogram", D, 1 << 22, 1, "input bytes",
        "256-bin byte histogram: per-block scratchpad sub-histograms merged with global atomics",
        "adaptive-gpu-l1-bypassing Table 2 histogram; tap Table 6 type D"),
    info!(sort::new, "sort", C, 65536, 1, "keys (32-bit)",
        "LSD radix sort, 4 bits per pass: block histograms, host scan, stable scatter",
        "adaptive-gpu-l1-bypassing Table 2 sort 65536 (radix sort with high reuse)"),
    info!(bitonic::new, "bitonic", C, 131072, 1, "keys (power of two)",
        "bitonic sorting network, one global compare-exchange kernel per stage",
        "adaptive-gpu-l1-bypassing Table 2 bitonic 131072"),
    info!(sobol::new, "sobolqrng", C, 1 << 20, 1, "points per dimension (100 dimensions)",
        "Sobol quasi-random sequence from direction numbers (CUDA SDK SobolQRNG)",
        "tap Table 6 type C sobolqrng"),
];

/// Every GPGPU kernel as an [`Entry`] of the one registry shape: name, description, paper
/// key (its [`KernelInfo::paper_source`]), the parameters every caller passes (`apusim gen
/// gpgpu`, `apusim run --kernel`, a mix's GPU job), checked by [`params`], and the kernel's
/// record as the constructor slot (its `generate`/`program` build it). Listings and `apusim
/// describe` read it.
pub static REGISTRY: LazyLock<Vec<Entry<&'static KernelInfo>>> =
    LazyLock::new(|| KERNELS.iter().map(KernelInfo::entry).collect());

impl KernelInfo {
    fn entry(&'static self) -> Entry<&'static KernelInfo> {
        let params = vec![
            crate::size_param(
                self.size_unit,
                format!(
                    "problem size (0: the default, {}, grown by `scale`)",
                    self.default_size
                ),
            ),
            crate::SCALE,
            crate::SEED,
            ParamSpec {
                name: "sms",
                kind: ParamKind::Int {
                    min: 1,
                    max: u16::MAX as u64,
                },
                default: "6",
                unit: "SMs",
                doc: "streaming multiprocessors the grid is spread over",
            },
        ];
        Entry {
            name: self.name,
            description: self.description,
            paper: self.paper_source,
            params: Box::leak(params.into_boxed_slice()),
            build: self,
        }
    }
}

/// The kernel `name` and its parameters from `given` (by registry key: `size`, `scale`,
/// `seed`, `sms`), each checked against the kernel's registry entry, the rest at their
/// defaults: the one place where a GPGPU workload's parameters are validated. The size is
/// `size` when given and not 0, else the default grown by `scale`
/// ([`KernelInfo::scaled_size`]; 0, the default, at scale 1, so the header reads as before).
pub fn params(
    name: &str,
    given: &[(&str, Value)],
) -> Result<(&'static KernelInfo, GpgpuParams), WorkloadError> {
    let entry = entry(name)?;
    let (k, p) = (entry.build, entry.check(given)?);
    let (size, scale) = (p.int("size") as usize, p.int("scale"));
    let mut g = GpgpuParams {
        size: if size > 0 || scale <= 1 {
            size
        } else {
            k.scaled_size(scale)
        },
        seed: p.int("seed"),
        ..GpgpuParams::default()
    };
    g.gpu.sms = p.int("sms") as u16;
    Ok((k, g))
}

/// The registry entry of kernel `name` (case-insensitive), or the error naming the nearest.
pub fn entry(name: &str) -> Result<&'static Entry<&'static KernelInfo>, WorkloadError> {
    let k = find(name)?;
    Ok(REGISTRY
        .iter()
        .find(|e| e.name == k.name)
        .expect("every kernel is registered"))
}

/// The kernel named `name` (case-insensitive).
pub fn info(name: &str) -> Option<&'static KernelInfo> {
    KERNELS.iter().find(|k| k.name.eq_ignore_ascii_case(name))
}

/// Build the GPGPU workload `name` as a streaming source.
pub fn generate(name: &str, p: &GpgpuParams) -> Result<Box<dyn AccessSource>, WorkloadError> {
    Ok(generate_with_footprint(name, p)?.source)
}

/// Build kernel `name` as a per-warp program for a timed GPU (the same kernel, inputs and
/// instructions as [`generate`]'s trace; the GPU's SM count and occupancy do not enter it,
/// the timed GPU's own do).
pub fn program(name: &str, p: &GpgpuParams) -> Result<Box<dyn BlockSource>, WorkloadError> {
    Ok((find(name)?.program)(p))
}

fn find(name: &str) -> Result<&'static KernelInfo, WorkloadError> {
    info(name).ok_or_else(|| WorkloadError::unknown("gpgpu kernel", name, &REGISTRY))
}

/// [`generate`], also returning the kernel's allocated global memory.
pub fn generate_with_footprint(name: &str, p: &GpgpuParams) -> Result<Generated, WorkloadError> {
    Ok((find(name)?.build)(p))
}

/// Deterministic input values.
pub(crate) struct Input(SplitMix64);

impl Input {
    pub fn new(seed: u64, salt: u64) -> Input {
        Input(SplitMix64::new(
            seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ))
    }
    /// Uniform in [0, 1).
    pub fn f32(&mut self) -> f32 {
        (self.0.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    pub fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub fn u32(&mut self) -> u32 {
        self.0.next_u64() as u32
    }
}

/// A launch counter for kernels with a fixed sequence of launches.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Step(pub usize);

impl Step {
    /// Advance and return the index of the launch to run now.
    pub fn next(&mut self) -> usize {
        self.0 += 1;
        self.0 - 1
    }
    /// The launch being executed.
    pub fn cur(&self) -> usize {
        self.0 - 1
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    /// Small GPU parameters for tests.
    pub fn params(size: usize) -> GpgpuParams {
        GpgpuParams {
            size,
            seed: 7,
            gpu: SimtConfig::default(),
        }
    }
    /// Run `k` to completion and hand it back with its records.
    pub fn run<K: Kernel>(k: K) -> (K, Vec<apusim_trace::Access>) {
        let mut s = SimtSource::new(k, "t", "test", SimtConfig::default());
        let v = apusim_trace::collect(&mut s).unwrap();
        (s.into_kernel(), v)
    }
    pub fn close(a: f32, b: f32, tol: f32) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_is_checked_and_used_by_params() {
        crate::drive_every_parameter(&REGISTRY, &GpgpuParams::default(), |name, given| {
            params(name, given).map(|(_, p)| p)
        });
        let (_, p) = params("reduction", &[("scale", Value::Int(4))]).unwrap();
        assert_eq!(p.size, info("reduction").unwrap().scaled_size(4));
        let (_, p) = params(
            "reduction",
            &[("scale", Value::Int(4)), ("size", Value::Int(64))],
        )
        .unwrap();
        assert_eq!(p.size, 64, "a given size wins over scale");
    }

    #[test]
    fn registry_is_complete_and_deterministic() {
        for b in Behaviour::ALL {
            assert!(KERNELS.iter().any(|k| k.behaviour == b), "no type {b:?}");
        }
        for name in [
            "cfd",
            "blackscholes",
            "fastwalsh",
            "reduction",
            "matrixmul",
            "spmv",
            "bfs",
            "kmeans",
            "backprop",
            "sort",
            "histogram",
            "nw",
            "lbm",
            "hotspot",
            "srad",
            "lud",
            "nn",
            "dct",
            "nw-nospm",
            "bitonic",
        ] {
            assert!(info(name).is_some(), "{name} missing");
        }
        assert!(generate("nope", &GpgpuParams::default()).is_err());
        for k in KERNELS {
            let p = GpgpuParams {
                size: small(k.name),
                ..GpgpuParams::default()
            };
            let run = |p: &GpgpuParams| {
                let mut s = generate(k.name, p).unwrap();
                apusim_trace::collect(&mut s).unwrap()
            };
            let a = run(&p);
            assert!(!a.is_empty(), "{} produced nothing", k.name);
            assert_eq!(a, run(&p), "{} not deterministic", k.name);
            assert!(
                a.windows(2).all(|w| w[0].time <= w[1].time),
                "{} unordered",
                k.name
            );
        }
    }

    /// A small size for each kernel, for quick tests.
    pub(crate) fn small(name: &str) -> usize {
        match name {
            "matrixmul" | "matrixmul-nospm" | "hotspot" | "srad" | "lud" | "dct" | "nw"
            | "nw-nospm" => 64,
            "lbm" => 16,
            "kmeans" | "backprop" | "spmv" | "nn" => 1024,
            "bfs" | "bfs-rodinia" => 2048,
            "cfd" => 4096,
            _ => 1 << 14,
        }
    }
}
