//! On-chip networks: how long a message takes from one stop to another.
//!
//! Every agent (CPU core, GPU), LLC bank and memory controller has a stop. A message sent
//! from a stop at some tick arrives at another stop at the tick [`Network::send`] returns.
//! Messages are not sent in time order (the LLC sends its answer when it will have looked
//! the line up, before requests of the present arrive), so each link, and the fixed network,
//! keeps a calendar of the cycles it is taken in: a message takes the first free cycle at or
//! after its own tick, and one sent for later never delays one sent for now.
//!
//! - `ring` (drp §3, gpu-access-criticality Table 1): a bidirectional ring, one hop per
//!   `hop_cycles`; a message takes the shorter direction (clockwise on a tie) and each
//!   directed link carries `width` messages per cycle (default one: `width` parallel lanes,
//!   a message taking the lane free first), so a message waits for a link other messages
//!   hold. Neither drp §3 nor gpu-access-criticality Table 1 gives the ring's width. Stops are in the order cores, GPU, LLC banks, memory controllers.
//!   `priority` says who waits for whom on a link: `arrival`, every message in the order it
//!   was sent; `through`, as rings that give the traffic already on the ring the right of way
//!   (a stop injects only into a free slot): a message passing a stop waits only for other
//!   passing messages, not for the messages queued to enter there. The calendar cannot move
//!   an entering message whose arrival it has already answered, so under `through` a passing
//!   message may share a cycle with one that entered at that stop.
//! - `fixed` (tap Table 4: "20-cycle fixed latency, at most 1 req/cycle"): every message
//!   takes `latency_cycles`, and the network accepts `per_cycle` messages per cycle in all.

use crate::{Domain, Tick, TimingError};
use apusim_registry::{Entry, ParamKind, ParamSpec, Params};

/// A stop on the network.
pub type Stop = usize;

pub enum Network {
    Ring(Ring),
    Fixed(Fixed),
}

pub struct Ring {
    hop: Tick,
    /// Ticks per network cycle (a link carries one message per cycle).
    slot: Tick,
    stops: usize,
    /// Messages a directed link carries per cycle (its lanes).
    lanes: usize,
    /// Passing messages wait only for passing messages (`priority = "through"`).
    through_first: bool,
    /// The calendars of the directed links' lanes, [`SLOTS`] cycles each: lane `k` of link
    /// `i` clockwise (i → i+1) at `i · lanes + k`, counter-clockwise (i → i−1) at
    /// `(stops + i) · lanes + k`; an entry holds the cycle that took it, shifted left by one,
    /// with the low bit set when a passing message (not one entering the ring at the link's
    /// stop) took it.
    taken: Vec<u64>,
    /// Messages and link-cycles waited (for reports).
    pub messages: u64,
    pub wait: Tick,
    /// Per directed link (indexed as `taken`'s calendars): messages it carried and ticks
    /// they waited for it.
    link_messages: Vec<u64>,
    link_wait: Vec<Tick>,
}

/// What one directed link of a ring carried: messages from stop `from` to its neighbour
/// `to`, and the ticks they waited for the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkCount {
    pub from: Stop,
    pub to: Stop,
    pub messages: u64,
    pub wait: Tick,
}

pub struct Fixed {
    latency: Tick,
    slot: Tick,
    per_cycle: u64,
    /// Messages taken per slot, for the slots of the last [`SLOTS`] cycles a message was
    /// sent in: entry `s % SLOTS` holds (slot `s`, messages). Messages are sent at their own
    /// ticks, which are not in order (a response is sent when the LLC will have answered,
    /// before a request of the present), so a later message may take an earlier slot.
    slots: Vec<(u64, u64)>,
    pub messages: u64,
    pub wait: Tick,
}

/// Cycles a calendar remembers: a reservation made this many cycles before or after another
/// may be forgotten (messages in flight are never that far apart).
const SLOTS: usize = 1 << 12;

