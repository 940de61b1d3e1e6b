//! Concurrency limits, measured by fakes that count requests in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use tagpin_registry::ResolverOptions;

use crate::support::{digest_text, fast_options, key, resolve};

const DIGEST: &str = "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae";

/// In flight now and at most, for one fake or for all of them.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
    total: AtomicUsize,
}

impl InFlight {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        self.total.fetch_add(1, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A registry answering every manifest HEAD after 40 ms; returns its `host:port`.
async fn slow_registry(own: Arc<InFlight>, all: Arc<InFlight>) -> String {
    let app = axum::Router::new().fallback(move || {
        let (own, all) = (Arc::clone(&own), Arc::clone(&all));
        async move {
            own.enter();
            all.enter();
            tokio::time::sleep(Duration::from_millis(40)).await;
            own.leave();
            all.leave();
            let mut headers = HeaderMap::new();
            headers.insert("docker-content-digest", DIGEST.parse().unwrap());
            (StatusCode::OK, headers)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app).await });
    host
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn global_and_per_registry_limits_hold() {
    let all = Arc::new(InFlight::default());
    let first = Arc::new(InFlight::default());
    let second = Arc::new(InFlight::default());
    let hosts = [
        slow_registry(Arc::clone(&first), Arc::clone(&all)).await,
        slow_registry(Arc::clone(&second), Arc::clone(&all)).await,
    ];
    let keys: Vec<_> = hosts
        .iter()
        .flat_map(|host| (0..12).map(move |n| key(host, "org/img", &format!("t{n}"))))
        .collect();
    let options = ResolverOptions {
        concurrency: 5,
        per_registry_concurrency: 3,
        ..fast_options()
    };
    let (resolution, done) = resolve(options, keys.clone()).await;
    for tag in &keys {
        assert_eq!(digest_text(&resolution, tag), DIGEST);
    }
    assert_eq!(done.len(), 24);
    assert_eq!(all.total.load(Ordering::SeqCst), 24);
    assert_eq!(
        first.max.load(Ordering::SeqCst),
        3,
        "per-registry limit reached, not passed"
    );
    assert_eq!(second.max.load(Ordering::SeqCst), 3);
    assert_eq!(
        all.max.load(Ordering::SeqCst),
        5,
        "global limit reached, not passed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn default_limits_hold_on_one_registry() {
    let all = Arc::new(InFlight::default());
    let own = Arc::new(InFlight::default());
    let host = slow_registry(Arc::clone(&own), Arc::clone(&all)).await;
    let keys: Vec<_> = (0..40)
        .map(|n| key(&host, "org/img", &format!("t{n}")))
        .collect();
    let (resolution, _) = resolve(fast_options(), keys).await;
    assert_eq!(resolution.stats.requests["HEAD"]["200"], 40);
    assert_eq!(own.max.load(Ordering::SeqCst), 8, "per-registry default");
}
