//! CPU kernels: real algorithms with the memory behaviour of the SPEC CPU 2006 programs the
//! papers mix with GPU work (drp-reuse-probability-shared-llc.txt Table 3, tap-tlp-aware-llc.txt
//! Table 5, gpu-access-criticality-dram-scheduling.txt §5's H and L groups).
//!
//! A kernel runs on its own producer thread against a [`Tracer`], which turns the kernel's
//! loads, stores and basic blocks into instruction-level records: one `CpuData` record per
//! load/store at the PC of that load/store site, one `CpuInstr` record each time the fetch
//! stream enters a new 64-byte code line, `time` = retired instructions (header clock 0). The
//! thread hands records over in bounded batches through a channel, so memory stays bounded
//! and the trace is identical for a given seed. The kernel repeats its work until the
//! instruction budget ([`CpuParams::instructions`]) is retired.

use crate::rng::SplitMix64;
use crate::simt::Buf;
use crate::WorkloadError;
use apusim_registry::{Entry, ParamKind, ParamSpec, Value};
use apusim_trace::{Access, AccessSource, Agent, Op, Result, Stream, TraceHeader, BATCH};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::LazyLock;

pub mod bzip2;
pub mod gcc;
pub mod mcf;
pub mod omnetpp;
pub mod soplex;
pub mod sphinx3;
pub mod stencil;
pub mod stream;

/// First data address of CPU core 0; core `n` starts at `DATA_BASE + n · 2^38`.
pub const DATA_BASE: u64 = 0x4000_0000_0000;
/// First code address of CPU core 0; core `n` starts at `CODE_BASE + n · 2^28`.
pub const CODE_BASE: u64 = 0x40_0000;

/// Parameters of a CPU workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuParams {
    /// The core it runs on (agent `cpu(core)`, its own address range).
    pub core: u8,
    /// Instructions to retire.
    pub instructions: u64,
    /// Data-set size in the kernel's unit ([`KernelInfo::size_unit`]); 0 = default.
    pub size: usize,
    pub seed: u64,
}

impl Default for CpuParams {
    fn default() -> Self {
        CpuParams {
            core: 0,
            instructions: 10_000_000,
            size: 0,
            seed: 1,
        }
    }
}

impl CpuParams {
    pub fn size_or(&self, d: usize) -> usize {
        if self.size == 0 {
            d
        } else {
            self.size
        }
    }
}

/// A CPU kernel: one unit of work per call (the driver repeats it until the budget is spent).
pub trait CpuKernel: Send {
    fn step(&mut self, t: &mut Tracer);
}

/// One CPU kernel of the registry.
#[derive(Clone, Copy)]
pub struct KernelInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// The SPEC CPU 2006 program it stands in for.
    pub stands_in_for: &'static str,
    /// LLC-MPKI group of gpu-access-criticality §5: `'H'` or `'L'`.
    pub mpki_group: char,
    pub size_unit: &'static str,
    pub default_size: usize,
    build: fn(&CpuParams, &mut Heap) -> Box<dyn CpuKernel>,
}

impl std::fmt::Debug for KernelInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelInfo")
            .field("name", &self.name)
            .finish()
    }
}

macro_rules! info {
    ($ctor:path, $name:literal, $spec:literal, $g:literal, $def:expr, $unit:literal, $desc:literal) => {
        KernelInfo {
            name: $name,
            description: $desc,
            stands_in_for: $spec,
            mpki_group: $g,
            size_unit: $unit,
            default_size: $def,
            build: |p, h| Box::new($ctor(p, h)),
        }
    };
}

