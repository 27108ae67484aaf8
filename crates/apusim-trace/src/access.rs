//! The access record: the one currency every agent, trace format and cache level trades in.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Who issued an access: CPU core `n` (0..=127) or the GPU.
///
/// Encoded in one byte: values below [`Agent::GPU_ID`] are CPU cores, `GPU_ID` is the GPU.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Agent(u8);

impl Agent {
    /// Byte value of the GPU agent.
    pub const GPU_ID: u8 = 0x80;
    /// The (single) GPU of the heterogeneous processor.
    pub const GPU: Agent = Agent(Self::GPU_ID);
    /// Largest number of CPU cores an agent id can name.
    pub const MAX_CPUS: usize = Self::GPU_ID as usize;

    /// CPU core `n`. Panics if `n >= MAX_CPUS` (a programming error, never input-driven:
    /// parsers use [`Agent::from_byte`]).
    pub const fn cpu(n: u8) -> Agent {
        assert!(n < Self::GPU_ID, "CPU core id out of range");
        Agent(n)
    }
    /// Decode the one-byte form; `None` for bytes that name no agent.
    pub const fn from_byte(b: u8) -> Option<Agent> {
        if b <= Self::GPU_ID {
            Some(Agent(b))
        } else {
            None
        }
    }
    pub const fn to_byte(self) -> u8 {
        self.0
    }
    pub const fn is_gpu(self) -> bool {
        self.0 == Self::GPU_ID
    }
    pub const fn is_cpu(self) -> bool {
        self.0 < Self::GPU_ID
    }
    /// The CPU core number, if this is a CPU core.
    pub const fn cpu_index(self) -> Option<usize> {
        if self.is_cpu() {
            Some(self.0 as usize)
        } else {
            None
        }
    }
    /// Dense index for per-agent tables sized `n_cpus + 1`: cores first, then the GPU.
    pub fn dense_index(self, n_cpus: usize) -> usize {
        if self.is_gpu() {
            n_cpus
        } else {
            self.0 as usize
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_gpu() {
            f.write_str("gpu")
        } else {
            write!(f, "cpu{}", self.0)
        }
    }
}
impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Agent {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        if t == "gpu" {
            return Ok(Agent::GPU);
        }
        let digits = t
            .strip_prefix("cpu")
            .or_else(|| t.strip_prefix("core"))
            .unwrap_or(&t);
        match digits.parse::<u8>() {
            Ok(n) if n < Self::GPU_ID => Ok(Agent(n)),
            _ => Err(format!(
                "expected an agent `cpuN` (N < {}) or `gpu`, found `{s}`",
                Self::GPU_ID
            )),
        }
    }
}
impl TryFrom<String> for Agent {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}
impl From<Agent> for String {
    fn from(a: Agent) -> String {
        a.to_string()
    }
}

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $val:literal => $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "&'static str")]
        #[repr(u8)]
        pub enum $name { $($(#[$vm])* $var = $val),+ }

        impl $name {
            /// Every value, in encoding order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// Number of values.
            pub const COUNT: usize = Self::ALL.len();
            /// The canonical lower-case name used in files and on the command line.
            pub const fn name(self) -> &'static str {
                match self { $($name::$var => $text),+ }
            }
            /// Decode the one-byte form used by the trace format.
            pub const fn from_byte(b: u8) -> Option<$name> {
                match b { $($val => Some($name::$var),)+ _ => None }
            }
            pub const fn to_byte(self) -> u8 { self as u8 }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.name()) }
        }
        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                let t = s.trim().to_ascii_lowercase().replace('_', "-");
                match t.as_str() {
                    $($text $(| $alias)* => Ok($name::$var),)+
                    _ => Err(format!(
                        concat!("expected a ", stringify!($name), " ({}), found `{}`"),
                        Self::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", "), s)),
                }
            }
        }
        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> { s.parse() }
        }
        impl From<$name> for &'static str {
            fn from(v: $name) -> &'static str { v.name() }
        }
    };
}

named_enum! {
    /// The semantic stream an access belongs to: the CPU's instruction/data split and the GPU
    /// streams of drp-reuse-probability-shared-llc.txt §5.1 and gspc-graphics-stream-llc.txt §2.
    Stream {
        /// CPU instruction fetch.
        CpuInstr = 0 => "cpu-instr" | "instr" | "i" | "ifetch",
        /// CPU load/store data.
        CpuData = 1 => "cpu-data" | "data" | "d",
        /// GPU vertex attribute fetch.
        Vertex = 2 => "vertex" | "vtx",
        /// GPU vertex-index (index buffer) fetch.
        VertexIndex = 3 => "vertex-index" | "index",
        /// Hierarchical-Z tiles.
        HiZ = 4 => "hiz",
        /// Depth (Z) buffer.
        Depth = 5 => "depth" | "z",
        /// Stencil buffer.
        Stencil = 6 => "stencil",
        /// Render target / color buffer.
        Color = 7 => "color" | "rt" | "render-target",
        /// Texture sampled from a surface not rendered in this frame.
        StaticTexture = 8 => "static-texture" | "texture" | "tex",
        /// Texture sampled from a surface rendered earlier in the frame (render-to-texture).
        DynamicTexture = 9 => "dynamic-texture" | "dyn-tex",
        /// Blitter reads/writes (copies and resolves).
        Blitter = 10 => "blitter" | "blit",
        /// Shader instruction fetch.
        ShaderInstr = 11 => "shader-instr",
        /// Shader global/constant data (GPGPU loads and stores live here).
        ShaderData = 12 => "shader-data" | "shader",
        /// Display engine reads of the finished frame.
        Display = 13 => "display",
        /// Anything else the GPU touches.
        Other = 14 => "other",
    }
}

