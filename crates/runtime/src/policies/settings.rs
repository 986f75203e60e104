//! Settings tables of runtime policies: a policy with parameters keeps them in its own table
//! under its own prefix (`fleet.*`); [`SettingsLayer`] lets the registry check and list every
//! policy's keys without knowing their types, and [`settings_for`] builds a policy's
//! configuration from the settings kept in the runtime configuration.

use crate::config::RuntimeConfig;
use mobmem_engine::settings::{Info, SettingError, Table};

/// A policy's settings table, type-erased so that the runtime configuration can check and list
/// every policy's keys.
pub trait SettingsLayer: Sync {
    /// The layer's name in listings (`fleet`).
    fn layer(&self) -> &'static str;
    fn prefixes(&self) -> &'static [&'static str];
    /// Whether `key` is one of this layer's (it carries the layer's prefix).
    fn owns(&self, key: &str) -> bool {
        self.prefixes().iter().any(|p| key.starts_with(p))
    }
    /// Check one setting against the layer's defaults.
    fn check(&self, key: &str, value: &str) -> Result<(), SettingError>;
    fn info(&self) -> Vec<Info>;
}

/// A settings table whose configuration has defaults.
pub struct Layer<C: Default + 'static>(pub &'static Table<C>);

impl<C: Default + 'static> SettingsLayer for Layer<C> {
    fn layer(&self) -> &'static str {
        self.0.layer
    }
    fn prefixes(&self) -> &'static [&'static str] {
        self.0.prefixes
    }
    fn check(&self, key: &str, value: &str) -> Result<(), SettingError> {
        self.0.set(&mut C::default(), key, value)
    }
    fn info(&self) -> Vec<Info> {
        self.0.info(&C::default())
    }
}

/// A policy's configuration: its defaults, then the settings of `cfg` under its table's prefix,
/// in the order they were given.
pub fn settings_for<C: Default>(table: &Table<C>, cfg: &RuntimeConfig) -> Result<C, String> {
    let mut c = C::default();
    for (k, v) in &cfg.policy_settings {
        if table.prefixes.iter().any(|p| k.starts_with(p)) {
            table.set(&mut c, k, v).map_err(|e| e.to_string())?;
        }
    }
    Ok(c)
}
