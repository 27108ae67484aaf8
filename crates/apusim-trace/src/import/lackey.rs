//! valgrind lackey importer: `valgrind --tool=lackey --trace-mem=yes` output.
//!
//! Lackey prints one line per guest instruction and per data access:
//!
//! ```text
//! ==3827== Lackey, an example Valgrind tool       valgrind messages: skipped
//! I  0401ab70,3                                   instruction fetch, 3 bytes
//!  L 1fff000778,8                                 load
//!  S 1fff000770,8                                 store
//!  M 0402a0c8,4                                   modify (load + store of the same bytes)
//! ```
//!
//! Mapping to [`Access`] (agent and unit from [`ImportOptions`]):
//!
//! * `I addr,size` → [`Stream::CpuInstr`] [`Op::Read`], `pc = addr`;
//! * `L` → [`Stream::CpuData`] read; `S` → data write; `M` → ONE data read flagged
//!   [`Access::MODIFY`] (cachegrind counts a modify as one read; the flag makes it dirty the line);
//! * the `pc` of a data access is the address of the preceding `I` line (0 before the first);
//! * `time` is the number of `I` lines seen so far, the current instruction's included (the
//!   retired-instruction count): the first instruction and its data accesses have time 1, data
//!   accesses before any `I` line time 0;
//! * sizes larger than 65535 are clamped to 65535 and a size of 0 becomes 1.
//!
//! Lines starting `==PID==` or `--PID--` (valgrind's own messages) and empty lines are skipped;
//! the last few messages are kept for error reports ([`LackeySource::valgrind_messages`]). Any
//! other line is a [`TraceError::Parse`] naming the file and line.
//!
//! [`record_with_lackey`] runs valgrind on a program and converts its output on the fly through
//! a FIFO, so no text trace ever touches the disk.

use super::{file_header, show_line, ImportOptions};
use crate::apt::AptWriter;
use crate::{Access, AccessSource, Counted, Op, Result, Stream, TraceError, TraceHeader, BATCH};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// How many valgrind message lines are kept for error reports.
const KEEP_MESSAGES: usize = 32;

/// Streaming lackey parser over any [`BufRead`] (a file or a child's pipe).
pub struct LackeySource<R: BufRead> {
    input: R,
    path: PathBuf,
    header: TraceHeader,
    opts: ImportOptions,
    line: Vec<u8>,
    line_no: u64,
    /// `I` lines seen so far.
    instrs: u64,
    /// Address of the last `I` line.
    pc: u64,
    messages: VecDeque<String>,
    done: bool,
}

impl LackeySource<BufReader<File>> {
    /// Open a lackey log file.
    pub fn open(path: impl AsRef<Path>, opts: &ImportOptions) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        Ok(LackeySource::new(
            BufReader::with_capacity(1 << 20, f),
            path,
            opts,
        ))
    }
}

impl<R: BufRead> LackeySource<R> {
    /// Parse lackey output from `input`; `name` is used in error messages and the header.
    pub fn new(input: R, name: impl AsRef<Path>, opts: &ImportOptions) -> Self {
        let path = name.as_ref().to_path_buf();
        let header = file_header(
            &path,
            opts,
            &[Stream::CpuInstr, Stream::CpuData],
            &format!("valgrind lackey: {}", path.display()),
        );
        Self::with_header(input, path, opts, header)
    }

    /// Like [`LackeySource::new`] with an explicit header.
    pub fn with_header(
        input: R,
        name: impl AsRef<Path>,
        opts: &ImportOptions,
        header: TraceHeader,
    ) -> Self {
        LackeySource {
            input,
            path: name.as_ref().to_path_buf(),
            header,
            opts: opts.clone(),
            line: Vec::with_capacity(64),
            line_no: 0,
            instrs: 0,
            pc: 0,
            messages: VecDeque::new(),
            done: false,
        }
    }

