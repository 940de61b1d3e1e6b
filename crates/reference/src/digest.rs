use std::fmt;
use std::str::FromStr;

use crate::{ParseError, ParseErrorKind};

/// A content digest's hash algorithm. Only the ones registries serve are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DigestAlgorithm {
    Sha256,
    Sha512,
}

impl DigestAlgorithm {
    /// The algorithm's name as it appears before the `:`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "sha256",
            Self::Sha512 => "sha512",
        }
    }

    /// How many lowercase hex characters an encoded digest of this algorithm has.
    pub fn hex_len(self) -> usize {
        match self {
            Self::Sha256 => 64,
            Self::Sha512 => 128,
        }
    }
}

/// A content digest such as `sha256:<64 lowercase hex>`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest {
    algorithm: DigestAlgorithm,
    encoded: String,
}

impl Digest {
    /// Parses `algorithm:hex`, accepting `sha256` (64 hex) and `sha512` (128 hex), lowercase.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        parse_at(text, text, 0)
    }

    /// Builds a digest from an algorithm and raw hash bytes.
    pub fn from_bytes(algorithm: DigestAlgorithm, bytes: &[u8]) -> Option<Self> {
        use fmt::Write;
        if bytes.len() * 2 != algorithm.hex_len() {
            return None;
        }
        let mut encoded = String::with_capacity(algorithm.hex_len());
        for byte in bytes {
            let _ = write!(encoded, "{byte:02x}");
        }
        Some(Self { algorithm, encoded })
    }

    pub fn algorithm(&self) -> DigestAlgorithm {
        self.algorithm
    }

    /// The hex part after the `:`.
    pub fn encoded(&self) -> &str {
        &self.encoded
    }

    /// `sha256:` and the first 12 hex characters, for tables and summaries.
    pub fn short(&self) -> String {
        format!("{}:{}", self.algorithm.name(), &self.encoded[..12])
    }
}

/// Parses the digest `text`, found at byte `offset` of `input`, for error positions.
pub(crate) fn parse_at(input: &str, text: &str, offset: usize) -> Result<Digest, ParseError> {
    let error = |kind, at: usize| ParseError::new(input, offset + at, kind);
    let Some(colon) = text.find(':') else {
        return Err(error(ParseErrorKind::DigestMissingAlgorithm, 0));
    };
    let algorithm = match &text[..colon] {
        "sha256" => DigestAlgorithm::Sha256,
        "sha512" => DigestAlgorithm::Sha512,
        _ => return Err(error(ParseErrorKind::UnsupportedDigestAlgorithm, 0)),
    };
    let encoded = &text[colon + 1..];
    if let Some(bad) = encoded
        .bytes()
        .position(|b| !(b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        return Err(error(ParseErrorKind::InvalidDigestHex, colon + 1 + bad));
    }
    if encoded.len() != algorithm.hex_len() {
        return Err(error(
            ParseErrorKind::DigestLength {
                expected: algorithm.hex_len(),
                found: encoded.len(),
            },
            colon + 1,
        ));
    }
    Ok(Digest {
        algorithm,
        encoded: encoded.to_owned(),
    })
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.algorithm.name(), self.encoded)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
