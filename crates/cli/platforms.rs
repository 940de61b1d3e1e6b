//! The platform rules of `pin` and `check --online`: whether a moved index changed anything
//! that runs here, and whether a digest about to be written serves every platform in force.
//!
//! The platforms in force for a reference are the configured ones (`platforms:`,
//! `--platform`); when none are configured, those of the digest already pinned, and for a
//! floating tag all platforms its index offers (nothing to check). Pure: the manifests come in
//! as values (fetched by `tagpin-registry`, by digest, bodies verified).

use std::collections::BTreeMap;

use tagpin_registry::{Digest, DigestKey, Manifest, Platform, ResolveError, TagKey};

/// What the rules say about writing `new` in place of `old` (or of nothing).
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Write it. `changed`: the platforms in force whose manifests changed, when the two
    /// digests were compared.
    Write { changed: Option<Vec<Platform>> },
    /// The tag moved, but for every platform in force the manifest is the same: "index
    /// moved, platforms unchanged". Nothing to write.
    Same,
    /// `new` serves none of `missing` (some of the platforms in force, `wanted`): not written.
    Missing {
        wanted: Vec<Platform>,
        missing: Vec<Platform>,
    },
    /// A manifest the decision needs could not be read: not written, nothing is verified.
    /// `error` is [`ResolveError::kind`].
    Unverified {
        error: &'static str,
        message: String,
    },
}

/// The platforms in force for `finding`: the one a Dockerfile `FROM --platform=` names
/// literally, else the `configured` ones (empty: the default). A literal tagpin cannot read
/// as a platform narrows nothing.
pub fn in_force(finding: &tagpin_formats::Finding, configured: &[Platform]) -> Vec<Platform> {
    match finding.platform().map(str::parse::<Platform>) {
        Some(Ok(platform)) => vec![platform],
        Some(Err(_)) | None => configured.to_vec(),
    }
}

/// The manifests fetched for a run, by repository and digest.
pub type Fetched = BTreeMap<DigestKey, Result<Manifest, ResolveError>>;

/// The manifests [`judge`] still needs for this reference, given those `fetched` so far:
/// none for a first pin with no platforms configured, the new one for a first pin with
/// platforms; for a moved pin the old one first, then the new one unless the old one is gone
/// and there is nothing to check (so a garbage-collected pin costs one GET, not a walk of the
/// new image). Called until it names nothing new: at most two rounds.
pub fn needed(
    key: &TagKey,
    old: Option<&Digest>,
    new: &Digest,
    configured: &[Platform],
    fetched: &Fetched,
) -> Vec<DigestKey> {
    let new_key = DigestKey::new(key, new.clone());
    let wanted = match old {
        Some(old) if old == new => None,
        Some(old) => match fetched.get(&DigestKey::new(key, old.clone())) {
            None => Some(DigestKey::new(key, old.clone())),
            Some(Ok(_)) => Some(new_key),
            Some(Err(ResolveError::NotFound { .. })) if !configured.is_empty() => Some(new_key),
            Some(Err(_)) => None,
        },
        None if configured.is_empty() => None,
        None => Some(new_key),
    };
    wanted
        .filter(|key| !fetched.contains_key(key))
        .into_iter()
        .collect()
}

/// What [`needed`] would name over its rounds, asked at once when the tag resolves (so the
/// GETs run beside the lookups still going): for a moved pin the old and the new manifest,
/// for a first pin with platforms configured the new one. A garbage-collected pin then costs
/// the new manifest's GET too, which [`needed`]'s rounds would have spared.
pub fn at_once(
    key: &TagKey,
    old: Option<&Digest>,
    new: &Digest,
    configured: &[Platform],
) -> Vec<DigestKey> {
    match old {
        Some(old) if old == new => Vec::new(),
        Some(old) => vec![
            DigestKey::new(key, old.clone()),
            DigestKey::new(key, new.clone()),
        ],
        None if configured.is_empty() => Vec::new(),
        None => vec![DigestKey::new(key, new.clone())],
    }
}

