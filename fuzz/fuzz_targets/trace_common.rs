//! The harness shared by the importer targets: drain a source as `check_bytes` does, but on
//! the fuzz input itself rather than through the 1 MiB read buffers of `open_reader` (whose
//! allocation, under AddressSanitizer, cost more than parsing a small input).

use apusim_trace::{Access, AccessSource, TraceError, BATCH};

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
    // One batch buffer for every input: a fresh 160 KB buffer per input is an mmap under
    // AddressSanitizer, and cost more than parsing the input.
    BUFFER.with_borrow_mut(|batch| read_all(&mut src, batch));
}

thread_local! {
    static BUFFER: std::cell::RefCell<Vec<Access>> = std::cell::RefCell::new(Vec::with_capacity(BATCH));
}

fn read_all(src: &mut impl AccessSource, batch: &mut Vec<Access>) {
    let mut n = 0u64;
    while n < LIMIT {
        batch.clear();
        match src.next_batch(batch) {
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
