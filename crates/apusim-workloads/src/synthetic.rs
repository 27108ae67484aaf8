//! Simple synthetic generators for the built-in demo mix.
//!
//! [`CpuSynth`] models one CPU core running a loop whose data accesses follow one of a few
//! characteristic patterns ([`CpuKind`]); its time stamps are retired-instruction counts.
//! [`RenderSynth`] models a GPU rendering frames in three passes — an offscreen pass into a
//! render target, a main pass that samples static textures and the offscreen target as a
//! dynamic texture (render-to-texture), and a blit of the back buffer to the display surface —
//! tile by tile (8×8 pixels), with hierarchical-Z, depth, color, texture, vertex, blitter and
//! display accesses from the samplers and ROPs that would issue them. Its time stamps are GPU
//! cycles at one access per cycle.

use crate::rng::SplitMix64;
use apusim_trace::{Access, AccessSource, Agent, Op, Result, Stream, TraceHeader, BATCH};

/// The memory behaviour of a synthetic CPU program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuKind {
    /// Sequential sweeps over a large array (libquantum-, bwaves-like).
    Stream,
    /// Uniformly random accesses over a large region (mcf-like pointer chasing).
    Chase,
    /// Skewed reuse of a table that fits in a large LLC (sphinx3-like scoring tables).
    HotTable,
    /// A 3D stencil: three input planes and one output plane (lbm-, leslie3d-like).
    Stencil,
}

impl CpuKind {
    pub const ALL: [CpuKind; 4] = [
        CpuKind::Stream,
        CpuKind::Chase,
        CpuKind::HotTable,
        CpuKind::Stencil,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CpuKind::Stream => "stream",
            CpuKind::Chase => "chase",
            CpuKind::HotTable => "hot-table",
            CpuKind::Stencil => "stencil",
        }
    }
}

/// One synthetic CPU core.
pub struct CpuSynth {
    header: TraceHeader,
    agent: Agent,
    kind: CpuKind,
    rng: SplitMix64,
    instructions: u64,
    retired: u64,
    code_base: u64,
    data_base: u64,
    pc: u64,
    cursor: u64,
}

const CODE_LOOP: u64 = 2048 * 4;

impl CpuSynth {
    /// Core `core` running `kind` for `instructions` instructions.
    pub fn new(core: u8, kind: CpuKind, instructions: u64, seed: u64) -> CpuSynth {
        let agent = Agent::cpu(core);
        let header = TraceHeader::single(
            agent,
            kind.name(),
            0,
            &[Stream::CpuInstr, Stream::CpuData],
            &format!(
                "apusim synthetic cpu kind={} instructions={instructions} seed={seed}",
                kind.name()
            ),
        );
        CpuSynth {
            header,
            agent,
            kind,
            rng: SplitMix64::new(seed ^ (core as u64) << 32),
            instructions,
            retired: 0,
            code_base: 0x40_0000 + ((core as u64) << 28),
            data_base: (core as u64 + 1) << 34,
            pc: 0,
            cursor: 0,
        }
    }

    /// The next data access of this core's pattern: (address, is_write).
    fn data(&mut self) -> (u64, bool) {
        let r = &mut self.rng;
        match self.kind {
            CpuKind::Stream => {
                self.cursor = (self.cursor + 8) % (32 << 20);
                (self.data_base + self.cursor, r.chance(200))
            }
            CpuKind::Chase => (self.data_base + (r.below(64 << 20) & !7), r.chance(100)),
            CpuKind::HotTable => {
                let u = r.below(1 << 16);
                let idx = (u * u) >> 16; // skewed toward 0
                (self.data_base + idx * 64 + r.below(8) * 8, r.chance(150))
            }
            CpuKind::Stencil => {
                const PLANE: u64 = 8 << 20;
                self.cursor = (self.cursor + 8) % PLANE;
                match r.below(4) {
                    0 => (self.data_base + self.cursor, false),
                    1 => (self.data_base + (self.cursor + 64 * 1024) % PLANE, false),
                    2 => (
                        self.data_base + (self.cursor + PLANE - 64 * 1024) % PLANE,
                        false,
                    ),
                    _ => (self.data_base + 2 * PLANE + self.cursor, true),
                }
            }
        }
    }
}

