//! Resolving 500 distinct tags through a proxy that adds 20 ms to every request, at
//! concurrency 16. Run with `cargo bench -p tagpin-registry --bench resolve`.
//!
//! The theoretical bound is (500 ÷ 16) × 20 ms plus 20 ms per token request: the time if every
//! slot were busy all the time. The run fails when a tag takes other than exactly one manifest
//! request.
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its figures on stdout"
)]

use std::time::{Duration, Instant};

use tagpin_registry::{Resolver, ResolverOptions, TagKey};
use tagpin_testkit::{FaultProxy, TestRegistry};

const TAGS: u32 = 500;
const CONCURRENCY: u32 = 16;
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
    let tags: Vec<String> = (0..TAGS).map(|n| format!("v{n}")).collect();
    let setup = Instant::now();
    let digest = registry.push_image_tags("bench/img", &tags).await;
    println!("setup: pushed {TAGS} tags in {:?}", setup.elapsed());

    let proxy = FaultProxy::start(registry.host()).await;
    proxy.set_latency(LATENCY);
    let keys: Vec<TagKey> = tags
        .iter()
        .map(|tag| TagKey::new(&proxy.host(), "bench/img", tag))
        .collect();

    let mut times = Vec::new();
    for run in 1..=RUNS {
        proxy.reset_counts();
        let resolver = Resolver::new(ResolverOptions {
            concurrency: CONCURRENCY as usize,
            per_registry_concurrency: CONCURRENCY as usize,
            ..ResolverOptions::default()
        })
        .expect("a resolver");
        let started = Instant::now();
        let resolution = resolver.resolve(keys.clone(), &|_| {}).await;
        let elapsed = started.elapsed();

        let matching = resolution
            .digests
            .values()
            .filter(|result| matches!(result, Ok(found) if found.to_string() == digest))
            .count();
        let manifest_requests =
            proxy.count("HEAD", "/manifests/") + proxy.count("GET", "/manifests/");
        let tokens = resolution.stats.tokens_fetched;
        let bound = LATENCY.mul_f64(f64::from(TAGS) / f64::from(CONCURRENCY))
            + LATENCY * u32::try_from(tokens).expect("few tokens");
        let ratio = elapsed.as_secs_f64() / bound.as_secs_f64();
        println!(
            "run {run}: {elapsed:.0?} for {TAGS} tags; bound {bound:.0?} ({TAGS} / {CONCURRENCY} x {LATENCY:?} + {tokens} token requests); ratio {ratio:.2}; manifest requests {manifest_requests}; resolved {matching}"
        );
        assert_eq!(
            matching, TAGS as usize,
            "every tag resolves to the pushed digest"
        );
        assert_eq!(
            manifest_requests,
            u64::from(TAGS),
            "exactly one manifest request per tag"
        );
        times.push(elapsed);
    }
    times.sort();
    let median = times[RUNS / 2];
    let bound = LATENCY.mul_f64(f64::from(TAGS) / f64::from(CONCURRENCY));
    println!(
        "median of {RUNS}: {median:.0?}; bound {bound:.0?}; ratio {:.2} (target within 1.5)",
        median.as_secs_f64() / bound.as_secs_f64()
    );
}
