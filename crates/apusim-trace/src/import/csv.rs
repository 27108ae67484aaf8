//! CSV/text importer: one access per line.
//!
//! ```text
//! # comment lines and blank lines are skipped
//! op,address,stream,agent,pc,size,time,unit,warp,critical     <- optional header line
//! r,0x7ffd1000,cpu-data,cpu0,0x401000,8,12,0,0,0
//! ```
//!
//! Fields are separated by commas and/or whitespace (runs count as one separator, so empty
//! fields cannot be expressed and quoting is not supported). Without a header line the columns
//! are `op address [size]`. A header line names the columns in any order (`addr` is accepted
//! for `address`); `op` and `address` are required; unnamed fields take defaults:
//!
//! | column | values | default |
//! |---|---|---|
//! | `op` | `r`/`w` or any [`Op`] name (`read`, `write`, `load`, `store`, `wb`, `pf`, ...) | required |
//! | `address` | `0x`-prefixed hex or decimal | required |
//! | `stream` | a [`Stream`] name (`cpu-data`, `texture`, ...) or its number 0..=14 | `cpu-data` |
//! | `agent` | `cpuN` or `gpu` | [`ImportOptions::agent`] |
//! | `pc` | hex or decimal | 0 |
//! | `size` | 1..=65535 | 8 |
//! | `time` | hex or decimal | the access's 0-based index in the file |
//! | `unit` | 0..=65535 | the agent's core number (0 for the GPU) |
//! | `warp` | 0..=2^32-1 | 0 |
//! | `critical` | `0`/`1`/`true`/`false`/`yes`/`no` | false |
//!
//! A line is a header if its first field is not an op name. Every malformed line is a
//! [`TraceError::Parse`] naming the file, line and what was expected.
//!
//! The header of the source lists the default agent and `cpu-data`; when the columns include
//! `agent` or `stream` and the input is a file, [`CsvSource::open`] pre-scans it to list the
//! agents and streams that actually occur (a stream-only [`CsvSource::new`] lists every stream).

use super::{file_header, parse_u64, stem, ImportOptions};
use crate::{Access, AccessSource, Agent, Op, Result, Stream, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Size of accesses whose line gives none.
pub const DEFAULT_SIZE: u16 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Op,
    Address,
    Stream,
    Agent,
    Pc,
    Size,
    Time,
    Unit,
    Warp,
    Critical,
}

const COLUMN_NAMES: &str = "op, address, stream, agent, pc, size, time, unit, warp, critical";

impl Column {
    fn parse(s: &str) -> Option<Column> {
        Some(match s.to_ascii_lowercase().as_str() {
            "op" => Column::Op,
            "address" | "addr" => Column::Address,
            "stream" => Column::Stream,
            "agent" => Column::Agent,
            "pc" => Column::Pc,
            "size" => Column::Size,
            "time" => Column::Time,
            "unit" => Column::Unit,
            "warp" => Column::Warp,
            "critical" => Column::Critical,
            _ => return None,
        })
    }
}

/// Streaming CSV/text trace reader.
pub struct CsvSource<R: BufRead> {
    input: R,
    path: PathBuf,
    header: TraceHeader,
    opts: ImportOptions,
    /// `None` until the first content line decided between header and headerless.
    columns: Option<Vec<Column>>,
    /// The first content line was data and still waits in `line` to be parsed.
    pending: bool,
    line: Vec<u8>,
    line_no: u64,
    index: u64,
    done: bool,
}

