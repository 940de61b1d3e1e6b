//! Manifests by digest: what an index lists, which platform an image is for, when it was built.
//!
//! Fetched with `GET /v2/<repository>/manifests/<digest>` (and, for a single-platform image,
//! `GET /v2/<repository>/blobs/<config digest>` for its platform and creation time). Every body
//! is hashed and must match the digest asked for, so what is compared is what a runtime would
//! pull. Only tags that moved (or that a platform check needs) cost these GETs, and content
//! fetched by digest never changes: with a cache directory it is kept across runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use tagpin_reference::{Digest, TagKey};

use crate::endpoint::Endpoint;
use crate::error::redact;
use crate::resolve::{Inner, hash, status_error};
use crate::stats::{Recorder, Stats};
use crate::{ResolveError, Resolver};

/// A manifest to fetch: the repository (as a tag key: its tag is not used) and the digest.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DigestKey {
    pub registry: String,
    pub repository: String,
    pub digest: Digest,
}

impl DigestKey {
    /// The manifest `digest` in the repository of `key`.
    pub fn new(key: &TagKey, digest: Digest) -> Self {
        Self {
            registry: key.registry.clone(),
            repository: key.repository.clone(),
            digest,
        }
    }

    fn tag_key(&self) -> TagKey {
        TagKey::new(&self.registry, &self.repository, &self.digest.to_string())
    }
}

impl fmt::Display for DigestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}@{}", self.registry, self.repository, self.digest)
    }
}

/// An OS and architecture, with a variant for ARM (`linux/arm/v7`), as an index lists it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
}

impl Platform {
    /// Whether an image for `self` serves what `wanted` asks for: same OS and architecture,
    /// and the same variant when `wanted` names one (`arm64`'s `v8` is its only variant, so it
    /// counts as none).
    pub fn satisfies(&self, wanted: &Self) -> bool {
        let variant = |platform: &Self| {
            platform
                .variant
                .clone()
                .filter(|v| !(platform.architecture == "arm64" && v == "v8"))
        };
        self.os == wanted.os
            && self.architecture == wanted.architecture
            && (wanted.variant.is_none() || variant(self) == variant(wanted))
    }

    /// Whether this is a real platform, not `unknown/unknown` (how `BuildKit` lists the
    /// attestation manifests it puts in an index).
    fn is_known(&self) -> bool {
        self.os != "unknown" && self.architecture != "unknown"
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(variant) = &self.variant {
            write!(f, "/{variant}")?;
        }
        Ok(())
    }
}

impl From<Platform> for String {
    fn from(platform: Platform) -> Self {
        platform.to_string()
    }
}

/// Why a platform could not be read from `os/arch[/variant]`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid platform {text:?}: expected OS/ARCHITECTURE[/VARIANT], like linux/amd64 or linux/arm/v7"
)]
pub struct PlatformError {
    pub text: String,
}

impl FromStr for Platform {
    type Err = PlatformError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || PlatformError {
            text: text.to_owned(),
        };
        let parts: Vec<&str> = text.trim().split('/').collect();
        let valid = |part: &&str| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        };
        if !(2..=3).contains(&parts.len()) || !parts.iter().all(valid) {
            return Err(error());
        }
        Ok(Self {
            os: parts[0].to_ascii_lowercase(),
            architecture: parts[1].to_ascii_lowercase(),
            variant: parts.get(2).map(|variant| variant.to_ascii_lowercase()),
        })
    }
}

/// One manifest an index lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Child {
    /// `None` when the index gives no platform for it.
    pub platform: Option<Platform>,
    pub digest: Digest,
}

/// What a manifest fetched by digest holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Manifest {
    /// An OCI image index or a Docker manifest list.
    Index {
        digest: Digest,
        children: Vec<Child>,
    },
    /// A single-platform image; its platform and creation time come from its config.
    Image {
        digest: Digest,
        platform: Option<Platform>,
        /// The config's `created`, as written (RFC 3339).
        created: Option<String>,
    },
}

