//! [`LcsOptions`]: how libCacheSim requests become accesses and which columns a text trace
//! has, parsed from and printed as libCacheSim's `-t` style parameter string.

use std::fmt;
use std::str::FromStr;

/// Default bytes per cache block of an object.
pub const DEFAULT_BLOCK_SIZE: u32 = 64;

/// Default largest object (bytes) when object sizes are kept.
pub const DEFAULT_MAX_OBJ_SIZE: u64 = 1 << 20;

/// Largest accepted `max-obj-size`: 1 TiB, so that slots stay well inside 64-bit addresses.
pub const MAX_MAX_OBJ_SIZE: u64 = 1 << 40;

/// How libCacheSim requests become apusim accesses, and the columns of its text traces.
///
/// Parsed from libCacheSim's `-t` style string, `key=value` pairs separated by commas (see
/// [`LcsOptions::KEYS`]); `_` and `-` are the same in keys, and libCacheSim's `*-field`
/// spellings are accepted for the `*-col` keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LcsOptions {
    /// 1-based column of the request time (csv), validated and otherwise unused.
    pub time_col: Option<usize>,
    /// 1-based column of the object id (csv; required there).
    pub obj_id_col: Option<usize>,
    /// 1-based column of the object size (csv); without it every object has size 1.
    pub obj_size_col: Option<usize>,
    /// 1-based column of the operation (csv); without it every request is a read.
    pub op_col: Option<usize>,
    /// Field separator (csv); `None`: guessed from the first line.
    pub delimiter: Option<u8>,
    /// Whether the first line is a header (csv); `None`: recognized by its fields.
    pub has_header: Option<bool>,
    /// Object ids are numbers (true, default) or arbitrary strings (csv, txt).
    pub obj_id_is_num: bool,
    /// Bytes per cache block (a power of two, 1..=32768).
    pub block_size: u32,
    /// One block per object (libCacheSim's `--ignore-obj-size 1`), the default.
    pub ignore_obj_size: bool,
    /// Largest object accepted when sizes are kept; also the spacing of objects.
    pub max_obj_size: u64,
    /// Number objects densely in order of first appearance before mapping them.
    pub dense_ids: bool,
}

impl Default for LcsOptions {
    fn default() -> Self {
        LcsOptions {
            time_col: None,
            obj_id_col: None,
            obj_size_col: None,
            op_col: None,
            delimiter: None,
            has_header: None,
            obj_id_is_num: true,
            block_size: DEFAULT_BLOCK_SIZE,
            ignore_obj_size: true,
            max_obj_size: DEFAULT_MAX_OBJ_SIZE,
            dense_ids: false,
        }
    }
}

impl LcsOptions {
    /// Every key of the parameter string.
    pub const KEYS: &'static str = "time-col, obj-id-col, obj-size-col, op-col, delimiter, \
        has-header, obj-id-is-num, block-size, ignore-obj-size, max-obj-size, dense-ids";

    /// Bytes between the first blocks of consecutive object numbers.
    pub fn slot_bytes(&self) -> u64 {
        if self.ignore_obj_size {
            (self.block_size as u64).max(1)
        } else {
            self.max_obj_size
                .max(self.block_size as u64)
                .next_power_of_two()
        }
    }

    /// The largest object number whose blocks fit in 64-bit addresses.
    pub fn max_obj_number(&self) -> u64 {
        u64::MAX / self.slot_bytes()
    }

    pub(super) fn check(&self) -> std::result::Result<(), String> {
        let b = self.block_size;
        if b == 0 || b > 32768 || !b.is_power_of_two() {
            return Err(format!(
                "block-size must be a power of two from 1 to 32768, found {b}"
            ));
        }
        if self.max_obj_size == 0 || self.max_obj_size > MAX_MAX_OBJ_SIZE {
            return Err(format!(
                "max-obj-size must be from 1 to {MAX_MAX_OBJ_SIZE} bytes, found {}",
                self.max_obj_size
            ));
        }
        let cols = [
            ("time-col", self.time_col),
            ("obj-id-col", self.obj_id_col),
            ("obj-size-col", self.obj_size_col),
            ("op-col", self.op_col),
        ];
        for (i, (name, c)) in cols.iter().enumerate() {
            let Some(c) = c else { continue };
            if *c == 0 {
                return Err(format!("{name} counts from 1, found 0"));
            }
            for (other, d) in &cols[i + 1..] {
                if Some(*c) == *d {
                    return Err(format!("{name} and {other} are both column {c}"));
                }
            }
        }
        Ok(())
    }
}

