//! Fuzz target: arbitrary bytes through libCacheSim's four trace formats (`oracleGeneral`,
//! `oracleGeneralOpNS`, `csv`, `txt`, each raw or zstd) and the `--lcs-params` string that
//! says how to read them. The first byte picks the format, the bytes up to the first newline
//! are the parameter string, the rest is the trace. A parameter string that does not parse is
//! refused before any trace is read (its messages are unit-tested); errors naming the input
//! are fine; panics, hangs and unbounded memory use are bugs.
#![no_main]

mod trace_common;

use apusim_trace::import::libcachesim::TextKind;
use apusim_trace::import::{
    ImportOptions, LcsOptions, LcsTextSource, OracleGeneralSource, OracleLayout,
};
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (params, trace) = match rest.iter().position(|&b| b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let Some(Ok(lcs)) = std::str::from_utf8(params)
        .ok()
        .map(str::parse::<LcsOptions>)
    else {
        return;
    };
    let opts = ImportOptions {
        libcachesim: lcs,
        ..ImportOptions::default()
    };
    // The sources on the input itself, as the other importer targets read theirs (not
    // through `open_reader`'s 1 MiB buffers; trace_common.rs); the same sources `open_reader`
    // builds for these four formats.
    let input = Cursor::new(trace.to_vec());
    match pick % 4 {
        0 => trace_common::drain(OracleGeneralSource::with_layout(
            input,
            "<fuzz>",
            OracleLayout::General,
            &opts,
        )),
        1 => trace_common::drain(OracleGeneralSource::with_layout(
            input,
            "<fuzz>",
            OracleLayout::OpNS,
            &opts,
        )),
        2 => trace_common::drain(LcsTextSource::new(input, "<fuzz>", TextKind::Csv, &opts)),
        _ => trace_common::drain(LcsTextSource::new(input, "<fuzz>", TextKind::Txt, &opts)),
    }
});
