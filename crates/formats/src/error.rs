use std::path::PathBuf;

/// Why a file could not be scanned or edited.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file is not well-formed for its kind.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The file is valid YAML, but past what tagpin follows: aliases that expand it too far,
    /// or nesting too deep once aliases are followed.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Limit {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Two edits claim the same bytes.
    #[error("edits overlap at byte {at}")]
    OverlappingEdits { at: usize },
    /// An edit does not fit the text it is applied to.
    #[error("edit {start}..{end} does not fit a text of {len} bytes")]
    EditOutOfBounds {
        start: usize,
        end: usize,
        len: usize,
    },
}
