//! `--details`: when the images a new digest holds were built, so a reviewer reads
//! "linux/amd64 and linux/arm64 rebuilt 2026-11-28" instead of two hashes.
//!
//! For each reference whose digest changes, the new manifest is read (the platform rules have
//! usually fetched it already); an index's child manifest for each platform in force is then
//! fetched with its config blob, whose `created` is the creation time (an image manifest's
//! own config was read with it). Everything is fetched by digest through `tagpin-registry`,
//! so it is verified and cached like the platform rules' manifests. Without `--details`
//! nothing here runs and no request is added. A manifest or config that cannot be read only
//! leaves its time out: the pin goes ahead. Pure: the manifests come in as values.

use serde::Serialize;
use tagpin_registry::{Digest, DigestKey, Manifest, Platform, TagKey};

use crate::platforms::Fetched;

/// One platform image of a new digest and when it was built.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Built {
    /// `os/arch[/variant]`, the platform in force it serves; `None` when the image names none.
    pub platform: Option<String>,
    /// The image manifest's digest (an index's child, or the new digest itself).
    pub digest: String,
    /// The image config's `created` (RFC 3339, as written); `None` when it has none or it
    /// could not be read.
    pub created: Option<String>,
    /// Why it could not be read: [`tagpin_registry::ResolveError::kind`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    /// The error with its causes, for the note on stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A reference about to get a new digest: its tag, the digests, and the platforms
/// configured for it (empty: the default, see [`crate::platforms`]).
pub struct Target {
    pub key: TagKey,
    pub old: Option<Digest>,
    pub new: Digest,
    pub configured: Vec<Platform>,
}

impl Target {
    fn key_of(&self, digest: &Digest) -> DigestKey {
        DigestKey::new(&self.key, digest.clone())
    }

    /// The platforms in force, given the new manifest: the configured ones, else those of
    /// the digest pinned before (when it was read and names some), else all the new one
    /// serves.
    fn in_force(&self, new: &Manifest, fetched: &Fetched) -> Vec<Platform> {
        if !self.configured.is_empty() {
            return self.configured.clone();
        }
        let before = self
            .old
            .as_ref()
            .and_then(|old| fetched.get(&self.key_of(old)))
            .and_then(|old| old.as_ref().ok())
            .map(Manifest::platforms)
            .unwrap_or_default();
        if before.is_empty() {
            new.platforms()
        } else {
            before
        }
    }

    /// The index children that serve the platforms in force, each with the platform it is
    /// listed for, once each.
    fn children<'m>(&self, new: &'m Manifest, fetched: &Fetched) -> Vec<(Platform, &'m Digest)> {
        let mut seen = std::collections::BTreeSet::new();
        self.in_force(new, fetched)
            .into_iter()
            .flat_map(|platform| {
                new.manifests_for(&platform)
                    .into_iter()
                    .map(move |digest| (platform.clone(), digest))
            })
            .filter(|(_, digest)| seen.insert(*digest))
            .collect()
    }
}

/// The manifests [`built`] still needs, given those `fetched` so far: the new manifest,
/// then an index's children for the platforms in force. Called until it names nothing new:
/// at most two rounds.
pub fn needed(target: &Target, fetched: &Fetched) -> Vec<DigestKey> {
    let new_key = target.key_of(&target.new);
    match fetched.get(&new_key) {
        None => vec![new_key],
        Some(Ok(new @ Manifest::Index { .. })) => target
            .children(new, fetched)
            .into_iter()
            .map(|(_, digest)| target.key_of(digest))
            .filter(|key| !fetched.contains_key(key))
            .collect(),
        Some(Ok(Manifest::Image { .. }) | Err(_)) => Vec::new(),
    }
}

