//! Importers: other tools' traces turned into [`Access`](crate::Access) streams.
//!
//! | format | module | input |
//! |---|---|---|
//! | [`Format::Apt`] | [`crate::apt`] | the native format |
//! | [`Format::Lackey`] | [`lackey`] | valgrind `--tool=lackey --trace-mem=yes` output (also live, see [`record_with_lackey`]) |
//! | [`Format::ChampSim`] | [`champsim`] | ChampSim 64-byte `input_instr` records, raw, `.gz` or `.xz` |
//! | [`Format::Csv`] | [`csv`] | one access per line: `op,address[,...]` |
//! | [`Format::OracleGeneral`] | [`libcachesim`] | libCacheSim `oracleGeneral` 24-byte object requests, raw or `.zst` |
//! | [`Format::OracleGeneralOpNS`] | [`libcachesim`] | libCacheSim `oracleGeneralOpNS` 27-byte object requests with op and namespace, raw or `.zst` |
//! | [`Format::LcsCsv`] | [`libcachesim`] | libCacheSim `csv`: object requests, columns chosen by [`LcsOptions`] |
//! | [`Format::LcsTxt`] | [`libcachesim`] | libCacheSim `txt`: one object id per line |
//!
//! [`open`] picks the importer (or sniffs it with [`Format::detect`]) and returns a boxed
//! [`AccessSource`]; [`convert`] drains any source into an `.apt` file. Imported CPU traces are
//! attributed to [`ImportOptions::agent`] with `unit` = that core's number. libCacheSim's
//! object requests become cache-block accesses as [`ImportOptions::libcachesim`] says.

pub mod champsim;
pub mod csv;
pub mod lackey;
pub mod libcachesim;

pub use champsim::{ChampSimReader, ChampSimRecord, ChampSimSource, ChampSimWriter};
pub use csv::CsvSource;
pub use lackey::{record_with_lackey, record_with_lackey_watched, LackeySource};
pub use libcachesim::{
    LcsOptions, LcsTextSource, OracleGeneralOpNSRecord, OracleGeneralRecord, OracleGeneralSource,
    OracleLayout,
};

use crate::apt::{AptWriter, ParallelAptReader};
use crate::{AccessSource, Agent, Result, Stream, TraceError, TraceHeader};
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;

/// A trace file format apusim can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// The native `.apt` container.
    Apt,
    /// valgrind lackey `--trace-mem=yes` text.
    Lackey,
    /// ChampSim binary instruction trace (raw, gzip or xz).
    ChampSim,
    /// Comma/whitespace separated text, one access per line.
    Csv,
    /// libCacheSim `oracleGeneral` binary object requests (raw or zstd).
    OracleGeneral,
    /// libCacheSim `oracleGeneralOpNS` binary object requests with an op and a namespace
    /// (raw or zstd).
    OracleGeneralOpNS,
    /// libCacheSim `csv` object requests.
    LcsCsv,
    /// libCacheSim `txt`: one object id per line.
    LcsTxt,
}

