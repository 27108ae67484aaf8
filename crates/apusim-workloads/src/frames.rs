//! How many frames a mix's rendering job renders: `scale` of them (the default), a given
//! count, or the frames the mix's paper simulates of its title.
//!
//! The papers run each title's captured frame range, not a fixed count: drp Table 1 (the
//! S/D/Q mixes) and gpu-access-criticality Table 2 (the H/L/HL mixes) list the first and last
//! frame of each title's region, and a run ends when every CPU job has committed its
//! instructions *and* the GPU has rendered that region (drp §3, gpu-access-criticality §5).
//! [`Frames::Paper`] gives each title its region's length, so a timed run covers the same
//! share of GPU and CPU time as the paper's. The two tables differ for the titles whose
//! regions gpu-access-criticality lengthened (DOOM3 5 → 15 frames, UT2004 5 → 18, ...).

use crate::WorkloadError;
use apusim_registry::Value;
use std::fmt;

/// The frame regions of drp Table 1 (first and last frame, inclusive), in the order of the
/// fourteen rendering titles (`mixes`' S/D/Q n = 1–14).
pub(crate) const DRP_TABLE1: [(u32, u32); 14] = [
    (670, 671), // 3DMark06 GT1
    (500, 501), // 3DMark06 GT2
    (600, 601), // 3DMark06 HDR1
    (550, 551), // 3DMark06 HDR2
    (208, 209), // COD2
    (400, 401), // Crysis
    (300, 304), // DOOM3
    (25, 27),   // HL2
    (601, 605), // L4D
    (10, 12),   // NFS
    (300, 304), // Quake4
    (253, 257), // COR
    (200, 204), // UT2004
    (955, 957), // UT3
];

/// The frame regions of gpu-access-criticality Table 2, in the same title order (H/L/HL
/// n = 1–14).
pub(crate) const CRIT_TABLE2: [(u32, u32); 14] = [
    (670, 671), // 3DMark06 GT1
    (500, 501), // 3DMark06 GT2
    (600, 601), // 3DMark06 HDR1
    (550, 551), // 3DMark06 HDR2
    (208, 209), // COD2
    (400, 401), // Crysis
    (300, 314), // DOOM3
    (25, 33),   // HL2
    (601, 605), // L4D
    (10, 17),   // NFS
    (300, 309), // Quake4
    (253, 267), // COR
    (200, 217), // UT2004
    (955, 956), // UT3
];

/// How many frames a mix's rendering job renders (`apusim run|sim --frames`, a sweep point's
/// and the Python `run`'s `frames`, the timed studies' `--frames`). GPGPU jobs are sized by
/// `scale` whatever this says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Frames {
    /// `scale` frames.
    #[default]
    Scale,
    /// This many frames (1 to `apusim_render::builtin::MAX_FRAMES`).
    Count(u32),
    /// The length of the title's frame region in the table of the mix's paper (drp Table 1,
    /// gpu-access-criticality Table 2).
    Paper,
}

impl Frames {
    /// `paper` or a frame count, checked against the scenes' `frames` parameter (a count of
    /// zero, the scene's own, is refused: a mix's job always names its length).
    pub fn parse(s: &str) -> Result<Frames, WorkloadError> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("paper") {
            return Ok(Frames::Paper);
        }
        let n: u64 = s.parse().map_err(|_| {
            WorkloadError::InvalidParam(format!(
                "frames `{s}`: give a number of frames or `paper` (the title's frame region in \
                 its paper's table)"
            ))
        })?;
        Frames::count(n)
    }

    /// A frame count, checked against the scenes' `frames` parameter (1 to
    /// `apusim_render::builtin::MAX_FRAMES`).
    pub fn count(n: u64) -> Result<Frames, WorkloadError> {
        if n == 0 {
            return Err(WorkloadError::InvalidParam(
                "frames must be at least 1 (or `paper`)".to_string(),
            ));
        }
        apusim_render::builtin::options(None, &[("frames", Value::Int(n))])?;
        Ok(Frames::Count(n as u32))
    }

    /// A frame count given as a signed number (a TOML integer, a Python int): a negative one
    /// is refused as a zero is.
    pub fn signed_count(n: i64) -> Result<Frames, WorkloadError> {
        let n = u64::try_from(n).map_err(|_| {
            WorkloadError::InvalidParam(format!("frames must be at least 1, not {n}"))
        })?;
        Frames::count(n)
    }

    /// How a run's key and description name it: `None` for the default, so runs without
    /// it keep the keys they had.
    pub fn label(self) -> Option<String> {
        match self {
            Frames::Scale => None,
            Frames::Count(n) => Some(n.to_string()),
            Frames::Paper => Some("paper".to_string()),
        }
    }

    /// The frames of a rendering job sized `scale` whose paper gives it `region` (first and
    /// last frame), if any; `what` names the job in errors.
    pub fn resolve(
        self,
        scale: u64,
        region: Option<(u32, u32)>,
        what: &str,
    ) -> Result<u32, WorkloadError> {
        match self {
            // At most MAX_SCALE, checked by the callers.
            Frames::Scale => Ok(u32::try_from(scale).unwrap_or(u32::MAX)),
            Frames::Count(n) => Ok(n),
            Frames::Paper => region.map(|(a, b)| b - a + 1).ok_or_else(|| {
                WorkloadError::InvalidParam(format!(
                    "frames `paper`: {what} has no frame region in a paper's table; give a \
                     number of frames"
                ))
            }),
        }
    }
}

impl fmt::Display for Frames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Frames::Scale => write!(f, "scale"),
            Frames::Count(n) => write!(f, "{n}"),
            Frames::Paper => write!(f, "paper"),
        }
    }
}

impl std::str::FromStr for Frames {
    type Err = WorkloadError;
    fn from_str(s: &str) -> Result<Frames, WorkloadError> {
        Frames::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_paper_and_refuses_the_rest() {
        assert_eq!(Frames::parse("paper").unwrap(), Frames::Paper);
        assert_eq!(Frames::parse(" Paper ").unwrap(), Frames::Paper);
        assert_eq!(Frames::parse("15").unwrap(), Frames::Count(15));
        for bad in ["0", "-1", "1001", "two", "", "1.5"] {
            let e = Frames::parse(bad).unwrap_err().to_string();
            assert!(e.contains("frames"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_tables_regions_give_their_lengths() {
        // drp Table 1: DOOM3 300–304, HL2 25–27; gpu-access-criticality Table 2: DOOM3
        // 300–314, UT2004 200–217, UT3 955–956.
        let len = |t: &[(u32, u32); 14], i: usize| Frames::Paper.resolve(1, Some(t[i]), "x");
        assert_eq!(len(&DRP_TABLE1, 6).unwrap(), 5);
        assert_eq!(len(&DRP_TABLE1, 7).unwrap(), 3);
        assert_eq!(len(&CRIT_TABLE2, 6).unwrap(), 15);
        assert_eq!(len(&CRIT_TABLE2, 12).unwrap(), 18);
        assert_eq!(len(&CRIT_TABLE2, 13).unwrap(), 2);
        for t in [&DRP_TABLE1, &CRIT_TABLE2] {
            assert!(t.iter().all(|(a, b)| a <= b));
        }
        assert_eq!(Frames::Scale.resolve(3, Some((1, 9)), "x").unwrap(), 3);
        assert_eq!(Frames::Count(4).resolve(3, Some((1, 9)), "x").unwrap(), 4);
        let e = Frames::Paper.resolve(1, None, "scene lake").unwrap_err();
        assert!(e.to_string().contains("scene lake"), "{e}");
    }
}
