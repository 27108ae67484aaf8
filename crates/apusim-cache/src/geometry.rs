//! Cache geometry: size, associativity, line size; parsed from cachegrind's `size,ways,line`.

use crate::CacheError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Size in bytes, associativity and line size of one cache.
///
/// Fully-associative caches have `ways * line == size` (one set). The set count need not be a
/// power of two (the engine then indexes modulo the set count); the line size must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Geometry {
    pub size: u64,
    pub ways: u32,
    pub line: u32,
}

impl Geometry {
    pub const fn new(size: u64, ways: u32, line: u32) -> Geometry {
        Geometry { size, ways, line }
    }
    /// A fully-associative cache of `size` bytes.
    pub const fn fully_associative(size: u64, line: u32) -> Geometry {
        Geometry {
            size,
            ways: (size / line as u64) as u32,
            line,
        }
    }
    /// Number of sets (valid only after [`Geometry::validate`]).
    pub const fn sets(&self) -> u64 {
        self.size / (self.ways as u64 * self.line as u64)
    }
    pub const fn lines(&self) -> u64 {
        self.size / self.line as u64
    }
    pub fn is_fully_associative(&self) -> bool {
        self.sets() == 1
    }

    /// Reject impossible geometries with a message that says what is wrong.
    pub fn validate(&self) -> Result<(), CacheError> {
        let bad = |msg: String| Err(CacheError::Geometry(format!("{self}: {msg}")));
        if self.ways == 0 {
            return bad("associativity must be at least 1".into());
        }
        if self.line == 0 || !self.line.is_power_of_two() {
            return bad(format!("line size {} is not a power of two", self.line));
        }
        if self.size == 0 {
            return bad("size must be positive".into());
        }
        let set_bytes = self.ways as u64 * self.line as u64;
        if !self.size.is_multiple_of(set_bytes) {
            return bad(format!(
                "size {} is not a multiple of ways x line = {set_bytes}",
                self.size
            ));
        }
        if self.sets() > u32::MAX as u64 {
            return bad("more than 2^32 sets".into());
        }
        Ok(())
    }
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.size, self.ways, self.line)
    }
}

/// Parse a byte size: a plain number, or with a `K`/`KB`/`KiB`, `M`..., `G`... suffix (binary).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("expected a size like 32768 or 32K, found `{s}`"))?;
    let mult = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => {
            return Err(format!(
                "unknown size unit `{unit}` in `{s}` (use K, M or G)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size `{s}` is too large"))
}

impl FromStr for Geometry {
    type Err = CacheError;
    /// cachegrind's notation `size,ways,line` (sizes may carry K/M/G suffixes).
    fn from_str(s: &str) -> Result<Self, CacheError> {
        let parts: Vec<&str> = s.split(',').collect();
        if parts.len() != 3 {
            return Err(CacheError::Geometry(format!(
                "expected `size,ways,line` (e.g. 16777216,16,64), found `{s}`"
            )));
        }
        let size = parse_size(parts[0]).map_err(CacheError::Geometry)?;
        let num = |p: &str, what: &str| {
            p.trim().parse::<u32>().map_err(|_| {
                CacheError::Geometry(format!(
                    "{what} must be a whole number, found `{p}` in `{s}`"
                ))
            })
        };
        let g = Geometry::new(size, num(parts[1], "ways")?, num(parts[2], "line size")?);
        g.validate()?;
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cachegrind_notation() {
        let g: Geometry = "16777216,16,64".parse().unwrap();
        assert_eq!(g.sets(), 16384);
        let g: Geometry = "32K,8,64".parse().unwrap();
        assert_eq!(g.size, 32768);
        assert_eq!(g.sets(), 64);
    }

    #[test]
    fn rejects_impossible_geometries() {
        for bad in [
            "32768,0,64",
            "32768,8,48",
            "32769,8,64",
            "0,8,64",
            "32768,8",
            "x,8,64",
            "1G,3,64,1",
        ] {
            assert!(bad.parse::<Geometry>().is_err(), "{bad} accepted");
        }
        // 3 MB 12-way: non-power-of-two set count is fine.
        let g: Geometry = "3M,12,64".parse().unwrap();
        assert_eq!(g.sets(), 4096);
        let g: Geometry = "384K,48,64".parse().unwrap();
        assert_eq!(g.sets(), 128);
        let g: Geometry = "6M,16,64".parse().unwrap();
        assert_eq!(g.sets(), 6144);
    }
}
