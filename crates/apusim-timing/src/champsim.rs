//! Instructions read from a ChampSim trace, with the trace's register dependences and
//! branches (what [`crate::AccessInstrs`] cannot rebuild from access records).
//!
//! Each `input_instr` record becomes one [`Instr`]: an instruction fetch at its ip, a load per
//! non-zero source address and a store per non-zero destination address (in that order, as
//! the access importer `apusim_trace::import::champsim` orders them), its source and
//! destination registers, and its branch kind, direction and target. ChampSim fetches whole
//! 64-byte blocks, one L1I request for consecutive instructions of a block
//! (`O3_CPU::fetch_instruction`), so a record whose ip is in the same block as the previous
//! record's carries no fetch of its own.
//!
//! ChampSim's conventions (ChampSim inc/trace_instruction.h, inc/instruction.h,
//! src/ooo_cpu.cc), followed as far as they matter for timing:
//!
//! - Registers are architectural numbers 1..=255; 0 is "none". Three are special:
//!   [`REG_STACK_POINTER`] (6), [`REG_FLAGS`] (25) and [`REG_INSTRUCTION_POINTER`] (26). They
//!   are renamed like any other register, so a conditional branch (which reads the ip) waits
//!   for the previous branch (which wrote it), as in ChampSim.
//! - The branch kind comes from the registers, not the tracer's `is_branch` flag
//!   ([`branch_kind`]); an instruction that writes no ip is not a branch. Unconditional kinds
//!   are always taken.
//! - A branch's target is the next record's ip when it is taken (ChampSim src/tracereader.cc,
//!   `apply_branch_target`), 0 otherwise.
//! - Stack-pointer folding (`do_stack_pointer_folding`): an instruction that writes the stack
//!   pointer by a known amount (a branch, a memory instruction, or one reading no other
//!   register) does not create a dependence through it.

use crate::ahead::Ahead;
use crate::instr::{BranchKind, Instr, InstrSource, NO_REG};
use apusim_trace::import::champsim::{ChampSimReader, ChampSimRecord, DATA_SIZE, FETCH_SIZE};
use apusim_trace::{Access, Agent, Op, Stream, TraceError};
use std::path::Path;

/// ChampSim's stack-pointer register.
pub const REG_STACK_POINTER: u8 = 6;
/// ChampSim's flags register.
pub const REG_FLAGS: u8 = 25;
/// ChampSim's instruction-pointer register.
pub const REG_INSTRUCTION_POINTER: u8 = 26;

/// Records decoded at a time.
const CHUNK: usize = 4096;

/// Which of the special registers a list of registers names, and whether it names another.
#[derive(Clone, Copy, Default)]
struct Special {
    sp: bool,
    flags: bool,
    ip: bool,
    other: bool,
}

impl Special {
    fn of(regs: &[u8]) -> Special {
        let mut s = Special::default();
        for &x in regs {
            match x {
                NO_REG => {}
                REG_STACK_POINTER => s.sp = true,
                REG_FLAGS => s.flags = true,
                REG_INSTRUCTION_POINTER => s.ip = true,
                _ => s.other = true,
            }
        }
        s
    }
}

/// The branch kind of a record, derived from its registers exactly as ChampSim's
/// `ooo_model_instr` constructor does (inc/instruction.h), and whether it is taken.
pub fn branch_kind(r: &ChampSimRecord) -> (BranchKind, bool) {
    kind_of(r, Special::of(&r.src_regs), Special::of(&r.dst_regs))
}

