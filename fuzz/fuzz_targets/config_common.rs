//! The input layout shared by the configuration targets: TOML text, then optionally a NUL
//! byte and one `KEY=VALUE` override per line.

/// Overrides applied at most (the command line has no limit; the loaders are linear in them).
const MAX_OVERRIDES: usize = 16;

/// The TOML text (`None` if it is not UTF-8, which no loader reads) and the overrides.
pub fn split(data: &[u8]) -> Option<(&str, Vec<String>)> {
    let (text, rest) = match data.iter().position(|&b| b == 0) {
        Some(p) => (&data[..p], &data[p + 1..]),
        None => (data, &[][..]),
    };
    let text = std::str::from_utf8(text).ok()?;
    let overrides = String::from_utf8_lossy(rest)
        .lines()
        .take(MAX_OVERRIDES)
        .map(str::to_string)
        .collect();
    Some((text, overrides))
}
