//! Generators of ChampSim-format instruction traces with known memory behaviour, for running
//! apusim and ChampSim side by side on identical inputs (`apusim gen champsim`,
//! scripts/champsim/side_by_side.sh).
//!
//! Each kind is a small loop written out instruction by instruction, with the registers and
//! branch flags an x86 tracer would record in ChampSim's conventions (ChampSim
//! inc/trace_instruction.h): a conditional branch reads the flags (25) and the instruction
//! pointer (26) and writes the instruction pointer; a compare writes the flags; a direct jump
//! writes only the instruction pointer. Other registers are numbered 1..=24 except 6 (the
//! stack pointer). Instructions are 4 bytes apart, so a 16-instruction loop body is one
//! 64-byte line.
//!
//! - [`Kind::Stream`]: a read-only sweep over `bytes`, repeated. Per 64-byte line: 8 loads of
//!   consecutive words, each added to one accumulator, a pointer increment, a compare and the
//!   loop branch (19 instructions per line); at the end of the array the branch falls through
//!   to a pointer reset and a jump back.
//! - [`Kind::Chase`]: a pointer chase over `bytes / 64` lines visited in the order of one
//!   random cycle through all of them (Sattolo's algorithm, seeded): per line, a load whose
//!   address is the previous load's result, 7 independent ALU instructions, a counter
//!   decrement that sets the flags, and the loop branch (10 instructions). The padding keeps
//!   ChampSim's IPC above its 0.01 deadlock threshold (ChampSim src/champsim.cc).
//! - [`Kind::Loop`]: a cache-friendly loop over `bytes` (default 32 KiB, within the L1D) with
//!   a stride of 32 bytes: two loads, arithmetic, a store, a data-dependent conditional branch
//!   taken with probability 1/8 (random, seeded: the bimodal predictor mispredicts it when
//!   taken), and the loop branch (13 or 14 instructions per iteration).
//!
//! The output depends only on the kind, `bytes`, the instruction count and the seed.

use crate::rng::SplitMix64;
use apusim_trace::import::champsim::ChampSimRecord;

const FLAGS: u8 = 25;
const IP: u8 = 26;
/// Where the code of every kind starts.
pub const CODE_BASE: u64 = 0x0040_0000;
/// Where the data of every kind starts.
pub const DATA_BASE: u64 = 0x1000_0000;

/// The behaviour of a generated trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Stream,
    Chase,
    Loop,
}

impl Kind {
    pub const NAMES: &'static [&'static str] = &["stream", "chase", "loop"];
    pub fn parse(s: &str) -> Result<Kind, String> {
        match s {
            "stream" => Ok(Kind::Stream),
            "chase" => Ok(Kind::Chase),
            "loop" => Ok(Kind::Loop),
            _ => Err(format!(
                "unknown ChampSim trace kind `{s}`; expected one of {}",
                Kind::NAMES.join(", ")
            )),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Stream => "stream",
            Kind::Chase => "chase",
            Kind::Loop => "loop",
        }
    }
    /// The default working set in bytes: 4 MiB (twice ChampSim's 2 MiB LLC, within its
    /// 6 MiB STLB reach) for the stream and the chase, 32 KiB (within its 48 KiB L1D) for the
    /// loop.
    pub fn default_bytes(self) -> u64 {
        match self {
            Kind::Stream | Kind::Chase => 4 << 20,
            Kind::Loop => 32 << 10,
        }
    }
}

/// Parameters of one trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub kind: Kind,
    /// Working set in bytes (rounded down to whole 64-byte lines; at least one line, and for
    /// the loop at least one 32-byte iteration).
    pub bytes: u64,
    /// Instructions to generate.
    pub instructions: u64,
    pub seed: u64,
}

/// The records of one generated trace, in order.
pub struct Generator {
    p: Params,
    emitted: u64,
    /// Records of the current loop iteration not yet returned.
    pending: Vec<ChampSimRecord>,
    next: usize,
    /// Position in the working set (line or iteration index).
    pos: u64,
    /// Chase: the successor of each line in the random cycle.
    succ: Vec<u32>,
    rng: SplitMix64,
}