impl Network {
    /// Send a message from `from` to `to` at tick `at`; returns its arrival tick.
    pub fn send(&mut self, from: Stop, to: Stop, at: Tick) -> Tick {
        match self {
            Network::Ring(r) => r.send(from, to, at),
            Network::Fixed(f) => f.send(at),
        }
    }
    /// The uncontended latency from `from` to `to` (for probes and reports).
    pub fn base_latency(&self, from: Stop, to: Stop) -> Tick {
        match self {
            Network::Ring(r) => r.hop * r.hops_between(from, to).0 as Tick,
            Network::Fixed(f) => f.latency,
        }
    }
    /// (messages, ticks spent waiting for a link or slot).
    pub fn counters(&self) -> (u64, Tick) {
        match self {
            Network::Ring(r) => (r.messages, r.wait),
            Network::Fixed(f) => (f.messages, f.wait),
        }
    }
    /// Every directed link of a ring with what it carried so far (clockwise links first);
    /// none for the fixed network, which has no links.
    pub fn links(&self) -> Vec<LinkCount> {
        match self {
            Network::Ring(r) => (0..2 * r.stops)
                .map(|l| {
                    let (from, clockwise) = (l % r.stops, l < r.stops);
                    let to = if clockwise {
                        (from + 1) % r.stops
                    } else {
                        (from + r.stops - 1) % r.stops
                    };
                    LinkCount {
                        from,
                        to,
                        messages: r.link_messages[l],
                        wait: r.link_wait[l],
                    }
                })
                .collect(),
            Network::Fixed(_) => Vec::new(),
        }
    }
}

impl Ring {
    /// Hops and direction (true = clockwise) from `from` to `to`.
    fn hops_between(&self, from: Stop, to: Stop) -> (usize, bool) {
        let n = self.stops;
        let cw = (to + n - from) % n;
        let ccw = (from + n - to) % n;
        if cw <= ccw {
            (cw, true)
        } else {
            (ccw, false)
        }
    }

    fn send(&mut self, from: Stop, to: Stop, at: Tick) -> Tick {
        let n = self.stops;
        let (hops, clockwise) = self.hops_between(from % n, to % n);
        self.messages += 1;
        let mut t = at;
        let mut s = from % n;
        for hop in 0..hops {
            let link = if clockwise { s } else { n + s };
            let passing = hop > 0;
            let first = t.div_ceil(self.slot);
            // The lane free first (the lowest on a tie), and the cycle it is free in.
            let (mut lane, mut c) = (0, u64::MAX);
            for k in 0..self.lanes {
                let base = (link * self.lanes + k) * SLOTS;
                let calendar = &self.taken[base..base + SLOTS];
                let mut free = first;
                if passing && self.through_first {
                    while calendar[(free as usize) % SLOTS] == (free << 1 | 1) {
                        free += 1;
                    }
                } else {
                    while calendar[(free as usize) % SLOTS] >> 1 == free {
                        free += 1;
                    }
                }
                if free < c {
                    (lane, c) = (k, free);
                }
            }
            let base = (link * self.lanes + lane) * SLOTS;
            self.taken[base + (c as usize) % SLOTS] = c << 1 | u64::from(passing);
            let start = (c * self.slot).max(t);
            self.wait += start - t;
            self.link_messages[link] += 1;
            self.link_wait[link] += start - t;
            t = start + self.hop;
            s = if clockwise {
                (s + 1) % n
            } else {
                (s + n - 1) % n
            };
        }
        t
    }
}

impl Fixed {
    fn send(&mut self, at: Tick) -> Tick {
        self.messages += 1;
        // The network's cycles are slots; a message takes the first slot at or after `at` that
        // still has room.
        let mut c = at.div_ceil(self.slot);
        loop {
            let e = &mut self.slots[(c as usize) % SLOTS];
            if e.0 != c {
                *e = (c, 0);
            }
            if e.1 < self.per_cycle {
                e.1 += 1;
                break;
            }
            c += 1;
        }
        let start = (c * self.slot).max(at);
        self.wait += start - at;
        start + self.latency
    }
}

/// The constructor of a registered network: validated parameters, the network's clock, the
/// number of stops.
pub type BuildNetwork = fn(&Params, Domain, usize) -> Network;

const RING_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "hop_cycles",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: "1",
        unit: "cycles",
        doc: "cycles per hop (drp §3: a single-cycle hop)",
    },
    ParamSpec {
        name: "width",
        kind: ParamKind::Int { min: 1, max: 16 },
        default: "1",
        unit: "messages/cycle",
        doc: "messages each directed link carries per cycle, as parallel lanes (drp §3 and \
              gpu-access-criticality Table 1 give no width)",
    },
    ParamSpec {
        name: "priority",
        kind: ParamKind::Choice(&["arrival", "through"]),
        default: "\"arrival\"",
        unit: "",
        doc: "who goes first on a link: `arrival` (in the order messages were sent) or \
              `through` (messages already on the ring before those entering at the stop)",
    },
];