impl Manifest {
    pub fn digest(&self) -> &Digest {
        match self {
            Self::Index { digest, .. } | Self::Image { digest, .. } => digest,
        }
    }

    /// The platforms it serves, attestation entries (`unknown/unknown`) left out, in order,
    /// once each.
    pub fn platforms(&self) -> Vec<Platform> {
        let mut seen = BTreeSet::new();
        self.entries()
            .into_iter()
            .map(|(platform, _)| platform)
            .filter(|platform| seen.insert(platform.clone()))
            .collect()
    }

    /// The manifests that serve `wanted`, in order: the children of an index whose platform
    /// satisfies it, or the image itself.
    pub fn manifests_for(&self, wanted: &Platform) -> Vec<&Digest> {
        self.entries()
            .into_iter()
            .filter(|(platform, _)| platform.satisfies(wanted))
            .map(|(_, digest)| digest)
            .collect()
    }

    fn entries(&self) -> Vec<(Platform, &Digest)> {
        match self {
            Self::Index { children, .. } => children
                .iter()
                .filter_map(|child| Some((child.platform.clone()?, &child.digest)))
                .filter(|(platform, _)| platform.is_known())
                .collect(),
            Self::Image {
                digest, platform, ..
            } => platform
                .iter()
                .filter(|platform| platform.is_known())
                .map(|platform| (platform.clone(), digest))
                .collect(),
        }
    }
}

/// The manifests of a [`Resolver::manifests`] call, one result per distinct key, and what
/// fetching them cost.
#[derive(Debug, Default)]
pub struct Manifests {
    pub manifests: BTreeMap<DigestKey, Result<Manifest, ResolveError>>,
    pub stats: Stats,
}

impl Resolver {
    /// Fetches every distinct manifest once, concurrently within the limits, from the cache
    /// ([`crate::ResolverOptions::cache_dir`]) when it holds it. Each key has its own result; a body that does not hash to the digest
    /// asked for is [`ResolveError::BadDigest`].
    pub async fn manifests(&self, keys: impl IntoIterator<Item = DigestKey>) -> Manifests {
        let mut fetches = crate::resolve::Fetches::default();
        for key in keys {
            fetches.spawn(&self.inner, key);
        }
        fetches.finish(None).await
    }
}

impl Inner {
    pub(crate) async fn manifest(
        &self,
        stats: &Recorder,
        key: &DigestKey,
    ) -> Result<Manifest, ResolveError> {
        let endpoint = Endpoint::for_key(&key.tag_key(), &self.mirrors, &self.insecure);
        let url = endpoint.manifest_url(&key.digest.to_string());
        let body = self.by_digest(stats, &endpoint, &url, &key.digest).await?;
        let document: serde_json::Value =
            serde_json::from_slice(&body).map_err(|source| ResolveError::BadManifest {
                url: redact(&url),
                problem: "not JSON",
                source: Some(source),
            })?;
        if let Some(entries) = document.get("manifests").and_then(|m| m.as_array()) {
            let mut children = Vec::with_capacity(entries.len());
            for entry in entries {
                let digest = entry
                    .get("digest")
                    .and_then(|d| d.as_str())
                    .and_then(|d| Digest::parse(d).ok())
                    .ok_or_else(|| ResolveError::BadManifest {
                        url: redact(&url),
                        problem: "an index entry has no valid digest",
                        source: None,
                    })?;
                children.push(Child {
                    platform: entry.get("platform").and_then(platform_of),
                    digest,
                });
            }
            return Ok(Manifest::Index {
                digest: key.digest.clone(),
                children,
            });
        }
        let config = document
            .get("config")
            .and_then(|config| config.get("digest"))
            .and_then(|d| d.as_str())
            .and_then(|d| Digest::parse(d).ok())
            .ok_or_else(|| ResolveError::BadManifest {
                url: redact(&url),
                problem: "neither an index nor an image manifest with a config",
                source: None,
            })?;
        let config_url = endpoint.blob_url(&config.to_string());
        let body = self
            .by_digest(stats, &endpoint, &config_url, &config)
            .await?;
        // A config that is not an image config (an artifact's) has no platform: not an error.
        let config: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        Ok(Manifest::Image {
            digest: key.digest.clone(),
            platform: platform_of(&config),
            created: config
                .get("created")
                .and_then(|c| c.as_str())
                .map(ToOwned::to_owned),
        })
    }

