//! Fuzz target: a TOML system configuration and `--set KEY=VALUE` overrides through the loader
//! (`SystemConfig::from_toml`). The input is the TOML text, then optionally a NUL byte and one
//! override per line. Errors are fine; panics and hangs are bugs, and so is a configuration
//! that loads but does not load again from its own rendering (`apusim config show`).
#![no_main]

mod config_common;

use apusim_sim::SystemConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((text, overrides)) = config_common::split(data) else {
        return;
    };
    let Ok(cfg) = SystemConfig::from_toml(text, "<fuzz>", &overrides) else {
        return;
    };
    let shown = cfg.to_toml();
    let again = SystemConfig::from_toml(&shown, "<shown>", &[])
        .unwrap_or_else(|e| panic!("a loaded configuration does not reload: {e:#}\n{shown}"));
    assert_eq!(again.to_toml(), shown, "rendering is not stable");
});