const FIXED_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "latency_cycles",
        kind: ParamKind::Int {
            min: 0,
            max: 100_000,
        },
        default: "20",
        unit: "cycles",
        doc: "latency of every message (tap Table 4: 20)",
    },
    ParamSpec {
        name: "per_cycle",
        kind: ParamKind::Int { min: 1, max: 1024 },
        default: "1",
        unit: "messages/cycle",
        doc: "messages the network accepts per cycle (tap Table 4: 1)",
    },
];

fn build_ring(p: &Params, d: Domain, stops: usize) -> Network {
    let n = stops.max(1);
    let lanes = p.int("width") as usize;
    Network::Ring(Ring {
        hop: d.cycles(p.int("hop_cycles")),
        slot: d.period,
        stops: n,
        lanes,
        through_first: p.choice("priority") == "through",
        taken: vec![u64::MAX; 2 * n * lanes * SLOTS],
        messages: 0,
        wait: 0,
        link_messages: vec![0; 2 * n],
        link_wait: vec![0; 2 * n],
    })
}

fn build_fixed(p: &Params, d: Domain, _stops: usize) -> Network {
    Network::Fixed(Fixed {
        latency: d.cycles(p.int("latency_cycles")),
        slot: d.period,
        per_cycle: p.int("per_cycle"),
        slots: vec![(u64::MAX, 0); SLOTS],
        messages: 0,
        wait: 0,
    })
}

/// The registered on-chip networks.
pub const REGISTRY: &[Entry<BuildNetwork>] = &[
    Entry {
        name: "ring",
        description: "bidirectional ring, one stop per core, GPU, LLC bank and memory controller; link contention",
        paper: "drp §3; gpu-access-criticality Table 1",
        params: RING_PARAMS,
        build: build_ring,
    },
    Entry {
        name: "fixed",
        description: "fixed-latency network accepting a bounded number of messages per cycle",
        paper: "tap Table 4",
        params: FIXED_PARAMS,
        build: build_fixed,
    },
];

