//! The `csv` and `txt` text forms: [`LcsTextSource`] and its field parsing.

use super::mapping::{next_batch, Block, Emitter, ObjectMap};
use super::options::{parse_c_u64, LcsOptions};
use super::{header, maybe_zstd};
use crate::import::ImportOptions;
use crate::{Access, AccessSource, Op, Result, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Which libCacheSim text form a [`LcsTextSource`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    /// `csv`: delimited fields, columns chosen by [`LcsOptions`].
    Csv,
    /// `txt`: one object id per line.
    Txt,
}

/// Streaming reader of a libCacheSim `csv` or `txt` trace (optionally zstd-compressed).
pub struct LcsTextSource {
    input: Box<dyn BufRead + Send>,
    path: PathBuf,
    header: TraceHeader,
    kind: TextKind,
    opts: LcsOptions,
    map: ObjectMap,
    emit: Emitter,
    /// The first content line has been looked at (delimiter guessed, header skipped).
    started: bool,
    line: Vec<u8>,
    line_no: u64,
}

impl LcsTextSource {
    /// Open a libCacheSim `csv` or `txt` file.
    pub fn open(path: impl AsRef<Path>, kind: TextKind, opts: &ImportOptions) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        LcsTextSource::new(BufReader::with_capacity(1 << 20, f), path, kind, opts)
    }

    /// Read a libCacheSim `csv` or `txt` trace from `input`; `name` is used in errors and the
    /// header. A `csv` trace needs `obj-id-col`.
    pub fn new<R: BufRead + Send + 'static>(
        input: R,
        name: impl AsRef<Path>,
        kind: TextKind,
        opts: &ImportOptions,
    ) -> Result<Self> {
        let path = name.as_ref().to_path_buf();
        let o = &opts.libcachesim;
        let map = ObjectMap::new(o).map_err(TraceError::Other)?;
        if kind == TextKind::Csv && o.obj_id_col.is_none() {
            return Err(TraceError::Other(format!(
                "{}: a libCacheSim csv trace needs its columns, at least obj-id-col \
                 (e.g. time-col=1,obj-id-col=2,obj-size-col=3)",
                path.display()
            )));
        }
        let (input, _) = maybe_zstd(input, &path)?;
        Ok(LcsTextSource {
            input,
            header: header(
                opts,
                &path,
                if kind == TextKind::Csv { "csv" } else { "txt" },
            ),
            kind,
            opts: o.clone(),
            map,
            emit: Emitter::new(opts, o.block_size),
            path,
            started: false,
            line: Vec::with_capacity(128),
            line_no: 0,
        })
    }

    fn err(&self, msg: impl AsRef<str>) -> TraceError {
        crate::import::line_error(&self.path, self.line_no, &self.line, msg.as_ref())
    }

    /// Read the next non-blank line into `self.line`; `false` at the end of the input.
    fn next_line(&mut self) -> Result<bool> {
        crate::import::next_content_line(
            &mut self.input,
            &self.path,
            &mut self.line,
            &mut self.line_no,
            false,
        )
    }

    fn text(&self) -> Result<&str> {
        std::str::from_utf8(&self.line)
            .map(|t| t.trim_end_matches(['\n', '\r']))
            .map_err(|_| self.err("expected UTF-8 text"))
    }

    /// Guess the delimiter (libCacheSim's `csv_detect_delimiter`) from the first line.
    fn guess_delimiter(line: &str) -> u8 {
        let mut best = (0, b',');
        for (i, d) in [b'\t', b',', b'|', b':'].into_iter().enumerate() {
            let n = line.bytes().filter(|&c| c == d).count() * (4 - i);
            if n > best.0 {
                best = (n, d);
            }
        }
        best.1
    }

    /// Field `col` (1-based) of a csv line, trimmed and unquoted.
    fn field(line: &str, delim: u8, col: usize) -> Option<&str> {
        let f = line.split(delim as char).nth(col - 1)?.trim();
        Some(
            f.strip_prefix('"')
                .and_then(|f| f.strip_suffix('"'))
                .unwrap_or(f),
        )
    }

    /// Whether `line` is a header: it has selected numeric fields (time, size, and the id
    /// when `obj-id-is-num`) and none of them parses. A malformed first data line (some fields
    /// numbers) is thus reported, not skipped.
    fn looks_like_header(&self, line: &str, delim: u8) -> bool {
        let o = &self.opts;
        let field = |c: usize| Self::field(line, delim, c);
        let mut checks: Vec<bool> = Vec::new();
        if let Some(c) = o.time_col {
            checks.push(field(c).is_some_and(|f| parse_time(f).is_some()));
        }
        if let Some(c) = o.obj_size_col {
            checks.push(field(c).is_some_and(|f| parse_c_u64(f).is_some()));
        }
        if let (true, Some(c)) = (o.obj_id_is_num, o.obj_id_col) {
            checks.push(field(c).is_some_and(|f| parse_c_u64(f).is_some()));
        }
        !checks.is_empty() && checks.iter().all(|ok| !ok)
    }

    /// Parse the request on `self.line`; `None` for a request of size 0 (skipped, as
    /// libCacheSim does).
    fn parse_line(&mut self) -> Result<Option<Block>> {
        let text = self.text()?.to_string();
        let o = self.opts.clone();
        let (id_field, size, op) = match self.kind {
            TextKind::Txt => (text.trim().to_string(), 1, Op::Read),
            TextKind::Csv => {
                let delim = o.delimiter.unwrap_or(b',');
                let n_fields = text.split(delim as char).count();
                let get = |name: &str, c: usize| {
                    Self::field(&text, delim, c).ok_or_else(|| {
                        self.err(format!(
                            "{name}={c} but the line has {n_fields} field(s) separated by `{}`",
                            (delim as char).escape_default()
                        ))
                    })
                };
                let id = get("obj-id-col", o.obj_id_col.unwrap_or(1))?.to_string();
                if let Some(c) = o.time_col {
                    let f = get("time-col", c)?;
                    if parse_time(f).is_none() {
                        return Err(self.err(format!(
                            "field {c} (time): expected a non-negative number, found `{f}`"
                        )));
                    }
                }
                let size = match o.obj_size_col {
                    None => 1,
                    Some(c) => {
                        let f = get("obj-size-col", c)?;
                        match parse_c_u64(f) {
                            Some(v) if v <= u32::MAX as u64 => v,
                            _ => {
                                return Err(self.err(format!(
                                    "field {c} (object size): expected a number of bytes \
                                     0..=4294967295, found `{f}`"
                                )))
                            }
                        }
                    }
                };
                let op = match o.op_col {
                    None => Op::Read,
                    Some(c) => {
                        let f = get("op-col", c)?;
                        parse_op(f).map_err(|m| self.err(format!("field {c} (op): {m}")))?
                    }
                };
                (id, size, op)
            }
        };
        if size == 0 {
            return Ok(None);
        }
        let (id, numbered) = if o.obj_id_is_num {
            match parse_c_u64(&id_field) {
                Some(v) => (v, false),
                None => {
                    return Err(self.err(format!(
                        "expected a numeric object id (decimal, 0x hex or 0-prefixed octal), \
                         found `{id_field}`; set obj-id-is-num=false for string ids"
                    )))
                }
            }
        } else {
            (self.map.intern(&id_field), true)
        };
        let mut b = self.map.map(id, numbered, size).map_err(|m| self.err(m))?;
        b.op = op;
        Ok(Some(b))
    }

    /// Look at the first content line: guess the delimiter, skip a header.
    fn start(&mut self) -> Result<bool> {
        self.started = true;
        if !self.next_line()? {
            return Ok(false);
        }
        if self.kind == TextKind::Txt {
            return Ok(true);
        }
        let text = self.text()?.to_string();
        let delim = *self
            .opts
            .delimiter
            .get_or_insert_with(|| Self::guess_delimiter(&text));
        let is_header = match self.opts.has_header {
            Some(h) => h,
            None => self.looks_like_header(&text, delim),
        };
        if is_header {
            return self.next_line();
        }
        Ok(true)
    }

    fn fill(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        let mut produced = self.emit.drain(out, 0);
        let mut first = false;
        if !self.started {
            if !self.start()? {
                self.emit.done = true;
                return Ok(produced > 0);
            }
            first = true;
        }
        while produced < BATCH {
            if !first && !self.next_line()? {
                self.emit.done = true;
                break;
            }
            first = false;
            let Some(b) = self.parse_line()? else {
                continue;
            };
            produced = self.emit.push(b, out, produced);
        }
        Ok(produced > 0)
    }
}

impl AccessSource for LcsTextSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        next_batch(self, out, |s| &mut s.emit, Self::fill)
    }
}

/// A csv time field: what C's `atof` would read as a whole field, non-negative and finite.
fn parse_time(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty()
        || !t
            .bytes()
            .all(|c| c.is_ascii_digit() || b".eE+-".contains(&c))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// A csv op field (see the module documentation).
fn parse_op(s: &str) -> std::result::Result<Op, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "get" | "gets" | "read" | "r" | "load" => Ok(Op::Read),
        "set" | "add" | "replace" | "cas" | "append" | "prepend" | "incr" | "decr" | "update"
        | "put" | "write" | "w" | "store" => Ok(Op::Write),
        "delete" | "del" => Err(
            "a delete has no apusim equivalent (a request cannot drop a cache line); remove \
             deletes from the trace or leave out op-col"
                .into(),
        ),
        other => Err(format!(
            "expected get, set, read, write or another libCacheSim op, found `{other}`"
        )),
    }
}