/// When each image of the new digest was built, from the manifests [`needed`] named: one
/// entry for an image manifest, one per child in force for an index, one with the error
/// when the new manifest itself could not be read.
pub fn built(target: &Target, fetched: &Fetched) -> Vec<Built> {
    let Some(new) = fetched.get(&target.key_of(&target.new)) else {
        return Vec::new();
    };
    match new {
        Err(error) => vec![unread(None, &target.new, error)],
        Ok(image @ Manifest::Image { .. }) => vec![of_image(None, image)],
        Ok(index @ Manifest::Index { .. }) => target
            .children(index, fetched)
            .into_iter()
            .filter_map(|(platform, digest)| {
                let child = fetched.get(&target.key_of(digest))?;
                Some(match child {
                    Ok(child) => of_image(Some(&platform), child),
                    Err(error) => unread(Some(&platform), digest, error),
                })
            })
            .collect(),
    }
}

/// An image manifest's entry (a nested index has no creation time of its own).
fn of_image(platform: Option<&Platform>, manifest: &Manifest) -> Built {
    let (own, created) = match manifest {
        Manifest::Image {
            platform, created, ..
        } => (platform.as_ref(), created.clone()),
        Manifest::Index { .. } => (None, None),
    };
    Built {
        platform: platform.or(own).map(ToString::to_string),
        digest: manifest.digest().to_string(),
        created,
        error: None,
        message: None,
    }
}

fn unread(
    platform: Option<&Platform>,
    digest: &Digest,
    error: &tagpin_registry::ResolveError,
) -> Built {
    Built {
        platform: platform.map(ToString::to_string),
        digest: digest.to_string(),
        created: None,
        error: Some(error.kind()),
        message: Some(crate::resolve::with_causes(error)),
    }
}

/// The day of an RFC 3339 time (`2026-11-28` of `2026-11-28T09:30:00Z`), when it starts with
/// one; `None` for anything else, so a malformed config never prints as a date.
pub fn day(created: &str) -> Option<&str> {
    let day = created.get(..10)?;
    let bytes = day.as_bytes();
    let shaped = bytes.iter().enumerate().all(|(i, b)| match i {
        4 | 7 => *b == b'-',
        _ => b.is_ascii_digit(),
    });
    let rest_ok = created[10..].is_empty() || created[10..].starts_with(['T', 't', ' ']);
    (shaped && rest_ok).then_some(day)
}

#[cfg(test)]
mod tests {
    use tagpin_registry::{Child, ResolveError};

    use super::*;

    fn digest(n: u8) -> Digest {
        Digest::parse(&format!("sha256:{}", format!("{n:02x}").repeat(32))).unwrap()
    }

    fn platform(text: &str) -> Platform {
        text.parse().unwrap()
    }

    fn key() -> TagKey {
        TagKey::new("quay.io", "org/img", "1.0")
    }

    fn index(n: u8, children: &[(&str, u8)]) -> Manifest {
        Manifest::Index {
            digest: digest(n),
            children: children
                .iter()
                .map(|(p, d)| Child {
                    platform: Some(platform(p)),
                    digest: digest(*d),
                })
                .collect(),
        }
    }

    fn image(n: u8, platform_text: &str, created: &str) -> Manifest {
        Manifest::Image {
            digest: digest(n),
            platform: Some(platform(platform_text)),
            created: Some(created.to_owned()),
        }
    }

    fn fetched(manifests: Vec<Manifest>) -> Fetched {
        manifests
            .into_iter()
            .map(|m| (DigestKey::new(&key(), m.digest().clone()), Ok(m)))
            .collect()
    }

    fn failed(fetched: &mut Fetched, n: u8) {
        let url: url::Url = "http://127.0.0.1:1/v2/org/img/blobs/x".parse().unwrap();
        fetched.insert(
            DigestKey::new(&key(), digest(n)),
            Err(ResolveError::Status {
                url,
                status: 500,
                attempts: 4,
            }),
        );
    }

    fn built_at(entries: &[Built]) -> Vec<(Option<&str>, Option<&str>, Option<&str>)> {
        entries
            .iter()
            .map(|b| (b.platform.as_deref(), b.created.as_deref(), b.error))
            .collect()
    }

    const DAY1: &str = "2026-11-28T09:30:00Z";
    const DAY2: &str = "2026-11-29T10:00:00Z";