impl AccessSource for CpuSynth {
    fn header(&self) -> &TraceHeader {
        &self.header
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if self.retired >= self.instructions {
            return Ok(false);
        }
        let stop = out.len() + BATCH;
        while out.len() + 1 < stop && self.retired < self.instructions {
            self.retired += 1;
            // A loop body of 2048 instructions with a rare call into a 64 KB library.
            self.pc = if self.rng.chance(4) {
                CODE_LOOP + self.rng.below(16 * 1024) * 4
            } else {
                (self.pc + 4) % CODE_LOOP
            };
            let pc = self.code_base + self.pc;
            let unit = self.agent.to_byte() as u16;
            out.push(
                Access::new(self.agent, Stream::CpuInstr, Op::Read, pc, 4)
                    .with_pc(pc)
                    .with_time(self.retired)
                    .with_unit(unit),
            );
            if self.rng.chance(340) {
                let (addr, write) = self.data();
                let op = if write { Op::Write } else { Op::Read };
                out.push(
                    Access::new(self.agent, Stream::CpuData, op, addr, 8)
                        .with_pc(pc)
                        .with_time(self.retired)
                        .with_unit(unit),
                );
            }
        }
        Ok(true)
    }
}

/// Surfaces of the synthetic renderer, in the GPU's address space.
#[derive(Clone, Copy)]
struct Surfaces {
    hiz: u64,
    depth: u64,
    offscreen: u64,
    back: u64,
    display: u64,
    textures: u64,
    vertices: u64,
}

const GPU_BASE: u64 = 0x100_0000_0000;
const TEX_SIDE: u64 = 1024;
const TEXTURES: u64 = 6;
const SAMPLERS: u16 = 128;
const ROPS: u16 = 16;

/// A GPU rendering `frames` frames of `width × height` pixels.
pub struct RenderSynth {
    header: TraceHeader,
    s: Surfaces,
    width: u64,
    height: u64,
    frames: u64,
    rng: SplitMix64,
    frame: u64,
    /// 0 offscreen pass, 1 main pass, 2 blit, 3 display.
    pass: u8,
    tile: u64,
    cycle: u64,
}

impl RenderSynth {
    pub fn new(width: u32, height: u32, frames: u32, seed: u64) -> RenderSynth {
        let (w, h) = (width.max(8) as u64, height.max(8) as u64);
        let px = w * h * 4;
        let align = |x: u64| (x + 0xFFFF) & !0xFFFF;
        let hiz = GPU_BASE;
        let depth = align(hiz + px / 64);
        let offscreen = align(depth + px);
        let back = align(offscreen + px / 4);
        let display = align(back + px);
        let textures = align(display + px);
        let vertices = align(textures + TEXTURES * TEX_SIDE * TEX_SIDE * 4);
        let streams = [
            Stream::Vertex,
            Stream::HiZ,
            Stream::Depth,
            Stream::Color,
            Stream::StaticTexture,
            Stream::DynamicTexture,
            Stream::Blitter,
            Stream::Display,
        ];
        RenderSynth {
            header: TraceHeader::single(
                Agent::GPU,
                "render",
                1000,
                &streams,
                &format!("apusim synthetic render {width}x{height} frames={frames} seed={seed}"),
            ),
            s: Surfaces {
                hiz,
                depth,
                offscreen,
                back,
                display,
                textures,
                vertices,
            },
            width: w,
            height: h,
            frames: frames as u64,
            rng: SplitMix64::new(seed ^ 0x6770_7500),
            frame: 0,
            pass: 0,
            tile: 0,
            cycle: 0,
        }
    }

    fn emit(&mut self, out: &mut Vec<Access>, stream: Stream, op: Op, addr: u64, unit: u16) {
        self.cycle += 1;
        out.push(
            Access::new(Agent::GPU, stream, op, addr, 64)
                .with_time(self.cycle)
                .with_unit(unit),
        );
    }

    /// Address of the 8×8 tile `t` (4 bytes per pixel, tiles stored contiguously).
    fn tile_addr(base: u64, t: u64) -> u64 {
        base + t * 256
    }

    /// One tile of a geometry pass into `target` (sampling textures in the main pass).
    fn geometry_tile(&mut self, out: &mut Vec<Access>, t: u64, tiles: u64, main: bool) {
        let rop = (t % ROPS as u64) as u16;
        if t.is_multiple_of(16) {
            let v = self.s.vertices + (self.rng.below(1 << 14) * 32);
            self.emit(out, Stream::Vertex, Op::Read, v, 0);
        }
        let hiz = self.s.hiz + (t * 4) / 64 * 64;
        self.emit(out, Stream::HiZ, Op::Read, hiz, rop);
        // In the main pass roughly a third of the tiles are occluded by HiZ.
        if main && self.rng.chance(330) {
            return;
        }
        let depth = Self::tile_addr(self.s.depth, t);
        let target = if main {
            Self::tile_addr(self.s.back, t)
        } else {
            Self::tile_addr(self.s.offscreen, t % (tiles / 4).max(1))
        };
        for line in 0..4 {
            self.emit(out, Stream::Depth, Op::Read, depth + line * 64, rop);
            self.emit(out, Stream::Depth, Op::Write, depth + line * 64, rop);
        }
        if main {
            let sampler = (t % SAMPLERS as u64) as u16;
            let tex = self.rng.below(TEXTURES);
            let tx = (t % (self.width / 8)) * 8 * TEX_SIDE / self.width;
            let ty = (t / (self.width / 8)) * 8 * TEX_SIDE / self.height;
            for q in 0..4u64 {
                let texel = (ty + q * 2) * TEX_SIDE + tx;
                let a = self.s.textures + tex * TEX_SIDE * TEX_SIDE * 4 + texel * 4;
                self.emit(out, Stream::StaticTexture, Op::Read, a & !63, sampler);
            }
            // Render-to-texture: sample the offscreen target rendered earlier this frame.
            let src = Self::tile_addr(self.s.offscreen, (t / 4) % (tiles / 4).max(1));
            self.emit(out, Stream::DynamicTexture, Op::Read, src, sampler);
        }
        for line in 0..4 {
            self.emit(out, Stream::Color, Op::Write, target + line * 64, rop);
        }
    }

