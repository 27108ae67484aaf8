//! The replacement/insertion policy seam.
//!
//! A policy is a plain struct implementing [`Policy`]; the engine ([`crate::Cache`]) is generic
//! over it, so a run picks its policy once (through [`crate::policies::build`]) and the hot
//! loop calls the hooks statically. Policies keep whatever per-line state they need in their
//! own arrays, indexed by `set * ways + way`.
//!
//! Hook order for one access (the engine guarantees it):
//! - hit: [`Policy::on_hit`];
//! - miss: [`Policy::on_miss`] decides allocate or bypass; on allocate the engine takes the
//!   lowest invalid way if there is one, else asks [`Policy::victim`]; a valid victim is
//!   reported through [`Policy::on_evict`] before [`Policy::on_fill`] installs the new line.
//!
//! Writes that do not allocate (write-no-allocate levels) reach no hook but `on_miss` is not
//! called either: the engine forwards them.

pub use crate::tagword::LineMeta;

use crate::params::{ParamList, ParamSpec, Value};
use crate::tagword::{word_line, word_meta, INVALID};
use crate::{CacheError, Geometry, SetLayout};
use apusim_trace::Access;
use std::collections::BTreeMap;

/// What a policy decides for a miss.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MissAction {
    /// Allocate the line (the engine picks the way: an invalid one, or the policy's victim).
    Allocate,
    /// Do not allocate: the access goes on to the next level untouched.
    Bypass,
}

/// A read-only view of one set: line addresses (`None` for invalid ways) and metadata.
pub struct SetView<'a> {
    pub(crate) tags: &'a [u64],
    /// The hash index of wide sets, for [`SetView::prefetch_eviction`].
    pub(crate) index: Option<&'a crate::lineindex::LineIndex>,
}

impl<'a> SetView<'a> {
    pub fn ways(&self) -> usize {
        self.tags.len()
    }
    /// Line address (byte address >> line bits) held by `way`, or `None` if the way is invalid.
    pub fn line(&self, way: usize) -> Option<u64> {
        let t = self.tags[way];
        (t != INVALID).then(|| word_line(t))
    }
    /// Metadata of a valid way (meaningless for an invalid one).
    pub fn meta(&self, way: usize) -> LineMeta {
        word_meta(self.tags[way])
    }
    /// Hint: `way` may be evicted by one of the next misses; prefetch its tag word (a policy
    /// that knows its coming victims ahead, like wide LRU, calls this a few victims ahead).
    #[inline(always)]
    pub fn prefetch_way(&self, way: usize) {
        crate::hostprefetch::prefetch(self.tags, way);
    }
    /// Hint: `way` will likely be evicted soon; prefetch what its eviction touches besides
    /// the tag word (the hash index slot of its line in wide sets). Reads the tag word, so it
    /// should follow [`SetView::prefetch_way`] of the same way by a few victims.
    #[inline(always)]
    pub fn prefetch_eviction(&self, way: usize) {
        if let (Some(index), Some(&word)) = (self.index, self.tags.get(way)) {
            if word != INVALID {
                index.prefetch(word_line(word));
            }
        }
    }
}

/// A line leaving the cache, as reported to [`Policy::on_evict`] and to the caller.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Evicted {
    /// Line address (byte address >> line bits).
    pub line: u64,
    pub meta: LineMeta,
}

/// Run-time signals a timing model hands to policies (functional runs provide none).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Feedback {
    /// A CPU core retired `count` instructions since its last report (TAP core sampling).
    RetiredInstructions { core: u32, count: u64 },
    /// A GPU core (SM) finished `count` instructions since its last report (TAP core sampling).
    GpuCoreInstructions { core: u32, count: u64 },
    /// Number of ready warps on a GPU core at this moment (HeLM).
    ReadyWarps { core: u32, count: u32 },
    /// The global clock advanced to `cycle` (for policies with time-based epochs).
    Tick { cycle: u64 },
}

/// Everything a policy may need to build itself: the cache geometry, the system's agents,
/// a seed for any randomness, and named parameters from the configuration.
#[derive(Clone, Debug)]
pub struct PolicyContext {
    pub sets: usize,
    pub ways: usize,
    pub line_bytes: u32,
    /// Number of CPU cores in the system (agents are cores 0..n_cpus and the GPU).
    pub n_cpus: usize,
    /// Number of LLC banks (for per-bank counters, gspc-graphics-stream-llc.txt §3).
    pub banks: usize,
    pub seed: u64,
    /// Policy parameters from the configuration (`[llc.params]` or `--set llc.params.K=V`).
    pub params: BTreeMap<String, f64>,
    /// Apply the heterogeneous baseline's GPU write rules (drp-reuse-probability-shared-llc.txt
    /// §4.1) on top of the chosen policy.
    pub gpu_write_rules: bool,
    /// How policies keep per-way state (compact arrays or wide-set structures); `Auto`
    /// chooses by `ways`.
    pub layout: SetLayout,
}