fn ins(ip: u64, src: &[u8], dst: &[u8]) -> ChampSimRecord {
    let mut r = ChampSimRecord {
        ip,
        ..Default::default()
    };
    r.src_regs[..src.len()].copy_from_slice(src);
    r.dst_regs[..dst.len()].copy_from_slice(dst);
    r.is_branch = dst.contains(&IP);
    r
}

fn load(ip: u64, base: u8, dst: u8, addr: u64) -> ChampSimRecord {
    let mut r = ins(ip, &[base], &[dst]);
    r.src_mem[0] = addr;
    r
}

fn branch(ip: u64, taken: bool) -> ChampSimRecord {
    let mut r = ins(ip, &[IP, FLAGS], &[IP]);
    r.branch_taken = taken;
    r
}

fn jump(ip: u64) -> ChampSimRecord {
    let mut r = ins(ip, &[], &[IP]);
    r.branch_taken = true;
    r
}

impl Generator {
    pub fn new(p: Params) -> Result<Generator, String> {
        let lines = p.bytes / 64;
        if lines == 0 {
            return Err(format!("--bytes {}: at least 64 bytes are needed", p.bytes));
        }
        if lines > u64::from(u32::MAX) {
            return Err(format!("--bytes {}: at most 256 GiB", p.bytes));
        }
        let mut rng = SplitMix64::new(p.seed);
        let succ = if p.kind == Kind::Chase {
            // Sattolo's algorithm: a uniformly random permutation that is one single cycle,
            // so the chase visits every line once per lap.
            let n = lines as usize;
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                let j = rng.below(i as u64) as usize;
                order.swap(i, j);
            }
            let mut succ = vec![0u32; n];
            for i in 0..n {
                succ[order[i] as usize] = order[(i + 1) % n];
            }
            succ
        } else {
            Vec::new()
        };
        Ok(Generator {
            p,
            emitted: 0,
            pending: Vec::with_capacity(32),
            next: 0,
            pos: 0,
            succ,
            rng,
        })
    }

    fn iteration(&mut self) {
        self.pending.clear();
        self.next = 0;
        let pc = |k: u64| CODE_BASE + 4 * k;
        let v = &mut self.pending;
        match self.p.kind {
            Kind::Stream => {
                let lines = self.p.bytes / 64;
                let line = DATA_BASE + 64 * self.pos;
                for w in 0..8u64 {
                    v.push(load(pc(2 * w), 10, 1 + w as u8, line + 8 * w));
                    v.push(ins(pc(2 * w + 1), &[11, 1 + w as u8], &[11, FLAGS]));
                }
                v.push(ins(pc(16), &[10], &[10, FLAGS]));
                v.push(ins(pc(17), &[10, 12], &[FLAGS]));
                self.pos += 1;
                let wrap = self.pos == lines;
                v.push(branch(pc(18), !wrap));
                if wrap {
                    self.pos = 0;
                    v.push(ins(pc(19), &[13], &[10]));
                    v.push(jump(pc(20)));
                }
            }
            Kind::Chase => {
                let line = self.pos;
                v.push(load(pc(0), 1, 1, DATA_BASE + 64 * line));
                // Independent work: two short chains and three independent updates.
                v.push(ins(pc(1), &[2, 3], &[2, FLAGS]));
                v.push(ins(pc(2), &[2], &[2, FLAGS]));
                v.push(ins(pc(3), &[4, 5], &[4, FLAGS]));
                v.push(ins(pc(4), &[4], &[4, FLAGS]));
                v.push(ins(pc(5), &[7], &[7, FLAGS]));
                v.push(ins(pc(6), &[9, 3], &[9, FLAGS]));
                v.push(ins(pc(7), &[14, 5], &[14, FLAGS]));
                v.push(ins(pc(8), &[8], &[8, FLAGS]));
                v.push(branch(pc(9), true));
                self.pos = u64::from(self.succ[line as usize]);
            }
            Kind::Loop => {
                let iters = (self.p.bytes / 32).max(1);
                let a = DATA_BASE + 32 * self.pos;
                v.push(load(pc(0), 10, 1, a));
                v.push(load(pc(1), 10, 2, a + 8));
                v.push(ins(pc(2), &[1, 2], &[3, FLAGS]));
                v.push(ins(pc(3), &[4, 3], &[4, FLAGS]));
                let mut st = ins(pc(4), &[10, 3], &[]);
                st.dst_mem[0] = a + 16;
                v.push(st);
                v.push(ins(pc(5), &[5], &[5, FLAGS]));
                v.push(ins(pc(6), &[7, 5], &[7, FLAGS]));
                v.push(ins(pc(7), &[1], &[FLAGS]));
                let skip = self.rng.below(8) == 0;
                v.push(branch(pc(8), skip));
                if !skip {
                    v.push(ins(pc(9), &[8], &[8, FLAGS]));
                }
                v.push(ins(pc(10), &[10], &[10, FLAGS]));
                v.push(ins(pc(11), &[10, 12], &[FLAGS]));
                self.pos += 1;
                let wrap = self.pos == iters;
                v.push(branch(pc(12), !wrap));
                if wrap {
                    self.pos = 0;
                    v.push(ins(pc(13), &[13], &[10]));
                    v.push(jump(pc(14)));
                }
            }
        }
    }
}

