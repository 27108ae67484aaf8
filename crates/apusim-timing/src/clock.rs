//! Clock domains on one exact global time base.
//!
//! Every component of a timed run counts in its own clock (a CPU core at 4 GHz, the GPU at
//! 1 GHz, DRAM at its tCK), and they exchange requests on one global time line of [`Tick`]s.
//! A tick is the greatest common divisor of all clock periods in the run, so every period is a
//! whole number of ticks and no edge is ever rounded: with periods `pᵢ = dᵢ/nᵢ` seconds in
//! lowest terms, one tick is `gcd(dᵢ) / lcm(nᵢ)` seconds. All clocks have an edge at tick 0.

use crate::TimingError;

/// A point on the global time line.
pub type Tick = u64;

/// A clock, as its period in seconds, a reduced fraction `num / den`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    num: u128,
    den: u128,
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Clock {
    /// A clock of `mhz` megahertz (period `1 / (mhz · 10⁶)` s).
    pub fn mhz(mhz: u32) -> Result<Clock, TimingError> {
        if mhz == 0 {
            return Err(TimingError::Config("a clock of 0 MHz".into()));
        }
        Ok(Clock::reduced(1, u128::from(mhz) * 1_000_000))
    }
    /// A clock of period `ps` picoseconds (DRAM's tCK).
    pub fn period_ps(ps: u32) -> Result<Clock, TimingError> {
        if ps == 0 {
            return Err(TimingError::Config("a clock period of 0 ps".into()));
        }
        Ok(Clock::reduced(u128::from(ps), 1_000_000_000_000))
    }
    fn reduced(num: u128, den: u128) -> Clock {
        let g = gcd(num, den);
        Clock {
            num: num / g,
            den: den / g,
        }
    }
    /// The frequency in MHz (for reports).
    pub fn mhz_f64(&self) -> f64 {
        self.den as f64 / self.num as f64 / 1e6
    }
}

/// The global time base of one run: the tick that divides every clock period of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timebase {
    /// One tick in seconds, `tick_num / tick_den`.
    tick_num: u128,
    tick_den: u128,
}

impl Timebase {
    /// The time base of a run with these clocks.
    pub fn new(clocks: &[Clock]) -> Result<Timebase, TimingError> {
        let mut g = 0u128;
        let mut l = 1u128;
        for c in clocks {
            g = gcd(g, c.num);
            l = l / gcd(l, c.den) * c.den;
            if l > u128::from(u64::MAX) {
                return Err(TimingError::Config(
                    "the clocks of the run have no common tick that fits 64 bits".into(),
                ));
            }
        }
        let tb = Timebase {
            tick_num: g.max(1),
            tick_den: l,
        };
        for c in clocks {
            tb.period(*c)?;
        }
        Ok(tb)
    }

    /// The period of `clock` in ticks. Fails if the clock was not part of the time base.
    pub fn period(&self, clock: Clock) -> Result<Tick, TimingError> {
        // period / tick = (num/den) / (tick_num/tick_den) = num·tick_den / (den·tick_num)
        let n = clock.num * self.tick_den;
        let d = clock.den * self.tick_num;
        if !n.is_multiple_of(d) {
            return Err(TimingError::Config(format!(
                "clock of {:.3} MHz is not a whole number of ticks of this time base",
                clock.mhz_f64()
            )));
        }
        u64::try_from(n / d)
            .map_err(|_| TimingError::Config("a clock period overflows 64 bits of ticks".into()))
    }

    /// Ticks in one second (for bandwidth and frame-rate reports).
    pub fn ticks_per_second(&self) -> f64 {
        self.tick_den as f64 / self.tick_num as f64
    }
}

/// One clock domain: its period in ticks and conversions between its cycles and ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    pub period: Tick,
}

impl Domain {
    pub fn new(period: Tick) -> Domain {
        Domain {
            period: period.max(1),
        }
    }
    /// The cycle whose edge is at or before `t`.
    #[inline]
    pub fn cycle(&self, t: Tick) -> u64 {
        t / self.period
    }
    /// The first edge at or after `t`.
    #[inline]
    pub fn edge_at_or_after(&self, t: Tick) -> Tick {
        t.div_ceil(self.period).saturating_mul(self.period)
    }
    /// The tick of cycle `c`'s edge.
    #[inline]
    pub fn tick(&self, c: u64) -> Tick {
        c.saturating_mul(self.period)
    }
    /// `n` cycles as ticks.
    #[inline]
    pub fn cycles(&self, n: u64) -> Tick {
        n.saturating_mul(self.period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_ghz_cpu_one_ghz_gpu_and_ddr3_2133() {
        let cpu = Clock::mhz(4000).unwrap();
        let gpu = Clock::mhz(1000).unwrap();
        let dram = Clock::period_ps(938).unwrap();
        let tb = Timebase::new(&[cpu, gpu, dram]).unwrap();
        let (pc, pg, pd) = (
            tb.period(cpu).unwrap(),
            tb.period(gpu).unwrap(),
            tb.period(dram).unwrap(),
        );
        // 250 ps, 1000 ps and 938 ps in ticks of 2 ps, their greatest common divisor.
        assert_eq!((pc, pg, pd), (125, 500, 469));
        assert!((tb.ticks_per_second() - 5e11).abs() < 1.0);
    }

    #[test]
    fn non_integer_periods_are_exact() {
        // 3.5 GHz has a period of 285.714... ps: still a whole number of ticks.
        let cpu = Clock::mhz(3500).unwrap();
        let gpu = Clock::mhz(1500).unwrap();
        let tb = Timebase::new(&[cpu, gpu]).unwrap();
        let (pc, pg) = (tb.period(cpu).unwrap(), tb.period(gpu).unwrap());
        assert_eq!(pc * 3500, pg * 1500);
        assert_eq!((pc, pg), (3, 7));
    }

    #[test]
    fn zero_clocks_are_refused() {
        assert!(Clock::mhz(0).is_err());
        assert!(Clock::period_ps(0).is_err());
    }

    #[test]
    fn domain_edges() {
        let d = Domain::new(500);
        assert_eq!(d.edge_at_or_after(0), 0);
        assert_eq!(d.edge_at_or_after(1), 500);
        assert_eq!(d.edge_at_or_after(500), 500);
        assert_eq!(d.cycle(999), 1);
    }
}