    /// Instructions (`I` lines) seen so far.
    pub fn instructions(&self) -> u64 {
        self.instrs
    }

    /// The last valgrind message lines seen (without the `==PID==` prefix).
    pub fn valgrind_messages(&self) -> impl Iterator<Item = &str> {
        self.messages.iter().map(|s| s.as_str())
    }

    /// Read and discard the rest of the input (e.g. to let a writer on a pipe finish).
    pub fn drain(&mut self) {
        loop {
            let n = match self.input.fill_buf() {
                Ok([]) => return,
                Ok(b) => b.len(),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            self.input.consume(n);
        }
    }

    fn parse_err(&self, msg: &str) -> TraceError {
        TraceError::parse(
            &self.path,
            self.line_no,
            format!("{msg}; found `{}`", show_line(&self.line)),
        )
    }
}

/// Is `line` a valgrind message (`==123==` or `--123--` prefix)? Returns the text after it.
fn valgrind_message(line: &[u8]) -> Option<&[u8]> {
    let mark = *line.first()?;
    if mark != b'=' && mark != b'-' || line.get(1) != Some(&mark) {
        return None;
    }
    let rest = &line[2..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&mark) || rest.get(digits + 1) != Some(&mark) {
        return None;
    }
    Some(&rest[digits + 2..])
}

/// Parse `hex,dec` (the part after the record kind). `None` if malformed.
#[inline]
fn parse_addr_size(s: &[u8]) -> Option<(u64, u64)> {
    let mut addr = 0u64;
    let mut i = 0;
    while i < s.len() {
        let d = match s[i] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        if i >= 16 {
            return None;
        }
        addr = (addr << 4) | d as u64;
        i += 1;
    }
    if i == 0 || s.get(i) != Some(&b',') {
        return None;
    }
    i += 1;
    let start = i;
    let mut size = 0u64;
    while i < s.len() && s[i].is_ascii_digit() {
        size = size.checked_mul(10)?.checked_add((s[i] - b'0') as u64)?;
        i += 1;
    }
    if i == start || s[i..].iter().any(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    Some((addr, size))
}

/// Does this start of a file look like lackey output?
pub(crate) fn looks_like_lackey(head: &[u8]) -> bool {
    let first = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !l.is_empty());
    match first {
        Some(l) => valgrind_message(l).is_some() || record_kind(l).is_some(),
        None => false,
    }
}

/// The kind byte (`I`, `L`, `S`, `M`) and the rest of a record line.
#[inline]
fn record_kind(line: &[u8]) -> Option<(u8, &[u8])> {
    if line.len() < 4 {
        return None;
    }
    match (line[0], line[1], line[2]) {
        (b'I', b' ', b' ') => Some((b'I', &line[3..])),
        (b' ', k @ (b'L' | b'S' | b'M'), b' ') => Some((k, &line[3..])),
        _ => None,
    }
}

impl<R: BufRead + Send> AccessSource for LackeySource<R> {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let agent = self.opts.agent;
        let unit = self.opts.unit();
        let mut produced = 0;
        while produced < BATCH {
            self.line.clear();
            let n = self
                .input
                .read_until(b'\n', &mut self.line)
                .map_err(|e| TraceError::io(&self.path, e))?;
            if n == 0 {
                self.done = true;
                break;
            }
            self.line_no += 1;
            let mut l = &self.line[..];
            if let Some(x) = l.strip_suffix(b"\n") {
                l = x;
            }
            if let Some(x) = l.strip_suffix(b"\r") {
                l = x;
            }
            if l.is_empty() {
                continue;
            }
            let Some((kind, rest)) = record_kind(l) else {
                if let Some(msg) = valgrind_message(l) {
                    if self.messages.len() == KEEP_MESSAGES {
                        self.messages.pop_front();
                    }
                    self.messages
                        .push_back(String::from_utf8_lossy(msg).trim().to_string());
                    continue;
                }
                return Err(self.parse_err(
                    "expected a lackey record (`I  addr,size`, ` L addr,size`, ` S addr,size`, \
                     ` M addr,size`) or a valgrind `==PID==` line",
                ));
            };
            let Some((addr, size)) = parse_addr_size(rest) else {
                return Err(self.parse_err(
                    "expected `hexaddress,size` (up to 16 hex digits, a comma, a decimal size)",
                ));
            };
            let size = size.clamp(1, u16::MAX as u64) as u16;
            let mut a = Access {
                addr,
                pc: self.pc,
                time: self.instrs,
                warp: 0,
                unit,
                size,
                agent,
                stream: Stream::CpuData,
                op: Op::Read,
                flags: 0,
            };
            match kind {
                b'I' => {
                    self.instrs += 1;
                    self.pc = addr;
                    a.pc = addr;
                    a.time = self.instrs;
                    a.stream = Stream::CpuInstr;
                }
                b'L' => {}
                b'S' => a.op = Op::Write,
                _ => a.flags = Access::MODIFY,
            }
            out.push(a);
            produced += 1;
        }
        Ok(produced > 0)
    }
}

