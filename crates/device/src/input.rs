//! Loading TOML inputs with errors a user can act on: file, line, column, field, problem.

use serde::de::DeserializeOwned;
use std::path::Path;

/// A problem in an input file; `line` 0 = about the file as a whole (no position shown).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.located())]
pub struct InputError {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) col: usize,
    pub(crate) msg: String,
}

impl InputError {
    fn located(&self) -> String {
        match (self.line, self.col) {
            (0, _) => format!("{}: {}", self.file, self.msg),
            (l, 0) => format!("{}:{l}: {}", self.file, self.msg),
            (l, c) => format!("{}:{l}:{c}: {}", self.file, self.msg),
        }
    }
}

pub use mobmem_engine::text::line_col;

/// Parse `text` (from `file`) into `T`, mapping TOML and schema errors to `InputError`.
pub fn parse<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, InputError> {
    toml::from_str::<T>(text).map_err(|e| {
        let (line, col) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        InputError { file: file.into(), line, col, msg: e.message().trim().to_string() }
    })
}

/// An error at a known span of the file.
pub fn at(file: &str, text: &str, span: std::ops::Range<usize>, msg: impl Into<String>) -> InputError {
    let (line, col) = line_col(text, span.start);
    InputError { file: file.into(), line, col, msg: msg.into() }
}

pub fn read(path: &str) -> Result<String, InputError> {
    mobmem_engine::text::read_utf8(path).map_err(|e| InputError { file: path.into(), line: e.line, col: e.col, msg: e.msg })
}

/// The path of entry `name` of a data directory's `kind`s (`dir/NAME.toml`): an unknown name is
/// an error listing the known ones (`also` is appended to the list, e.g. other accepted forms).
pub fn named_file(dir: &Path, kind: &str, name: &str, also: &str) -> Result<String, InputError> {
    let known = stems(dir);
    if !known.iter().any(|n| n == name) {
        return Err(InputError {
            file: dir.to_string_lossy().into_owned(),
            line: 0,
            col: 0,
            msg: format!("unknown {kind} {name:?}; known {kind}s: {}{also}", known.join(", ")),
        });
    }
    Ok(dir.join(format!("{name}.toml")).to_string_lossy().into_owned())
}

/// The stems of the `.toml` files in `dir`, sorted (the names of devices, apps, scenarios).
pub fn stems(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A TOML value as a setting's text (strings unquoted).
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
