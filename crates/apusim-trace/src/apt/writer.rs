//! Writing `.apt` files: [`AptWriter`] buffers records into blocks, compresses them and writes
//! the preamble, blocks and trailer (to a temporary file renamed into place when finished).

use super::codec::{Codec, DeltaCoding, COLUMNS};
use super::{
    BLOCK_HEADER_LEN, BLOCK_MAGIC, BLOCK_RECORDS, DEFAULT_ZSTD_LEVEL, DEFAULT_ZSTD_MIN_MATCH,
    MAGIC, OLDEST_VERSION, TRAILER_LEN, TRAILER_MAGIC, VERSION,
};
use crate::{Access, AccessSource, Result, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The zstd compressor of the default level, tuned for decoding speed (see
/// [`DEFAULT_ZSTD_MIN_MATCH`]).
fn default_compressor() -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(DEFAULT_ZSTD_LEVEL)?;
    c.set_parameter(zstd::zstd_safe::CParameter::MinMatch(
        DEFAULT_ZSTD_MIN_MATCH as u32,
    ))?;
    Ok(c)
}

/// Streaming `.apt` writer.
///
/// Records are buffered into the current block (at most [`BLOCK_RECORDS`]), which is compressed
/// and written when full. [`AptWriter::finish`] writes the last block and the trailer; a writer
/// dropped without `finish` leaves an incomplete stream (and, for [`AptWriter::create`], no
/// file at all).
pub struct AptWriter<W: Write> {
    out: W,
    path: PathBuf,
    /// For [`AptWriter::create`]: the temporary file and the final path it is renamed to.
    persist: Option<(tempfile::TempPath, PathBuf, File)>,
    codec: Codec,
    cols: [Vec<u8>; COLUMNS],
    raw: Vec<u8>,
    comp: Vec<u8>,
    compressor: zstd::bulk::Compressor<'static>,
    in_block: usize,
    total: u64,
    blocks: u64,
    bytes: u64,
}

impl AptWriter<BufWriter<File>> {
    /// Create `path`. Data goes to a temporary file in the same directory, renamed to `path`
    /// by [`finish`](AptWriter::finish); until then `path` is untouched.
    pub fn create(path: impl AsRef<Path>, header: &TraceHeader) -> Result<Self> {
        let path = path.as_ref();
        let tmp = crate::output::temp_beside(path).map_err(|e| TraceError::io(path, e))?;
        let (file, temp_path) = tmp.into_parts();
        let sync = file.try_clone().map_err(|e| TraceError::io(path, e))?;
        let mut w = AptWriter::with_name(BufWriter::with_capacity(1 << 20, file), path, header)?;
        w.persist = Some((temp_path, path.to_path_buf(), sync));
        Ok(w)
    }
}

impl<W: Write> AptWriter<W> {
    /// Write an `.apt` stream to any writer (error messages name it `<stream>`).
    pub fn new(out: W, header: &TraceHeader) -> Result<Self> {
        Self::with_name(out, Path::new("<stream>"), header)
    }

    /// Like [`AptWriter::new`], naming the destination `name` in error messages.
    pub fn with_name(out: W, name: impl AsRef<Path>, header: &TraceHeader) -> Result<Self> {
        Self::with_format_version(out, name, header, VERSION)
    }

    /// Like [`AptWriter::with_name`], writing format `version` ([`OLDEST_VERSION`] to
    /// [`VERSION`]): version 1 for builds of apusim that read only that one.
    pub fn with_format_version(
        out: W,
        name: impl AsRef<Path>,
        header: &TraceHeader,
        version: u32,
    ) -> Result<Self> {
        let path = name.as_ref().to_path_buf();
        let delta = DeltaCoding::of_version(version).ok_or_else(|| {
            TraceError::Other(format!(
                "{}: cannot write .apt version {version} (this build writes {OLDEST_VERSION} to {VERSION})",
                path.display()
            ))
        })?;
        let compressor = default_compressor().map_err(|e| TraceError::io(&path, e))?;
        let mut w = AptWriter {
            out,
            path,
            persist: None,
            codec: Codec::new(delta),
            cols: std::array::from_fn(|_| Vec::new()),
            raw: Vec::new(),
            comp: Vec::new(),
            compressor,
            in_block: 0,
            total: 0,
            blocks: 0,
            bytes: 0,
        };
        w.write_preamble(header, version)?;
        Ok(w)
    }

    /// Use zstd level `level` (1..=22, zstd's own parameters for that level) for the blocks
    /// written from now on.
    pub fn set_zstd_level(&mut self, level: i32) -> Result<()> {
        self.compressor = zstd::bulk::Compressor::new(level).map_err(|e| self.io_err(e))?;
        Ok(())
    }

    fn io_err(&self, e: io::Error) -> TraceError {
        TraceError::io(&self.path, e)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| TraceError::io(&self.path, e))?;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    fn write_preamble(&mut self, header: &TraceHeader, version: u32) -> Result<()> {
        let mut h = header.clone();
        h.version = version;
        let json = serde_json::to_vec(&h).map_err(|e| {
            TraceError::Other(format!(
                "{}: cannot encode header: {e}",
                self.path.display()
            ))
        })?;
        let mut pre = Vec::with_capacity(json.len() + 20);
        pre.extend_from_slice(&MAGIC);
        pre.extend_from_slice(&version.to_le_bytes());
        pre.extend_from_slice(&(json.len() as u32).to_le_bytes());
        pre.extend_from_slice(&json);
        pre.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        self.put(&pre)
    }

    /// Append one access.
    #[inline]
    pub fn write(&mut self, a: &Access) -> Result<()> {
        self.codec.encode(a, &mut self.cols);
        self.in_block += 1;
        if self.in_block == BLOCK_RECORDS {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Append many accesses.
    pub fn write_all(&mut self, accesses: &[Access]) -> Result<()> {
        let mut rest = accesses;
        while !rest.is_empty() {
            let n = rest.len().min(BLOCK_RECORDS - self.in_block);
            for a in &rest[..n] {
                self.codec.encode(a, &mut self.cols);
            }
            self.in_block += n;
            rest = &rest[n..];
            if self.in_block == BLOCK_RECORDS {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Drain `source` into this writer; returns the number of accesses copied.
    pub fn write_source(&mut self, source: &mut dyn AccessSource) -> Result<u64> {
        let mut batch = Vec::with_capacity(BATCH);
        let mut n = 0u64;
        loop {
            batch.clear();
            if !source.next_batch(&mut batch)? {
                return Ok(n);
            }
            self.write_all(&batch)?;
            n += batch.len() as u64;
        }
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.total + self.in_block as u64
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.in_block == 0 {
            return Ok(());
        }
        self.raw.clear();
        for c in &self.cols {
            self.raw.extend_from_slice(&(c.len() as u32).to_le_bytes());
        }
        for c in &mut self.cols {
            self.raw.extend_from_slice(c);
            c.clear();
        }
        self.comp.clear();
        self.comp
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.compressor
            .compress_to_buffer(&self.raw[..], &mut self.comp)
            .map_err(|e| TraceError::io(&self.path, e))?;
        let mut hdr = [0u8; BLOCK_HEADER_LEN];
        hdr[0..4].copy_from_slice(&BLOCK_MAGIC);
        hdr[4..8].copy_from_slice(&(self.in_block as u32).to_le_bytes());
        hdr[8..12].copy_from_slice(&(self.raw.len() as u32).to_le_bytes());
        hdr[12..16].copy_from_slice(&(self.comp.len() as u32).to_le_bytes());
        hdr[16..20].copy_from_slice(&crc32fast::hash(&self.comp).to_le_bytes());
        self.put(&hdr)?;
        let comp = std::mem::take(&mut self.comp);
        let r = self.put(&comp);
        self.comp = comp;
        r?;
        self.total += self.in_block as u64;
        self.blocks += 1;
        self.in_block = 0;
        self.raw.clear();
        self.codec.reset();
        Ok(())
    }

    /// Write the last block and the trailer, flush, and (for [`AptWriter::create`]) fsync the
    /// file and rename it into place. Returns the underlying writer.
    pub fn finish(mut self) -> Result<W> {
        self.flush_block()?;
        let mut t = [0u8; TRAILER_LEN];
        t[0..4].copy_from_slice(&TRAILER_MAGIC);
        t[4..12].copy_from_slice(&self.total.to_le_bytes());
        t[12..20].copy_from_slice(&self.blocks.to_le_bytes());
        let crc = crc32fast::hash(&t[..20]);
        t[20..24].copy_from_slice(&crc.to_le_bytes());
        self.put(&t)?;
        self.out
            .flush()
            .map_err(|e| TraceError::io(&self.path, e))?;
        if let Some((temp, dest, file)) = self.persist.take() {
            // Temporary files are private (0600); the finished trace gets a normal file's mode.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o644))
                    .map_err(|e| TraceError::io(&dest, e))?;
            }
            file.sync_all().map_err(|e| TraceError::io(&dest, e))?;
            temp.persist(&dest)
                .map_err(|e| TraceError::io(&dest, e.error))?;
        }
        Ok(self.out)
    }

    /// Bytes written so far (including the preamble).
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }
}

/// Write `accesses` to `path` under `header` in one call.
pub fn write_file(path: impl AsRef<Path>, header: &TraceHeader, accesses: &[Access]) -> Result<()> {
    let mut w = AptWriter::create(path, header)?;
    w.write_all(accesses)?;
    w.finish()?;
    Ok(())
}
