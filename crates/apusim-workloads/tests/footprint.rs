//! Every workload's footprint — the distinct 64-byte lines its records touch — equals the
//! figure docs/workloads.md documents (the number in parentheses in the footprint column),
//! and lies inside the memory the workload allocated.
//!
//! GPGPU kernels run at their default size; CPU kernels at their default size for
//! [`CPU_INSTRUCTIONS`] retired instructions (data lines only, the `cpu-data` stream).

use apusim_trace::{Access, AccessSource, Stream, BATCH};
use apusim_workloads::{cpu, gpgpu, simt};
use std::collections::BTreeMap;

/// Instructions a CPU kernel retires for the documented footprint (the mixes' per-job count).
const CPU_INSTRUCTIONS: u64 = 5_000_000;

/// The documented line counts of the doc's section whose heading starts with `section`:
/// kernel name → lines, from the table rows whose first cell starts with a kernel name and
/// which hold a cell `… (N lines)`.
fn documented(section: &str) -> BTreeMap<String, u64> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/workloads.md");
    let text = std::fs::read_to_string(path).expect("reading docs/workloads.md");
    let mut out = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.starts_with(section);
        }
        if !inside || !line.starts_with("| ") {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].split_whitespace().next().unwrap_or("");
        let lines = cells.iter().find_map(|c| {
            let inner = c.strip_suffix(" lines)")?;
            let n = inner.rsplit('(').next()?;
            n.replace(',', "").parse::<u64>().ok()
        });
        if let Some(n) = lines {
            out.insert(name.to_string(), n);
        }
    }
    out
}

/// Distinct lines of the records of `src` that `keep` selects, and their lowest and highest
/// byte address.
fn lines(src: &mut dyn AccessSource, keep: impl Fn(&Access) -> bool) -> (u64, u64, u64) {
    let mut v = Vec::new();
    let mut buf = Vec::with_capacity(BATCH);
    let (mut lo, mut hi) = (u64::MAX, 0);
    while src.next_batch(&mut buf).unwrap() {
        for a in buf.iter().filter(|a| keep(a)) {
            let last = a.addr + a.size.max(1) as u64 - 1;
            v.extend((a.addr >> 6)..=(last >> 6));
            lo = lo.min(a.addr);
            hi = hi.max(last);
        }
        buf.clear();
    }
    v.sort_unstable();
    v.dedup();
    (v.len() as u64, lo, hi)
}

fn check(kind: &str, name: &str, got: u64, doc: &BTreeMap<String, u64>, bad: &mut Vec<String>) {
    match doc.get(name) {
        Some(&d) if d == got => {}
        Some(&d) => bad.push(format!(
            "{kind} {name}: touches {got} lines, documented {d}"
        )),
        None => bad.push(format!(
            "{kind} {name}: touches {got} lines, not documented"
        )),
    }
}

#[test]
fn gpgpu_footprints_are_as_documented() {
    let doc = documented("GPGPU");
    let mut bad = Vec::new();
    for k in gpgpu::KERNELS {
        let g = gpgpu::generate_with_footprint(k.name, &gpgpu::GpgpuParams::default()).unwrap();
        let mut src = g.source;
        let (n, lo, hi) = lines(&mut *src, |_| true);
        assert!(
            lo >= simt::GLOBAL_BASE && hi < simt::GLOBAL_BASE + g.footprint,
            "{}: touches {lo:#x}..={hi:#x} outside its {} allocated bytes",
            k.name,
            g.footprint
        );
        check("gpgpu", k.name, n, &doc, &mut bad);
    }
    assert_eq!(
        doc.len(),
        gpgpu::KERNELS.len(),
        "documented kernels: {doc:?}"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn cpu_footprints_are_as_documented() {
    let doc = documented("CPU");
    let mut bad = Vec::new();
    for k in cpu::KERNELS {
        let p = cpu::CpuParams {
            core: 0,
            instructions: CPU_INSTRUCTIONS,
            size: 0,
            seed: 1,
        };
        let mut src = cpu::spawn(k.name, &p).unwrap();
        let footprint = src.footprint();
        let (n, lo, hi) = lines(&mut src, |a| a.stream == Stream::CpuData);
        assert!(
            lo >= cpu::DATA_BASE && hi < cpu::DATA_BASE + footprint,
            "{}: touches {lo:#x}..={hi:#x} outside its {footprint} allocated bytes",
            k.name
        );
        check("cpu", k.name, n, &doc, &mut bad);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