impl Format {
    /// Every format.
    pub const ALL: &'static [Format] = &[
        Format::Apt,
        Format::Lackey,
        Format::ChampSim,
        Format::Csv,
        Format::OracleGeneral,
        Format::OracleGeneralOpNS,
        Format::LcsCsv,
        Format::LcsTxt,
    ];

    /// The name used on the command line (`--from`).
    pub const fn name(self) -> &'static str {
        match self {
            Format::Apt => "apt",
            Format::Lackey => "lackey",
            Format::ChampSim => "champsim",
            Format::Csv => "csv",
            Format::OracleGeneral => "oracleGeneral",
            Format::OracleGeneralOpNS => "oracleGeneralOpNS",
            Format::LcsCsv => "lcs-csv",
            Format::LcsTxt => "lcs-txt",
        }
    }

    /// Guess the format of the file at `path` from its first bytes and its name.
    ///
    /// In order: the `.apt` magic or an `.apt` extension → [`Format::Apt`]; a name containing
    /// `oracleGeneral` (any case: `.oracleGeneral`, `.oracleGeneral.bin`, `.oracleGeneralBin`,
    /// `.oracleGeneral.zst`, as libCacheSim's own detection) but not `oracleGeneralOpNS` →
    /// [`Format::OracleGeneral`]; a name containing `oracleGeneralOpNS` (`.oracleGeneralOpNS`,
    /// `.oracleGeneralOpNS.zst`) → [`Format::OracleGeneralOpNS`]; gzip or xz magic, or
    /// a name containing `.champsim` → [`Format::ChampSim`]; text starting with valgrind's
    /// `==PID==`/`--PID--` lines or whose first line looks like a lackey record
    /// (`I  0402d3f0,3`, ` L 1ffefff8,8`) → [`Format::Lackey`]; other binary data (a NUL byte in
    /// the first 4 KiB) → raw [`Format::ChampSim`]; anything else → [`Format::Csv`].
    pub fn detect(path: impl AsRef<Path>) -> Result<Format> {
        let path = path.as_ref();
        let mut f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let mut head = vec![0u8; 4096];
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(path, e)),
            }
        }
        head.truncate(n);
        Ok(Format::detect_bytes(&head, path))
    }

    /// [`Format::detect`] on the first bytes of a file (ideally 4 KiB) and its name.
    pub fn detect_bytes(head: &[u8], path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if head.starts_with(&crate::apt::MAGIC) || name.ends_with(".apt") {
            return Format::Apt;
        }
        if name.contains("oraclegeneralopns") {
            return Format::OracleGeneralOpNS;
        }
        if name.contains("oraclegeneral") {
            return Format::OracleGeneral;
        }
        if head.starts_with(&[0x1f, 0x8b]) || head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            return Format::ChampSim;
        }
        if name.contains(".champsim") {
            return Format::ChampSim;
        }
        if lackey::looks_like_lackey(head) {
            return Format::Lackey;
        }
        if head.contains(&0) {
            return Format::ChampSim;
        }
        Format::Csv
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Format, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "apt" => Ok(Format::Apt),
            "lackey" | "valgrind" => Ok(Format::Lackey),
            "champsim" => Ok(Format::ChampSim),
            "csv" | "text" | "txt" => Ok(Format::Csv),
            "oraclegeneral" | "oraclegeneralbin" | "oracle-general" => Ok(Format::OracleGeneral),
            "oraclegeneralopns" | "oracle-general-opns" => Ok(Format::OracleGeneralOpNS),
            "lcs-csv" | "libcachesim-csv" => Ok(Format::LcsCsv),
            "lcs-txt" | "libcachesim-txt" => Ok(Format::LcsTxt),
            _ => Err(format!(
                "expected a trace format (apt, lackey, champsim, csv, oracleGeneral, \
                 oracleGeneralOpNS, lcs-csv, lcs-txt), found `{s}`"
            )),
        }
    }
}

/// Options for importing traces that do not say who issued their accesses or at what clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportOptions {
    /// Agent the imported accesses are attributed to (default `cpu0`); `unit` is its core
    /// number (0 for the GPU).
    pub agent: Agent,
    /// Clock of the agent recorded in the header; 0 (default) means `time` counts retired
    /// instructions.
    pub clock_mhz: u32,
    /// How libCacheSim object requests map onto cache blocks, and the columns of its `csv`
    /// traces (used by [`Format::OracleGeneral`], [`Format::OracleGeneralOpNS`],
    /// [`Format::LcsCsv`], [`Format::LcsTxt`]).
    pub libcachesim: LcsOptions,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            agent: Agent::cpu(0),
            clock_mhz: 0,
            libcachesim: LcsOptions::default(),
        }
    }
}

impl ImportOptions {
    /// The `unit` field of imported accesses: the CPU core number, 0 for the GPU.
    pub fn unit(&self) -> u16 {
        self.agent.cpu_index().unwrap_or(0) as u16
    }
}

/// Open `path` as a trace of `format` (sniffed with [`Format::detect`] when `None`).
pub fn open(
    path: impl AsRef<Path>,
    format: Option<Format>,
    opts: &ImportOptions,
) -> Result<Box<dyn AccessSource>> {
    let path = path.as_ref();
    let format = match format {
        Some(f) => f,
        None => Format::detect(path)?,
    };
    Ok(match format {
        Format::Apt => ParallelAptReader::open_default(path)?,
        Format::Lackey => Box::new(LackeySource::open(path, opts)?),
        Format::ChampSim => Box::new(ChampSimSource::open(path, opts)?),
        Format::Csv => Box::new(CsvSource::open(path, opts)?),
        Format::OracleGeneral => Box::new(OracleGeneralSource::open(path, opts)?),
        Format::OracleGeneralOpNS => Box::new(OracleGeneralSource::open_layout(
            path,
            OracleLayout::OpNS,
            opts,
        )?),
        Format::LcsCsv => Box::new(LcsTextSource::open(path, libcachesim::TextKind::Csv, opts)?),
        Format::LcsTxt => Box::new(LcsTextSource::open(path, libcachesim::TextKind::Txt, opts)?),
    })
}

