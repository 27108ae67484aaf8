//! The harness shared by the importer targets: drain a source as `check_bytes` does, but on
//! the fuzz input itself rather than through the 1 MiB read buffers of `open_reader` (whose
//! allocation, under AddressSanitizer, cost more than parsing a small input).

use apusim_trace::{AccessSource, TraceError, BATCH};

/// Records read before giving up, so that a small compressed input expanding to a huge trace
/// cannot time out.
pub const LIMIT: u64 = 1 << 20;

/// Read `src` to its end (or [`LIMIT`] records); every batch must respect [`BATCH`], and
/// every error must name the input.
pub fn drain(src: Result<impl AccessSource, TraceError>) {
    let mut src = match src {
        Ok(s) => s,
        Err(e) => return check_error(&e),
    };
    let mut batch = Vec::with_capacity(BATCH);
    let mut n = 0u64;
    while n < LIMIT {
        batch.clear();
        match src.next_batch(&mut batch) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return check_error(&e),
        }
        assert!(batch.len() <= BATCH, "batch of {} accesses", batch.len());
        n += batch.len() as u64;
    }
}

fn check_error(e: &TraceError) {
    let msg = e.to_string();
    assert!(
        msg.contains("<fuzz>"),
        "error without the input's name: {msg}"
    );
}
