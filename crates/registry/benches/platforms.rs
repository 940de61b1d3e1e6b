//! The platform rules' cost: 200 pinned tags of which 20 moved (10 with the same children,
//! 10 with one rebuilt), through a proxy that adds 20 ms to every request, at a per-registry
//! concurrency of 8. Run with `cargo bench -p tagpin-registry --bench platforms`.
//!
//! The requests are those `tagpin pin` sends: a HEAD per tag, and for each moved tag the GETs
//! of the pinned index and of the new one, started as soon as its HEAD answers
//! (`Resolver::resolve_following`), in the slots the other HEADs leave. The bound is the time if every slot were busy all the
//! time: (200 HEADs + 40 GETs) ÷ 8 × 20 ms. The run fails unless every moved tag costs exactly
//! two GETs and the comparison tells the 10 no-ops from the 10 rebuilds. The same requests are
//! first timed with no added latency: the registry's and the proxy's own time, which the
//! bound leaves out, is printed beside it.
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its figures on stdout"
)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tagpin_registry::{Digest, DigestKey, Manifest, Platform, Resolver, ResolverOptions, TagKey};
use tagpin_testkit::{FaultProxy, TestRegistry};

const TAGS: usize = 200;
const MOVED: usize = 20;
const PER_REGISTRY: usize = 8;
const LATENCY: Duration = Duration::from_millis(20);
const RUNS: usize = 5;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(bench());
}