impl FromStr for LcsOptions {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<LcsOptions, String> {
        let mut o = LcsOptions::default();
        let mut parts = s.split(',').peekable();
        while let Some(part) = parts.next() {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!("expected KEY=VALUE, found `{part}`"));
            };
            let key = key.trim().to_ascii_lowercase().replace('_', "-");
            let mut value = value.trim().to_string();
            // `delimiter=,` splits into `delimiter=` and an empty part.
            if key == "delimiter" && value.is_empty() && parts.peek().is_some_and(|p| p.is_empty())
            {
                parts.next();
                value = ",".into();
            }
            let col = |v: &str| -> std::result::Result<Option<usize>, String> {
                match v.parse::<usize>() {
                    Ok(c) if c >= 1 => Ok(Some(c)),
                    _ => Err(format!(
                        "{key}: expected a column number from 1, found `{v}`"
                    )),
                }
            };
            let flag = |v: &str| -> std::result::Result<bool, String> {
                match v.to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" | "y" => Ok(true),
                    "false" | "0" | "no" | "n" => Ok(false),
                    _ => Err(format!("{key}: expected true or false, found `{v}`")),
                }
            };
            let bytes = |v: &str| -> std::result::Result<u64, String> {
                parse_c_u64(v).ok_or_else(|| format!("{key}: expected a byte count, found `{v}`"))
            };
            match key.as_str() {
                "time-col" | "time-field" => o.time_col = col(&value)?,
                "obj-id-col" | "obj-id-field" => o.obj_id_col = col(&value)?,
                "obj-size-col" | "obj-size-field" | "size-col" | "size-field" => {
                    o.obj_size_col = col(&value)?
                }
                "op-col" | "op-field" => o.op_col = col(&value)?,
                "delimiter" => {
                    o.delimiter = Some(match value.as_str() {
                        "" | "," | "\\," | "comma" => b',',
                        "\\t" | "tab" | "\t" => b'\t',
                        "space" | " " => b' ',
                        v if v.len() == 1 && v.is_ascii() => v.as_bytes()[0],
                        v => {
                            return Err(format!(
                                "delimiter: expected one character (or \\t, tab, space, comma), \
                                 found `{v}`"
                            ))
                        }
                    })
                }
                "has-header" | "header" => o.has_header = Some(flag(&value)?),
                "obj-id-is-num" => o.obj_id_is_num = flag(&value)?,
                "block-size" => {
                    let v = bytes(&value)?;
                    o.block_size = u32::try_from(v).unwrap_or(u32::MAX);
                }
                "ignore-obj-size" => o.ignore_obj_size = flag(&value)?,
                "max-obj-size" => o.max_obj_size = bytes(&value)?,
                "dense-ids" => o.dense_ids = flag(&value)?,
                _ => {
                    let near = apusim_registry::nearest(&key, LcsOptions::KEYS.split(", "))
                        .map_or_else(String::new, |n| format!(" (did you mean `{n}`?)"));
                    return Err(format!(
                        "unknown libCacheSim trace parameter `{key}`{near}; known: {}",
                        LcsOptions::KEYS
                    ));
                }
            }
        }
        o.check()?;
        Ok(o)
    }
}

impl fmt::Display for LcsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (name, c) in [
            ("time-col", self.time_col),
            ("obj-id-col", self.obj_id_col),
            ("obj-size-col", self.obj_size_col),
            ("op-col", self.op_col),
        ] {
            if let Some(c) = c {
                parts.push(format!("{name}={c}"));
            }
        }
        if let Some(d) = self.delimiter {
            parts.push(match d {
                b'\t' => "delimiter=tab".to_string(),
                b',' => "delimiter=comma".to_string(),
                b' ' => "delimiter=space".to_string(),
                d => format!("delimiter={}", d as char),
            });
        }
        if let Some(h) = self.has_header {
            parts.push(format!("has-header={h}"));
        }
        parts.push(format!("obj-id-is-num={}", self.obj_id_is_num));
        parts.push(format!("block-size={}", self.block_size));
        parts.push(format!("ignore-obj-size={}", self.ignore_obj_size));
        if !self.ignore_obj_size {
            parts.push(format!("max-obj-size={}", self.max_obj_size));
        }
        parts.push(format!("dense-ids={}", self.dense_ids));
        f.write_str(&parts.join(","))
    }
}

/// Parse an unsigned integer as C's `strtoull(s, .., 0)` reads a whole field: `0x` hex,
/// leading-`0` octal, else decimal; `None` for anything else (no sign, no trailing text).
pub fn parse_c_u64(s: &str) -> Option<u64> {
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        if !t.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
            return None;
        }
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    }
}
