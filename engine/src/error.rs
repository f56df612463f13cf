//! Errors a caller can cause: a bad config, a bad scenario, an input that names an unknown
//! broker. Each names the field at fault and what was allowed. Engine bugs are assertions,
//! never values of these types.

use std::fmt;

use crate::config::Range;

/// A config value outside its allowed range, or an unknown config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The config's Kafka name, e.g. `replica.lag.time.max.ms`.
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub(crate) fn out_of_range(range: &Range, got: &str) -> Self {
        ConfigError {
            field: range.name.to_string(),
            message: format!(
                "{} must be a whole number in {}..={}, got {}",
                range.name, range.min, range.max, got
            ),
        }
    }
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
