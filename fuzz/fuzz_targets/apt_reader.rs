//! Fuzz target: arbitrary bytes through the `.apt` reader, versions 1 and 2 (the header says
//! which), once with the sequential `AptReader` and once with the read-ahead
//! `ParallelAptReader` (two decode workers). Errors naming the input are fine; panics, hangs
//! and unbounded memory use are bugs, and so is any difference between the two readers (same
//! batches, same error).
#![no_main]

use apusim_trace::apt::{AptReader, ParallelAptReader};
use apusim_trace::{Access, AccessSource, TraceError};
use libfuzzer_sys::fuzz_target;

/// Records read before giving up, so that a small compressed input expanding to a huge trace
/// cannot time out.
const LIMIT: usize = 1 << 20;

/// The batches a reader hands out (up to [`LIMIT`] records) and the error that ends them.
fn outcome(src: Result<impl AccessSource, TraceError>) -> (Vec<Vec<Access>>, Option<String>) {
    let mut src = match src {
        Ok(s) => s,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let (mut batches, mut n) = (Vec::new(), 0);
    while n < LIMIT {
        let mut b = Vec::new();
        match src.next_batch(&mut b) {
            Ok(true) => {
                n += b.len();
                batches.push(b);
            }
            Ok(false) => break,
            Err(e) => return (batches, Some(e.to_string())),
        }
    }
    (batches, None)
}

fuzz_target!(|data: &[u8]| {
    let seq = outcome(AptReader::with_name(data, "<fuzz>"));
    let input = std::io::Cursor::new(data.to_vec());
    let par = outcome(ParallelAptReader::with_name(input, "<fuzz>", 2));
    if let Some(e) = &seq.1 {
        assert!(e.contains("<fuzz>"), "error without the input's name: {e}");
    }
    assert!(seq == par, "sequential and read-ahead readers disagree");
});
