use std::fmt;

/// Why a reference did not parse, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid image reference {input:?} at column {column}: {kind}", column = .position + 1)]
pub struct ParseError {
    input: String,
    position: usize,
    kind: ParseErrorKind,
}

impl ParseError {
    pub(crate) fn new(input: &str, position: usize, kind: ParseErrorKind) -> Self {
        Self {
            input: input.to_owned(),
            position,
            kind,
        }
    }

    /// The text that failed to parse.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// The byte offset of the offending part within the input.
    pub fn position(&self) -> usize {
        self.position
    }

    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }
}

/// The grammar rule a reference broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    Empty,
    NameTooLong { length: usize },
    InvalidDomain,
    InvalidPort,
    EmptyPathComponent,
    UppercasePath,
    InvalidPathCharacter(char),
    InvalidSeparator,
    EmptyTag,
    TagTooLong { length: usize },
    InvalidTagCharacter(char),
    DigestMissingAlgorithm,
    UnsupportedDigestAlgorithm,
    InvalidDigestHex,
    DigestLength { expected: usize, found: usize },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the reference is empty"),
            Self::NameTooLong { length } => {
                write!(
                    f,
                    "the name is {length} characters long, at most 255 are allowed"
                )
            }
            Self::InvalidDomain => f.write_str("invalid registry host"),
            Self::InvalidPort => f.write_str("the registry port must be digits"),
            Self::EmptyPathComponent => f.write_str("empty path component"),
            Self::UppercasePath => f.write_str("repository names must be lowercase"),
            Self::InvalidPathCharacter(c) => write!(f, "{c:?} is not allowed in a repository name"),
            Self::InvalidSeparator => {
                f.write_str("path components must start and end with a letter or digit")
            }
            Self::EmptyTag => f.write_str("the tag after ':' is empty"),
            Self::TagTooLong { length } => {
                write!(
                    f,
                    "the tag is {length} characters long, at most 128 are allowed"
                )
            }
            Self::InvalidTagCharacter(c) => write!(f, "{c:?} is not allowed in a tag"),
            Self::DigestMissingAlgorithm => f.write_str("a digest needs an algorithm before ':'"),
            Self::UnsupportedDigestAlgorithm => {
                f.write_str("only sha256 and sha512 digests are supported")
            }
            Self::InvalidDigestHex => f.write_str("a digest must be lowercase hex"),
            Self::DigestLength { expected, found } => {
                write!(
                    f,
                    "the digest has {found} hex characters, expected {expected}"
                )
            }
        }
    }
}
