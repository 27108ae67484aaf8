//! libCacheSim importers on arbitrary input: errors are fine, panics and unbounded batches are
//! not; and a valid `oracleGeneral` stream reads the same raw, zstd-compressed and as csv.

use apusim_trace::import::libcachesim::TextKind;
use apusim_trace::import::{
    check_bytes, Format, ImportOptions, LcsOptions, LcsTextSource, OracleGeneralRecord,
    OracleGeneralSource,
};
use apusim_trace::{collect, AccessSource, BATCH};
use proptest::prelude::*;

fn options(params: &str) -> ImportOptions {
    ImportOptions {
        libcachesim: params.parse::<LcsOptions>().unwrap(),
        ..ImportOptions::default()
    }
}

/// Drain `src`, checking every batch's bound; the access count or the first error.
fn drain(src: &mut dyn AccessSource) -> apusim_trace::Result<usize> {
    let mut n = 0;
    let mut batch = Vec::new();
    loop {
        batch.clear();
        if !src.next_batch(&mut batch)? {
            return Ok(n);
        }
        assert!(batch.len() <= BATCH, "batch of {}", batch.len());
        n += batch.len();
    }
}

const PARAMS: [&str; 4] = [
    "",
    "dense-ids=true",
    "ignore-obj-size=false,max-obj-size=4096",
    "ignore-obj-size=false,max-obj-size=65536,block-size=16,dense-ids=true",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn oracle_general_never_panics(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        p in 0usize..4,
    ) {
        let mut src = OracleGeneralSource::new(
            std::io::Cursor::new(bytes.clone()),
            "x.oracleGeneral",
            &options(PARAMS[p]),
        )
        .unwrap();
        let _ = drain(&mut src);
        let _ = check_bytes(&bytes, Format::OracleGeneral, 100_000);
        // The same bytes behind the zstd magic: a corrupt frame.
        let mut z = vec![0x28, 0xb5, 0x2f, 0xfd];
        z.extend_from_slice(&bytes);
        let _ = check_bytes(&z, Format::OracleGeneral, 100_000);
    }

    #[test]
    fn records_read_back(
        recs in prop::collection::vec((any::<u32>(), 0u64..1 << 40, 0u32..5000), 0..300),
    ) {
        let bytes: Vec<u8> = recs
            .iter()
            .flat_map(|&(t, id, size)| {
                OracleGeneralRecord {
                    clock_time: t,
                    obj_id: id,
                    obj_size: size,
                    next_access_vtime: -1,
                }
                .encode()
            })
            .collect();
        let kept: Vec<u64> = recs.iter().filter(|r| r.2 > 0).map(|r| r.1 * 64).collect();
        let opts = ImportOptions::default();
        let mut raw =
            OracleGeneralSource::new(std::io::Cursor::new(bytes.clone()), "r", &opts).unwrap();
        let raw = collect(&mut raw).unwrap();
        prop_assert_eq!(raw.iter().map(|a| a.addr).collect::<Vec<_>>(), kept);
        let z = zstd::encode_all(&bytes[..], 1).unwrap();
        let mut zs = OracleGeneralSource::new(std::io::Cursor::new(z), "r.zst", &opts).unwrap();
        prop_assert_eq!(collect(&mut zs).unwrap(), raw.clone());
        let csv: String = recs
            .iter()
            .map(|&(t, id, size)| format!("{t},{id},{size}\n"))
            .collect();
        let mut cs = LcsTextSource::new(
            std::io::Cursor::new(csv.into_bytes()),
            "r.csv",
            TextKind::Csv,
            &options("time-col=1,obj-id-col=2,obj-size-col=3,has-header=false"),
        )
        .unwrap();
        prop_assert_eq!(collect(&mut cs).unwrap(), raw);
    }

    #[test]
    fn text_forms_never_panic(
        text in "[0-9a-zA-Z,;|:\t \"\n.x-]{0,300}",
        p in 0usize..4,
        c in 0usize..3,
    ) {
        let cols = [
            "obj-id-col=1",
            "time-col=1,obj-id-col=2,obj-size-col=3,op-col=4",
            "obj-id-col=2,obj-id-is-num=false",
        ][c];
        let params = if PARAMS[p].is_empty() {
            cols.to_string()
        } else {
            format!("{cols},{}", PARAMS[p])
        };
        let mut csv = LcsTextSource::new(
            std::io::Cursor::new(text.clone().into_bytes()),
            "x.csv",
            TextKind::Csv,
            &options(&params),
        )
        .unwrap();
        let _ = drain(&mut csv);
        let mut txt = LcsTextSource::new(
            std::io::Cursor::new(text.into_bytes()),
            "x.txt",
            TextKind::Txt,
            &options(PARAMS[p]),
        )
        .unwrap();
        let _ = drain(&mut txt);
    }

    #[test]
    fn params_never_panic(s in "[a-z_=,0-9 -]{0,60}") {
        let _ = s.parse::<LcsOptions>();
    }
}
