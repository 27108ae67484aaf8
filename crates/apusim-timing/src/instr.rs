//! Instructions for the core models, built from a trace's access records.
//!
//! Instruction-counted CPU traces (`.apt` from the generators, lackey, ChampSim imports, CSV)
//! stamp each access with the number of instructions retired before it (`time`). One
//! instruction is every access that shares a time stamp, in trace order (its fetch, its loads
//! and its stores); a gap between stamps is a run of instructions that touch no memory. Such
//! traces carry no register dependences, so [`DepModel`] chooses them: `none` (the default)
//! leaves every instruction independent, as Ramulator's trace-driven core does, so misses
//! overlap as far as the ROB, LQ and MSHRs allow; `chain` makes every load depend on the
//! previous load's data (a pointer chase, the opposite bound). docs/timing.md shows the
//! effect of each on the same traces.

use apusim_trace::{Access, AccessSource, Agent, Stream, TraceError, BATCH};

/// Most accesses one instruction carries; an instruction stamped with more is continued as
/// further instructions (counted as such).
pub const MAX_OPS: usize = 8;

/// Register number meaning "no register".
pub const NO_REG: u8 = 0;

/// What kind of control transfer an instruction is: ChampSim's `branch_type`
/// (ChampSim inc/instruction.h), which it derives from the registers an instruction reads
/// and writes (see [`crate::champsim`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BranchKind {
    /// Not a branch, or a trace without branch information.
    #[default]
    None,
    DirectJump,
    Indirect,
    Conditional,
    DirectCall,
    IndirectCall,
    Return,
    Other,
}

impl BranchKind {
    /// Whether a misprediction of this branch is found when it is decoded (its target is in
    /// the instruction) rather than when it executes (ChampSim src/ooo_cpu.cc,
    /// `decode_instruction`): direct jumps and calls always, conditional branches when only
    /// the target was wrong.
    pub fn resolves_at_decode(self, direction_right: bool) -> bool {
        match self {
            BranchKind::DirectJump | BranchKind::DirectCall => true,
            BranchKind::Conditional | BranchKind::Other => direction_right,
            _ => false,
        }
    }
}

/// One instruction, or a run of `repeat` instructions that touch no memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instr {
    /// The accesses in trace order (instruction fetches and data).
    pub ops: [Access; MAX_OPS],
    pub n_ops: u8,
    /// Source and destination registers (`NO_REG` = unused).
    pub src: [u8; 4],
    pub dst: [u8; 2],
    /// Instructions this record stands for: 1, or the length of a run without memory accesses.
    pub repeat: u32,
    /// The instruction's address (0 if the trace does not give it).
    pub ip: u64,
    /// Branch information; `BranchKind::None` for traces that carry none.
    pub branch: BranchKind,
    /// Whether the branch was taken, and then where it went (the next instruction's ip).
    pub taken: bool,
    pub target: u64,
}

const BLANK: Access = Access {
    addr: 0,
    pc: 0,
    time: 0,
    warp: 0,
    unit: 0,
    size: 0,
    agent: Agent::GPU,
    stream: Stream::Other,
    op: apusim_trace::Op::Read,
    flags: 0,
};

impl Instr {
    /// `n` instructions without memory accesses.
    pub fn plain(n: u32) -> Instr {
        Instr {
            ops: [BLANK; MAX_OPS],
            n_ops: 0,
            src: [NO_REG; 4],
            dst: [NO_REG; 2],
            repeat: n.max(1),
            ip: 0,
            branch: BranchKind::None,
            taken: false,
            target: 0,
        }
    }
    /// Make this record `n` instructions without memory accesses, in place (the access
    /// slots past `n_ops` are never read, so they are left as they are).
    pub fn reset_plain(&mut self, n: u32) {
        self.n_ops = 0;
        self.src = [NO_REG; 4];
        self.dst = [NO_REG; 2];
        self.repeat = n.max(1);
        self.ip = 0;
        self.branch = BranchKind::None;
        self.taken = false;
        self.target = 0;
    }
    /// Make this record a copy of `other` (only the access slots in use are copied).
    pub fn copy_from(&mut self, other: &Instr) {
        let n = other.n_ops as usize;
        self.ops[..n].copy_from_slice(&other.ops[..n]);
        self.n_ops = other.n_ops;
        self.src = other.src;
        self.dst = other.dst;
        self.repeat = other.repeat;
        self.ip = other.ip;
        self.branch = other.branch;
        self.taken = other.taken;
        self.target = other.target;
    }
    pub fn ops(&self) -> &[Access] {
        &self.ops[..self.n_ops as usize]
    }
    /// Add an access; false if the instruction is full.
    pub fn push(&mut self, a: Access) -> bool {
        if (self.n_ops as usize) < MAX_OPS {
            self.ops[self.n_ops as usize] = a;
            self.n_ops += 1;
            true
        } else {
            false
        }
    }
    pub fn has_load(&self) -> bool {
        self.ops()
            .iter()
            .any(|a| a.stream != Stream::CpuInstr && !a.op.is_write())
    }
}