    /// The content at `url`, which must hash to `digest`: from the cache when it has it,
    /// else fetched (and then cached).
    async fn by_digest(
        &self,
        stats: &Recorder,
        endpoint: &Endpoint,
        url: &Url,
        digest: &Digest,
    ) -> Result<Vec<u8>, ResolveError> {
        if let Some(cache) = &self.cache
            && let Some(body) = cache.get(digest)
        {
            stats.cache_hit();
            return Ok(body);
        }
        let reply = self.fetch(stats, endpoint, Method::GET, url).await?;
        if reply.status != StatusCode::OK {
            return Err(status_error(url, &reply));
        }
        if reply.too_large {
            return Err(ResolveError::TooLarge {
                url: redact(url),
                limit: crate::http::MAX_BODY,
            });
        }
        let body = crate::resolve::decode(url, &reply)?.into_owned();
        let hashed = hash(digest.algorithm(), &body);
        if hashed != *digest {
            return Err(ResolveError::BadDigest {
                url: redact(url),
                expected: crate::error::Expected::Asked(digest.clone()),
                body: hashed,
            });
        }
        if let Some(cache) = &self.cache {
            cache.put(digest, &body);
        }
        Ok(body)
    }
}

/// `{"os", "architecture", "variant"}` (an index entry's `platform`, or an image config).
fn platform_of(value: &serde_json::Value) -> Option<Platform> {
    let field = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    Some(Platform {
        os: field("os")?,
        architecture: field("architecture")?,
        variant: field("variant").filter(|v| !v.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(n: u8) -> Digest {
        Digest::parse(&format!("sha256:{}", format!("{n:02x}").repeat(32))).unwrap()
    }

    fn platform(text: &str) -> Platform {
        text.parse().unwrap()
    }

    #[test]
    fn platforms_parse_and_print() {
        assert_eq!(platform("linux/amd64").to_string(), "linux/amd64");
        assert_eq!(platform("Linux/ARM/v7").to_string(), "linux/arm/v7");
        for bad in ["linux", "linux/", "/amd64", "a/b/c/d", "linux/amd 64", ""] {
            assert!(bad.parse::<Platform>().is_err(), "{bad}");
        }
    }

    #[test]
    fn variants_match_when_asked_for() {
        let arm64 = platform("linux/arm64");
        let arm64_v8 = platform("linux/arm64/v8");
        let arm_v7 = platform("linux/arm/v7");
        assert!(arm64_v8.satisfies(&arm64));
        assert!(arm64.satisfies(&arm64_v8));
        assert!(!platform("linux/arm/v6").satisfies(&arm_v7));
        assert!(arm_v7.satisfies(&platform("linux/arm")));
        assert!(!platform("windows/amd64").satisfies(&platform("linux/amd64")));
    }

    #[test]
    fn attestations_are_not_platforms() {
        let index = Manifest::Index {
            digest: digest(0),
            children: vec![
                Child {
                    platform: Some(platform("linux/amd64")),
                    digest: digest(1),
                },
                Child {
                    platform: Some(platform("unknown/unknown")),
                    digest: digest(2),
                },
                Child {
                    platform: None,
                    digest: digest(3),
                },
                Child {
                    platform: Some(platform("linux/arm64/v8")),
                    digest: digest(4),
                },
            ],
        };
        assert_eq!(
            index.platforms(),
            [platform("linux/amd64"), platform("linux/arm64/v8")]
        );
        assert_eq!(index.manifests_for(&platform("linux/arm64")), [&digest(4)]);
        assert!(index.manifests_for(&platform("linux/s390x")).is_empty());
        let image = Manifest::Image {
            digest: digest(5),
            platform: Some(platform("linux/amd64")),
            created: None,
        };
        assert_eq!(image.manifests_for(&platform("linux/amd64")), [&digest(5)]);
    }
}