    #[test]
    fn the_children_in_force_are_fetched_after_the_index() {
        let key = key();
        let configured = [platform("linux/arm64")];
        let old = digest(1);
        let new = digest(2);
        // (old, configured, platforms whose children are fetched)
        let cases: [(Option<&Digest>, &[Platform], &[u8]); 4] = [
            // A first pin, nothing configured: every platform the index offers.
            (None, &[], &[20, 21, 22]),
            // Configured: those only.
            (None, &configured, &[21]),
            // A refresh: the platforms of the digest pinned before.
            (Some(&old), &[], &[20, 21]),
            (Some(&old), &configured, &[21]),
        ];
        for (old_digest, configured, children) in cases {
            let target = Target {
                key: key.clone(),
                old: old_digest.cloned(),
                new: new.clone(),
                configured: configured.to_vec(),
            };
            let mut all = Fetched::new();
            assert_eq!(
                needed(&target, &all),
                [DigestKey::new(&key, new.clone())],
                "the new manifest first"
            );
            all = fetched(vec![
                index(1, &[("linux/amd64", 10), ("linux/arm64", 11)]),
                index(
                    2,
                    &[
                        ("linux/amd64", 20),
                        ("linux/arm64", 21),
                        ("linux/s390x", 22),
                        ("unknown/unknown", 23),
                    ],
                ),
            ]);
            let wanted: Vec<DigestKey> = children
                .iter()
                .map(|n| DigestKey::new(&key, digest(*n)))
                .collect();
            assert_eq!(needed(&target, &all), wanted, "{children:?}");
            all.extend(fetched(vec![
                image(20, "linux/amd64", DAY1),
                image(21, "linux/arm64", DAY2),
                image(22, "linux/s390x", DAY1),
            ]));
            assert!(needed(&target, &all).is_empty());
            assert_eq!(built(&target, &all).len(), children.len());
        }
    }

    #[test]
    fn each_child_has_its_time_or_its_error() {
        let key = key();
        let new = digest(2);
        let target = Target {
            key: key.clone(),
            old: None,
            new: new.clone(),
            configured: Vec::new(),
        };
        let mut all = fetched(vec![
            index(2, &[("linux/amd64", 20), ("linux/arm64/v8", 21)]),
            image(20, "linux/amd64", DAY1),
        ]);
        failed(&mut all, 21);
        let entries = built(&target, &all);
        assert_eq!(
            built_at(&entries),
            [
                (Some("linux/amd64"), Some(DAY1), None),
                (Some("linux/arm64/v8"), None, Some("unexpected-status")),
            ]
        );
        assert_eq!(entries[1].digest, digest(21).to_string());
        assert!(entries[1].message.as_deref().unwrap().contains("500"));
    }

    #[test]
    fn a_single_image_needs_nothing_more() {
        let key = key();
        let new = digest(3);
        let target = Target {
            key: key.clone(),
            old: Some(digest(1)),
            new,
            configured: Vec::new(),
        };
        let all = fetched(vec![image(3, "linux/amd64", DAY2)]);
        assert!(needed(&target, &all).is_empty());
        assert_eq!(
            built_at(&built(&target, &all)),
            [(Some("linux/amd64"), Some(DAY2), None)]
        );
        // The new manifest unreadable: one entry, with the error.
        let mut gone = Fetched::new();
        failed(&mut gone, 3);
        assert!(needed(&target, &gone).is_empty());
        assert_eq!(
            built_at(&built(&target, &gone)),
            [(None, None, Some("unexpected-status"))]
        );
    }

    #[test]
    fn days_of_rfc3339_times() {
        for (created, expected) in [
            ("2026-11-28T09:30:00Z", Some("2026-11-28")),
            ("2026-11-28t09:30:00.123456789+01:00", Some("2026-11-28")),
            ("2026-11-28 09:30:00Z", Some("2026-11-28")),
            ("2026-11-28", Some("2026-11-28")),
            ("2026-1-28T09:30:00Z", None),
            ("yesterday", None),
            ("2026-11-28X", None),
            ("", None),
            ("2026-11-2é", None),
        ] {
            assert_eq!(day(created), expected, "{created:?}");
        }
    }
}