/// Every CPU kernel.
pub const KERNELS: &[KernelInfo] = &[
    info!(mcf::new, "mcf", "429.mcf", 'H', 1 << 20, "network nodes (4 arcs each)",
        "shortest-path label correcting (SPFA) over a large random network of node and arc structs: pointer chasing"),
    info!(omnetpp::new, "omnetpp", "471.omnetpp", 'L', 1 << 16, "simulated network modules",
        "discrete-event simulation: a binary-heap future event set of small message objects sent between modules"),
    info!(stream::libquantum, "libquantum", "462.libquantum", 'H', 1 << 22, "basis states of the quantum register",
        "quantum register simulation: controlled-NOT and Toffoli gates sweeping an array of (state, amplitude) pairs"),
    info!(stream::bwaves, "bwaves", "410.bwaves", 'H', 1 << 21, "grid points (5 arrays)",
        "blast-wave flow: an implicit-solver sweep (BiCGStab-like vector updates) over five large arrays"),
    info!(stream::milc, "milc", "433.milc", 'H', 1 << 17, "lattice sites (4 SU(3) links each)",
        "lattice QCD: SU(3) matrix times colour-vector over the links of a 4-D lattice, streamed"),
    info!(stencil::lbm, "lbm", "470.lbm", 'H', 64, "lattice side (D3Q19, 20 doubles per cell)",
        "lattice-Boltzmann stream-and-collide over a 3-D lattice (19 distributions, two grids)"),
    info!(stencil::leslie3d, "leslie3d", "437.leslie3d", 'H', 96, "grid side (5 variables)",
        "large-eddy simulation: 7-point 3-D finite-difference updates over five flow variables"),
    info!(stencil::zeusmp, "zeusmp", "434.zeusmp", 'L', 64, "grid side (4 variables)",
        "magnetohydrodynamics: 3-D advection stencil sweeps along each axis over four fields"),
    info!(stencil::wrf, "wrf", "481.wrf", 'L', 48, "grid side (6 variables, 2-D tiles of columns)",
        "weather model: tiled 3-D stencil over columns of six fields with vertical physics loops"),
    info!(soplex::new, "soplex", "450.soplex", 'H', 1 << 16, "LP rows (CSR, ~10 non-zeros per row)",
        "simplex pricing and ratio test: sparse matrix-vector products and row scans of a large LP"),
    info!(sphinx3::new, "sphinx3", "482.sphinx3", 'L', 4096, "Gaussian mixture components (39-dim, 8 mixtures each)",
        "speech recognition acoustic scoring: Gaussian densities of active senones over large mean/variance tables"),
    info!(bzip2::new, "bzip2", "401.bzip2", 'L', 900_000, "block bytes",
        "block-sorting compression: Burrows-Wheeler suffix sort of a block, move-to-front and run-length coding"),
    info!(gcc::new, "gcc", "403.gcc (166.i)", 'L', 1 << 17, "symbols",
        "compiler front end: identifier hash table, balanced binary trees of declarations and IR walks"),
];

/// Every CPU kernel as an [`Entry`] of the one registry shape: name, description, paper key
/// (gpu-access-criticality §5's MPKI group, and the SPEC program it stands in for), the
/// parameters `apusim gen cpu` takes, and the kernel's record as the constructor slot
/// ([`spawn`] builds it). Listings and `apusim describe` read it.
pub static REGISTRY: LazyLock<Vec<Entry<&'static KernelInfo>>> =
    LazyLock::new(|| KERNELS.iter().map(KernelInfo::entry).collect());

/// How many instructions a CPU job retires (`apusim gen cpu --instructions`, a mix's CPU
/// jobs under `apusim run --mix --instructions`).
pub const INSTRUCTIONS: ParamSpec = ParamSpec {
    name: "instructions",
    kind: ParamKind::Int {
        min: 1,
        max: 1_000_000_000_000,
    },
    default: "10000000",
    unit: "instructions",
    doc: "instructions to retire",
};

