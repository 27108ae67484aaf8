//! Static CPU/GPU way partitioning, tap-tlp-aware-llc.txt §5.5: "All CPU cores (at most 4)
//! share 16 ways of the LLC regardless of the number of concurrently running CPU
//! applications, and the GPU cores (6 cores) share the rest of the 16 ways" (of the 32-way
//! LLC of Table 4).
//!
//! Two classes, the CPU cores together and the GPU, with targets `cpu_ways` (default half the
//! ways, 16 of 32) and the rest. Within the set, lines keep a true-LRU stack (fills and hits go
//! to MRU). A miss whose class holds fewer lines than its target evicts the LRU line of the
//! other class; otherwise it evicts its own class's LRU line
//! ([`StackLru`]). Choices: the partition is enforced at replacement time, as
//! UCP enforces its targets (a class may use the other's ways while they are invalid); with
//! a one-way cache the CPU class gets the way.

use super::stack_lru::{StackLru, StackRule};
use super::umon::{LruStack, QuotaScratch};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, PolicyContext, PolicyStat};
use apusim_trace::Agent;

/// Static partitioning: [`StackLru`] with the fixed CPU/GPU split.
pub type StaticPartition = StackLru<StaticSplit>;

/// The fixed split: the CPU cores (class 0) and the GPU (class 1), and their ways.
pub struct StaticSplit {
    targets: [usize; 2],
    scratch: QuotaScratch,
}

impl StaticSplit {
    /// Way targets: CPU cores, GPU.
    pub fn targets(&self) -> [usize; 2] {
        self.targets
    }
}

/// The CPU cores' share of the ways. Unset, half the ways (at least one) go to the CPU: the
/// declared default is that half of a 16-way LLC (tap §5.5).
const CPU_WAYS: ParamSpec = ParamSpec {
    name: "cpu_ways",
    kind: ParamKind::Int {
        min: 0,
        max: LruStack::MAX_WAYS as u64,
    },
    default: "8",
    unit: "ways",
    doc: "ways the CPU cores get, the GPU the rest; unset: half the ways, at least 1",
};

impl StackRule for StaticSplit {
    fn params(list: &mut ParamList) {
        list.add(&[CPU_WAYS]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        if ctx.ways > LruStack::MAX_WAYS {
            return Err(CacheError::Config(format!(
                "static partitioning serves at most {} ways",
                LruStack::MAX_WAYS
            )));
        }
        let cpu = if ctx.params.contains_key(CPU_WAYS.name) {
            ctx.int(&CPU_WAYS)? as usize
        } else {
            (ctx.ways / 2).max(1)
        };
        if cpu > ctx.ways {
            return Err(CacheError::Config(format!(
                "parameter `cpu_ways` = {cpu}: more than the cache's {} ways",
                ctx.ways
            )));
        }
        Ok(StaticSplit {
            targets: [cpu, ctx.ways - cpu],
            scratch: {
                let mut s = QuotaScratch::new(2, ctx.ways);
                s.set_class(Agent::GPU, 1);
                s
            },
        })
    }
    #[inline]
    fn quota(&mut self) -> Option<(&[usize], &mut QuotaScratch)> {
        Some((&self.targets, &mut self.scratch))
    }
    fn stats(&self) -> Vec<PolicyStat> {
        vec![
            ("ways.cpu".into(), self.targets[0] as f64),
            ("ways.gpu".into(), self.targets[1] as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::Access;
    use apusim_trace::{Op, Stream};

    fn gpu_read(l: u64) -> Access {
        gpu(Stream::ShaderData, Op::Read, l)
    }

    /// 4 ways, 2 for the CPU cores and 2 for the GPU. The GPU fills the set, then every CPU
    /// miss takes a GPU line until the CPU holds 2, after which CPU misses replace CPU lines
    /// and GPU misses GPU lines, whatever their recency.
    #[test]
    fn replays_the_even_split() {
        let mut c = cache_of::<StaticPartition>(1, 4);
        assert_eq!(c.policy().targets(), [2, 2]);
        for l in 10..14 {
            assert_eq!(run(&mut c, &gpu_read(l)), Did::Fill(None));
        }
        assert_eq!(run(&mut c, &cpu_read(0)), Did::Fill(Some(10)));
        assert_eq!(run(&mut c, &cpu_read(1)), Did::Fill(Some(11)));
        assert_eq!(run(&mut c, &gpu_read(12)), Did::Hit);
        // CPU at target: its own LRU (0) goes although GPU line 13 is older.
        assert_eq!(run(&mut c, &cpu_read(2)), Did::Fill(Some(0)));
        // GPU at target: its own LRU (13).
        assert_eq!(run(&mut c, &gpu_read(14)), Did::Fill(Some(13)));
        // Another CPU core shares the CPU class.
        let other = Access::new(Agent::cpu(3), Stream::CpuData, Op::Read, 5 * LINE, 8);
        assert_eq!(run(&mut c, &other), Did::Fill(Some(1)));
    }

    #[test]
    fn thirty_two_ways_split_sixteen_sixteen_and_is_configurable() {
        let mut cx = ctx(4096, 32);
        cx.n_cpus = 4;
        assert_eq!(StaticPartition::build(&cx).unwrap().targets(), [16, 16]);
        cx.params.insert("cpu_ways".into(), 8.0);
        assert_eq!(StaticPartition::build(&cx).unwrap().targets(), [8, 24]);
        cx.params.insert("cpu_ways".into(), 33.0);
        assert!(StaticPartition::build(&cx).is_err());
    }
}
