//! Estimates from sampled measurement windows, with their confidence intervals (SMARTS,
//! Wunderlich et al., ISCA 2003, §3).
//!
//! A sampled run measures `n` short windows spread systematically over the program. A
//! per-window quantity (a window's CPI, its LLC misses per instruction, …) has sample mean
//! `x̄` and standard deviation `s`; by the central limit theorem the population mean lies in
//! `x̄ ± z · s / √n` with the confidence `z` stands for (SMARTS reports 99.7%, `z = 3`). IPC
//! and weighted speedup are ratios of sums (instructions over cycles), so they use the ratio
//! estimator `R = Σx / Σy`, whose standard error comes from the residuals `x_i − R·y_i`
//! (the linearisation used in survey sampling, Cochran, *Sampling Techniques*, §6.4). The
//! number of windows a target error needs follows from the coefficient of variation
//! `V = s / x̄`: `n ≥ (z · V / ε)²` (SMARTS eq. 1).

use serde::{Deserialize, Serialize};

/// SMARTS's confidence: 99.7%.
pub const Z_997: f64 = 3.0;

/// An estimate and its confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    /// Half the interval's width: the quantity lies in `value ± half_width`.
    pub half_width: f64,
    /// Windows it rests on.
    pub windows: usize,
}

impl Estimate {
    /// The interval's half width relative to the value (`∞` for a zero value with spread).
    pub fn relative_error(&self) -> f64 {
        if self.value != 0.0 {
            (self.half_width / self.value).abs()
        } else if self.half_width == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    }
    /// Whether `x` lies inside the interval.
    pub fn contains(&self, x: f64) -> bool {
        (x - self.value).abs() <= self.half_width
    }
}

/// The mean of `samples` with its interval at confidence `z`; `None` for fewer than two
/// samples (no spread can be measured from one).
pub fn mean(samples: &[f64], z: f64) -> Option<Estimate> {
    let n = samples.len();
    if n < 2 {
        return None;
    }
    let m = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    Some(Estimate {
        value: m,
        half_width: z * (var / n as f64).sqrt(),
        windows: n,
    })
}

/// The ratio `Σx / Σy` over paired samples (e.g. instructions and cycles of each window:
/// IPC) with its interval at confidence `z`; `None` for fewer than two pairs or `Σy = 0`.
pub fn ratio(x: &[f64], y: &[f64], z: f64) -> Option<Estimate> {
    let n = x.len().min(y.len());
    let (sx, sy) = (x[..n].iter().sum::<f64>(), y[..n].iter().sum::<f64>());
    if n < 2 || sy == 0.0 {
        return None;
    }
    let r = sx / sy;
    let ybar = sy / n as f64;
    let var = x[..n]
        .iter()
        .zip(&y[..n])
        .map(|(a, b)| (a - r * b) * (a - r * b))
        .sum::<f64>()
        / (n - 1) as f64;
    Some(Estimate {
        value: r,
        half_width: z * (var / n as f64).sqrt() / ybar,
        windows: n,
    })
}

/// Windows needed for a relative error of `target` at confidence `z`, given the
/// coefficient of variation `cv` of the per-window quantity (SMARTS eq. 1).
pub fn windows_needed(cv: f64, z: f64, target: f64) -> u64 {
    if target <= 0.0 || !cv.is_finite() {
        return u64::MAX;
    }
    let n = (z * cv / target).powi(2).ceil();
    if n >= u64::MAX as f64 {
        u64::MAX
    } else {
        (n as u64).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded generator of uniform values in [0, 1).
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed.max(1);
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn mean_and_interval_of_a_known_sequence() {
        let e = mean(&[1.0, 2.0, 3.0, 4.0, 5.0], Z_997).unwrap();
        assert_eq!(e.value, 3.0);
        // s² = 2.5, s/√n = √0.5.
        assert!((e.half_width - 3.0 * 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(e.windows, 5);
        assert!(mean(&[1.0], Z_997).is_none());
        let flat = mean(&[2.0; 10], Z_997).unwrap();
        assert_eq!(
            (flat.value, flat.half_width, flat.relative_error()),
            (2.0, 0.0, 0.0)
        );
    }

    /// Over many sampled runs of a population with a known mean, the 99.7% interval covers
    /// the mean in about 99.7% of them (at least 99% over 2,000 trials of 50 windows), and
    /// the 68% one (z = 1) in about 68%.
    #[test]
    fn intervals_cover_the_true_mean_at_their_confidence() {
        let mut u = uniform(7);
        let truth = 2.0; // the mean of 1 + 2u, u uniform in [0, 1)
        let trials = 2_000;
        let (mut wide, mut narrow) = (0, 0);
        for _ in 0..trials {
            let s: Vec<f64> = (0..50).map(|_| 1.0 + 2.0 * u()).collect();
            wide += usize::from(mean(&s, Z_997).unwrap().contains(truth));
            narrow += usize::from(mean(&s, 1.0).unwrap().contains(truth));
        }
        let (wide, narrow) = (wide as f64 / trials as f64, narrow as f64 / trials as f64);
        assert!(wide >= 0.99, "99.7% interval covered {wide}");
        assert!(
            (0.63..0.73).contains(&narrow),
            "68% interval covered {narrow}"
        );
    }

    /// The ratio estimator on windows of varying length: instructions per window vary, and
    /// cycles are instructions over a per-window IPC around 1.25; Σinstructions/Σcycles over
    /// the whole population is the truth the interval must cover.
    #[test]
    fn ratio_intervals_cover_the_population_ratio() {
        let mut u = uniform(11);
        let population: Vec<(f64, f64)> = (0..100_000)
            .map(|_| {
                let instr = 800.0 + 400.0 * u();
                let ipc = 0.5 + 1.5 * u();
                (instr, instr / ipc)
            })
            .collect();
        let truth = population.iter().map(|p| p.0).sum::<f64>()
            / population.iter().map(|p| p.1).sum::<f64>();
        let trials = 1_000;
        let mut covered = 0;
        for t in 0..trials {
            // Systematic sampling: every 500th window from a random start.
            let start = (t * 37) % 500;
            let (x, y): (Vec<f64>, Vec<f64>) =
                population[start..].iter().step_by(500).copied().unzip();
            covered += usize::from(ratio(&x, &y, Z_997).unwrap().contains(truth));
        }
        assert!(
            covered as f64 / trials as f64 >= 0.99,
            "covered {covered} of {trials}"
        );
        assert!(ratio(&[1.0], &[1.0], Z_997).is_none());
        assert!(ratio(&[1.0, 2.0], &[0.0, 0.0], Z_997).is_none());
    }

    #[test]
    fn windows_needed_follows_smarts_equation_one() {
        // V = 0.5, ±3% at 99.7%: (3 × 0.5 / 0.03)² = 2500.
        assert_eq!(windows_needed(0.5, Z_997, 0.03), 2500);
        assert_eq!(windows_needed(0.0, Z_997, 0.03), 2);
        assert_eq!(windows_needed(0.5, Z_997, 0.0), u64::MAX);
    }
}
