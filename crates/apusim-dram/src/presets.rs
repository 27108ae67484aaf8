//! Presets for every DRAM configuration of the papers apusim reproduces, plus the DDR3-1600
//! 11-11-11 set used to compare against other simulators.
//!
//! Where a paper is silent about a parameter (tFAW, tRRD, tWTR, tRFC, device density, …) the
//! JEDEC DDR3 (JESD79-3F) value for that speed bin and an x8 device with a 1 KB page is used,
//! converted to cycles with `ceil(ns / tCK)`; each preset's doc comment lists those choices.
//! Timings common to all DDR3 presets: BL8 (tBURST = 4), tCCD = 4, tRTRS = 1, tRTW = CL + tCCD
//! + 2 − CWL (JEDEC read-to-write), tREFI = 7.8 µs.

use crate::config::DramConfig;
use crate::error::DramError;
use crate::spec::{DramSpec, Organization, Timings};

/// One preset: canonical name, aliases, one-line description and its builder.
struct Preset {
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    build: fn() -> DramConfig,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "ddr3-2133-14-2ch",
        aliases: &["drp", "gpu-criticality"],
        description: "2 single-channel controllers, DDR3-2133 14-14-14, 1 rank, 8 banks, 1 KB row/x8 device, FR-FCFS, open page (DRP §3; GPU-criticality Table 1)",
        build: ddr3_2133_14_2ch,
    },
    Preset {
        name: "ddr3-1600-15-2ch",
        aliases: &["gspc"],
        description: "dual-channel DDR3-1600 15-15-15, 8 banks, BL8 (GSPC §4 baseline)",
        build: ddr3_1600_15_2ch,
    },
    Preset {
        name: "ddr3-1867-10-2ch",
        aliases: &["gspc-ddr3-1867"],
        description: "dual-channel DDR3-1867 10-10-10, 8 banks (GSPC §5.4 faster-DRAM study)",
        build: ddr3_1867_10_2ch,
    },
    Preset {
        name: "ddr3-1333-9-4ch",
        aliases: &["tap"],
        description: "4 channels DDR3-1333 9-9-9, 16 banks/channel (2 ranks x 8), FR-FCFS (TAP Table 4)",
        build: ddr3_1333_9_4ch,
    },
    Preset {
        name: "ddr3-1600-11-1ch",
        aliases: &["reference", "ddr3-1600"],
        description: "1 channel DDR3-1600 11-11-11, 1 rank, x8 4Gb, 8 banks, 8 KB row, 32-entry queues, FR-FCFS cap 4 (reference comparison config)",
        build: ddr3_1600_11_1ch,
    },
    Preset {
        name: "ddr3-1600-11-2ch",
        aliases: &["haswell"],
        description: "dual-channel DDR3-1600 11-11-11, 25.6 GB/s peak (GPU-criticality §1 Core i7-4770 platform)",
        build: ddr3_1600_11_2ch,
    },
    Preset {
        name: "ddr4-3200-24-1ch",
        aliases: &["champsim"],
        description: "1 channel DDR-3200 24-24-24 tRAS 52, 1 rank, 8 bank groups x 4 banks, 8 KB row, 64-entry queues (ChampSim's default DRAM)",
        build: ddr4_3200_24_1ch,
    },
];

/// Canonical preset names with a one-line description, in a stable order.
pub fn presets() -> Vec<(&'static str, &'static str)> {
    PRESETS.iter().map(|p| (p.name, p.description)).collect()
}