/// [`branch_kind`] of `r`, whose sources and destinations are `src` and `dst`.
fn kind_of(r: &ChampSimRecord, src: Special, dst: Special) -> (BranchKind, bool) {
    let (writes_sp, writes_ip) = (dst.sp, dst.ip);
    let (reads_sp, reads_flags, reads_ip, reads_other) = (src.sp, src.flags, src.ip, src.other);
    if !reads_sp && !reads_flags && writes_ip && !reads_other {
        (BranchKind::DirectJump, true)
    } else if !reads_sp && !reads_ip && !reads_flags && writes_ip && reads_other {
        (BranchKind::Indirect, true)
    } else if !reads_sp && reads_ip && !writes_sp && writes_ip && (reads_flags || reads_other) {
        (BranchKind::Conditional, r.branch_taken)
    } else if reads_sp && reads_ip && writes_sp && writes_ip && !reads_flags && !reads_other {
        (BranchKind::DirectCall, true)
    } else if reads_sp && reads_ip && writes_sp && writes_ip && !reads_flags && reads_other {
        (BranchKind::IndirectCall, true)
    } else if reads_sp && !reads_ip && writes_sp && writes_ip {
        (BranchKind::Return, true)
    } else if writes_ip {
        (BranchKind::Other, r.branch_taken)
    } else {
        (BranchKind::None, false)
    }
}

/// The instructions of one ChampSim trace, for core `agent`.
pub struct ChampSimInstrs {
    reader: ChampSimReader,
    agent: Agent,
    unit: u16,
    /// Decoded records; `pos` is the next to read.
    buf: Vec<ChampSimRecord>,
    pos: usize,
    ended: bool,
    /// The record to hand out next, read one ahead because a taken branch's target is its
    /// successor's ip (`None` before the first read and at the end).
    ahead: Option<ChampSimRecord>,
    started: bool,
    /// The 64-byte block of the previous record's ip.
    last_block: Option<u64>,
}

impl ChampSimInstrs {
    /// Read the ChampSim trace at `path` (raw, gzip or xz) as the program of `agent`, on a
    /// thread of its own ([`Ahead`]: reading, decompressing and converting the records would
    /// otherwise be a fifth of a high-IPC core's time).
    pub fn open(path: impl AsRef<Path>, agent: Agent) -> Result<Ahead, TraceError> {
        Ok(Ahead::spawn(ChampSimInstrs::new(
            ChampSimReader::open(path)?,
            agent,
        )))
    }

    /// Records are read and decoded on the calling thread.
    pub fn new(reader: ChampSimReader, agent: Agent) -> Self {
        ChampSimInstrs {
            reader,
            agent,
            unit: agent.cpu_index().unwrap_or(0) as u16,
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            ended: false,
            ahead: None,
            started: false,
            last_block: None,
        }
    }

