//! Device description: the organization (channels … columns) and the timing set, both in DRAM
//! clock cycles, with the sanity rules that refuse impossible combinations at load time.

use crate::error::DramError;
use serde::{Deserialize, Serialize};

/// Geometry of the memory system behind the controllers.
///
/// Bank groups exist so that DDR4 fits; DDR3 presets use one bank group of eight banks.
/// `columns` counts the columns of one row of one device (x8 DDR3 with 1 KB pages: 1024);
/// a row of a rank is `columns * bus_width / 8` bytes (8 KB for a 64-bit rank of x8 parts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Organization {
    /// Independent channels, each with its own controller, command and data bus.
    pub channels: u32,
    /// Ranks per channel.
    pub ranks: u32,
    /// Bank groups per rank (1 for DDR3).
    pub bank_groups: u32,
    /// Banks per bank group.
    pub banks_per_group: u32,
    /// Rows per bank.
    pub rows: u32,
    /// Columns per row (per device).
    pub columns: u32,
    /// Data-bus width of a channel in bits (64 for DDR3 DIMMs).
    pub bus_width: u32,
    /// Device data width in bits (x8 parts: 8).
    pub device_width: u32,
    /// Burst length in beats (8 for DDR3).
    pub burst_length: u32,
    /// Device density in Mbit, informational (shown in reports).
    pub density_mbit: u32,
}

impl Organization {
    /// Banks per rank (bank groups × banks per group).
    pub fn banks_per_rank(&self) -> u32 {
        self.bank_groups * self.banks_per_group
    }
    /// Bytes moved by one read or write burst (the transaction size): 64 B for DDR3 x64 BL8.
    pub fn transaction_bytes(&self) -> u64 {
        u64::from(self.bus_width / 8) * u64::from(self.burst_length)
    }
    /// Column bursts per row: how many transactions one open row holds.
    pub fn bursts_per_row(&self) -> u32 {
        self.columns / self.burst_length
    }
    /// Bytes of one row of one rank.
    pub fn row_bytes(&self) -> u64 {
        u64::from(self.columns) * u64::from(self.bus_width / 8)
    }
    /// Bytes of one row of one device (the JEDEC "page size").
    pub fn device_page_bytes(&self) -> u64 {
        u64::from(self.columns) * u64::from(self.device_width) / 8
    }
    /// Total capacity in bytes over all channels.
    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.channels)
            * u64::from(self.ranks)
            * u64::from(self.banks_per_rank())
            * u64::from(self.rows)
            * self.row_bytes()
    }

    /// Refuse geometries the model (and the bit-slicing address mappers) cannot represent.
    pub fn validate(&self) -> Result<(), DramError> {
        let pow2 = |name: &str, v: u32| {
            if v == 0 || !v.is_power_of_two() {
                Err(DramError::InvalidConfig(format!(
                    "{name} must be a non-zero power of two, got {v}"
                )))
            } else {
                Ok(())
            }
        };
        pow2("channels", self.channels)?;
        pow2("ranks", self.ranks)?;
        pow2("bank_groups", self.bank_groups)?;
        pow2("banks_per_group", self.banks_per_group)?;
        pow2("rows", self.rows)?;
        pow2("columns", self.columns)?;
        pow2("burst_length", self.burst_length)?;
        pow2("bus_width", self.bus_width)?;
        pow2("device_width", self.device_width)?;
        if self.bus_width < 8 || self.device_width > self.bus_width {
            return Err(DramError::InvalidConfig(format!(
                "bus_width ({}) must be >= 8 and >= device_width ({})",
                self.bus_width, self.device_width
            )));
        }
        if self.columns < self.burst_length {
            return Err(DramError::InvalidConfig(format!(
                "columns ({}) must be at least the burst length ({})",
                self.columns, self.burst_length
            )));
        }
        // Banks per rank multiplied in u64: two powers of two below 2^32 can overflow u32.
        let banks = u64::from(self.bank_groups) * u64::from(self.banks_per_group);
        if self.ranks > 64 || banks > 256 || self.channels > 256 {
            return Err(DramError::InvalidConfig(format!(
                "at most 256 channels, 64 ranks per channel and 256 banks per rank \
                 (bank_groups × banks_per_group); got {} channels, {} ranks, {banks} banks",
                self.channels, self.ranks
            )));
        }
        Ok(())
    }
}