/// Run `program args...` under `valgrind --tool=lackey --trace-mem=yes` and convert its trace
/// on the fly into the `.apt` file `out`. Returns the number of accesses written.
///
/// valgrind's output goes to a FIFO in a private temporary directory (`--log-file=`), so the
/// program's own stdin, stdout and stderr stay connected to this process's and never mix with
/// the trace. The `.apt` file appears only if valgrind and the program succeed; a missing
/// valgrind, a program valgrind cannot start, a non-zero exit status or a malformed line are
/// reported as errors (with valgrind's last messages).
pub fn record_with_lackey(
    program: &str,
    args: &[String],
    out: &Path,
    opts: &ImportOptions,
) -> Result<u64> {
    record_with_lackey_watched(program, args, out, opts, &mut |_| {})
}

/// [`record_with_lackey`], calling `progress` with the accesses converted so far after each
/// batch (a front end's progress display).
pub fn record_with_lackey_watched(
    program: &str,
    args: &[String],
    out: &Path,
    opts: &ImportOptions,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<u64> {
    use std::process::{Command, Stdio};

    let other = |msg: String| TraceError::Other(msg);
    let dir = tempfile::Builder::new()
        .prefix("apusim-lackey")
        .tempdir()
        .map_err(|e| other(format!("cannot create a temporary directory: {e}")))?;
    let fifo = dir.path().join("lackey.fifo");
    fifo::make(&fifo)?;
    // Read end first (non-blocking, so opening does not wait for a writer), then our own
    // keep-alive write end, so that the reader sees end-of-file only once valgrind has exited
    // AND we dropped the keep-alive — even if valgrind never opens the FIFO.
    let reader = fifo::open_read_nonblocking(&fifo)?;
    let keepalive = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .map_err(|e| TraceError::io(&fifo, e))?;
    fifo::set_blocking(&reader, &fifo)?;

    let command_line = std::iter::once(program.to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new("valgrind")
        .arg("--tool=lackey")
        .arg("--trace-mem=yes")
        .arg(format!("--log-file={}", fifo.display()))
        .arg(program)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                other(
                    "cannot run `valgrind`: it is not installed or not on PATH \
                     (install it, e.g. `apt-get install valgrind`)"
                        .to_string(),
                )
            } else {
                other(format!("cannot run `valgrind`: {e}"))
            }
        })?;
    let pid = child.id();
    let watcher = std::thread::spawn(move || {
        let status = child.wait();
        drop(keepalive);
        status
    });

    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| program.to_string());
    let header = TraceHeader::single(
        opts.agent,
        &name,
        opts.clock_mhz,
        &[Stream::CpuInstr, Stream::CpuData],
        &format!("valgrind --tool=lackey --trace-mem=yes {command_line}"),
    );
    let mut src = LackeySource::with_header(
        BufReader::with_capacity(1 << 20, reader),
        format!("valgrind lackey output of `{program}`"),
        opts,
        header.clone(),
    );
    let converted = AptWriter::create(out, &header).and_then(|mut w| {
        let n = w.write_source(&mut Counted::new(&mut src, |n, _| progress(n)))?;
        Ok((w, n))
    });
    if converted.is_err() {
        if !watcher.is_finished() {
            fifo::kill(pid);
        }
        src.drain();
    }
    let status = watcher
        .join()
        .map_err(|_| other("the valgrind watcher thread panicked".into()))?
        .map_err(|e| other(format!("waiting for valgrind failed: {e}")))?;
    let messages: Vec<&str> = src.valgrind_messages().filter(|m| !m.is_empty()).collect();
    let tail = if messages.is_empty() {
        " (see valgrind's messages on stderr above)".to_string()
    } else {
        format!(
            "; valgrind said:\n  {}",
            messages[messages.len().saturating_sub(8)..].join("\n  ")
        )
    };
    let (w, n) = converted?;
    if !status.success() {
        let how = match status.code() {
            Some(127) if src.instructions() == 0 => {
                "exited with status 127: the program was not found or could not be started"
                    .to_string()
            }
            Some(c) => format!("exited with status {c}"),
            None => "was killed by a signal".to_string(),
        };
        return Err(other(format!(
            "valgrind --tool=lackey {command_line}: {how}; no trace written{tail}"
        )));
    }
    if src.instructions() == 0 {
        return Err(other(format!(
            "valgrind --tool=lackey {command_line}: produced no instructions; no trace written{tail}"
        )));
    }
    w.finish()?;
    Ok(n)
}