    /// The trace's next record, `None` at its end.
    fn read(&mut self) -> Result<Option<ChampSimRecord>, TraceError> {
        while self.pos == self.buf.len() {
            if self.ended {
                return Ok(None);
            }
            self.pos = 0;
            self.buf.clear();
            if !self.reader.next_records(CHUNK, &mut self.buf)? {
                self.ended = true;
            }
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }

    /// The instruction of record `r`, whose successor (if any) is at `next_ip`; `fetch` says
    /// whether it carries its block's instruction fetch.
    pub fn convert(&self, r: &ChampSimRecord, next_ip: Option<u64>, fetch: bool) -> Instr {
        let mut ins = Instr::plain(1);
        self.convert_into(r, next_ip, fetch, &mut ins);
        ins
    }

    /// [`ChampSimInstrs::convert`] into `ins` (every field is overwritten).
    pub fn convert_into(
        &self,
        r: &ChampSimRecord,
        next_ip: Option<u64>,
        fetch: bool,
        ins: &mut Instr,
    ) {
        ins.n_ops = 0;
        ins.src = [NO_REG; 4];
        ins.dst = [NO_REG; 2];
        ins.repeat = 1;
        ins.ip = r.ip;
        let base = Access {
            addr: r.ip,
            pc: r.ip,
            time: 0,
            warp: 0,
            unit: self.unit,
            size: FETCH_SIZE,
            agent: self.agent,
            stream: Stream::CpuInstr,
            op: Op::Read,
            flags: 0,
        };
        if fetch {
            ins.push(base);
        }
        for &a in r.src_mem.iter().filter(|&&a| a != 0) {
            ins.push(Access {
                addr: a,
                size: DATA_SIZE,
                stream: Stream::CpuData,
                ..base
            });
        }
        for &a in r.dst_mem.iter().filter(|&&a| a != 0) {
            ins.push(Access {
                addr: a,
                size: DATA_SIZE,
                stream: Stream::CpuData,
                op: Op::Write,
                ..base
            });
        }
        let src = Special::of(&r.src_regs);
        let (kind, taken) = kind_of(r, src, Special::of(&r.dst_regs));
        ins.branch = kind;
        ins.taken = taken;
        // A taken branch that ends the trace has no known target; 0 never matches a
        // prediction, as ChampSim's empty address would not.
        ins.target = if taken { next_ip.unwrap_or(0) } else { 0 };
        for (k, &s) in r.src_regs.iter().filter(|&&s| s != NO_REG).enumerate() {
            ins.src[k] = s;
        }
        let writes_sp = r.dst_regs.contains(&REG_STACK_POINTER);
        let fold_sp = writes_sp && {
            let mem = r.src_mem.iter().chain(&r.dst_mem).any(|&a| a != 0);
            kind != BranchKind::None || mem || !src.other
        };
        let mut k = 0;
        for &d in r.dst_regs.iter().filter(|&&d| d != NO_REG) {
            if fold_sp && d == REG_STACK_POINTER {
                continue;
            }
            ins.dst[k] = d;
            k += 1;
        }
    }

    /// The next record, its successor's ip, and whether it fetches its block.
    fn advance(&mut self) -> Result<Option<(ChampSimRecord, Option<u64>, bool)>, TraceError> {
        if !self.started {
            self.started = true;
            self.ahead = self.read()?;
        }
        let Some(r) = self.ahead else {
            return Ok(None);
        };
        self.ahead = self.read()?;
        let next_ip = self.ahead.map(|n| n.ip);
        let block = r.ip >> 6;
        let fetch = self.last_block != Some(block);
        self.last_block = Some(block);
        Ok(Some((r, next_ip, fetch)))
    }
}

impl InstrSource for ChampSimInstrs {
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        Ok(self
            .advance()?
            .map(|(r, next_ip, fetch)| self.convert(&r, next_ip, fetch)))
    }