async fn bench() {
    let registry = TestRegistry::start().await;
    let setup = Instant::now();
    let still: Vec<String> = (MOVED..TAGS).map(|n| format!("v{n}")).collect();
    registry.push_image_tags("bench/img", &still).await;
    let amd64 = registry
        .push_platform_image("bench/img", "linux/amd64")
        .await;
    let arm64 = registry
        .push_platform_image("bench/img", "linux/arm64")
        .await;
    // (tag, pinned digest, whether the move rebuilt a platform)
    let mut moved = Vec::new();
    for n in 0..MOVED {
        let tag = format!("v{n}");
        let old = registry
            .push_index_of("bench/img", &tag, &[amd64.clone(), arm64.clone()])
            .await;
        let rebuilt = n % 2 == 1;
        let second = if rebuilt {
            registry
                .push_platform_image("bench/img", "linux/arm64")
                .await
        } else {
            arm64.clone()
        };
        registry
            .push_index_of("bench/img", &tag, &[amd64.clone(), second])
            .await;
        moved.push((tag, Digest::parse(&old).expect("a digest"), rebuilt));
    }
    println!("setup: pushed {TAGS} tags in {:?}", setup.elapsed());

    let proxy = FaultProxy::start(registry.host()).await;
    let keys: Vec<TagKey> = (0..TAGS)
        .map(|n| TagKey::new(&proxy.host(), "bench/img", &format!("v{n}")))
        .collect();
    let platforms: Vec<Platform> = ["linux/amd64", "linux/arm64"]
        .iter()
        .map(|p| p.parse().expect("a platform"))
        .collect();
    // What `pin` knows before it asks: the digest each moved tag is pinned to.
    let pinned: BTreeMap<TagKey, Digest> = moved
        .iter()
        .map(|(tag, old, _)| (keys[tag_index(tag)].clone(), old.clone()))
        .collect();
    let requests = TAGS + 2 * MOVED;
    let bound = LATENCY.mul_f64(
        f64::from(u32::try_from(requests).expect("few requests"))
            / f64::from(u32::try_from(PER_REGISTRY).expect("a small limit")),
    );
    // The same requests with no added latency: what the registry and the proxy themselves
    // take, which the bound leaves out.
    let service = {
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let resolver = resolver();
            let started = Instant::now();
            let _ = run_once(&resolver, &keys, &pinned).await;
            times.push(started.elapsed());
        }
        times.sort();
        times[RUNS / 2]
    };
    println!("the same requests with no added latency: {service:.0?} (median of {RUNS})");
    proxy.set_latency(LATENCY);
    let mut times = Vec::new();
    for run in 1..=RUNS {
        proxy.reset_counts();
        let resolver = resolver();
        let started = Instant::now();
        let (resolution, fetched) = run_once(&resolver, &keys, &pinned).await;
        let elapsed = started.elapsed();
        let olds: Vec<DigestKey> = moved
            .iter()
            .map(|(tag, old, _)| DigestKey::new(&keys[tag_index(tag)], old.clone()))
            .collect();
        let news: Vec<DigestKey> = moved
            .iter()
            .map(|(tag, _, _)| {
                let key = &keys[tag_index(tag)];
                let new = resolution.digests[key].as_ref().expect("resolved").clone();
                DigestKey::new(key, new)
            })
            .collect();

        let mut rebuilt_seen = 0;
        for (((_, _, rebuilt), old), new) in moved.iter().zip(&olds).zip(&news) {
            let old: &Manifest = fetched[old].as_ref().expect("old read");
            let new: &Manifest = fetched[new].as_ref().expect("new read");
            let changed = platforms
                .iter()
                .any(|p| old.manifests_for(p) != new.manifests_for(p));
            assert_eq!(
                changed, *rebuilt,
                "the comparison tells no-ops from rebuilds"
            );
            rebuilt_seen += usize::from(changed);
        }
        let heads = proxy.count("HEAD", "/manifests/");
        let gets = proxy.count("GET", "/manifests/");
        let ratio = elapsed.as_secs_f64() / bound.as_secs_f64();
        println!(
            "run {run}: {elapsed:.0?}; bound {bound:.0?} ({requests} requests / {PER_REGISTRY} x {LATENCY:?}); ratio {ratio:.2}; HEAD {heads}, GET {gets}; {rebuilt_seen} rebuilt, {} unchanged",
            MOVED - rebuilt_seen
        );
        assert_eq!(heads, TAGS as u64, "one HEAD per tag");
        assert_eq!(
            gets,
            2 * MOVED as u64,
            "two GETs per moved tag, none for the others"
        );
        times.push(elapsed);
    }
    times.sort();
    let median = times[RUNS / 2];
    println!(
        "median of {RUNS}: {median:.0?}; bound {bound:.0?}; ratio {:.2} (target within 1.3); \
         against the bound plus the requests' own time ({:.0?}): {:.2}",
        median.as_secs_f64() / bound.as_secs_f64(),
        bound + service,
        median.as_secs_f64() / (bound + service).as_secs_f64()
    );
}

/// A resolver with no cache, at the benchmark's limits.
fn resolver() -> Resolver {
    Resolver::new(ResolverOptions {
        concurrency: 16,
        per_registry_concurrency: PER_REGISTRY,
        ..ResolverOptions::default()
    })
    .expect("a resolver")
}

/// `pin`'s requests: a HEAD per tag, and for a tag that moved from its pin, the old and the new
/// manifest as soon as the HEAD answers.
async fn run_once(
    resolver: &Resolver,
    keys: &[TagKey],
    pinned: &BTreeMap<TagKey, Digest>,
) -> (
    tagpin_registry::Resolution,
    BTreeMap<DigestKey, Result<Manifest, tagpin_registry::ResolveError>>,
) {
    let follow = |key: &TagKey, new: &Digest| match pinned.get(key) {
        Some(old) if old != new => vec![
            DigestKey::new(key, old.clone()),
            DigestKey::new(key, new.clone()),
        ],
        _ => Vec::new(),
    };
    let (resolution, fetched) = resolver
        .resolve_following(keys.to_vec(), &|_| {}, &follow)
        .await;
    (resolution, fetched.manifests)
}

fn tag_index(tag: &str) -> usize {
    tag.trim_start_matches('v').parse().expect("vN")
}
