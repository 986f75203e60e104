//! Loading TOML inputs with errors a user can act on: file, line, column, field, problem.

use serde::de::DeserializeOwned;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{col}: {msg}")]
pub struct InputError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

/// 1-based (line, column) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.len(), |i| before.len() - i - 1) + 1;
    (line, col)
}

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
    std::fs::read_to_string(path).map_err(|e| InputError { file: path.into(), line: 0, col: 0, msg: format!("cannot read: {e}") })
}