impl CsvSource<BufReader<File>> {
    /// Open a CSV/text trace file (pre-scanning it if its header names agents or streams).
    pub fn open(path: impl AsRef<Path>, opts: &ImportOptions) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let mut src = CsvSource::new(BufReader::with_capacity(1 << 20, f), path, opts);
        src.read_columns()?;
        let cols = src.columns.as_deref().unwrap_or(&[]);
        if cols.contains(&Column::Agent) || cols.contains(&Column::Stream) {
            // Pre-scan for the agents and streams present; errors surface in the real pass.
            let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
            let mut scan = CsvSource::new(BufReader::with_capacity(1 << 20, f), path, opts);
            let mut agents = Vec::new();
            let mut streams = Vec::new();
            let mut batch = Vec::with_capacity(BATCH);
            while let Ok(true) = scan.next_batch(&mut batch) {
                for a in &batch {
                    if !agents.contains(&a.agent) {
                        agents.push(a.agent);
                    }
                    if !streams.contains(&a.stream) {
                        streams.push(a.stream);
                    }
                }
                batch.clear();
            }
            agents.sort();
            streams.sort();
            src.header.agents = agents
                .into_iter()
                .map(|agent| crate::AgentInfo {
                    agent,
                    name: stem(path),
                    clock_mhz: opts.clock_mhz,
                })
                .collect();
            src.header.streams = streams;
        }
        Ok(src)
    }
}

impl<R: BufRead> CsvSource<R> {
    /// Parse CSV/text from `input`; `name` is used in error messages and the header.
    pub fn new(input: R, name: impl AsRef<Path>, opts: &ImportOptions) -> Self {
        let path = name.as_ref().to_path_buf();
        let header = file_header(
            &path,
            opts,
            &[Stream::CpuData],
            &format!("csv: {}", path.display()),
        );
        CsvSource {
            input,
            path,
            header,
            opts: opts.clone(),
            columns: None,
            pending: false,
            line: Vec::with_capacity(128),
            line_no: 0,
            index: 0,
            done: false,
        }
    }

    fn err(&self, msg: impl AsRef<str>) -> TraceError {
        super::line_error(&self.path, self.line_no, &self.line, msg.as_ref())
    }

    /// Read the next content line into `self.line` (blank and `#` lines skipped); `false` at
    /// end of input.
    fn next_line(&mut self) -> Result<bool> {
        super::next_content_line(
            &mut self.input,
            &self.path,
            &mut self.line,
            &mut self.line_no,
            true,
        )
    }

    /// Decide the columns from the first content line. If it is a data line it stays in
    /// `self.line` with `self.pending` set.
    fn read_columns(&mut self) -> Result<()> {
        if self.columns.is_some() {
            return Ok(());
        }
        if !self.next_line()? {
            self.columns = Some(vec![Column::Op, Column::Address, Column::Size]);
            self.done = true;
            return Ok(());
        }
        let text = match std::str::from_utf8(&self.line) {
            Ok(t) => t.to_string(),
            Err(_) => return Err(self.err("expected UTF-8 text")),
        };
        let fields: Vec<&str> = split(&text).collect();
        if fields.first().is_some_and(|f| f.parse::<Op>().is_ok()) {
            self.columns = Some(vec![Column::Op, Column::Address, Column::Size]);
            self.pending = true;
            return Ok(());
        }
        let mut cols = Vec::new();
        for f in &fields {
            let Some(c) = Column::parse(f) else {
                return Err(self.err(format!(
                    "expected an op (r, w, read, write, ...) or a header of column names \
                     ({COLUMN_NAMES}); `{f}` is neither"
                )));
            };
            if cols.contains(&c) {
                return Err(self.err(format!("column `{f}` named twice in the header")));
            }
            cols.push(c);
        }
        if !cols.contains(&Column::Op) || !cols.contains(&Column::Address) {
            return Err(self.err("the header must name the columns `op` and `address`"));
        }
        if cols.contains(&Column::Stream) {
            self.header.streams = Stream::ALL.to_vec();
        }
        self.columns = Some(cols);
        Ok(())
    }