/// The timing set, every value in DRAM clock cycles (tCK), except `tck_ps`.
///
/// Names follow JEDEC. `_s`/`_l` pairs are the DDR4 short (different bank group) and long (same
/// bank group) variants; DDR3 presets set both equal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timings {
    /// Clock period in picoseconds (DDR3-1600: 1250).
    pub tck_ps: u32,
    /// CAS (read) latency: RD to first data beat.
    pub cl: u32,
    /// CAS write latency: WR to first data beat.
    pub cwl: u32,
    /// ACT to RD/WR, same bank.
    pub rcd: u32,
    /// PRE to ACT, same bank.
    pub rp: u32,
    /// ACT to PRE, same bank.
    pub ras: u32,
    /// ACT to ACT, same bank.
    pub rc: u32,
    /// Data burst duration on the bus (burst length / 2 for DDR).
    pub burst: u32,
    /// Column to column, different bank group (DDR3: the only tCCD).
    pub ccd_s: u32,
    /// Column to column, same bank group.
    pub ccd_l: u32,
    /// ACT to ACT, different bank (group), same rank.
    pub rrd_s: u32,
    /// ACT to ACT, same bank group.
    pub rrd_l: u32,
    /// Four-activate window per rank.
    pub faw: u32,
    /// End of write data to RD, same rank, different bank group.
    pub wtr_s: u32,
    /// End of write data to RD, same rank, same bank group.
    pub wtr_l: u32,
    /// RD to WR command spacing, same rank (JEDEC: CL + tCCD + 2 − CWL).
    pub rtw: u32,
    /// Rank-to-rank switching gap on the data bus.
    pub rtrs: u32,
    /// Write recovery: end of write data to PRE.
    pub wr: u32,
    /// RD to PRE.
    pub rtp: u32,
    /// Average refresh interval (per rank).
    pub refi: u32,
    /// Refresh cycle time: REF to next ACT (or REF).
    pub rfc: u32,
}

/// The largest timing parameter accepted, in DRAM cycles: far above any device's (a DDR
/// refresh interval is about 10^4 cycles), low enough that a run never waits absurdly long.
pub const MAX_TIMING_CYCLES: u32 = 1_000_000;

impl Timings {
    /// Refuse impossible timing sets. `spec` names the set in the error.
    pub fn validate(&self, spec: &str) -> Result<(), DramError> {
        let bad = |msg: String| {
            Err(DramError::InvalidTiming {
                spec: spec.to_string(),
                msg,
            })
        };
        if self.tck_ps == 0 {
            return bad("tCK must be positive".into());
        }
        // Every timing in cycles, and whether it must be at least one cycle (tCCD_L, tRRD_L
        // and tWTR_L are bounded below by their _S forms, tRTRS may be 0).
        let timings = [
            ("tCL", self.cl, true),
            ("tCWL", self.cwl, true),
            ("tRCD", self.rcd, true),
            ("tRP", self.rp, true),
            ("tRAS", self.ras, true),
            ("tRC", self.rc, true),
            ("tBURST", self.burst, true),
            ("tCCD_S", self.ccd_s, true),
            ("tCCD_L", self.ccd_l, false),
            ("tRRD_S", self.rrd_s, true),
            ("tRRD_L", self.rrd_l, false),
            ("tFAW", self.faw, true),
            ("tWTR_S", self.wtr_s, true),
            ("tWTR_L", self.wtr_l, false),
            ("tRTW", self.rtw, true),
            ("tRTRS", self.rtrs, false),
            ("tWR", self.wr, true),
            ("tRTP", self.rtp, true),
            ("tREFI", self.refi, true),
            ("tRFC", self.rfc, true),
        ];
        if let Some((name, ..)) = timings.iter().find(|&&(_, v, positive)| positive && v == 0) {
            return bad(format!("{name} must be at least 1 cycle"));
        }
        // A value far above any device's would only make a run wait that long.
        if let Some((name, v, _)) = timings.iter().find(|&&(_, v, _)| v > MAX_TIMING_CYCLES) {
            return bad(format!(
                "{name} = {v} cycles is above the largest accepted, {MAX_TIMING_CYCLES}"
            ));
        }
        if self.rc < self.ras + self.rp {
            return bad(format!(
                "tRC ({}) < tRAS ({}) + tRP ({})",
                self.rc, self.ras, self.rp
            ));
        }
        if self.ras < self.rcd {
            return bad(format!("tRAS ({}) < tRCD ({})", self.ras, self.rcd));
        }
        if self.ccd_s < self.burst {
            return bad(format!(
                "tCCD_S ({}) < tBURST ({}): back-to-back bursts would overlap on the data bus",
                self.ccd_s, self.burst
            ));
        }
        if self.ccd_l < self.ccd_s {
            return bad(format!("tCCD_L ({}) < tCCD_S ({})", self.ccd_l, self.ccd_s));
        }
        if self.rrd_l < self.rrd_s {
            return bad(format!("tRRD_L ({}) < tRRD_S ({})", self.rrd_l, self.rrd_s));
        }
        if self.wtr_l < self.wtr_s {
            return bad(format!("tWTR_L ({}) < tWTR_S ({})", self.wtr_l, self.wtr_s));
        }
        if self.faw < self.rrd_s {
            return bad(format!("tFAW ({}) < tRRD_S ({})", self.faw, self.rrd_s));
        }
        if self.rtw + self.cwl < self.cl + self.burst {
            return bad(format!(
                "tRTW ({}) < tCL ({}) + tBURST ({}) - tCWL ({}): a write burst would overlap the preceding read burst",
                self.rtw, self.cl, self.burst, self.cwl
            ));
        }
        // A refresh that falls due stops the rank's other commands until its PREA and REF
        // have issued (as Ramulator 2's priority buffer does). The PREA waits for the last
        // command issued before the deadline (an ACT's tRAS, a read's tRTP, a write's
        // recovery), then tRP, then tRFC; the interval must still leave an ACT and its
        // column command (tRCD) before the next deadline, or a row miss could be opened and
        // closed again at every refresh without ever being served.
        let before_pre = self.ras.max(self.rtp).max(self.cwl + self.burst + self.wr);
        let needed =
            u64::from(before_pre) + u64::from(self.rp) + u64::from(self.rfc) + u64::from(self.rcd);
        if u64::from(self.refi) < needed {
            return bad(format!(
                "tREFI ({}) < {needed} = max(tRAS, tRTP, tCWL + tBURST + tWR) ({before_pre}) + tRP ({}) + tRFC ({}) + tRCD ({}): a refresh interval must leave time to serve one row miss, or requests can starve behind refreshes",
                self.refi, self.rp, self.rfc, self.rcd
            ));
        }
        Ok(())
    }

