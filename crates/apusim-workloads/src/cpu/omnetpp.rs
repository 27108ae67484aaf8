//! omnetpp-like discrete-event simulation (stand-in for SPEC CPU 2006 471.omnetpp): a
//! binary-heap future event set of small message objects; each event updates its target
//! module's state object and sends new messages to neighbouring modules.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

/// Events handled per step.
const EVENTS: usize = 4096;

pub struct Omnetpp {
    /// Future event set: (time, message id), a binary min-heap of `len` entries.
    pub heap: Buf<(u64, u32)>,
    pub len: usize,
    /// Message objects: (target module, hops, payload).
    pub msgs: Buf<(u32, u32, u64)>,
    /// Module state objects: (received, last time, checksum, neighbour seed), 32 bytes each.
    pub modules: Buf<(u64, u64, u64, u64)>,
    pub now: u64,
    /// Times of the events handled by the last step, in order.
    pub handled: Vec<u64>,
    rng: crate::rng::SplitMix64,
}

pub fn new(p: &CpuParams, h: &mut Heap) -> Omnetpp {
    let m = p.size_or(1 << 16).max(2);
    let mut r = rng(p, 2);
    let msgs_n = 4 * m;
    let mut ev: Vec<(u64, u32)> = (0..msgs_n).map(|i| (r.below(1000), i as u32)).collect();
    ev.sort_unstable();
    let msgs = h.buf(
        (0..msgs_n)
            .map(|_| (r.below(m as u64) as u32, 0, r.next_u64()))
            .collect(),
    );
    let modules = h.buf((0..m).map(|_| (0, 0, 0, r.next_u64())).collect());
    let heap = h.buf(ev);
    Omnetpp {
        len: msgs_n,
        heap,
        msgs,
        modules,
        now: 0,
        handled: Vec::new(),
        rng: r,
    }
}

impl Omnetpp {
    fn pop(&mut self, t: &mut Tracer) -> (u64, u32) {
        let top = t.load(0x00, &self.heap, 0);
        self.len -= 1;
        let last = t.load(0x08, &self.heap, self.len);
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= self.len {
                break;
            }
            let mut c = l;
            let lv = t.load(0x10, &self.heap, l);
            if l + 1 < self.len {
                let rv = t.load(0x18, &self.heap, l + 1);
                if rv < lv {
                    c = l + 1;
                }
            }
            let cv = self.heap.data[c];
            t.exec(0x20, 4);
            if cv >= last {
                break;
            }
            t.store(0x28, &mut self.heap, i, cv);
            i = c;
        }
        if self.len > 0 {
            t.store(0x30, &mut self.heap, i, last);
        }
        top
    }
    fn push(&mut self, t: &mut Tracer, e: (u64, u32)) {
        let mut i = self.len;
        self.len += 1;
        while i > 0 {
            let p = (i - 1) / 2;
            let pv = t.load(0x40, &self.heap, p);
            t.exec(0x48, 3);
            if pv <= e {
                break;
            }
            t.store(0x50, &mut self.heap, i, pv);
            i = p;
        }
        t.store(0x58, &mut self.heap, i, e);
    }
}

impl CpuKernel for Omnetpp {
    fn step(&mut self, t: &mut Tracer) {
        self.handled.clear();
        let m = self.modules.len() as u64;
        for _ in 0..EVENTS {
            let (time, id) = self.pop(t);
            self.now = time;
            self.handled.push(time);
            let (target, hops, payload) = t.load(0x60, &self.msgs, id as usize);
            let st = t.load(0x68, &self.modules, target as usize);
            t.exec(0x70, 20);
            let ns = (st.0 + 1, time, st.2 ^ payload.rotate_left(hops), st.3);
            t.store(0x78, &mut self.modules, target as usize, ns);
            // Forward the message to a neighbour module after a link delay.
            let next = (st.3.wrapping_add(self.rng.below(8)) % m) as u32;
            t.store(0x80, &mut self.msgs, id as usize, (next, hops + 1, payload));
            let delay = 1 + self.rng.below(100);
            self.push(t, (time + delay, id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_time_order() {
        let p = CpuParams {
            size: 500,
            ..CpuParams::default()
        };
        let mut k = new(&p, &mut Heap::new(0));
        let mut t = Tracer::collecting(0, u64::MAX);
        k.step(&mut t);
        k.step(&mut t);
        assert!(k.handled.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(k.len, 2000);
        let received: u64 = k.modules.data.iter().map(|m| m.0).sum();
        assert_eq!(received, 2 * EVENTS as u64);
    }
}
