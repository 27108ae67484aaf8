//! Work in flight in the render pipeline: one item with its accesses, split into the parts
//! each unit issues, and what it waits for.

use super::criticality::{CritUnit, Criticality};
use crate::{Issue, MemPort, Tick, Token};
use apusim_trace::{Access, Stream, Unit, WorkItem};

/// Which unit issues an access, with the shader's instruction fetch and each sampler's
/// texture reads, and the blitter's reads and writes, told apart (they are issued at
/// different moments).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(super) enum Part {
    Fe = 0,
    ZsEarly = 1,
    ShInstr = 2,
    Tex0 = 3,
    Tex1 = 4,
    ZsLate = 5,
    Cw = 6,
    BtRead = 7,
    BtWrite = 8,
}

const PARTS: usize = 9;

impl Part {
    /// The unit of gpu-access-criticality Fig. 6 an access of this part originates from
    /// (texture samplers belong to their shader core, the late depth test to ZS).
    pub fn unit(self) -> CritUnit {
        match self {
            Part::Fe => CritUnit::Fe,
            Part::ZsEarly | Part::ZsLate => CritUnit::Zs,
            Part::ShInstr | Part::Tex0 | Part::Tex1 => CritUnit::Sh,
            Part::Cw => CritUnit::Cw,
            Part::BtRead | Part::BtWrite => CritUnit::Bt,
        }
    }

    pub(super) fn of(a: &Access, unit: Unit) -> Part {
        match unit {
            Unit::FrontEnd => Part::Fe,
            Unit::ZsEarly => Part::ZsEarly,
            Unit::Shader if a.stream == Stream::ShaderInstr => Part::ShInstr,
            // A core's texture slot s samples on its sampler s mod 2 (`unit` is the sampler).
            Unit::Shader if a.unit & 1 == 0 => Part::Tex0,
            Unit::Shader => Part::Tex1,
            Unit::ZsLate => Part::ZsLate,
            Unit::ColorWrite => Part::Cw,
            Unit::Blitter if a.op.is_write() => Part::BtWrite,
            Unit::Blitter => Part::BtRead,
        }
    }
}

/// Token of accesses nobody waits for (writes are posted).
pub(super) const POSTED: Token = Token::MAX;

/// Where a shader thread is in its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Thread {
    /// Not a thread (yet).
    None,
    /// Waiting for its instruction fetch.
    Fetch,
    /// Issuing the instructions before its texture fetch (`left` of them).
    Before,
    /// Blocked on its texture fetch (drp §3: "a running thread changes state to blocked when
    /// it issues ... a texture load instruction").
    Texture,
    /// Issuing the instructions after it.
    After,
    /// Finished, waiting for room downstream.
    Out,
}

/// One item in flight.
pub(super) struct Job {
    pub item: WorkItem,
    /// Accesses sorted by [`Part`] (stable: trace order within a part).
    pub acc: Vec<Access>,
    /// `acc[bounds[p]..bounds[p + 1]]` are part `p`'s.
    bounds: [u32; PARTS + 1],
    /// Next access of each part to issue (a refused access is retried from there).
    cursor: [u32; PARTS],
    /// A part is half issued (its wait has started).
    pub issuing: bool,
    /// Reads of the current wait still to arrive, parts still being issued, and the tick
    /// the last arrived data is there.
    pub left: u32,
    pub open: u32,
    pub ready: Tick,
    /// Set when the current wait is over (the job was woken).
    pub done: bool,
    pub thread: Thread,
    /// Instructions left in the current run of the thread.
    pub instr_left: u32,
    /// The tile a quad or tile end belongs to.
    pub tile: u32,
    /// A vertex thread was handed to its shader core, and it has finished (triangles).
    pub submitted: bool,
    pub vertices_done: bool,
    /// The marking decided for an access that was refused, kept for its retry.
    held: Option<(u32, bool)>,
    /// Parts whose accesses have all been sent (bit `p` for part `p`), and the shader
    /// instructions issued for its thread: what a sampled run's flush still owes
    /// (`Pipeline::flush`).
    sent: u16,
    pub issued_instructions: u32,
}

impl Job {
    pub fn new(item: WorkItem, accesses: &[Access], units: &[Unit], acc: Vec<Access>) -> Job {
        let mut j = Job {
            item,
            acc,
            bounds: [0; PARTS + 1],
            cursor: [0; PARTS],
            issuing: false,
            left: 0,
            open: 0,
            ready: 0,
            done: false,
            thread: Thread::None,
            instr_left: 0,
            tile: 0,
            submitted: false,
            vertices_done: false,
            held: None,
            sent: 0,
            issued_instructions: 0,
        };
        j.fill(
            accesses
                .iter()
                .zip(units)
                .map(|(a, &u)| (*a, Part::of(a, u))),
        );
        j
    }

    /// Set the accesses from (access, part) pairs.
    fn fill(&mut self, parts: impl Iterator<Item = (Access, Part)>) {
        let mut tagged: Vec<(Part, Access)> = parts.map(|(a, p)| (p, a)).collect();
        tagged.sort_by_key(|t| t.0);
        self.acc.clear();
        self.bounds = [0; PARTS + 1];
        for (p, a) in tagged {
            self.acc.push(a);
            self.bounds[p as usize + 1] += 1;
        }
        for p in 0..PARTS {
            self.bounds[p + 1] += self.bounds[p];
        }
    }

