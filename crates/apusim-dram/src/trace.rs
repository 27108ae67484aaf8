//! Trace readers: apusim's own text format and the formats of Ramulator 2 (LoadStoreTrace)
//! and DRAMsim3 / DRAMSim2, so the same trace can be run here and there.
//!
//! * `apusim-text`: `ADDR OP CYCLE [SOURCE [STREAM [CRITICAL]]]`, fields separated by blanks
//!   or commas. ADDR is `0x`-hex or decimal; OP is `R`/`READ`/`RD`/`LD` or
//!   `W`/`WRITE`/`WR`/`ST`; CYCLE is the DRAM cycle the request arrives; SOURCE is `cpuN`,
//!   `gpu` or a number (default `cpu0`); STREAM a number; CRITICAL `0`/`1`. `#` starts a
//!   comment; blank lines are skipped.
//! * `ramulator` (Ramulator 2 `LoadStoreTrace`): `LD 0xADDR` / `ST 0xADDR`. The format has no
//!   time; Ramulator's frontend offers one request per frontend tick and retries while the
//!   controller refuses. Here request *i* (0-based) arrives at cycle `i × interval`
//!   (`interval`, default 1, is the `--interval`/`interval=` setting; 0 means all at cycle
//!   0, i.e. as fast as the queues accept). Ramulator 1's `0xADDR R|W` lines are accepted too.
//! * `dramsim3` (also DRAMSim2's `mase` format): `0xADDR READ|WRITE CYCLE`; DRAMSim2's
//!   `IFETCH`/`P_MEM_RD`/`P_FETCH` count as reads, `P_MEM_WR` as a write.
//!
//! Arrival cycles must not decrease and must not exceed [`MAX_CYCLE`] (2^62; for the
//! Ramulator format, request *i*'s `i × interval`). Every error names the file and the
//! 1-based line.

use crate::error::DramError;
use crate::request::{parse_source, Request, MAX_CYCLE};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Decide from the first non-comment line.
    Auto,
    ApusimText,
    Ramulator,
    DramSim3,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::ApusimText => "apusim-text",
            TraceFormat::Ramulator => "ramulator",
            TraceFormat::DramSim3 => "dramsim3",
        }
    }
}

impl std::str::FromStr for TraceFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(TraceFormat::Auto),
            "apusim-text" | "apusim" | "text" => Ok(TraceFormat::ApusimText),
            "ramulator" | "ramulator2" | "loadstore" => Ok(TraceFormat::Ramulator),
            "dramsim3" | "dramsim2" | "mase" | "dramsim" => Ok(TraceFormat::DramSim3),
            _ => Err(format!(
                "unknown trace format `{s}` (auto, apusim-text, ramulator, dramsim3)"
            )),
        }
    }
}

fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace() || *b == b',')
        .filter(|t| !t.is_empty())
}

/// Strip a `#` comment.
fn content(line: &[u8]) -> &[u8] {
    match line.iter().position(|&b| b == b'#') {
        Some(p) => &line[..p],
        None => line,
    }
}

/// Guess the format of a trace from its first meaningful line.
pub fn detect_format(line: &str) -> TraceFormat {
    let toks: Vec<&[u8]> = tokens(content(line.as_bytes())).collect();
    match toks.as_slice() {
        [op, _] if is_ld_st(op) => TraceFormat::Ramulator,
        [_, op] if parse_op(op).is_some() => TraceFormat::Ramulator,
        [_, op, _] if is_dramsim_op(op) => TraceFormat::DramSim3,
        _ => TraceFormat::ApusimText,
    }
}

fn is_ld_st(t: &[u8]) -> bool {
    t.eq_ignore_ascii_case(b"LD") || t.eq_ignore_ascii_case(b"ST")
}

fn is_dramsim_op(t: &[u8]) -> bool {
    parse_dramsim_op(t).is_some()
}

fn any_of(t: &[u8], words: &[&[u8]]) -> bool {
    words.iter().any(|w| t.eq_ignore_ascii_case(w))
}

fn parse_dramsim_op(t: &[u8]) -> Option<bool> {
    if any_of(t, &[b"READ", b"IFETCH", b"P_MEM_RD", b"P_FETCH"]) {
        Some(false)
    } else if any_of(t, &[b"WRITE", b"P_MEM_WR"]) {
        Some(true)
    } else {
        None
    }
}

/// `Some(is_write)` for a read/write token.
fn parse_op(t: &[u8]) -> Option<bool> {
    if any_of(t, &[b"R", b"RD", b"READ", b"LD", b"LOAD"]) {
        Some(false)
    } else if any_of(t, &[b"W", b"WR", b"WRITE", b"ST", b"STORE"]) {
        Some(true)
    } else {
        None
    }
}

