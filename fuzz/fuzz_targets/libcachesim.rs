//! Fuzz target: arbitrary bytes through libCacheSim's four trace formats (`oracleGeneral`,
//! `oracleGeneralOpNS`, `csv`, `txt`, each raw or zstd) and the `--lcs-params` string that
//! says how to read them. The first byte picks the format, the bytes up to the first newline
//! are the parameter string, the rest is the trace. A parameter string that does not parse is
//! refused before any trace is read (its messages are unit-tested); errors naming the input
//! are fine; panics, hangs and unbounded memory use are bugs.
#![no_main]

mod trace_common;

use apusim_trace::import::{open_reader, Format, ImportOptions, LcsOptions};
use libfuzzer_sys::fuzz_target;

const FORMATS: [Format; 4] = [
    Format::OracleGeneral,
    Format::OracleGeneralOpNS,
    Format::LcsCsv,
    Format::LcsTxt,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = FORMATS[pick as usize % FORMATS.len()];
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
    trace_common::drain(open_reader(
        Box::new(std::io::Cursor::new(trace.to_vec())),
        "<fuzz>",
        format,
        &opts,
    ));
});