    /// Take over `other`'s accesses of `from`, as this job's part `to` (a tile's stencil
    /// read goes with its first quad, its shader's instruction fetch with its first shaded
    /// quad).
    pub fn absorb(&mut self, other: &Job, from: Part, to: Part) {
        if other.count(from) == 0 {
            return;
        }
        let mine = self.parts();
        let theirs = other.range(from).map(|i| (other.acc[i], to));
        let all: Vec<(Access, Part)> = mine.chain(theirs).collect();
        self.fill(all.into_iter());
    }

    fn parts(&self) -> impl Iterator<Item = (Access, Part)> + '_ {
        (0..PARTS).flat_map(move |p| {
            self.range(PART_OF[p])
                .map(move |i| (self.acc[i], PART_OF[p]))
        })
    }

    fn range(&self, p: Part) -> std::ops::Range<usize> {
        self.bounds[p as usize] as usize..self.bounds[p as usize + 1] as usize
    }

    pub fn count(&self, p: Part) -> usize {
        self.range(p).len()
    }

    /// The address of part `p`'s first access of stream `s`.
    pub fn first_address(&self, p: Part, s: Stream) -> Option<u64> {
        self.range(p)
            .map(|i| &self.acc[i])
            .find(|a| a.stream == s)
            .map(|a| a.addr)
    }

    /// Start a new wait (the previous one is over).
    pub fn start_wait(&mut self, now: Tick) {
        self.left = 0;
        self.open = 0;
        self.ready = now;
        self.done = false;
        self.cursor = [0; PARTS];
    }

    /// Issue part `p` at `now` under `token`: reads count towards the wait, writes are
    /// posted. Returns `Err(retry)` when the memory side refused an access (the part goes on
    /// from there next time), with the tick to retry at if known. `ideal` answers every
    /// access at once without sending it. With `crit`, every access sent is marked critical
    /// or not as its first flag says and counted (the second: unmarked because the frame
    /// rate met its target). With `unit`, every access carries that unit (a shared sampler's
    /// index) instead of the one the render trace gave it.
    #[allow(clippy::too_many_arguments)]
    pub fn issue(
        &mut self,
        p: Part,
        now: Tick,
        token: Token,
        port: &mut dyn MemPort,
        ideal: bool,
        sent: &mut IssueCounts,
        mut crit: Option<(&mut Criticality, (bool, bool))>,
        unit: Option<u16>,
    ) -> Result<(), Option<Tick>> {
        let r = self.range(p);
        let mut i = r.start + self.cursor[p as usize] as usize;
        while i < r.end {
            let mut a = self.acc[i];
            if let Some(u) = unit {
                a.unit = u;
            }
            if let Some((c, (identified, on_target))) = &mut crit {
                // An access refused last time keeps the decision (and the count) it had.
                let critical = match self.held.take() {
                    Some((at, m)) if at as usize == i => m,
                    _ => c.mark(a.stream as u8, *identified, *on_target),
                };
                if critical {
                    a.flags |= Access::CRITICAL;
                } else {
                    a.flags &= !Access::CRITICAL;
                }
                self.held = Some((i as u32, critical));
            }
            if !ideal {
                let write = a.op.is_write();
                match port.issue(now, &a, if write { POSTED } else { token }) {
                    Issue::Busy(t) => {
                        self.cursor[p as usize] = (i - r.start) as u32;
                        return Err(t);
                    }
                    Issue::Done(t) if !write => self.ready = self.ready.max(t),
                    Issue::Pending(n) if !write => {
                        self.left += n;
                        sent.outstanding += u64::from(n);
                    }
                    _ => {}
                }
                if write {
                    sent.writes += 1;
                } else {
                    sent.reads += 1;
                }
                self.held = None;
            }
            i += 1;
        }
        self.cursor[p as usize] = r.len() as u32;
        self.sent |= 1 << p as u16;
        Ok(())
    }

    /// The accesses not sent yet, part by part in the order the units issue them: every
    /// access of a part not begun, the rest of a part refused midway.
    pub fn unsent(&self) -> impl Iterator<Item = (Access, Part)> + '_ {
        PART_OF
            .iter()
            .filter(move |&&p| self.sent & (1 << p as u16) == 0)
            .flat_map(move |&p| {
                let r = self.range(p);
                (r.start + self.cursor[p as usize] as usize..r.end).map(move |i| (self.acc[i], p))
            })
    }
}

/// [`Part`] by index.
const PART_OF: [Part; PARTS] = [
    Part::Fe,
    Part::ZsEarly,
    Part::ShInstr,
    Part::Tex0,
    Part::Tex1,
    Part::ZsLate,
    Part::Cw,
    Part::BtRead,
    Part::BtWrite,
];

/// Accesses sent so far, and reads whose data has not arrived.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IssueCounts {
    pub reads: u64,
    pub writes: u64,
    pub outstanding: u64,
}
