//! The container image reference grammar.
//!
//! A reference such as `quay.io/org/img:1.27@sha256:…` is parsed into its parts while the text is
//! kept exactly as the user wrote it. Lookups use the normalised form (`busybox` is
//! `docker.io/library/busybox`); rewriting only ever emits the written spelling plus a digest.
//!
//! ```
//! use tagpin_reference::{Digest, ImageReference};
//!
//! let reference = ImageReference::parse("busybox").unwrap();
//! assert_eq!(reference.registry(), "docker.io");
//! assert_eq!(reference.repository(), "library/busybox");
//! assert_eq!(reference.tag(), None);
//!
//! let digest = Digest::parse(&format!("sha256:{}", "a".repeat(64))).unwrap();
//! assert_eq!(
//!     reference.pinned_text(&digest),
//!     format!("busybox:latest@sha256:{}", "a".repeat(64)),
//! );
//! ```
//!
//! The grammar follows the distribution project's reference grammar: a domain (with an optional
//! port) when the first component contains `.` or `:` or is `localhost`, lowercase path
//! components joined by `.`, `_`, `__` or dashes, a tag of at most 128 characters, and a digest.
//! Only `sha256` and `sha512` digests are accepted, since those are the ones registries serve.

mod digest;
mod error;
mod key;
mod parse;

pub use digest::{Digest, DigestAlgorithm};
pub use error::{ParseError, ParseErrorKind};
pub use key::TagKey;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// Docker Hub's canonical registry name, used when a reference names no domain.
pub const DOCKER_HUB: &str = "docker.io";

/// The tag a reference without a tag means.
pub const DEFAULT_TAG: &str = "latest";

/// A parsed image reference that remembers how it was written.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ImageReference {
    written: String,
    /// Byte range of the name (domain and path) within `written`.
    name: Range<usize>,
    /// Byte range of the tag within `written`, without its `:`.
    tag: Option<Range<usize>>,
    digest: Option<Digest>,
    registry: String,
    repository: String,
}

impl ImageReference {
    /// Parses a reference, keeping `text` as written.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        parse::parse(text)
    }

    /// The reference exactly as written.
    pub fn as_written(&self) -> &str {
        &self.written
    }

    /// The name (domain and path) as written, without tag or digest: `busybox`, `quay.io/org/img`.
    pub fn name_as_written(&self) -> &str {
        &self.written[self.name.clone()]
    }

    /// The normalised registry: `docker.io` when none is written, `index.docker.io` folded into it.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The normalised repository path: `library/busybox` for `busybox` on Docker Hub.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The tag as written, if any.
    pub fn tag(&self) -> Option<&str> {
        self.tag.clone().map(|range| &self.written[range])
    }

    /// The tag, or `latest` when none is written (what a runtime pulls).
    pub fn tag_or_latest(&self) -> &str {
        self.tag().unwrap_or(DEFAULT_TAG)
    }

    /// The digest, if any.
    pub fn digest(&self) -> Option<&Digest> {
        self.digest.as_ref()
    }

    /// Whether the reference names Docker Hub (written or implied).
    pub fn is_docker_hub(&self) -> bool {
        self.registry == DOCKER_HUB
    }

    /// The key a resolver looks the tag up by: normalised registry, repository and tag.
    pub fn tag_key(&self) -> TagKey {
        TagKey::new(&self.registry, &self.repository, self.tag_or_latest())
    }

    /// The written name and tag (`latest` when none is written) followed by `@digest`.
    ///
    /// This is the text a floating or stale reference is rewritten to: the user's spelling of
    /// the name is kept and an existing digest is replaced.
    pub fn pinned_text(&self, digest: &Digest) -> String {
        format!(
            "{}:{}@{digest}",
            self.name_as_written(),
            self.tag_or_latest()
        )
    }
}

impl fmt::Display for ImageReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

impl fmt::Debug for ImageReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImageReference")
            .field("written", &self.written)
            .field("registry", &self.registry)
            .field("repository", &self.repository)
            .field("tag", &self.tag())
            .field("digest", &self.digest)
            .finish_non_exhaustive()
    }
}

impl FromStr for ImageReference {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl serde::Serialize for ImageReference {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.written)
    }
}

#[cfg(test)]
mod tests;