    fn step(&mut self, out: &mut Vec<Access>) {
        let tiles = (self.width / 8) * (self.height / 8);
        let pass_tiles = match self.pass {
            0 => tiles / 4,
            _ => tiles,
        };
        let t = self.tile;
        match self.pass {
            0 => self.geometry_tile(out, t, tiles, false),
            1 => self.geometry_tile(out, t, tiles, true),
            2 => {
                for line in 0..4 {
                    let off = t * 256 + line * 64;
                    self.emit(out, Stream::Blitter, Op::Read, self.s.back + off, 0);
                    self.emit(out, Stream::Blitter, Op::Write, self.s.display + off, 0);
                }
            }
            _ => {
                for line in 0..4 {
                    self.emit(
                        out,
                        Stream::Display,
                        Op::Read,
                        self.s.display + t * 256 + line * 64,
                        0,
                    );
                }
            }
        }
        self.tile += 1;
        if self.tile >= pass_tiles {
            self.tile = 0;
            self.pass += 1;
            if self.pass == 4 {
                self.pass = 0;
                self.frame += 1;
            }
        }
    }
}

impl AccessSource for RenderSynth {
    fn header(&self) -> &TraceHeader {
        &self.header
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if self.frame >= self.frames {
            return Ok(false);
        }
        let stop = out.len() + BATCH - 64;
        while out.len() < stop && self.frame < self.frames {
            self.step(out);
        }
        Ok(true)
    }
}

/// The demo's 4C1G mix: four CPU cores of different kinds and a rendering GPU, sized by
/// `scale` (1 = about ten million accesses).
pub fn demo_mix(cpus: u8, scale: u64, seed: u64) -> Vec<(String, Box<dyn AccessSource>)> {
    let mut v: Vec<(String, Box<dyn AccessSource>)> = (0..cpus)
        .map(|c| {
            let kind = CpuKind::ALL[c as usize % CpuKind::ALL.len()];
            let src: Box<dyn AccessSource> =
                Box::new(CpuSynth::new(c, kind, 1_500_000 * scale, seed));
            (format!("synthetic cpu{c} ({})", kind.name()), src)
        })
        .collect();
    v.push((
        "synthetic gpu (render 1280x720)".into(),
        Box::new(RenderSynth::new(1280, 720, 2 * scale as u32, seed)),
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_time_ordered() {
        let run = |seed| {
            let mut v = Vec::new();
            let mut g = CpuSynth::new(1, CpuKind::Chase, 10_000, seed);
            while g.next_batch(&mut v).unwrap() {}
            let mut r = RenderSynth::new(64, 64, 2, seed);
            while r.next_batch(&mut v).unwrap() {}
            v
        };
        let a = run(7);
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
        for w in a.windows(2).filter(|w| w[0].agent == w[1].agent) {
            assert!(w[0].time <= w[1].time);
        }
        let instr = a.iter().filter(|x| x.stream == Stream::CpuInstr).count();
        assert_eq!(instr, 10_000);
        for s in [
            Stream::Color,
            Stream::DynamicTexture,
            Stream::Depth,
            Stream::Display,
        ] {
            assert!(a.iter().any(|x| x.stream == s), "{s} missing");
        }
    }

    #[test]
    fn dynamic_texture_reads_hit_the_render_target() {
        let mut v = Vec::new();
        let mut r = RenderSynth::new(128, 128, 1, 1);
        while r.next_batch(&mut v).unwrap() {}
        let written: std::collections::HashSet<u64> = v
            .iter()
            .filter(|a| a.stream == Stream::Color)
            .map(|a| a.addr)
            .collect();
        let dyn_reads: Vec<u64> = v
            .iter()
            .filter(|a| a.stream == Stream::DynamicTexture)
            .map(|a| a.addr)
            .collect();
        assert!(!dyn_reads.is_empty());
        assert!(dyn_reads.iter().all(|a| written.contains(a)));
    }
}