impl KernelInfo {
    fn entry(&'static self) -> Entry<&'static KernelInfo> {
        // Built once per process, for its life (an `Entry` holds static text).
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let params = vec![
            INSTRUCTIONS,
            crate::size_param(
                self.size_unit,
                format!("data-set size (0: the default, {})", self.default_size),
            ),
            ParamSpec {
                name: "core",
                kind: ParamKind::Int {
                    min: 0,
                    max: Agent::MAX_CPUS as u64 - 1,
                },
                default: "0",
                unit: "",
                doc: "the core it runs on (its own address range)",
            },
            crate::SEED,
        ];
        Entry {
            name: self.name,
            description: self.description,
            paper: leak(format!(
                "gpu-access-criticality §5 ({} MPKI group; stands in for SPEC CPU 2006 {})",
                self.mpki_group, self.stands_in_for
            )),
            params: Box::leak(params.into_boxed_slice()),
            build: self,
        }
    }
}

/// The kernel `name` and its parameters from `given` (by registry key: `instructions`,
/// `size`, `core`, `seed`), each checked against the kernel's registry entry, the rest at
/// their defaults: the one place where a CPU workload's parameters are validated.
pub fn params(
    name: &str,
    given: &[(&str, Value)],
) -> std::result::Result<(&'static KernelInfo, CpuParams), WorkloadError> {
    let entry = entry(name)?;
    let (k, p) = (entry.build, entry.check(given)?);
    Ok((
        k,
        CpuParams {
            core: p.int("core") as u8,
            instructions: p.int("instructions"),
            size: p.int("size") as usize,
            seed: p.int("seed"),
        },
    ))
}

/// The registry entry of kernel `name` (as [`info()`] reads names), or the error naming the
/// nearest.
pub fn entry(
    name: &str,
) -> std::result::Result<&'static Entry<&'static KernelInfo>, WorkloadError> {
    let k = info(name).ok_or_else(|| WorkloadError::unknown("cpu kernel", name, &REGISTRY))?;
    Ok(REGISTRY
        .iter()
        .find(|e| e.name == k.name)
        .expect("every kernel is registered"))
}

/// The kernel named `name` (case-insensitive; accepts `leslie3D`, `soplex.pds-50`,
/// `gcc.166.i`, `bzip2.source` and `lmb` as in the papers).
pub fn info(name: &str) -> Option<&'static KernelInfo> {
    let n = name.to_ascii_lowercase();
    let n = n.split('.').next().unwrap_or("");
    let n = if n == "lmb" { "lbm" } else { n };
    KERNELS.iter().find(|k| k.name == n)
}

/// Build the CPU workload `name` as a streaming source.
pub fn generate(
    name: &str,
    p: &CpuParams,
) -> std::result::Result<Box<dyn AccessSource>, WorkloadError> {
    Ok(Box::new(spawn(name, p)?))
}

/// [`generate`] as the concrete source, whose [`CpuSource::footprint`] is the data the
/// kernel allocated.
pub fn spawn(name: &str, p: &CpuParams) -> std::result::Result<CpuSource, WorkloadError> {
    let k = info(name).ok_or_else(|| WorkloadError::unknown("cpu kernel", name, &REGISTRY))?;
    if p.core as usize >= Agent::MAX_CPUS {
        return Err(WorkloadError::InvalidParam(format!(
            "core {} out of range",
            p.core
        )));
    }
    Ok(CpuSource::spawn(k, *p))
}

/// A bump allocator of one core's data space (64-byte aligned arrays).
#[derive(Debug)]
pub struct Heap {
    base: u64,
    next: u64,
}

impl Heap {
    pub fn new(core: u8) -> Heap {
        let base = DATA_BASE + ((core as u64) << 38);
        Heap { base, next: base }
    }
    pub fn buf<T: Copy>(&mut self, data: Vec<T>) -> Buf<T> {
        let base = self.next;
        self.next = (base + (data.len() * std::mem::size_of::<T>()) as u64 + 63) & !63;
        Buf { base, data }
    }
    /// Bytes allocated.
    pub fn allocated(&self) -> u64 {
        self.next - self.base
    }
}

enum Sink {
    Channel(SyncSender<Vec<Access>>),
    Collect(Vec<Access>),
}

