//! Reading the text files users write (scenarios, profiles, traces): positions for error
//! messages, and a file that is not UTF-8 reported at its first bad byte.

/// 1-based (line, column) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.len(), |i| before.len() - i - 1) + 1;
    (line, col)
}

/// Why a text file could not be read: where (1-based line and column of the first byte that is
/// not UTF-8; 0, 0 when the file could not be read at all) and a one-line message.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

/// The file's text.
pub fn read_utf8(path: &str) -> Result<String, ReadError> {
    let bytes = std::fs::read(path).map_err(|e| ReadError { line: 0, col: 0, msg: format!("cannot read: {e}") })?;
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let (line, col) = line_col(&String::from_utf8_lossy(&e.as_bytes()[..good]), good);
        ReadError { line, col, msg: format!("not UTF-8 text (byte 0x{:02x})", e.as_bytes()[good]) }
    })
}
