//! Manifests by digest against the real registry: what an index lists, an image's platform
//! and creation time from its config, and bodies checked against the digest asked for.

use tagpin_registry::{Digest, DigestKey, Manifest, Platform, Resolver};
use tagpin_testkit::{CREATED, FaultProxy, TestRegistry};

use crate::support::{fast_options, key};

fn digest(text: &str) -> Digest {
    Digest::parse(text).unwrap()
}

fn platform(text: &str) -> Platform {
    text.parse().unwrap()
}

#[tokio::test]
async fn an_index_lists_its_children_and_an_image_its_platform() {
    let registry = TestRegistry::start().await;
    let host = registry.host();
    let amd64 = registry.push_platform_image("org/img", "linux/amd64").await;
    let arm = registry
        .push_platform_image("org/img", "linux/arm/v7")
        .await;
    let index = registry
        .push_index_of("org/img", "1.0", &[amd64.clone(), arm.clone()])
        .await;
    let image = registry.push_image("org/single", "1.0").await;
    let resolver = Resolver::new(fast_options()).unwrap();
    let index_key = DigestKey::new(&key(&host, "org/img", "1.0"), digest(&index));
    let image_key = DigestKey::new(&key(&host, "org/single", "1.0"), digest(&image));
    let fetched = resolver
        .manifests([index_key.clone(), image_key.clone(), index_key.clone()])
        .await;
    let Ok(Manifest::Index { children, .. }) = &fetched.manifests[&index_key] else {
        panic!("{:?}", fetched.manifests[&index_key]);
    };
    let listed: Vec<(String, String)> = children
        .iter()
        .map(|c| {
            (
                c.platform.clone().unwrap().to_string(),
                c.digest.to_string(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("linux/amd64".to_owned(), amd64.digest.clone()),
            ("linux/arm/v7".to_owned(), arm.digest.clone()),
        ]
    );
    assert_eq!(
        fetched.manifests[&image_key].as_ref().unwrap(),
        &Manifest::Image {
            digest: digest(&image),
            platform: Some(platform("linux/amd64")),
            created: Some(CREATED.to_owned()),
        }
    );
    // The index: one GET; the image: its manifest and its config. The repeat is not fetched.
    assert_eq!(
        fetched.stats.requests_with_method("GET"),
        3,
        "{:?}",
        fetched.stats
    );
    assert_eq!(fetched.stats.total_requests(), 3, "{:?}", fetched.stats);
}

#[tokio::test]
async fn a_body_that_does_not_hash_to_the_digest_is_refused() {
    let registry = TestRegistry::start().await;
    let pushed = registry.push_image("org/img", "1.0").await;
    let other = registry.push_image("org/other", "1.0").await;
    // The proxy serves org/other's manifest when org/img's digest is asked for.
    let proxy = FaultProxy::start(registry.host()).await;
    proxy.rewrite_path(
        &format!("/v2/org/img/manifests/{pushed}"),
        &format!("/v2/org/other/manifests/{other}"),
    );
    let resolver = Resolver::new(fast_options()).unwrap();
    let wanted = DigestKey::new(&key(&proxy.host(), "org/img", "1.0"), digest(&pushed));
    let fetched = resolver.manifests([wanted.clone()]).await;
    let error = fetched.manifests[&wanted].as_ref().unwrap_err();
    assert_eq!(error.kind(), "bad-digest", "{error}");
}

#[tokio::test]
async fn an_unknown_digest_is_not_found() {
    let registry = TestRegistry::start().await;
    registry.push_image("org/img", "1.0").await;
    let resolver = Resolver::new(fast_options()).unwrap();
    let wanted = DigestKey::new(
        &key(&registry.host(), "org/img", "1.0"),
        digest(&format!("sha256:{}", "ab".repeat(32))),
    );
    let fetched = resolver.manifests([wanted.clone()]).await;
    let error = fetched.manifests[&wanted].as_ref().unwrap_err();
    assert_eq!(error.kind(), "not-found", "{error}");
}

#[tokio::test]
async fn a_second_run_reads_the_cache_and_sends_no_get() {
    let registry = TestRegistry::start().await;
    let index = registry.push_index("org/img", "1.0").await;
    let image = registry.push_image("org/single", "1.0").await;
    let proxy = FaultProxy::start(registry.host()).await;
    let cache = tempfile::tempdir().unwrap();
    let options = || tagpin_registry::ResolverOptions {
        cache_dir: Some(cache.path().to_owned()),
        ..fast_options()
    };
    let keys = [
        DigestKey::new(&key(&proxy.host(), "org/img", "1.0"), digest(&index)),
        DigestKey::new(&key(&proxy.host(), "org/single", "1.0"), digest(&image)),
    ];
    let first = Resolver::new(options())
        .unwrap()
        .manifests(keys.clone())
        .await;
    assert_eq!(proxy.count("GET", "/v2/"), 3, "{:?}", proxy.requests());
    assert_eq!(first.stats.cache_hits, 0);
    proxy.reset_counts();
    // A new resolver, as in the next run: everything comes from the cache.
    let second = Resolver::new(options())
        .unwrap()
        .manifests(keys.clone())
        .await;
    assert_eq!(proxy.total(), 0, "{:?}", proxy.requests());
    assert_eq!(second.stats.cache_hits, 3);
    assert_eq!(second.stats.total_requests(), 0);
    assert_eq!(first.manifests.len(), 2);
    for key in &keys {
        assert_eq!(
            first.manifests[key].as_ref().unwrap(),
            second.manifests[key].as_ref().unwrap()
        );
    }
}

#[tokio::test]
async fn manifests_named_as_tags_resolve_are_fetched_once_each_beside_the_lookups() {
    let registry = TestRegistry::start().await;
    let host = registry.host();
    let one = registry.push_image("org/a", "1").await;
    let two = registry.push_image("org/a", "2").await;
    let other = registry.push_image("org/b", "1").await;
    let resolver = Resolver::new(fast_options()).unwrap();
    let keys = [
        key(&host, "org/a", "1"),
        key(&host, "org/a", "2"),
        key(&host, "org/b", "1"),
    ];
    let asked = std::sync::Mutex::new(Vec::new());
    // Both tags of org/a name the manifest of `1` (a pin moved from it) and their own;
    // org/b names nothing.
    let follow = |tag: &tagpin_registry::TagKey, new: &Digest| {
        asked
            .lock()
            .unwrap()
            .push((tag.tag.clone(), new.to_string()));
        if tag.repository == "org/b" {
            return Vec::new();
        }
        vec![
            DigestKey::new(tag, digest(&one)),
            DigestKey::new(tag, new.clone()),
        ]
    };
    let (resolution, fetched) = resolver
        .resolve_following(keys.clone(), &|_| {}, &follow)
        .await;
    assert_eq!(resolution.digests.len(), 3);
    let mut asked = asked.into_inner().unwrap();
    asked.sort();
    let mut each_tag = vec![
        ("1".to_owned(), one.clone()),
        ("1".to_owned(), other.clone()),
        ("2".to_owned(), two.clone()),
    ];
    each_tag.sort();
    assert_eq!(asked, each_tag, "follow is asked once per resolved tag");
    let mut got: Vec<String> = fetched
        .manifests
        .keys()
        .map(|k| k.digest.to_string())
        .collect();
    got.sort();
    let mut want = vec![one.clone(), two.clone()];
    want.sort();
    assert_eq!(got, want);
    assert!(fetched.manifests.values().all(Result::is_ok));
    // Each image: its manifest and its config, once, however many tags named it.
    assert_eq!(
        fetched.stats.requests_with_method("GET"),
        4,
        "{:?}",
        fetched.stats
    );
    // Without follow-ups, the lookups alone: no GET.
    let (_, none) = resolver
        .resolve_following(keys, &|_| {}, &|_, _| Vec::new())
        .await;
    assert!(none.manifests.is_empty());
    assert_eq!(none.stats.total_requests(), 0);
}