    fn next_into(&mut self, out: &mut Instr) -> Result<bool, TraceError> {
        match self.advance()? {
            Some((r, next_ip, fetch)) => {
                self.convert_into(&r, next_ip, fetch, out);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ip: u64, src: [u8; 4], dst: [u8; 2], taken: bool) -> ChampSimRecord {
        ChampSimRecord {
            ip,
            is_branch: dst.contains(&REG_INSTRUCTION_POINTER),
            branch_taken: taken,
            dst_regs: dst,
            src_regs: src,
            ..Default::default()
        }
    }

    #[test]
    fn branch_kinds_follow_champsim_register_rules() {
        let ip = REG_INSTRUCTION_POINTER;
        let sp = REG_STACK_POINTER;
        let fl = REG_FLAGS;
        let k = |src, dst, t| branch_kind(&rec(0, src, dst, t));
        assert_eq!(k([0; 4], [ip, 0], false), (BranchKind::DirectJump, true));
        assert_eq!(
            k([3, 0, 0, 0], [ip, 0], false),
            (BranchKind::Indirect, true)
        );
        assert_eq!(
            k([ip, fl, 0, 0], [ip, 0], false),
            (BranchKind::Conditional, false)
        );
        assert_eq!(
            k([ip, fl, 0, 0], [ip, 0], true),
            (BranchKind::Conditional, true)
        );
        assert_eq!(
            k([ip, sp, 0, 0], [ip, sp], false),
            (BranchKind::DirectCall, true)
        );
        assert_eq!(
            k([ip, sp, 4, 0], [ip, sp], false),
            (BranchKind::IndirectCall, true)
        );
        assert_eq!(
            k([sp, 0, 0, 0], [ip, sp], false),
            (BranchKind::Return, true)
        );
        assert_eq!(k([1, 2, 0, 0], [3, 0], true), (BranchKind::None, false));
    }

    fn records(v: &[ChampSimRecord]) -> ChampSimInstrs {
        let raw: Vec<u8> = v.iter().flat_map(|r| r.encode()).collect();
        let reader = ChampSimReader::new(std::io::Cursor::new(raw), "t.champsimtrace").unwrap();
        ChampSimInstrs::new(reader, Agent::cpu(1))
    }

    #[test]
    fn instructions_carry_registers_memory_and_targets() {
        let ip = REG_INSTRUCTION_POINTER;
        let mut load = rec(0x400000, [3, 0, 0, 0], [1, 0], false);
        load.src_mem[0] = 0x1000;
        load.dst_mem[1] = 0x2000;
        let br = rec(0x400004, [ip, REG_FLAGS, 0, 0], [ip, 0], true);
        let after = rec(0x400100, [1, 0, 0, 0], [2, 0], false);
        let mut s = records(&[load, br, after]);
        let a = s.next_instr().unwrap().unwrap();
        assert_eq!((a.n_ops, a.src, a.dst), (3, [3, 0, 0, 0], [1, 0]));
        assert_eq!(a.ops()[0].stream, Stream::CpuInstr);
        assert_eq!(a.ops()[1].addr, 0x1000);
        assert!(a.ops()[2].op.is_write());
        assert_eq!((a.ops()[0].agent, a.ops()[0].unit), (Agent::cpu(1), 1));
        let b = s.next_instr().unwrap().unwrap();
        assert_eq!(
            (b.branch, b.taken, b.target),
            (BranchKind::Conditional, true, 0x400100)
        );
        assert_eq!(b.n_ops, 0, "same block as the load: no fetch of its own");
        let c = s.next_instr().unwrap().unwrap();
        assert_eq!((c.branch, c.target, c.n_ops), (BranchKind::None, 0, 1));
        assert!(s.next_instr().unwrap().is_none());
    }

    #[test]
    fn the_reader_thread_gives_the_same_instructions_and_errors() {
        let v: Vec<ChampSimRecord> = (0..10_000u64)
            .map(|k| {
                let mut r = rec(0x400000 + 4 * (k % 40), [3, 0, 0, 0], [1, 0], false);
                r.src_mem[0] = 0x1000 + 64 * k;
                r
            })
            .collect();
        let mut raw: Vec<u8> = v.iter().flat_map(|r| r.encode()).collect();
        let open = |raw: &Vec<u8>, threaded: bool| {
            let reader =
                ChampSimReader::new(std::io::Cursor::new(raw.clone()), "t.champsimtrace").unwrap();
            let s = ChampSimInstrs::new(reader, Agent::cpu(0));
            if threaded {
                Box::new(Ahead::spawn(s)) as Box<dyn InstrSource>
            } else {
                Box::new(s)
            }
        };
        let all = |mut s: Box<dyn InstrSource>| {
            let mut out = Vec::new();
            loop {
                match s.next_instr() {
                    Ok(Some(i)) => out.push(Ok(i)),
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Err(e.to_string()));
                        break;
                    }
                }
            }
            out
        };
        let a = all(open(&raw, false));
        assert_eq!(a.len(), 10_000);
        assert_eq!(a, all(open(&raw, true)));
        raw.truncate(raw.len() - 10);
        let b = all(open(&raw, true));
        assert_eq!(b, all(open(&raw, false)));
        assert!(b
            .last()
            .unwrap()
            .as_ref()
            .unwrap_err()
            .contains("partial record"));
    }

    #[test]
    fn stack_pointer_folding() {
        let sp = REG_STACK_POINTER;
        let mut push = rec(0x10, [sp, 5, 0, 0], [sp, 0], false);
        push.dst_mem[0] = 0x7ff0;
        let add_sp_var = rec(0x14, [sp, 5, 0, 0], [sp, 0], false);
        let add_sp_const = rec(0x18, [sp, 0, 0, 0], [sp, 0], false);
        let mut s = records(&[push, add_sp_var, add_sp_const]);
        assert_eq!(
            s.next_instr().unwrap().unwrap().dst,
            [0, 0],
            "memory op folds"
        );
        assert_eq!(
            s.next_instr().unwrap().unwrap().dst,
            [sp, 0],
            "variable change kept"
        );
        assert_eq!(
            s.next_instr().unwrap().unwrap().dst,
            [0, 0],
            "constant change folds"
        );
    }
}