/// Build the configuration of preset `name` (canonical name or alias, case-insensitive).
pub fn preset(name: &str) -> Result<DramConfig, DramError> {
    let lower = name.to_ascii_lowercase();
    PRESETS
        .iter()
        .find(|p| p.name == lower || p.aliases.contains(&lower.as_str()))
        .map(|p| {
            let mut c = (p.build)();
            c.preset = p.name.to_string();
            c
        })
        .ok_or_else(|| DramError::UnknownPreset {
            name: name.to_string(),
            known: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Parameters of one DDR3 speed bin, in cycles.
struct Ddr3Bin {
    tck_ps: u32,
    cl: u32,
    cwl: u32,
    rcd: u32,
    rp: u32,
    ras: u32,
    rc: u32,
    rrd: u32,
    faw: u32,
    wtr: u32,
    rtp: u32,
    wr: u32,
    refi: u32,
    rfc: u32,
}

fn ddr3_spec(name: &str, bin: Ddr3Bin, channels: u32, ranks: u32, density_mbit: u32) -> DramSpec {
    // x8 parts, 8 banks, 1 KB page (1024 columns); rows follow from the density:
    // density = banks * rows * columns * width  ->  rows = density / (8 * 1024 * 8).
    let rows = (density_mbit as u64 * 1024 * 1024 / (8 * 1024 * 8)) as u32;
    let burst = 4;
    let ccd = 4;
    DramSpec {
        name: name.to_string(),
        standard: "DDR3".into(),
        org: Organization {
            channels,
            ranks,
            bank_groups: 1,
            banks_per_group: 8,
            rows,
            columns: 1024,
            bus_width: 64,
            device_width: 8,
            burst_length: 8,
            density_mbit,
        },
        timing: Timings {
            tck_ps: bin.tck_ps,
            cl: bin.cl,
            cwl: bin.cwl,
            rcd: bin.rcd,
            rp: bin.rp,
            ras: bin.ras,
            rc: bin.rc,
            burst,
            ccd_s: ccd,
            ccd_l: ccd,
            rrd_s: bin.rrd,
            rrd_l: bin.rrd,
            faw: bin.faw,
            wtr_s: bin.wtr,
            wtr_l: bin.wtr,
            rtw: bin.cl + ccd + 2 - bin.cwl,
            rtrs: 1,
            wr: bin.wr,
            rtp: bin.rtp,
            refi: bin.refi,
            rfc: bin.rfc,
        },
    }
}

/// DDR3-1600K 11-11-11, tCK 1.25 ns (JEDEC): CWL 8, tRAS 35 ns = 28, tRC 48.75 ns = 39,
/// tRRD max(4 nCK, 6 ns) = 5, tFAW 30 ns = 24 (x8, 1 KB page), tWTR = tRTP = 7.5 ns = 6,
/// tWR 15 ns = 12, tRFC(4 Gb) 260 ns = 208, tREFI 7.8 µs = 6240.
fn bin_1600_11() -> Ddr3Bin {
    Ddr3Bin {
        tck_ps: 1250,
        cl: 11,
        cwl: 8,
        rcd: 11,
        rp: 11,
        ras: 28,
        rc: 39,
        rrd: 5,
        faw: 24,
        wtr: 6,
        rtp: 6,
        wr: 12,
        refi: 6240,
        rfc: 208,
    }
}

/// DRP (drp-reuse-probability-shared-llc.txt §3) and the GPU-access-criticality scheduler paper
/// (gpu-access-criticality-dram-scheduling.txt Table 1): "two on-die single-channel memory
/// controllers, DDR3-2133, FR-FCFS … 14-14-14, 64-bit channels, BL=8, open-page policy, one
/// rank/channel, 8 banks/rank, 1 KB row/bank/device, x8 devices", 2 GB per module (DRP §3).
///
/// Modelled as two channels of one rank each (the two controllers are independent).
/// 2 GB single-rank x8 module → eight 2 Gb devices (32 K rows).
/// JEDEC DDR3-2133N values where the papers are silent, tCK 0.9375 ns: CWL 10,
/// tRAS 33 ns = 36, tRC = tRAS + tRP = 50, tRRD max(4 nCK, 5 ns) = 6, tFAW 25 ns = 27,
/// tWTR = tRTP = 7.5 ns = 8, tWR 15 ns = 16, tRFC(2 Gb) 160 ns = 171, tREFI 7.8 µs = 8320.
/// Address mapping: row-bank-rank-column-channel (the papers do not say; DRAMSim2, which DRP
/// used, interleaves channels at cache-line granularity the same way).
pub fn ddr3_2133_14_2ch() -> DramConfig {
    let bin = Ddr3Bin {
        tck_ps: 938,
        cl: 14,
        cwl: 10,
        rcd: 14,
        rp: 14,
        ras: 36,
        rc: 50,
        rrd: 6,
        faw: 27,
        wtr: 8,
        rtp: 8,
        wr: 16,
        refi: 8320,
        rfc: 171,
    };
    DramConfig::new(ddr3_spec("DDR3-2133N 14-14-14", bin, 2, 1, 2048))
}

/// GSPC (gspc-graphics-stream-llc.txt §4): "dual channel DDR3-1600 … 8-way banked with a burst
/// length of eight and 15-15-15 (tCAS-tRCD-tRP)".
///
/// 15-15-15 is slower than any JEDEC DDR3-1600 bin; the remaining parameters are the JEDEC
/// DDR3-1600 ones (see the 11-11-11 preset) with tRC = tRAS + tRP = 43. The paper gives no
/// density or rank count: one rank of x8 4 Gb parts per channel is assumed.
pub fn ddr3_1600_15_2ch() -> DramConfig {
    let mut bin = bin_1600_11();
    bin.cl = 15;
    bin.rcd = 15;
    bin.rp = 15;
    bin.rc = 28 + 15;
    DramConfig::new(ddr3_spec("DDR3-1600 15-15-15", bin, 2, 1, 4096))
}

/// GSPC §5.4 (gspc-graphics-stream-llc.txt, Figure 17 upper panel): "dual-channel eight-way
/// banked DDR3-1867 10-10-10 DRAM system".
///
/// JEDEC DDR3-1866 values, tCK 1.071 ns: CWL 9, tRAS 34 ns = 32, tRC = tRAS + tRP = 42,
/// tRRD max(4 nCK, 5 ns) = 5, tFAW 27 ns = 26 (1 KB page), tWTR = tRTP = 7.5 ns = 7,
/// tWR 15 ns = 14, tRFC(4 Gb) 260 ns = 243, tREFI 7.8 µs = 7280. One rank of x8 4 Gb parts.
pub fn ddr3_1867_10_2ch() -> DramConfig {
    let bin = Ddr3Bin {
        tck_ps: 1071,
        cl: 10,
        cwl: 9,
        rcd: 10,
        rp: 10,
        ras: 32,
        rc: 42,
        rrd: 5,
        faw: 26,
        wtr: 7,
        rtp: 7,
        wr: 14,
        refi: 7280,
        rfc: 243,
    };
    DramConfig::new(ddr3_spec("DDR3-1866 10-10-10", bin, 2, 1, 4096))
}

/// TAP (tap-tlp-aware-llc.txt Table 4): "4 controllers, 16 banks, 4 channels, DDR3-1333,
/// 41.6GB/s Bandwidth, FR-FCFS".
///
/// DDR3 devices have eight banks, so the 16 banks per channel are two ranks of eight. The
/// paper gives no CAS latencies: the JEDEC DDR3-1333H bin (9-9-9) is used, tCK 1.5 ns: CWL 7,
/// tRAS 36 ns = 24, tRC 49.5 ns = 33, tRRD max(4 nCK, 6 ns) = 4, tFAW 30 ns = 20,
/// tWTR = tRTP = 7.5 ns = 5, tWR 15 ns = 10, tRFC(4 Gb) 260 ns = 174, tREFI 7.8 µs = 5200.
/// Peak bandwidth is 4 × 10.67 = 42.7 GB/s (the paper quotes 41.6).
pub fn ddr3_1333_9_4ch() -> DramConfig {
    let bin = Ddr3Bin {
        tck_ps: 1500,
        cl: 9,
        cwl: 7,
        rcd: 9,
        rp: 9,
        ras: 24,
        rc: 33,
        rrd: 4,
        faw: 20,
        wtr: 5,
        rtp: 5,
        wr: 10,
        refi: 5200,
        rfc: 174,
    };
    DramConfig::new(ddr3_spec("DDR3-1333H 9-9-9", bin, 4, 2, 4096))
}

/// The configuration of the reference measurements (../shared/reference/dram/README.md):
/// one channel, one rank, DDR3-1600 11-11-11 (tCK 1.25 ns), x8 4 Gb devices (8 banks, 8 KB
/// row per rank), open page, FR-FCFS, refresh with tREFI 6240, 32-entry read and write queues.
///
/// JEDEC DDR3-1600K values: CWL 8, tRAS 28, tRC 39, tRRD 5, tFAW 24, tWTR 6, tRTP 6, tWR 12,
/// tRFC(4 Gb) 208. Mapping row-bank-rank-column-channel (Ramulator 2's default).
///
/// Scheduler `frfcfs-cap` with a cap of 4: FR-FCFS as DRAMsim3 implements it (a row with
/// pending hits is closed once it has served 4 of them). Uncapped `frfcfs` keeps rows open
/// longer and reaches a higher row-hit rate at saturation; docs/dram-validation.md shows both.
pub fn ddr3_1600_11_1ch() -> DramConfig {
    let mut c = DramConfig::new(ddr3_spec("DDR3-1600K 11-11-11", bin_1600_11(), 1, 1, 4096));
    c.scheduler = "frfcfs-cap".into();
    c.row_hit_cap = 4;
    c
}

/// The platform of the motivation experiment of gpu-access-criticality-dram-scheduling.txt §1
/// (Core i7-4770: "dual-channel DDR3-1600 16 GB DRAM (25.6 GB/s peak)"): two channels of the
/// JEDEC DDR3-1600K 11-11-11 set, one rank of x8 4 Gb parts each.
pub fn ddr3_1600_11_2ch() -> DramConfig {
    DramConfig::new(ddr3_spec("DDR3-1600K 11-11-11", bin_1600_11(), 2, 1, 4096))
}

/// ChampSim's default DRAM (its champsim_config.json and src/dram_controller.cc, commit
/// 2ff25011): one 64-bit channel at 3200 MT/s (tCK 0.625 ns), one rank of 8 bank groups × 4
/// banks, 65536 rows of 1024 columns (8 KiB per row, 16 GiB), tCAS = tRCD = tRP = 24 and
/// tRAS = 52 controller cycles, 64-entry read and write queues. Address bits from the least
/// significant: line offset, channel, bank group, bank, column, rank, row (`RoRaCoBaBgCh`).
///
/// Where ChampSim models a constraint, its value is used: a burst holds the bus for 4 tCK
/// (BL8); the same bank group waits ⌊8/3⌋ more transfers (1 tCK) between bursts, so
/// tCCD_L = 5; write mode starts at 7/8 of the write queue and ends below 6/8 with reads
/// waiting; a refresh every 32 ms / 8192 = 6250 tCK blocks for √(8 · 16 GiB) · tRAS = 588
/// tCK; writes take tCAS like reads (tCWL = 24). ChampSim enforces no tRRD or tFAW (1 and 4
/// here, no limit in effect) and charges a bus-mode switch tRAS, where apusim charges the
/// JEDEC DDR4-3200 turnarounds (tWTR_S 4, tWTR_L 12, tWR 24, tRTP 12).
///
/// ChampSim's scheduler takes, each cycle, the oldest request whose bank is idle, with no
/// priority for row hits; apusim's nearest is FR-FCFS, which also prefers ready row hits.
/// ChampSim enforces tRAS nowhere between activates; apusim's tRC = tRAS + tRP does.
pub fn ddr4_3200_24_1ch() -> DramConfig {
    let spec = DramSpec {
        name: "DDR-3200 24-24-24 (ChampSim)".into(),
        standard: "DDR4".into(),
        org: Organization {
            channels: 1,
            ranks: 1,
            bank_groups: 8,
            banks_per_group: 4,
            rows: 65536,
            columns: 1024,
            bus_width: 64,
            device_width: 8,
            burst_length: 8,
            density_mbit: 16384,
        },
        timing: Timings {
            tck_ps: 625,
            cl: 24,
            cwl: 24,
            rcd: 24,
            rp: 24,
            ras: 52,
            rc: 76,
            burst: 4,
            ccd_s: 4,
            ccd_l: 5,
            rrd_s: 1,
            rrd_l: 1,
            faw: 4,
            wtr_s: 4,
            wtr_l: 12,
            rtw: 24 + 4 + 2 - 24,
            rtrs: 1,
            wr: 24,
            rtp: 12,
            refi: 6250,
            rfc: 588,
        },
    };
    let mut c = DramConfig::new(spec);
    c.mapping = "RoRaCoBaBgCh".into();
    c.read_queue = 64;
    c.write_queue = 64;
    c.write_high_watermark = Some(56);
    c.write_low_watermark = Some(47);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates() {
        for (name, _) in presets() {
            let c = preset(name).unwrap();
            c.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.preset, name);
        }
    }

    #[test]
    fn aliases_resolve_and_unknown_is_refused() {
        assert_eq!(preset("reference").unwrap().preset, "ddr3-1600-11-1ch");
        assert_eq!(preset("TAP").unwrap().preset, "ddr3-1333-9-4ch");
        let e = preset("ddr9").unwrap_err().to_string();
        assert!(e.contains("ddr9") && e.contains("ddr3-1600-11-1ch"), "{e}");
    }

    #[test]
    fn reference_preset_matches_readme() {
        let c = preset("ddr3-1600-11-1ch").unwrap();
        let s = &c.spec;
        assert_eq!(s.org.channels, 1);
        assert_eq!(s.org.ranks, 1);
        assert_eq!(s.org.banks_per_rank(), 8);
        assert_eq!(s.org.row_bytes(), 8192);
        assert_eq!(s.org.device_page_bytes(), 1024);
        assert_eq!(s.org.capacity_bytes(), 4 << 30);
        assert_eq!((s.timing.cl, s.timing.rcd, s.timing.rp), (11, 11, 11));
        assert_eq!(s.timing.refi, 6240);
        assert_eq!((c.read_queue, c.write_queue), (32, 32));
        assert!((s.peak_bandwidth_gbps() - 12.8).abs() < 1e-9);
    }

    #[test]
    fn champsim_preset_decodes_addresses_as_champsim() {
        let c = preset("champsim").unwrap();
        c.validate().unwrap();
        let s = &c.spec;
        assert_eq!(s.org.capacity_bytes(), 16 << 30);
        assert_eq!(s.org.row_bytes(), 8192);
        assert!((s.peak_bandwidth_gbps() - 25.6).abs() < 1e-9);
        let m = crate::mapping::make_mapper(&c.mapping, &s.org).unwrap();
        // Bits 6-8 bank group, 9-10 bank, 11-17 column, 18+ row.
        let d = m.map((5 << 6) | (2 << 9) | (3 << 11) | (9 << 18));
        assert_eq!(
            (d.bank_group, d.bank, d.column, d.row),
            (5, 2, 3, 9),
            "{d:?}"
        );
    }

    #[test]
    fn paper_presets_have_paper_numbers() {
        let drp = preset("drp").unwrap().spec;
        assert_eq!((drp.timing.cl, drp.timing.rcd, drp.timing.rp), (14, 14, 14));
        assert_eq!(
            (drp.org.channels, drp.org.ranks, drp.org.banks_per_rank()),
            (2, 1, 8)
        );
        assert_eq!(drp.org.device_page_bytes(), 1024);
        assert_eq!(drp.org.capacity_bytes() / 2, 2 << 30); // 2 GB per module
        let g = preset("gspc").unwrap().spec;
        assert_eq!(
            (g.timing.cl, g.timing.rcd, g.timing.rp, g.org.channels),
            (15, 15, 15, 2)
        );
        let g2 = preset("gspc-ddr3-1867").unwrap().spec;
        assert_eq!(
            (g2.timing.cl, g2.timing.rcd, g2.timing.rp, g2.org.channels),
            (10, 10, 10, 2)
        );
        let t = preset("tap").unwrap().spec;
        assert_eq!(
            (t.org.channels, t.org.ranks * t.org.banks_per_rank()),
            (4, 16)
        );
        assert!((t.peak_bandwidth_gbps() - 42.67).abs() < 0.1);
    }
}