/// Decides whether `new` may replace `old` (`None`: a first pin) for the tag `key`, with the
/// `configured` platforms (empty: the default) and the manifests [`needed`] named, in
/// `fetched`. `old == new` is not asked: nothing would be written.
pub fn judge(
    key: &TagKey,
    old: Option<&Digest>,
    new: &Digest,
    configured: &[Platform],
    fetched: &Fetched,
) -> Verdict {
    let get = |digest: &Digest| {
        fetched
            .get(&DigestKey::new(key, digest.clone()))
            .expect("every manifest `needed` names was fetched")
    };
    let Some(old) = old else {
        if configured.is_empty() {
            return Verdict::Write { changed: None };
        }
        return match get(new) {
            Ok(new) => missing(configured, new).unwrap_or(Verdict::Write { changed: None }),
            Err(error) => unverified(error),
        };
    };
    let old = match get(old) {
        Ok(old) => old,
        // The pinned digest is gone (garbage-collected): there is nothing to compare with,
        // and the pin is broken as it is. Only configured platforms can be checked.
        Err(ResolveError::NotFound { .. }) if configured.is_empty() => {
            return Verdict::Write { changed: None };
        }
        Err(ResolveError::NotFound { .. }) => {
            return match get(new) {
                Ok(new) => missing(configured, new).unwrap_or(Verdict::Write { changed: None }),
                Err(error) => unverified(error),
            };
        }
        Err(error) => return unverified(error),
    };
    let new = match get(new) {
        Ok(new) => new,
        Err(error) => return unverified(error),
    };
    let wanted = if configured.is_empty() {
        old.platforms()
    } else {
        configured.to_vec()
    };
    if wanted.is_empty() {
        // The pinned image names no platform: nothing to compare by.
        return Verdict::Write { changed: None };
    }
    if let Some(verdict) = missing(&wanted, new) {
        return verdict;
    }
    let changed: Vec<Platform> = wanted
        .into_iter()
        .filter(|platform| old.manifests_for(platform) != new.manifests_for(platform))
        .collect();
    if changed.is_empty() {
        Verdict::Same
    } else {
        Verdict::Write {
            changed: Some(changed),
        }
    }
}

fn unverified(error: &ResolveError) -> Verdict {
    Verdict::Unverified {
        error: error.kind(),
        message: format!(
            "cannot read {} to check its platforms: {}",
            error.url(),
            crate::resolve::with_causes(error)
        ),
    }
}

/// [`Verdict::Missing`] when `manifest` serves some of `wanted` not.
fn missing(wanted: &[Platform], manifest: &Manifest) -> Option<Verdict> {
    let missing: Vec<Platform> = wanted
        .iter()
        .filter(|platform| manifest.manifests_for(platform).is_empty())
        .cloned()
        .collect();
    (!missing.is_empty()).then(|| Verdict::Missing {
        wanted: wanted.to_vec(),
        missing,
    })
}

#[cfg(test)]
mod tests {
    use tagpin_registry::Child;

    use super::*;

    fn digest(n: u8) -> Digest {
        Digest::parse(&format!("sha256:{}", format!("{n:02x}").repeat(32))).unwrap()
    }