/// The few POSIX calls [`record_with_lackey`] needs.
mod fifo {
    use crate::{Result, TraceError};
    use std::ffi::CString;
    use std::fs::File;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    pub fn make(path: &Path) -> Result<()> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| TraceError::Other(format!("{}: path contains NUL", path.display())))?;
        // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
        let r = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        if r != 0 {
            return Err(TraceError::io(path, std::io::Error::last_os_error()));
        }
        Ok(())
    }

    pub fn open_read_nonblocking(path: &Path) -> Result<File> {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| TraceError::io(path, e))
    }

    pub fn set_blocking(f: &File, path: &Path) -> Result<()> {
        let fd = f.as_raw_fd();
        // SAFETY: fcntl on a file descriptor we own; no pointers involved.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        // SAFETY: as above.
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
            return Err(TraceError::io(path, std::io::Error::last_os_error()));
        }
        Ok(())
    }

    pub fn kill(pid: u32) {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: sending a signal has no memory-safety implications; `pid` is our child,
            // not yet reaped (the watcher thread has not finished).
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addr_size() {
        assert_eq!(parse_addr_size(b"0401ab70,3"), Some((0x401ab70, 3)));
        assert_eq!(parse_addr_size(b"ffffffffffffffff,8 "), Some((u64::MAX, 8)));
        assert_eq!(parse_addr_size(b"1ffffffffffffffff,8"), None);
        assert_eq!(parse_addr_size(b",8"), None);
        assert_eq!(parse_addr_size(b"12,"), None);
        assert_eq!(parse_addr_size(b"12,8x"), None);
        assert_eq!(parse_addr_size(b"12,99999999999999999999999"), None);
    }

    #[test]
    fn messages() {
        assert_eq!(valgrind_message(b"==3827== Lackey"), Some(&b" Lackey"[..]));
        assert_eq!(valgrind_message(b"--3827-- x"), Some(&b" x"[..]));
        assert_eq!(valgrind_message(b"==x== Lackey"), None);
        assert_eq!(valgrind_message(b"=="), None);
        assert!(looks_like_lackey(b"\nI  0401ab70,3\n"));
        assert!(!looks_like_lackey(b"r,0x10\n"));
    }
}