/// Turns a kernel's execution into instruction-level records.
pub struct Tracer {
    agent: Agent,
    code: u64,
    retired: u64,
    budget: u64,
    alive: bool,
    line: u64,
    buf: Vec<Access>,
    sink: Sink,
}

impl Tracer {
    fn new(core: u8, budget: u64, sink: Sink) -> Tracer {
        Tracer {
            agent: Agent::cpu(core),
            code: CODE_BASE + ((core as u64) << 28),
            retired: 0,
            budget,
            alive: true,
            line: u64::MAX,
            buf: Vec::with_capacity(BATCH),
            sink,
        }
    }
    /// A tracer collecting into memory (tests).
    pub fn collecting(core: u8, budget: u64) -> Tracer {
        Tracer::new(core, budget, Sink::Collect(Vec::new()))
    }
    /// The records collected by a [`Tracer::collecting`] tracer.
    pub fn records(&mut self) -> Vec<Access> {
        self.flush();
        match &mut self.sink {
            Sink::Collect(v) => std::mem::take(v),
            Sink::Channel(_) => Vec::new(),
        }
    }
    /// True while the budget lasts and the consumer listens.
    #[inline]
    pub fn running(&self) -> bool {
        self.alive && self.retired < self.budget
    }
    /// Instructions retired so far.
    pub fn retired(&self) -> u64 {
        self.retired
    }
    #[inline]
    fn push(&mut self, a: Access) {
        self.buf.push(a);
        if self.buf.len() >= BATCH {
            self.flush();
        }
    }
    fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        match &mut self.sink {
            Sink::Channel(tx) => {
                let full = std::mem::replace(&mut self.buf, Vec::with_capacity(BATCH));
                if tx.send(full).is_err() {
                    self.alive = false;
                }
            }
            Sink::Collect(v) => v.append(&mut self.buf),
        }
    }
    #[inline]
    fn fetch(&mut self, pc: u64) {
        let line = pc >> 6;
        if line != self.line {
            self.line = line;
            let a = Access::new(self.agent, Stream::CpuInstr, Op::Read, line << 6, 64)
                .with_pc(pc)
                .with_time(self.retired)
                .with_unit(self.agent.to_byte() as u16);
            self.push(a);
        }
    }
    /// Retire `n` non-memory instructions of the basic block at code offset `site`.
    #[inline]
    pub fn exec(&mut self, site: u64, n: u64) {
        if !self.running() {
            return;
        }
        let pc = self.code + site;
        self.fetch(pc);
        self.fetch(pc + 4 * n.saturating_sub(1));
        self.retired += n;
    }
    #[inline]
    fn mem(&mut self, site: u64, op: Op, addr: u64, size: u16, flags: u8) {
        if !self.running() {
            return;
        }
        let pc = self.code + site;
        self.fetch(pc);
        self.retired += 1;
        let mut a = Access::new(self.agent, Stream::CpuData, op, addr, size)
            .with_pc(pc)
            .with_time(self.retired)
            .with_unit(self.agent.to_byte() as u16);
        a.flags = flags;
        self.push(a);
    }
    /// A load instruction at code offset `site` reading element `i` of `b`.
    #[inline]
    pub fn load<T: Copy>(&mut self, site: u64, b: &Buf<T>, i: usize) -> T {
        self.mem(
            site,
            Op::Read,
            b.addr(i),
            std::mem::size_of::<T>() as u16,
            0,
        );
        b.data[i]
    }
    /// A store instruction at code offset `site` writing `v` to element `i` of `b`.
    #[inline]
    pub fn store<T: Copy>(&mut self, site: u64, b: &mut Buf<T>, i: usize, v: T) {
        self.mem(
            site,
            Op::Write,
            b.addr(i),
            std::mem::size_of::<T>() as u16,
            0,
        );
        b.data[i] = v;
    }
    /// A read-modify-write instruction (x86 `add [m], r`) at `site` on element `i`.
    #[inline]
    pub fn modify<T: Copy>(&mut self, site: u64, b: &mut Buf<T>, i: usize, f: impl FnOnce(T) -> T) {
        self.mem(
            site,
            Op::Read,
            b.addr(i),
            std::mem::size_of::<T>() as u16,
            Access::MODIFY,
        );
        b.data[i] = f(b.data[i]);
    }
}