/// Build the network `name` with user parameters `given`.
pub fn build(
    name: &str,
    given: &toml::Table,
    domain: Domain,
    stops: usize,
) -> Result<Network, TimingError> {
    let e = apusim_registry::find(REGISTRY, "network", name)?;
    let p = e.params(given)?;
    Ok((e.build)(&p, domain, stops))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(stops: usize) -> Network {
        build("ring", &toml::Table::new(), Domain::new(10), stops).unwrap()
    }

    #[test]
    fn a_wider_ring_carries_width_messages_per_cycle_on_each_link() {
        let mut given = toml::Table::new();
        given.insert("width".into(), toml::Value::Integer(2));
        let mut r = build("ring", &given, Domain::new(10), 8).unwrap();
        // Two messages leave stop 0 in the same cycle on the two lanes; the third waits one.
        assert_eq!(r.send(0, 2, 0), 20);
        assert_eq!(r.send(0, 2, 0), 20);
        assert_eq!(r.send(0, 2, 0), 30);
        assert_eq!(r.counters(), (3, 10));
        // The same three on the default ring: one per cycle.
        let mut one = ring(8);
        let arrivals: Vec<Tick> = (0..3).map(|_| one.send(0, 2, 0)).collect();
        assert_eq!(arrivals, [20, 30, 40]);
        let mut given = toml::Table::new();
        given.insert("width".into(), toml::Value::Integer(0));
        let e = build("ring", &given, Domain::new(10), 8).err().unwrap();
        assert!(e.to_string().contains("width"), "{e}");
    }

    #[test]
    fn ring_takes_the_shorter_direction() {
        let r = ring(8);
        assert_eq!(r.base_latency(0, 1), 10);
        assert_eq!(r.base_latency(0, 7), 10);
        assert_eq!(r.base_latency(0, 4), 40);
        assert_eq!(r.base_latency(6, 1), 30);
    }

    #[test]
    fn ring_links_carry_one_message_per_cycle() {
        let mut r = ring(8);
        assert_eq!(r.send(0, 2, 0), 20);
        // The second message waits a cycle on link 0→1, then follows one cycle behind.
        assert_eq!(r.send(0, 2, 0), 30);
        // The opposite direction is free.
        assert_eq!(r.send(2, 0, 0), 20);
        assert_eq!(r.counters(), (3, 10));
        // Per link: 0→1 carried two and the second waited there; 1→2 carried two (the second
        // arrived a cycle later, into a free slot); 2→1 and 1→0 one each.
        let used: Vec<(Stop, Stop, u64, Tick)> = r
            .links()
            .into_iter()
            .filter(|l| l.messages > 0)
            .map(|l| (l.from, l.to, l.messages, l.wait))
            .collect();
        assert_eq!(
            used,
            [(0, 1, 2, 10), (1, 2, 2, 0), (1, 0, 1, 0), (2, 1, 1, 0)]
        );
        assert_eq!(r.links().len(), 16);
    }

    #[test]
    fn fixed_network_accepts_per_cycle_messages() {
        let mut f = build("fixed", &toml::Table::new(), Domain::new(10), 4).unwrap();
        assert_eq!(f.send(0, 1, 0), 200);
        assert_eq!(f.send(0, 1, 0), 210, "one message per cycle");
        assert_eq!(f.send(2, 3, 5), 220);
        assert_eq!(f.send(2, 3, 100), 300);
        assert_eq!(f.base_latency(0, 3), 200);
        assert!(f.links().is_empty(), "no links to count");
    }

    #[test]
    fn a_message_sent_for_later_does_not_delay_an_earlier_one() {
        let mut f = build("fixed", &toml::Table::new(), Domain::new(10), 4).unwrap();
        assert_eq!(
            f.send(0, 1, 500),
            700,
            "a response the LLC sends in the future"
        );
        assert_eq!(
            f.send(0, 1, 100),
            300,
            "a request of the present keeps its slot"
        );
        assert_eq!(f.send(0, 1, 500), 710, "the slot at 500 is taken");
        assert_eq!(f.counters(), (3, 10));
    }

    #[test]
    fn a_ring_message_sent_for_later_does_not_delay_an_earlier_one() {
        // One-cycle hops of 10 ticks on a ring of 4 stops.
        let mut r = build("ring", &toml::Table::new(), Domain::new(10), 4).unwrap();
        assert_eq!(
            r.send(0, 2, 500),
            520,
            "an answer sent for the future, two hops"
        );
        assert_eq!(
            r.send(0, 2, 100),
            120,
            "a message of the present is not held back"
        );
        assert_eq!(
            r.send(1, 2, 510),
            530,
            "link 1 -> 2 is taken at 510: the next cycle"
        );
        assert_eq!(r.counters(), (3, 10));
        // Two messages on one link in the same cycle: the second waits one cycle.
        assert_eq!(r.send(3, 0, 1000), 1010);
        assert_eq!(r.send(3, 0, 1000), 1020);
    }

    #[test]
    fn under_through_priority_a_passing_message_overtakes_a_burst_entering_at_a_stop() {
        // Stop 1 (a GPU) puts 100 messages for stop 2 (the LLC) on the ring at once; a
        // message from stop 0 passes stop 1 a cycle later. One-cycle hops of 10 ticks.
        let run = |priority: &str| {
            let mut t = toml::Table::new();
            t.insert("priority".into(), toml::Value::String(priority.into()));
            let mut r = build("ring", &t, Domain::new(10), 4).unwrap();
            let burst: Vec<Tick> = (0..100).map(|_| r.send(1, 2, 0)).collect();
            (burst, r.send(0, 2, 0), r.send(1, 2, 0), r.counters())
        };
        let (burst, passing, after, _) = run("arrival");
        assert_eq!(burst.last(), Some(&1000));
        assert_eq!(
            passing, 1010,
            "in arrival order it waits behind the whole burst"
        );
        assert_eq!(after, 1020);
        let (burst, passing, after, (messages, _)) = run("through");
        assert_eq!(
            burst.last(),
            Some(&1000),
            "the burst itself is served as before"
        );
        assert_eq!(
            passing, 20,
            "two hops with no wait: it was on the ring first"
        );
        assert_eq!(
            after, 1010,
            "a message entering later still queues behind the burst"
        );
        assert_eq!(messages, 102);
        // Passing messages still wait for each other.
        let mut t = toml::Table::new();
        t.insert("priority".into(), toml::Value::String("through".into()));
        let mut r = build("ring", &t, Domain::new(10), 4).unwrap();
        assert_eq!(r.send(0, 2, 0), 20);
        assert_eq!(
            r.send(0, 2, 0),
            30,
            "the second waits a cycle on the first link"
        );
        assert_eq!(r.send(3, 2, 0), 10, "3 -> 2 is another link, one hop");
    }

    #[test]
    fn every_declared_default_is_valid() {
        for e in REGISTRY {
            e.params(&toml::Table::new())
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        }
    }
}
