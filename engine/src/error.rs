//! Errors a caller can cause: a bad config, a bad scenario, an input that names an unknown
//! broker. Each names the field at fault and what was allowed. Engine bugs are assertions,
//! never values of these types.
//!
//! Also what the scenario's and the expectations' validation share to build them: the
//! paths of fields (`member`, `indexed`), the broker-id check (`check_broker`) and
//! the longest text a scenario may hold ([`MAX_TEXT_LEN`]).

use std::fmt;

use crate::types::BrokerId;

/// Longest text a scenario may hold: a title, a note, an expectation's texts (a
/// description may be four times as long).
pub const MAX_TEXT_LEN: usize = 500;

/// A config value outside its allowed range, or an unknown config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The config's Kafka name, e.g. `replica.lag.time.max.ms`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Anything wrong with a scenario or an input: which field, and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// A path to the field at fault, e.g. `timeline[3].freeze` or `brokers`.
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    /// Out of line: validation builds these in some fifty places, and each inlined copy
    /// converted its two texts in place.
    #[inline(never)]
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl From<ConfigError> for ScenarioError {
    fn from(e: ConfigError) -> Self {
        ScenarioError {
            field: format!("config.{}", e.field),
            message: e.message,
        }
    }
}

/// `name[i]`, the path of a list's item (out of line, as [`member`]).
#[inline(never)]
pub(crate) fn indexed(name: &str, i: usize) -> String {
    format!("{name}[{i}]")
}

/// `field.name`, the path of a member. Out of line: validation names members in a dozen
/// places, and each `format!` built its arguments in place.
#[inline(never)]
pub(crate) fn member(field: &str, name: &str) -> String {
    format!("{field}.{name}")
}

/// Checks a broker id that a scenario names in `field` (and its member `name`, if any)
/// against the cluster's size. One function for the assignment, the actions and the
/// expectations, so the message's code is in the wasm once.
pub(crate) fn check_broker(
    b: BrokerId,
    brokers: u32,
    field: &str,
    name: &str,
) -> Result<(), ScenarioError> {
    if b != 0 && b <= brokers {
        return Ok(());
    }
    let field = if name.is_empty() {
        field.to_string()
    } else {
        member(field, name)
    };
    Err(ScenarioError::new(
        field,
        format!("broker must be one of 1..={brokers}, got {b}"),
    ))
}

/// `s` in double quotes, as `format!("{s:?}")` writes it for the text people type: quotes,
/// backslashes and control characters escaped. Not `{:?}` itself: `<str as Debug>` and
/// core's `escape_debug`, which consults Unicode tables of printable and grapheme-extending
/// characters, were 2.6 kB of the shipped wasm. The only difference is for characters that
/// are not printable or extend a grapheme: `{:?}` writes `\u{...}` for those (a zero-width
/// space, a combining mark at the start), this keeps them.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoted_writes_what_debug_writes() {
        for s in [
            "",
            "plain",
            "a \"quote\" and a \\ backslash",
            "tab\tnew\nline\rnul\0bell\u{7}del\u{7f}c1\u{85}",
            "it's “curly” and ünïcödé, 日本, 🦀",
        ] {
            assert_eq!(super::quoted(s), format!("{s:?}"));
        }
    }
}
