//! Declared policy parameters.
//!
//! A policy, and each shared building block that reads a parameter (`Bimodal`'s
//! `brrip_throttle`, the set duels' `psel_bits`, the TAP epochs...), declares the parameter
//! once as a typed [`ParamSpec`] (kind, default, range, unit, one line of documentation) next
//! to the code that reads it, and reads it only through that spec
//! ([`crate::PolicyContext::int`], [`crate::PolicyContext::float`]): the spec's default and
//! range are the only ones. [`crate::Policy::params`] lists every spec a policy reads, its
//! building blocks' included, in a [`ParamList`]; the registry ([`crate::policies::REGISTRY`])
//! publishes the lists and refuses, before anything runs, a configured key no listed spec
//! names ([`crate::policies::check_params`]).

pub use apusim_registry::{ParamKind, ParamSpec, Value};

use crate::CacheError;

/// The parameters one policy reads, each once, in declaration order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamList {
    specs: Vec<ParamSpec>,
}

impl ParamList {
    pub fn new() -> ParamList {
        ParamList::default()
    }

    /// Add `specs`; a spec already listed (a building block two components share) is kept
    /// once. Panics if two different specs share a name (a declaration error, caught by the
    /// registry's tests).
    pub fn add(&mut self, specs: &[ParamSpec]) -> &mut ParamList {
        for s in specs {
            match self.specs.iter().find(|o| o.name == s.name) {
                Some(o) => assert_eq!(o, s, "two declarations of parameter `{}`", s.name),
                None => self.specs.push(*s),
            }
        }
        self
    }

    pub fn specs(&self) -> &[ParamSpec] {
        &self.specs
    }

    /// The spec named `name`, if listed.
    pub fn get(&self, name: &str) -> Option<&ParamSpec> {
        self.specs.iter().find(|s| s.name == name)
    }
}

/// The value of `spec` given the configured number `given` (its default when `None`),
/// checked against the spec's kind and range. Configured numbers arrive as `f64`; a whole
/// number stands for an integer, anything else for a real.
pub fn checked(spec: &ParamSpec, given: Option<f64>) -> Result<Value, CacheError> {
    let r = match given {
        None => spec.default_value(),
        Some(v) => spec.check(&as_toml(v)),
    };
    r.map_err(|e| CacheError::Config(e.to_string()))
}

/// A configured number as the TOML value a user would have written.
pub fn as_toml(v: f64) -> toml::Value {
    if v.fract() == 0.0 && v.abs() < 2f64.powi(53) {
        toml::Value::Integer(v as i64)
    } else {
        toml::Value::Float(v)
    }
}

#[cfg(test)]
thread_local! {
    /// Names of the parameters read from a context's configured values on this thread (the
    /// registry's tests check that every declared parameter reaches its policy).
    pub(crate) static READ: std::cell::RefCell<Vec<&'static str>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Note that `spec` was read from a configured value (tests only).
#[inline]
pub(crate) fn note_read(_spec: &ParamSpec) {
    #[cfg(test)]
    READ.with(|r| r.borrow_mut().push(_spec.name));
}