/// Digit value of every byte (0xFF: not a hex digit).
const DIGIT: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Parse `0x`-hex or decimal into u64 (`_` separators allowed; overflow is an error).
fn parse_num(t: &[u8]) -> Option<u64> {
    let (digits, radix) = match t {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16u64),
        _ => (t, 10u64),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in digits {
        let d = u64::from(DIGIT[b as usize]);
        if d >= radix {
            if b == b'_' {
                continue;
            }
            return None;
        }
        v = v.checked_mul(radix)?.checked_add(d)?;
    }
    Some(v)
}

/// Split a line into at most 7 fields (blank- or comma-separated) in one pass, stopping at a
/// `#` comment. Returns the number of fields (7 means "7 or more").
fn split_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]; 7]) -> usize {
    let mut n = 0;
    let mut start = None;
    for (i, &b) in line.iter().enumerate() {
        let sep = b == b' ' || b == b'\t' || b == b',' || b == b'\r' || b == b'\n' || b == b'#';
        match (sep, start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out[n] = &line[s..i];
                n += 1;
                start = None;
                if n == 7 {
                    return n;
                }
            }
            _ => {}
        }
        if b == b'#' {
            return n;
        }
    }
    if let Some(s) = start {
        out[n] = &line[s..];
        n += 1;
    }
    n
}

fn show(t: &[u8]) -> String {
    String::from_utf8_lossy(t).into_owned()
}

/// An arrival cycle: a number no larger than [`MAX_CYCLE`].
fn parse_cycle(t: &[u8]) -> Result<u64, String> {
    match parse_num(t) {
        Some(c) if c <= MAX_CYCLE => Ok(c),
        Some(c) => Err(format!(
            "arrival cycle {c} is beyond the maximum {MAX_CYCLE} (2^62)"
        )),
        None => Err(format!("bad cycle `{}`", show(t))),
    }
}

/// Streaming reader: an iterator of requests (or the first error).
pub struct TraceReader<R: BufRead> {
    reader: R,
    path: PathBuf,
    format: TraceFormat,
    interval: u64,
    line_no: usize,
    next_id: u64,
    last_arrival: u64,
    buf: Vec<u8>,
    failed: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// Read `format` (not `Auto`) from `reader`; `path` is used in error messages.
    pub fn new(reader: R, path: impl Into<PathBuf>, format: TraceFormat, interval: u64) -> Self {
        TraceReader {
            reader,
            path: path.into(),
            format,
            interval,
            line_no: 0,
            next_id: 0,
            last_arrival: 0,
            buf: Vec::with_capacity(128),
            failed: false,
        }
    }

    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    fn err(&self, msg: String) -> DramError {
        DramError::Parse {
            file: self.path.clone(),
            line: self.line_no,
            msg,
        }
    }