/// The [`AccessSource`] of a CPU kernel running on its producer thread.
pub struct CpuSource {
    header: TraceHeader,
    rx: Receiver<Vec<Access>>,
    footprint: u64,
}

impl CpuSource {
    fn spawn(k: &'static KernelInfo, p: CpuParams) -> CpuSource {
        let (tx, rx) = sync_channel::<Vec<Access>>(4);
        let (ftx, frx) = sync_channel::<u64>(1);
        std::thread::Builder::new()
            .name(format!("apusim-cpu-{}", k.name))
            .spawn(move || {
                let mut heap = Heap::new(p.core);
                let mut kernel = (k.build)(&p, &mut heap);
                let _ = ftx.send(heap.allocated());
                let mut t = Tracer::new(p.core, p.instructions, Sink::Channel(tx));
                while t.running() {
                    kernel.step(&mut t);
                }
                t.flush();
            })
            .expect("spawning a workload thread");
        let footprint = frx.recv().unwrap_or(0);
        let header = TraceHeader::single(
            Agent::cpu(p.core),
            k.name,
            0,
            &[Stream::CpuInstr, Stream::CpuData],
            &format!(
                "apusim cpu kernel={} (stands in for {}) instructions={} size={} seed={}",
                k.name, k.stands_in_for, p.instructions, p.size, p.seed
            ),
        );
        CpuSource {
            header,
            rx,
            footprint,
        }
    }
    /// Bytes of data the kernel allocated.
    pub fn footprint(&self) -> u64 {
        self.footprint
    }
}

impl AccessSource for CpuSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        match self.rx.recv() {
            Ok(v) => {
                out.extend_from_slice(&v);
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }
}

/// Deterministic inputs of CPU kernels.
pub(crate) fn rng(p: &CpuParams, salt: u64) -> SplitMix64 {
    SplitMix64::new(p.seed ^ salt.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_is_checked_and_used_by_params() {
        crate::drive_every_parameter(&REGISTRY, &CpuParams::default(), |name, given| {
            params(name, given).map(|(_, p)| p)
        });
    }

    #[test]
    fn registry_sources_are_deterministic_and_instruction_level() {
        for k in KERNELS {
            let p = CpuParams {
                core: 2,
                instructions: 200_000,
                size: 0,
                seed: 3,
            };
            let small = CpuParams {
                size: small(k.name),
                ..p
            };
            let run = || apusim_trace::collect(&mut generate(k.name, &small).unwrap()).unwrap();
            let a = run();
            assert_eq!(a, run(), "{}", k.name);
            assert!(a.windows(2).all(|w| w[0].time <= w[1].time));
            let last = a.last().unwrap().time;
            assert!((199_900..200_100).contains(&last), "{}: {last}", k.name);
            assert!(a.iter().any(|x| x.stream == Stream::CpuInstr));
            let data: Vec<&Access> = a.iter().filter(|x| x.stream == Stream::CpuData).collect();
            assert!(
                data.len() > 5_000,
                "{}: {} data accesses",
                k.name,
                data.len()
            );
            assert!(data
                .iter()
                .all(|x| x.agent == Agent::cpu(2) && x.addr >= DATA_BASE + (2 << 38)));
        }
        assert!(info("soplex.pds-50").is_some() && info("leslie3D").is_some());
        assert!(info("gcc.166.i").is_some() && info("lmb").is_some());
    }

    pub(crate) fn small(name: &str) -> usize {
        match name {
            "lbm" | "zeusmp" | "leslie3d" | "wrf" => 16,
            "bzip2" => 20_000,
            "sphinx3" => 256,
            _ => 4096,
        }
    }
}