/// Read a trace of `format` from any reader (a pipe, stdin, a buffer); `name` is used in
/// error messages and headers. Unlike [`open`] this cannot sniff the format, and CSV input is
/// not pre-scanned for the agents and streams it names.
pub fn open_reader(
    reader: Box<dyn Read + Send>,
    name: impl AsRef<Path>,
    format: Format,
    opts: &ImportOptions,
) -> Result<Box<dyn AccessSource>> {
    use std::io::BufReader;
    let name = name.as_ref();
    Ok(match format {
        Format::Apt => {
            ParallelAptReader::with_name_default(BufReader::with_capacity(1 << 18, reader), name)?
        }
        Format::Lackey => Box::new(LackeySource::new(
            BufReader::with_capacity(1 << 20, reader),
            name,
            opts,
        )),
        Format::ChampSim => Box::new(ChampSimSource::new(
            BufReader::with_capacity(1 << 18, reader),
            name,
            opts,
        )?),
        Format::Csv => Box::new(CsvSource::new(
            BufReader::with_capacity(1 << 20, reader),
            name,
            opts,
        )),
        Format::OracleGeneral => Box::new(OracleGeneralSource::new(
            BufReader::with_capacity(1 << 18, reader),
            name,
            opts,
        )?),
        Format::OracleGeneralOpNS => Box::new(OracleGeneralSource::with_layout(
            BufReader::with_capacity(1 << 18, reader),
            name,
            OracleLayout::OpNS,
            opts,
        )?),
        Format::LcsCsv | Format::LcsTxt => Box::new(LcsTextSource::new(
            BufReader::with_capacity(1 << 20, reader),
            name,
            if format == Format::LcsCsv {
                libcachesim::TextKind::Csv
            } else {
                libcachesim::TextKind::Txt
            },
            opts,
        )?),
    })
}

/// Parse `bytes` as `format` and count the accesses, reading at most `limit` of them: the
/// harness of the fuzz targets and corpus tests (errors are fine, panics are bugs). A
/// [`Format::LcsCsv`] input is read with the columns `time,obj-id,obj-size,op`.
pub fn check_bytes(bytes: &[u8], format: Format, limit: u64) -> Result<u64> {
    let mut opts = ImportOptions::default();
    if format == Format::LcsCsv {
        opts.libcachesim.time_col = Some(1);
        opts.libcachesim.obj_id_col = Some(2);
        opts.libcachesim.obj_size_col = Some(3);
        opts.libcachesim.op_col = Some(4);
    }
    let mut src = open_reader(
        Box::new(std::io::Cursor::new(bytes.to_vec())),
        "<fuzz>",
        format,
        &opts,
    )?;
    let mut batch = Vec::with_capacity(crate::BATCH);
    let mut n = 0u64;
    while n < limit {
        batch.clear();
        if !src.next_batch(&mut batch)? {
            break;
        }
        if batch.len() > crate::BATCH {
            return Err(TraceError::Other(format!(
                "batch of {} accesses exceeds BATCH",
                batch.len()
            )));
        }
        n += batch.len() as u64;
    }
    Ok(n)
}

/// Drain `src` into a new `.apt` file at `out` (written atomically); returns the record count.
pub fn convert(src: &mut dyn AccessSource, out: &Path) -> Result<u64> {
    let header = src.header().clone();
    let mut w = AptWriter::create(out, &header)?;
    let n = w.write_source(src)?;
    w.finish()?;
    Ok(n)
}

/// File stem of `path`, for agent names in headers.
pub(crate) fn stem(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The header of a trace imported from the file `path`: the one agent `opts.agent`, named
/// after the file, at `opts.clock_mhz`, with `streams`; `source` says where it came from.
pub(crate) fn file_header(
    path: &Path,
    opts: &ImportOptions,
    streams: &[Stream],
    source: &str,
) -> TraceHeader {
    TraceHeader::single(opts.agent, &stem(path), opts.clock_mhz, streams, source)
}

/// Parse an unsigned integer: `0x`-prefixed hex or decimal.
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() || h.len() > 16 {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    } else {
        t.parse::<u64>().ok()
    }
}

/// The error of line `line_no` of the text trace at `path`, quoting the line.
pub(crate) fn line_error(path: &Path, line_no: u64, line: &[u8], msg: &str) -> TraceError {
    TraceError::parse(
        path,
        line_no,
        format!("{msg}; line is `{}`", show_line(line)),
    )
}

/// Read the next line of `input` with content into `line`, counting every line read in
/// `line_no`; blank lines, and with `comments` lines starting with `#`, are skipped.
/// `false` at the end of the input.
pub(crate) fn next_content_line(
    input: &mut dyn std::io::BufRead,
    path: &Path,
    line: &mut Vec<u8>,
    line_no: &mut u64,
    comments: bool,
) -> Result<bool> {
    loop {
        line.clear();
        let n = input
            .read_until(b'\n', line)
            .map_err(|e| TraceError::io(path, e))?;
        if n == 0 {
            return Ok(false);
        }
        *line_no += 1;
        let t = line.trim_ascii();
        if !(t.is_empty() || comments && t.starts_with(b"#")) {
            return Ok(true);
        }
    }
}

/// A line shown in an error message: lossy UTF-8, at most 80 characters.
pub(crate) fn show_line(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let s = s.trim_end_matches(['\n', '\r']);
    let mut out: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}