impl Iterator for Generator {
    type Item = ChampSimRecord;
    fn next(&mut self) -> Option<ChampSimRecord> {
        if self.emitted >= self.p.instructions {
            return None;
        }
        if self.next >= self.pending.len() {
            self.iteration();
        }
        let r = self.pending[self.next];
        self.next += 1;
        self.emitted += 1;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(kind: Kind, bytes: u64, n: u64) -> Vec<ChampSimRecord> {
        Generator::new(Params {
            kind,
            bytes,
            instructions: n,
            seed: 7,
        })
        .unwrap()
        .collect()
    }

    #[test]
    fn stream_sweeps_every_word_in_order_and_wraps() {
        let v = gen(Kind::Stream, 256, 200);
        let loads: Vec<u64> = v.iter().map(|r| r.src_mem[0]).filter(|&a| a != 0).collect();
        let want: Vec<u64> = (0..32).map(|k| DATA_BASE + 8 * k).collect();
        assert_eq!(&loads[..32], &want[..]);
        assert_eq!(loads[32], DATA_BASE, "wraps to the start");
        assert_eq!(v.len(), 200);
        assert!(v
            .iter()
            .any(|r| r.dst_regs == [IP, 0] && r.src_regs == [0; 4]));
    }

    #[test]
    fn chase_visits_every_line_once_per_lap_and_is_seeded() {
        let lines = 1024u64;
        let v = gen(Kind::Chase, lines * 64, 10 * lines);
        let mut seen: Vec<u64> = v.iter().map(|r| r.src_mem[0]).filter(|&a| a != 0).collect();
        assert_eq!(seen.len() as u64, lines);
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len() as u64, lines);
        assert_eq!(v, gen(Kind::Chase, lines * 64, 10 * lines), "deterministic");
        let other: Vec<ChampSimRecord> = Generator::new(Params {
            kind: Kind::Chase,
            bytes: lines * 64,
            instructions: 10 * lines,
            seed: 8,
        })
        .unwrap()
        .collect();
        assert_ne!(v, other, "the seed changes the order");
        // The load's address register is its own destination: a dependent chain.
        assert_eq!((v[0].src_regs[0], v[0].dst_regs[0]), (1, 1));
    }

    #[test]
    fn loop_branch_is_taken_about_one_in_eight() {
        let v = gen(Kind::Loop, 32 << 10, 140_000);
        let inner: Vec<&ChampSimRecord> = v.iter().filter(|r| r.ip == CODE_BASE + 32).collect();
        let taken = inner.iter().filter(|r| r.branch_taken).count() as f64;
        let rate = taken / inner.len() as f64;
        assert!((rate - 0.125).abs() < 0.01, "{rate}");
        assert!(v
            .iter()
            .all(|r| r.dst_mem[0] == 0 || r.dst_mem[0] < DATA_BASE + (32 << 10)));
    }

    #[test]
    fn bad_sizes_are_refused() {
        let p = Params {
            kind: Kind::Stream,
            bytes: 10,
            instructions: 1,
            seed: 1,
        };
        assert!(Generator::new(p).err().unwrap().contains("64 bytes"));
        assert!(Kind::parse("strem").unwrap_err().contains("stream"));
    }
}