    /// Clock period in nanoseconds.
    pub fn tck_ns(&self) -> f64 {
        f64::from(self.tck_ps) / 1000.0
    }

    /// Set a timing parameter by its JEDEC name (`tCL`, `tRCD`, `CL`, `nRCD`, … case-insensitive).
    /// `tCCD`, `tRRD` and `tWTR` set both the `_S` and `_L` variants.
    /// Returns `false` if the name is not a timing parameter.
    pub fn set_by_name(&mut self, name: &str, v: u32) -> bool {
        let lower = name.to_ascii_lowercase();
        let key = lower
            .strip_prefix('t')
            .or_else(|| lower.strip_prefix('n'))
            .unwrap_or(&lower);
        match key {
            "ck_ps" | "ck" => self.tck_ps = v,
            "cl" | "cas" | "aa" => self.cl = v,
            "cwl" => self.cwl = v,
            "rcd" => self.rcd = v,
            "rp" => self.rp = v,
            "ras" => self.ras = v,
            "rc" => self.rc = v,
            "burst" | "bl" => self.burst = v,
            "ccd" => {
                self.ccd_s = v;
                self.ccd_l = v
            }
            "ccd_s" => self.ccd_s = v,
            "ccd_l" => self.ccd_l = v,
            "rrd" => {
                self.rrd_s = v;
                self.rrd_l = v
            }
            "rrd_s" => self.rrd_s = v,
            "rrd_l" => self.rrd_l = v,
            "faw" => self.faw = v,
            "wtr" => {
                self.wtr_s = v;
                self.wtr_l = v
            }
            "wtr_s" => self.wtr_s = v,
            "wtr_l" => self.wtr_l = v,
            "rtw" => self.rtw = v,
            "rtrs" => self.rtrs = v,
            "wr" => self.wr = v,
            "rtp" => self.rtp = v,
            "refi" => self.refi = v,
            "rfc" => self.rfc = v,
            _ => return false,
        }
        true
    }
}

/// A named device + timing set: what a preset (or a TOML file) describes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    /// Short name, e.g. `DDR3-1600K 11-11-11`.
    pub name: String,
    /// Standard family (`DDR3`, `DDR4`); informational.
    pub standard: String,
    pub org: Organization,
    pub timing: Timings,
}

impl DramSpec {
    /// Validate organization and timings together.
    pub fn validate(&self) -> Result<(), DramError> {
        self.org.validate()?;
        self.timing.validate(&self.name)?;
        if self.timing.burst * 2 != self.org.burst_length {
            return Err(DramError::InvalidTiming {
                spec: self.name.clone(),
                msg: format!(
                    "tBURST ({}) must be burst_length/2 ({}) for a double-data-rate bus",
                    self.timing.burst,
                    self.org.burst_length / 2
                ),
            });
        }
        Ok(())
    }

    /// Peak data bandwidth of all channels in GB/s (1e9 bytes per second).
    pub fn peak_bandwidth_gbps(&self) -> f64 {
        let per_cycle = f64::from(self.org.bus_width / 8) * 2.0; // two beats per tCK
        per_cycle * f64::from(self.org.channels) / self.timing.tck_ns()
    }
}