impl PolicyContext {
    /// A context for a standalone cache of geometry `g` (one CPU, one bank, seed 1).
    pub fn for_geometry(g: &Geometry) -> PolicyContext {
        PolicyContext {
            sets: g.sets() as usize,
            ways: g.ways as usize,
            line_bytes: g.line,
            n_cpus: 1,
            banks: 1,
            seed: 1,
            params: BTreeMap::new(),
            gpu_write_rules: false,
            layout: SetLayout::Auto,
        }
    }

    /// True if per-way state should use the wide-set structures (see [`SetLayout`]).
    #[inline]
    pub fn wide_sets(&self) -> bool {
        self.layout.is_wide(self.ways)
    }

    /// The integer parameter `spec`: its configured value, checked against the spec's range,
    /// else the spec's default. Panics if `spec` is not an integer (a declaration error,
    /// caught by the registry's tests).
    pub fn int(&self, spec: &ParamSpec) -> Result<u64, CacheError> {
        match self.value(spec)? {
            Value::Int(v) => Ok(v),
            other => panic!("parameter `{}` is not an integer ({other:?})", spec.name),
        }
    }

    /// The real parameter `spec` (same contract as [`PolicyContext::int`]).
    pub fn float(&self, spec: &ParamSpec) -> Result<f64, CacheError> {
        match self.value(spec)? {
            Value::Float(v) => Ok(v),
            other => panic!("parameter `{}` is not a number ({other:?})", spec.name),
        }
    }

    fn value(&self, spec: &ParamSpec) -> Result<Value, CacheError> {
        let given = self.params.get(spec.name).copied();
        if given.is_some() {
            crate::params::note_read(spec);
        }
        crate::params::checked(spec, given)
    }

    /// This context without configured parameters: building blocks a policy variant carries
    /// but does not use are built from it, so that only the parameters the variant declares
    /// reach it.
    pub fn without_params(&self) -> PolicyContext {
        PolicyContext {
            params: BTreeMap::new(),
            ..self.clone()
        }
    }

    /// Number of agents (CPU cores plus the GPU): the size of per-agent tables.
    pub fn agents(&self) -> usize {
        self.n_cpus + 1
    }

    /// Index of the per-line arrays for `(set, way)`.
    pub fn slot(&self, set: usize, way: usize) -> usize {
        set * self.ways + way
    }
}

/// A named statistic a policy reports (duel winners, counter values, bypass counts...).
pub type PolicyStat = (String, f64);

/// A replacement and insertion policy. See the module doc for the hook order.
pub trait Policy: Send + 'static {
    /// Build for the cache described by `ctx`; reject geometries or parameters it cannot serve.
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError>
    where
        Self: Sized;

    /// Every parameter [`Policy::build`] reads, its building blocks' included (see
    /// [`crate::params`]). Default: none.
    fn params(_list: &mut ParamList) {}

    /// True if this policy already implements the heterogeneous baseline's GPU write rules
    /// itself, so the registry must not wrap it again.
    const OWN_WRITE_RULES: bool = false;

    /// A hit on `way` of `set`.
    fn on_hit(&mut self, set: usize, way: usize, req: &Access);

    /// A miss in `set`: allocate or bypass. Default: allocate.
    fn on_miss(&mut self, _set: usize, _req: &Access) -> MissAction {
        MissAction::Allocate
    }

    /// Choose the way to evict from a full `set` for `req`. Must return `< view.ways()`.
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize;

    /// `victim` leaves `way` of `set` (reported before the fill that replaces it).
    fn on_evict(&mut self, _set: usize, _way: usize, _victim: &Evicted) {}

    /// `req`'s line was installed in `way` of `set`.
    fn on_fill(&mut self, set: usize, way: usize, req: &Access);

    /// A run-time signal from the timing model.
    fn on_feedback(&mut self, _fb: &Feedback) {}

    /// Hint: the set will be accessed soon; prefetch the policy's state for it. Default: none.
    #[inline]
    fn prefetch_set(&self, _set: usize) {}

    /// Hint: `way` of `set` holds a line that will be accessed soon; prefetch the policy's
    /// state for that way (wide sets, where a set's state spans far more than a few host
    /// lines). Default: none.
    #[inline]
    fn prefetch_way(&self, _set: usize, _way: usize) {}

    /// Policy-specific statistics for reports.
    fn stats(&self) -> Vec<PolicyStat> {
        Vec::new()
    }
}
