//! Fuzz target: arbitrary bytes through the Apt parser. Errors are fine; panics, hangs and
//! unbounded memory use are bugs, and so is any difference between the sequential reader and
//! the read-ahead reader (same batches, same error).
#![no_main]

use apusim_trace::apt::{AptReader, ParallelAptReader};
use apusim_trace::import::{check_bytes, Format};
use apusim_trace::AccessSource;
use libfuzzer_sys::fuzz_target;

/// Records read before giving up, so that a small compressed input expanding to a huge trace
/// cannot time out.
const LIMIT: usize = 1 << 20;

/// The batches a reader hands out (up to [`LIMIT`] records) and the error that ends them.
fn outcome(src: Result<impl AccessSource, apusim_trace::TraceError>) -> (Vec<Vec<u8>>, Option<String>) {
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
                batches.push(b.iter().map(|a| format!("{a:?}")).collect::<String>().into_bytes());
            }
            Ok(false) => break,
            Err(e) => return (batches, Some(e.to_string())),
        }
    }
    (batches, None)
}

fuzz_target!(|data: &[u8]| {
    let _ = check_bytes(data, Format::Apt, LIMIT as u64);
    let seq = outcome(AptReader::with_name(data, "<fuzz>"));
    let par = outcome(ParallelAptReader::with_name(std::io::Cursor::new(data.to_vec()), "<fuzz>", 2));
    assert_eq!(seq, par, "sequential and read-ahead readers disagree");
});