    fn platform(text: &str) -> Platform {
        text.parse().unwrap()
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

    fn key() -> TagKey {
        TagKey::new("quay.io", "org/img", "1.0")
    }

    fn fetched(manifests: Vec<Manifest>) -> Fetched {
        manifests
            .into_iter()
            .map(|m| (DigestKey::new(&key(), m.digest().clone()), Ok(m)))
            .collect()
    }

    fn platforms(texts: &[&str]) -> Vec<Platform> {
        texts.iter().map(|t| platform(t)).collect()
    }

    #[test]
    fn a_moved_index_with_the_same_children_is_the_same() {
        let old = index(1, &[("linux/amd64", 10), ("linux/arm64", 11)]);
        // A platform added, the others untouched; an attestation entry too.
        let new = index(
            2,
            &[
                ("linux/amd64", 10),
                ("linux/arm64", 11),
                ("linux/s390x", 12),
                ("unknown/unknown", 13),
            ],
        );
        let all = fetched(vec![old, new]);
        assert_eq!(
            judge(&key(), Some(&digest(1)), &digest(2), &[], &all),
            Verdict::Same
        );
    }

    #[test]
    fn a_rebuilt_child_is_named() {
        let old = index(1, &[("linux/amd64", 10), ("linux/arm64", 11)]);
        let new = index(2, &[("linux/amd64", 10), ("linux/arm64", 21)]);
        let all = fetched(vec![old, new]);
        assert_eq!(
            judge(&key(), Some(&digest(1)), &digest(2), &[], &all),
            Verdict::Write {
                changed: Some(platforms(&["linux/arm64"]))
            }
        );
        // Only amd64 runs here: the arm64 rebuild changes nothing.
        assert_eq!(
            judge(
                &key(),
                Some(&digest(1)),
                &digest(2),
                &platforms(&["linux/amd64"]),
                &all
            ),
            Verdict::Same
        );
    }

    #[test]
    fn a_lost_platform_is_missing() {
        let old = index(1, &[("linux/amd64", 10), ("linux/arm64", 11)]);
        let new = index(2, &[("linux/amd64", 20)]);
        let single = Manifest::Image {
            digest: digest(3),
            platform: Some(platform("linux/amd64")),
            created: None,
        };
        let all = fetched(vec![old, new, single]);
        for new in [2, 3] {
            assert_eq!(
                judge(&key(), Some(&digest(1)), &digest(new), &[], &all),
                Verdict::Missing {
                    wanted: platforms(&["linux/amd64", "linux/arm64"]),
                    missing: platforms(&["linux/arm64"]),
                },
                "{new}"
            );
        }
    }

    #[test]
    fn first_pins_check_configured_platforms_only() {
        let new = index(2, &[("linux/amd64", 20)]);
        let all = fetched(vec![new]);
        assert!(needed(&key(), None, &digest(2), &[], &Fetched::new()).is_empty());
        assert_eq!(
            needed(
                &key(),
                None,
                &digest(2),
                &platforms(&["linux/amd64"]),
                &Fetched::new()
            )
            .len(),
            1
        );
        assert_eq!(
            judge(&key(), None, &digest(2), &[], &all),
            Verdict::Write { changed: None }
        );
        assert_eq!(
            judge(&key(), None, &digest(2), &platforms(&["linux/amd64"]), &all),
            Verdict::Write { changed: None }
        );
        assert_eq!(
            judge(&key(), None, &digest(2), &platforms(&["linux/arm64"]), &all),
            Verdict::Missing {
                wanted: platforms(&["linux/arm64"]),
                missing: platforms(&["linux/arm64"]),
            }
        );
    }

    #[test]
    fn a_single_image_wrapped_in_an_index_is_the_same() {
        let old = Manifest::Image {
            digest: digest(10),
            platform: Some(platform("linux/amd64")),
            created: None,
        };
        let new = index(2, &[("linux/amd64", 10), ("linux/arm64", 11)]);
        let all = fetched(vec![old, new]);
        assert_eq!(
            judge(&key(), Some(&digest(10)), &digest(2), &[], &all),
            Verdict::Same
        );
    }

    #[test]
    fn an_unreadable_manifest_verifies_nothing() {
        let old = index(1, &[("linux/amd64", 10)]);
        let mut all = fetched(vec![old]);
        let url: url::Url = "http://127.0.0.1:1/v2/org/img/manifests/x".parse().unwrap();
        all.insert(
            DigestKey::new(&key(), digest(2)),
            Err(ResolveError::Status {
                url,
                status: 500,
                attempts: 4,
            }),
        );
        assert!(matches!(
            judge(&key(), Some(&digest(1)), &digest(2), &[], &all),
            Verdict::Unverified {
                error: "unexpected-status",
                ..
            }
        ));
        assert!(needed(&key(), Some(&digest(1)), &digest(1), &[], &all).is_empty());
    }

    #[test]
    fn a_moved_pin_needs_the_old_manifest_then_the_new_one() {
        let old_key = DigestKey::new(&key(), digest(1));
        let new_key = DigestKey::new(&key(), digest(2));
        let mut all = Fetched::new();
        assert_eq!(
            needed(&key(), Some(&digest(1)), &digest(2), &[], &all),
            std::slice::from_ref(&old_key)
        );
        all.insert(old_key.clone(), Ok(index(1, &[("linux/amd64", 10)])));
        assert_eq!(
            needed(&key(), Some(&digest(1)), &digest(2), &[], &all),
            std::slice::from_ref(&new_key)
        );
        all.insert(new_key, Ok(index(2, &[("linux/amd64", 10)])));
        assert!(needed(&key(), Some(&digest(1)), &digest(2), &[], &all).is_empty());
        // A pinned digest that is gone: nothing to compare, nothing more to fetch.
        let url: url::Url = "http://127.0.0.1:1/v2/org/img/manifests/x".parse().unwrap();
        let mut gone = Fetched::new();
        gone.insert(old_key, Err(ResolveError::NotFound { url, code: None }));
        assert!(needed(&key(), Some(&digest(1)), &digest(2), &[], &gone).is_empty());
        assert_eq!(
            judge(&key(), Some(&digest(1)), &digest(2), &[], &gone),
            Verdict::Write { changed: None }
        );
        assert_eq!(
            needed(
                &key(),
                Some(&digest(1)),
                &digest(2),
                &platforms(&["linux/amd64"]),
                &gone
            )
            .len(),
            1
        );
    }
}