/// A source of instructions for one core.
pub trait InstrSource: Send {
    /// The next instruction record, `None` at the end of the program.
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError>;
    /// The next instruction record written into `out`; false at the end of the program.
    /// (The same as [`InstrSource::next_instr`]; sources override it to build the record in
    /// place, since an [`Instr`] is a few hundred bytes and cores read one per instruction.)
    fn next_into(&mut self, out: &mut Instr) -> Result<bool, TraceError> {
        match self.next_instr()? {
            Some(i) => {
                *out = i;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// Register dependences for traces that carry none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepModel {
    /// Every instruction is independent.
    None,
    /// Every load depends on the previous load (register 1 is read and written by each load).
    Chain,
}

impl DepModel {
    pub const NAMES: &'static [&'static str] = &["none", "chain"];
    pub fn parse(s: &str) -> Option<DepModel> {
        match s {
            "none" => Some(DepModel::None),
            "chain" => Some(DepModel::Chain),
            _ => None,
        }
    }
}

/// Instructions of one agent, rebuilt from an instruction-counted access stream.
pub struct AccessInstrs {
    source: Box<dyn AccessSource>,
    /// Accesses of other agents in the same input are skipped; `None` takes them all.
    agent: Option<Agent>,
    remap: Option<Agent>,
    buf: Vec<Access>,
    pos: usize,
    done: bool,
    /// Index of the next instruction to emit.
    next_index: u64,
    started: bool,
    deps: DepModel,
}

impl AccessInstrs {
    /// Instructions of `source`'s accesses (every access is attributed to `remap` if set).
    pub fn new(source: Box<dyn AccessSource>, remap: Option<Agent>, deps: DepModel) -> Self {
        AccessInstrs {
            source,
            agent: None,
            remap,
            buf: Vec::with_capacity(BATCH),
            pos: 0,
            done: false,
            next_index: 0,
            started: false,
            deps,
        }
    }
    /// Keep only the accesses of `agent` (for multi-agent inputs split per core).
    pub fn only(mut self, agent: Agent) -> Self {
        self.agent = Some(agent);
        self
    }

    fn head(&mut self) -> Result<Option<Access>, TraceError> {
        loop {
            if self.pos < self.buf.len() {
                let mut a = self.buf[self.pos];
                if let Some(r) = self.remap {
                    a.agent = r;
                }
                if self.agent.is_some_and(|x| x != a.agent) {
                    self.pos += 1;
                    continue;
                }
                return Ok(Some(a));
            }
            if self.done {
                return Ok(None);
            }
            self.buf.clear();
            self.pos = 0;
            if !self.source.next_batch(&mut self.buf)? && self.buf.is_empty() {
                self.done = true;
            }
        }
    }
}

impl InstrSource for AccessInstrs {
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        let mut ins = Instr::plain(1);
        Ok(self.next_into(&mut ins)?.then_some(ins))
    }
    fn next_into(&mut self, ins: &mut Instr) -> Result<bool, TraceError> {
        let Some(first) = self.head()? else {
            return Ok(false);
        };
        if !self.started {
            self.started = true;
            self.next_index = first.time;
        }
        if first.time > self.next_index {
            let gap = (first.time - self.next_index).min(u64::from(u32::MAX));
            self.next_index += gap;
            ins.reset_plain(gap as u32);
            return Ok(true);
        }
        let stamp = first.time;
        ins.reset_plain(1);
        while let Some(a) = self.head()? {
            if a.time != stamp || !ins.push(a) {
                break;
            }
            self.pos += 1;
        }
        self.next_index = stamp + 1;
        if self.deps == DepModel::Chain && ins.has_load() {
            ins.src[0] = 1;
            ins.dst[0] = 1;
        }
        Ok(true)
    }
}

/// An instruction source over a fixed list (tests, probes).
pub struct VecInstrs(pub std::collections::VecDeque<Instr>);

impl InstrSource for VecInstrs {
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        Ok(self.0.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_trace::{Op, VecSource};

    fn acc(stream: Stream, op: Op, addr: u64, time: u64) -> Access {
        Access::new(Agent::cpu(0), stream, op, addr, 8).with_time(time)
    }

    #[test]
    fn groups_by_stamp_and_fills_gaps() {
        let v = vec![
            acc(Stream::CpuInstr, Op::Read, 0x400, 0),
            acc(Stream::CpuData, Op::Read, 0x1000, 0),
            acc(Stream::CpuData, Op::Write, 0x2000, 3),
            acc(Stream::CpuData, Op::Read, 0x3000, 4),
        ];
        let mut s = AccessInstrs::new(Box::new(VecSource::new(v)), None, DepModel::Chain);
        let a = s.next_instr().unwrap().unwrap();
        assert_eq!((a.n_ops, a.repeat, a.src[0]), (2, 1, 1));
        let gap = s.next_instr().unwrap().unwrap();
        assert_eq!((gap.n_ops, gap.repeat), (0, 2));
        let st = s.next_instr().unwrap().unwrap();
        assert_eq!(
            (st.n_ops, st.src[0]),
            (1, NO_REG),
            "a store alone has no load dependence"
        );
        let ld = s.next_instr().unwrap().unwrap();
        assert_eq!(ld.ops()[0].addr, 0x3000);
        assert!(s.next_instr().unwrap().is_none());
    }

    #[test]
    fn an_overfull_stamp_continues_as_another_instruction() {
        let v: Vec<Access> = (0..MAX_OPS as u64 + 3)
            .map(|i| acc(Stream::CpuData, Op::Read, i * 64, 7))
            .collect();
        let mut s = AccessInstrs::new(Box::new(VecSource::new(v)), None, DepModel::None);
        assert_eq!(s.next_instr().unwrap().unwrap().n_ops as usize, MAX_OPS);
        assert_eq!(s.next_instr().unwrap().unwrap().n_ops, 3);
        assert!(s.next_instr().unwrap().is_none());
    }
}