    fn parse_line(&mut self) -> Result<Access> {
        let text = match std::str::from_utf8(&self.line) {
            Ok(t) => t,
            Err(_) => return Err(self.err("expected UTF-8 text")),
        };
        let cols = self.columns.as_deref().unwrap_or(&[]);
        let mut op = None;
        let mut addr = None;
        let mut a = Access::new(self.opts.agent, Stream::CpuData, Op::Read, 0, DEFAULT_SIZE);
        a.time = self.index;
        let mut unit = None;
        let mut n = 0;
        for (i, f) in split(text).enumerate() {
            let Some(&col) = cols.get(i) else {
                return Err(self.err(format!(
                    "expected at most {} fields ({}), found more",
                    cols.len(),
                    cols.iter()
                        .map(|c| format!("{c:?}").to_lowercase())
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            };
            n += 1;
            let bad = |what: &str| {
                Err(self.err(format!(
                    "field {} ({col:?}): expected {what}, found `{f}`",
                    i + 1
                )))
            };
            match col {
                Column::Op => match f.parse::<Op>() {
                    Ok(o) => op = Some(o),
                    Err(_) => return bad("an op (r, w, read, write, writeback, prefetch)"),
                },
                Column::Address => match parse_u64(f) {
                    Some(v) => addr = Some(v),
                    None => return bad("an address (0x-prefixed hex or decimal)"),
                },
                Column::Stream => match f.parse::<Stream>() {
                    Ok(s) => a.stream = s,
                    Err(_) => match f.parse::<u8>().ok().and_then(Stream::from_byte) {
                        Some(s) => a.stream = s,
                        None => {
                            return bad(
                                "a stream name (cpu-data, cpu-instr, texture, ...) or 0..=14",
                            )
                        }
                    },
                },
                Column::Agent => match f.parse::<Agent>() {
                    Ok(ag) => a.agent = ag,
                    Err(_) => return bad("an agent (cpuN or gpu)"),
                },
                Column::Pc => match parse_u64(f) {
                    Some(v) => a.pc = v,
                    None => return bad("a pc (0x-prefixed hex or decimal)"),
                },
                Column::Size => match parse_u64(f) {
                    Some(v) if (1..=u16::MAX as u64).contains(&v) => a.size = v as u16,
                    _ => return bad("a size 1..=65535"),
                },
                Column::Time => match parse_u64(f) {
                    Some(v) => a.time = v,
                    None => return bad("a time (decimal or 0x-prefixed hex)"),
                },
                Column::Unit => match parse_u64(f) {
                    Some(v) if v <= u16::MAX as u64 => unit = Some(v as u16),
                    _ => return bad("a unit 0..=65535"),
                },
                Column::Warp => match parse_u64(f) {
                    Some(v) if v <= u32::MAX as u64 => a.warp = v as u32,
                    _ => return bad("a warp 0..=4294967295"),
                },
                Column::Critical => match f.to_ascii_lowercase().as_str() {
                    "1" | "true" | "yes" | "y" => a = a.critical(true),
                    "0" | "false" | "no" | "n" => a = a.critical(false),
                    _ => return bad("critical as 0/1/true/false/yes/no"),
                },
            }
        }
        let (Some(op), Some(addr)) = (op, addr) else {
            return Err(self.err(format!(
                "expected at least the op and address fields, found {n} field(s)"
            )));
        };
        a.op = op;
        a.addr = addr;
        a.unit = unit.unwrap_or(a.agent.cpu_index().unwrap_or(0) as u16);
        self.index += 1;
        Ok(a)
    }
}

fn split(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
}

impl<R: BufRead + Send> AccessSource for CsvSource<R> {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let mut produced = 0;
        if self.columns.is_none() {
            self.read_columns().inspect_err(|_| self.done = true)?;
        }
        if self.pending {
            self.pending = false;
            let a = self.parse_line().inspect_err(|_| self.done = true)?;
            out.push(a);
            produced += 1;
        }
        while produced < BATCH {
            let more = self.next_line().inspect_err(|_| self.done = true)?;
            if !more {
                self.done = true;
                break;
            }
            let a = self.parse_line().inspect_err(|_| self.done = true)?;
            out.push(a);
            produced += 1;
        }
        Ok(produced > 0)
    }
}