    /// Parse the fields of one non-blank line; errors are plain messages, turned into
    /// [`DramError::Parse`] with file and line by the caller (keeps the hot path small).
    fn parse_fields(&self, t: &[&[u8]]) -> Result<Request, String> {
        let id = self.next_id;
        let addr_of =
            |tok: &[u8]| parse_num(tok).ok_or_else(|| format!("bad address `{}`", show(tok)));
        match self.format {
            TraceFormat::Ramulator => {
                if t.len() != 2 {
                    return Err(format!(
                        "expected `LD|ST ADDR` (Ramulator 2 LoadStoreTrace), got {} fields",
                        t.len()
                    ));
                }
                let (is_write, addr) =
                    if let Some(w) = is_ld_st(t[0]).then(|| parse_op(t[0])).flatten() {
                        (w, addr_of(t[1])?)
                    } else if let Some(w) = parse_op(t[1]) {
                        (w, addr_of(t[0])?)
                    } else {
                        return Err(format!("expected LD or ST, got `{}`", show(t[0])));
                    };
                let arrival = id
                    .checked_mul(self.interval)
                    .filter(|&a| a <= MAX_CYCLE)
                    .ok_or_else(|| {
                        format!(
                            "this request's arrival cycle, {id} × interval {}, is beyond the \
                             maximum {MAX_CYCLE} (2^62)",
                            self.interval
                        )
                    })?;
                Ok(Request::new(id, addr, is_write, arrival))
            }
            TraceFormat::DramSim3 => {
                if t.len() != 3 {
                    return Err(format!(
                        "expected `ADDR READ|WRITE CYCLE` (DRAMsim3), got {} fields",
                        t.len()
                    ));
                }
                let addr = addr_of(t[0])?;
                let is_write = parse_dramsim_op(t[1])
                    .ok_or_else(|| format!("expected READ or WRITE, got `{}`", show(t[1])))?;
                let arrival = parse_cycle(t[2])?;
                Ok(Request::new(id, addr, is_write, arrival))
            }
            TraceFormat::ApusimText | TraceFormat::Auto => {
                if t.len() < 3 || t.len() > 6 {
                    return Err(format!(
                        "expected `ADDR OP CYCLE [SOURCE [STREAM [CRITICAL]]]`, got {} fields",
                        t.len()
                    ));
                }
                let addr = addr_of(t[0])?;
                let is_write = parse_op(t[1])
                    .or_else(|| parse_dramsim_op(t[1]))
                    .ok_or_else(|| format!("expected R or W, got `{}`", show(t[1])))?;
                let arrival = parse_cycle(t[2])?;
                let source = match t.get(3) {
                    None => 0,
                    Some(s) => std::str::from_utf8(s)
                        .ok()
                        .and_then(parse_source)
                        .ok_or_else(|| {
                            format!("bad source `{}` (cpuN, gpu or 0..=255)", show(s))
                        })?,
                };
                let stream = match t.get(4) {
                    None => 0,
                    Some(s) => parse_num(s)
                        .and_then(|v| u8::try_from(v).ok())
                        .ok_or_else(|| format!("bad stream `{}` (0..=255)", show(s)))?,
                };
                let critical = match t.get(5) {
                    None => false,
                    Some(s) if any_of(s, &[b"1", b"true", b"c"]) => true,
                    Some(s) if any_of(s, &[b"0", b"false", b"n"]) => false,
                    Some(s) => return Err(format!("bad critical flag `{}` (0 or 1)", show(s))),
                };
                Ok(Request {
                    id,
                    addr,
                    is_write,
                    source,
                    stream,
                    critical,
                    arrival,
                })
            }
        }
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Request, DramError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    self.failed = true;
                    return Some(Err(DramError::io(self.path.clone(), e)));
                }
            }
            self.line_no += 1;
            let buf = std::mem::take(&mut self.buf);
            // Up to 7 fields without allocating (7 = one more than any format allows).
            let mut fields: [&[u8]; 7] = [&[]; 7];
            let n = split_fields(&buf, &mut fields);
            if n == 0 {
                // Blank or comment-only line.
                self.buf = buf;
                continue;
            }
            let r = match self.parse_fields(&fields[..n]) {
                Ok(req) if req.arrival < self.last_arrival => Err(self.err(format!(
                    "arrival cycle {} is earlier than the previous request's {}",
                    req.arrival, self.last_arrival
                ))),
                Ok(req) => Ok(req),
                Err(msg) => Err(self.err(msg)),
            };
            self.buf = buf;
            match r {
                Ok(req) => {
                    self.last_arrival = req.arrival;
                    self.next_id += 1;
                    return Some(Ok(req));
                }
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

/// Open a trace file, detecting the format if `format` is `Auto`. `interval` is the arrival
/// spacing for the time-less Ramulator format.
pub fn open_trace(
    path: &Path,
    format: TraceFormat,
    interval: u64,
) -> Result<TraceReader<BufReader<File>>, DramError> {
    let open = || File::open(path).map_err(|e| DramError::io(path, e));
    let format = if format == TraceFormat::Auto {
        let mut r = BufReader::new(open()?);
        let mut line = String::new();
        let mut detected = TraceFormat::ApusimText;
        loop {
            line.clear();
            let n = r.read_line(&mut line).map_err(|e| DramError::io(path, e))?;
            if n == 0 {
                break;
            }
            if !content(line.as_bytes())
                .iter()
                .all(|b| b.is_ascii_whitespace())
            {
                detected = detect_format(&line);
                break;
            }
        }
        detected
    } else {
        format
    };
    Ok(TraceReader::new(
        BufReader::with_capacity(1 << 16, open()?),
        path,
        format,
        interval,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, f: TraceFormat, interval: u64) -> Result<Vec<Request>, DramError> {
        TraceReader::new(text.as_bytes(), "t.trace", f, interval).collect()
    }

    #[test]
    fn parses_the_three_formats() {
        let r = read(
            "LD 0x40\nST 0x80\n\nLD 0x1000\n",
            TraceFormat::Ramulator,
            16,
        )
        .unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].addr, r[0].is_write, r[0].arrival), (0x40, false, 0));
        assert_eq!((r[1].addr, r[1].is_write, r[1].arrival), (0x80, true, 16));
        assert_eq!(r[2].arrival, 32);
        let r = read(
            "0x0000ABC0 READ 4\n0x00000040 WRITE 8\n",
            TraceFormat::DramSim3,
            0,
        )
        .unwrap();
        assert_eq!((r[0].addr, r[0].is_write, r[0].arrival), (0xABC0, false, 4));
        assert!(r[1].is_write);
        let r = read(
            "# header\n0x100 R 5 gpu 3 1\n256, W, 7, cpu2\n0x40 READ 9 # comment\n",
            TraceFormat::ApusimText,
            0,
        )
        .unwrap();
        assert_eq!((r[0].source, r[0].stream, r[0].critical), (0x80, 3, true));
        assert_eq!((r[1].addr, r[1].is_write, r[1].source), (256, true, 2));
        assert_eq!(r[2].arrival, 9);
        assert_eq!(r.iter().map(|q| q.id).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn detects_formats() {
        assert_eq!(detect_format("LD 0x1234"), TraceFormat::Ramulator);
        assert_eq!(detect_format("0x1234 W"), TraceFormat::Ramulator);
        assert_eq!(detect_format("0x1234 READ 12"), TraceFormat::DramSim3);
        assert_eq!(detect_format("0x1234 R 12 gpu"), TraceFormat::ApusimText);
        assert_eq!(detect_format("0x1234 R 12"), TraceFormat::ApusimText);
    }

    fn err_of(text: &str, f: TraceFormat) -> String {
        read(text, f, 1).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = err_of("LD 0x40\nLD 0x80\nXX 0x40\n", TraceFormat::Ramulator);
        assert!(e.starts_with("t.trace:3:"), "{e}");
        assert!(e.contains("LD or ST"), "{e}");
        let e = err_of("0x40 READ 1\n0x40 READ zz\n", TraceFormat::DramSim3);
        assert!(
            e.starts_with("t.trace:2:") && e.contains("bad cycle `zz`"),
            "{e}"
        );
        let e = err_of("0x40 READ 10\n\n0x80 WRITE 5\n", TraceFormat::DramSim3);
        assert!(e.starts_with("t.trace:3:") && e.contains("earlier"), "{e}");
        let e = err_of("0xZZ R 1\n", TraceFormat::ApusimText);
        assert!(
            e.starts_with("t.trace:1:") && e.contains("bad address"),
            "{e}"
        );
        let e = err_of("0x40 R 1 martian\n", TraceFormat::ApusimText);
        assert!(e.contains("bad source"), "{e}");
        let e = err_of("0x40 X 1\n", TraceFormat::ApusimText);
        assert!(e.contains("expected R or W"), "{e}");
        let e = err_of("0x40\n", TraceFormat::ApusimText);
        assert!(e.contains("got 1 fields"), "{e}");
        let e = err_of("0x40 READ\n", TraceFormat::DramSim3);
        assert!(e.contains("DRAMsim3"), "{e}");
        let e = err_of("0xffffffffffffffffff R 1\n", TraceFormat::ApusimText);
        assert!(e.contains("bad address"), "{e}");
    }

    #[test]
    fn cycles_beyond_the_maximum_are_refused_with_file_and_line() {
        let max = MAX_CYCLE.to_string();
        let r = read(
            &format!("0x40 R 1\n0x80 R {max}\n"),
            TraceFormat::ApusimText,
            0,
        );
        assert_eq!(r.unwrap()[1].arrival, MAX_CYCLE);
        let e = err_of(
            "0x40 R 1\n0x80 R 18446744073709551615\n",
            TraceFormat::ApusimText,
        );
        assert!(
            e.starts_with("t.trace:2:") && e.contains("18446744073709551615") && e.contains(&max),
            "{e}"
        );
        let e = err_of(
            &format!("0x40 READ {}\n", MAX_CYCLE + 1),
            TraceFormat::DramSim3,
        );
        assert!(e.starts_with("t.trace:1:") && e.contains(&max), "{e}");
        // Ramulator: request i arrives at i × interval; the third of interval 2^61 is at 2^62
        // (allowed), the fourth beyond it.
        let r = read(
            "LD 0x0\nLD 0x40\nLD 0x80\n",
            TraceFormat::Ramulator,
            1 << 61,
        )
        .unwrap();
        assert_eq!(r[2].arrival, MAX_CYCLE);
        let e = read(
            "LD 0x0\nLD 0x40\n\nLD 0x80\nLD 0xc0\n",
            TraceFormat::Ramulator,
            1 << 61,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("t.trace:5:") && e.contains("3 × interval 2305843009213693952"),
            "{e}"
        );
        let e = read("LD 0x0\nLD 0x40\n", TraceFormat::Ramulator, u64::MAX)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.trace:2:") && e.contains(&max), "{e}");
    }

    #[test]
    fn reader_stops_after_error() {
        let mut it = TraceReader::new("bad\nLD 0x40\n".as_bytes(), "x", TraceFormat::Ramulator, 1);
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
    }
}