impl Stream {
    /// True for the two CPU streams.
    pub const fn is_cpu(self) -> bool {
        matches!(self, Stream::CpuInstr | Stream::CpuData)
    }
    /// True for the texture sampler streams (static or dynamic).
    pub const fn is_texture(self) -> bool {
        matches!(self, Stream::StaticTexture | Stream::DynamicTexture)
    }
}

named_enum! {
    /// What an access does.
    Op {
        /// Demand read (load, instruction fetch, texture sample, ...).
        Read = 0 => "read" | "r" | "load" | "l",
        /// Demand write (store, ROP write, ...).
        Write = 1 => "write" | "w" | "store" | "s",
        /// Eviction of a dirty line from an upper cache level.
        Writeback = 2 => "writeback" | "wb",
        /// Prefetch request.
        Prefetch = 3 => "prefetch" | "pf",
    }
}

impl Op {
    /// Reads and prefetches bring data up; writes and writebacks push data down.
    pub const fn is_read(self) -> bool {
        matches!(self, Op::Read | Op::Prefetch)
    }
    pub const fn is_write(self) -> bool {
        matches!(self, Op::Write | Op::Writeback)
    }
}

/// One memory access by one agent. 40 bytes, `Copy`; the hot loop's currency.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Access {
    /// Byte address.
    pub addr: u64,
    /// Program counter of the issuing instruction; 0 when unknown (fixed-function units).
    pub pc: u64,
    /// The issuing agent's own time: its cycle, or for untimed CPU traces its retired-instruction
    /// count at this access.
    pub time: u64,
    /// GPGPU warp id (0 when not applicable).
    pub warp: u32,
    /// Unit instance that issued it: CPU core, GPU shader core/SM, texture sampler, ROP...
    pub unit: u16,
    /// Size in bytes (1..=65535).
    pub size: u16,
    pub agent: Agent,
    pub stream: Stream,
    pub op: Op,
    /// Bit flags, see [`Access::CRITICAL`].
    pub flags: u8,
}

impl Access {
    /// Flag bit: the access is on the GPU's critical path (gpu-access-criticality-dram-scheduling.txt).
    pub const CRITICAL: u8 = 1;
    /// Flag bit on a read: the instruction also writes the same bytes (valgrind's `M`, a
    /// read-modify-write). Counted as one read, as cachegrind does, but it dirties the line.
    pub const MODIFY: u8 = 2;
    /// Flag bit: a miss of this access in the LLC does not allocate there; it goes on to
    /// memory as it is (a hit is still a hit). The timed SIMT GPU sets it on its non-critical
    /// shader accesses (gpu-access-criticality §4.1.2). Not stored in `.apt` traces.
    pub const BYPASS_LLC: u8 = 4;

    /// A plain access with everything but the essentials zeroed.
    pub fn new(agent: Agent, stream: Stream, op: Op, addr: u64, size: u16) -> Access {
        Access {
            addr,
            pc: 0,
            time: 0,
            warp: 0,
            unit: 0,
            size,
            agent,
            stream,
            op,
            flags: 0,
        }
    }
    pub fn with_pc(mut self, pc: u64) -> Access {
        self.pc = pc;
        self
    }
    pub fn with_time(mut self, time: u64) -> Access {
        self.time = time;
        self
    }
    pub fn with_unit(mut self, unit: u16) -> Access {
        self.unit = unit;
        self
    }
    pub fn with_warp(mut self, warp: u32) -> Access {
        self.warp = warp;
        self
    }
    pub fn critical(mut self, yes: bool) -> Access {
        if yes {
            self.flags |= Self::CRITICAL;
        } else {
            self.flags &= !Self::CRITICAL;
        }
        self
    }
    pub const fn is_critical(&self) -> bool {
        self.flags & Self::CRITICAL != 0
    }
    /// True if the access leaves the line dirty: a write, a writeback or a modify.
    pub const fn dirties(&self) -> bool {
        self.op.is_write() || self.flags & Self::MODIFY != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_is_compact() {
        assert_eq!(std::mem::size_of::<Access>(), 40);
    }

    #[test]
    fn names_round_trip() {
        for s in Stream::ALL {
            assert_eq!(s.name().parse::<Stream>().unwrap(), *s);
            assert_eq!(Stream::from_byte(s.to_byte()), Some(*s));
        }
        for o in Op::ALL {
            assert_eq!(o.name().parse::<Op>().unwrap(), *o);
        }
        assert_eq!("cpu3".parse::<Agent>().unwrap(), Agent::cpu(3));
        assert_eq!("GPU".parse::<Agent>().unwrap(), Agent::GPU);
        assert!("cpu200".parse::<Agent>().is_err());
        assert!("color-ish".parse::<Stream>().is_err());
        assert_eq!(Agent::from_byte(0x81), None);
    }
}
