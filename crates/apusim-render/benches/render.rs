//! Criterion bench: one frame of each built-in scene at 320x200 into a counting sink (scene
//! setup — texture generation — excluded), and the rasterizer's coverage loop.

use apusim_render::{builtin, load, Emitter, NullSink, Options, Renderer};
use criterion::{criterion_group, criterion_main, Criterion};

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("render-frame-320x200");
    g.sample_size(10);
    for (name, _) in builtin::SCENES {
        let (src, desc) = load(name).expect("built-in scene");
        let opt = Options {
            width: 320,
            height: 200,
            frames: Some(1),
            seed: 1,
        };
        let mut r = Renderer::new(&src, &desc, &opt).expect("scene resolves");
        g.bench_function(*name, |b| {
            b.iter(|| {
                let mut sink = NullSink;
                let mut em = Emitter::new(&mut sink);
                r.render_frame(&mut em);
                em.finish().expect("null sink").total()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
