//! Generate every GPGPU kernel at its default size (or the size given as `NAME=SIZE`
//! arguments), print its record count, a hash of every record field and the generation rate.
//! Used to check that speed work leaves the generated traces bit-identical:
//! `cargo run --release -p apusim-workloads --example gpgpu_hash [NAME ...]`.

use apusim_trace::Access;
use apusim_workloads::gpgpu::{self, GpgpuParams};
use std::time::Instant;

fn mix(h: &mut u64, x: u64) {
    *h = (*h ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
}

fn hash(a: &Access, h: &mut u64) {
    mix(h, a.addr);
    mix(h, a.pc);
    mix(h, a.time);
    let small = a.warp as u64 | (a.unit as u64) << 32 | (a.size as u64) << 48;
    mix(h, small);
    let tags = a.agent.to_byte() as u64
        | (a.stream as u64) << 8
        | (a.op as u64) << 16
        | (a.flags as u64) << 24;
    mix(h, tags);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    for k in gpgpu::KERNELS {
        if !args.is_empty() && !args.iter().any(|a| a.split('=').next() == Some(k.name)) {
            continue;
        }
        let size = args
            .iter()
            .find_map(|a| a.strip_prefix(&format!("{}=", k.name)))
            .map_or(0, |s| s.parse().unwrap());
        let p = GpgpuParams {
            size,
            ..GpgpuParams::default()
        };
        let t0 = Instant::now();
        let mut src = gpgpu::generate(k.name, &p).unwrap();
        let setup = t0.elapsed().as_secs_f64();
        let (mut n, mut h) = (0u64, 0xcbf2_9ce4_8422_2325u64);
        let mut buf = Vec::with_capacity(apusim_trace::BATCH);
        while src.next_batch(&mut buf).unwrap() {
            for a in &buf {
                hash(a, &mut h);
            }
            n += buf.len() as u64;
            buf.clear();
        }
        let total = t0.elapsed().as_secs_f64();
        println!(
            "{:<13} {:>9} records  hash {:016x}  setup {:6.3}s total {:6.3}s  {:6.2} M rec/s",
            k.name,
            n,
            h,
            setup,
            total,
            n as f64 / total / 1e6
        );
    }
}
