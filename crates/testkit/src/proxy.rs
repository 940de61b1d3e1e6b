//! A small HTTP proxy on loopback that delays requests, answers chosen statuses and counts what
//! it saw.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode, header};
use axum::response::Response;

/// Requests the proxy saw for one method and path (query included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestCount {
    pub method: String,
    pub path: String,
    pub count: u64,
}

/// A fault-injecting proxy in front of an upstream `host:port` (plain HTTP); stops on drop.
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<ProxyState>,
    task: tokio::task::JoinHandle<()>,
}

struct ProxyState {
    upstream: String,
    client: reqwest::Client,
    latency: Mutex<Duration>,
    rules: Mutex<Vec<Rule>>,
    /// Exact paths forwarded as another path (a registry serving the wrong content).
    rewrites: Mutex<BTreeMap<String, String>>,
    counts: Mutex<BTreeMap<(String, String), u64>>,
}

/// Answer `status` with `body` for requests whose path contains `path_contains`.
struct Rule {
    path_contains: String,
    status: StatusCode,
    body: String,
}

impl FaultProxy {
    /// Starts a proxy on a free `127.0.0.1` port forwarding to `upstream` (`host:port`).
    pub async fn start(upstream: impl Into<String>) -> Self {
        let state = Arc::new(ProxyState {
            upstream: upstream.into(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("build the proxy's client"),
            latency: Mutex::new(Duration::ZERO),
            rules: Mutex::new(Vec::new()),
            rewrites: Mutex::new(BTreeMap::new()),
            counts: Mutex::new(BTreeMap::new()),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&state));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, state, task }
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Delays every request by `latency` before answering or forwarding it.
    pub fn set_latency(&self, latency: Duration) {
        *self.state.latency.lock().expect("latency lock") = latency;
    }

    /// Answers `status` with `body` (as JSON) for paths containing `path_contains`, instead of
    /// forwarding. The first matching rule wins.
    pub fn answer(&self, path_contains: &str, status: u16, body: &str) {
        self.state.rules.lock().expect("rules lock").push(Rule {
            path_contains: path_contains.to_owned(),
            status: StatusCode::from_u16(status).expect("a valid status code"),
            body: body.to_owned(),
        });
    }

    /// Answers 404 with a distribution `MANIFEST_UNKNOWN` error for paths containing
    /// `path_contains`, as a mirror does for an image it does not hold.
    pub fn answer_not_found(&self, path_contains: &str) {
        self.answer(
            path_contains,
            404,
            r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":"injected by FaultProxy"}]}"#,
        );
    }

    /// Forwards requests for exactly `path` as requests for `to`: the answer is another
    /// resource's, as from a registry that serves the wrong content.
    pub fn rewrite_path(&self, path: &str, to: &str) {
        self.state
            .rewrites
            .lock()
            .expect("rewrites lock")
            .insert(path.to_owned(), to.to_owned());
    }

    /// Forwards everything again.
    pub fn clear_rules(&self) {
        self.state.rules.lock().expect("rules lock").clear();
        self.state.rewrites.lock().expect("rewrites lock").clear();
    }

    /// Every (method, path) seen, with counts, sorted.
    pub fn requests(&self) -> Vec<RequestCount> {
        self.state
            .counts
            .lock()
            .expect("counts lock")
            .iter()
            .map(|((method, path), count)| RequestCount {
                method: method.clone(),
                path: path.clone(),
                count: *count,
            })
            .collect()
    }

    /// Requests with `method` whose path contains `path_contains`.
    pub fn count(&self, method: &str, path_contains: &str) -> u64 {
        self.requests()
            .iter()
            .filter(|seen| seen.method == method && seen.path.contains(path_contains))
            .map(|seen| seen.count)
            .sum()
    }

    /// All requests seen.
    pub fn total(&self) -> u64 {
        self.requests().iter().map(|seen| seen.count).sum()
    }

    pub fn reset_counts(&self) {
        self.state.counts.lock().expect("counts lock").clear();
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(State(state): State<Arc<ProxyState>>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request
        .uri()
        .path_and_query()
        .map_or_else(|| request.uri().path().to_owned(), ToString::to_string);
    *state
        .counts
        .lock()
        .expect("counts lock")
        .entry((method.to_string(), path.clone()))
        .or_default() += 1;
    let latency = *state.latency.lock().expect("latency lock");
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let injected = state
        .rules
        .lock()
        .expect("rules lock")
        .iter()
        .find(|rule| path.contains(&rule.path_contains))
        .map(|rule| (rule.status, rule.body.clone()));
    if let Some((status, body)) = injected {
        return Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .expect("a valid response");
    }
    let mut headers = request.headers().clone();
    headers.remove(header::HOST);
    let body = match axum::body::to_bytes(request.into_body(), usize::MAX).await {
        Ok(body) => body,
        Err(error) => return bad_gateway(&error.to_string()),
    };
    let path = state
        .rewrites
        .lock()
        .expect("rewrites lock")
        .get(&path)
        .cloned()
        .unwrap_or(path);
    let url = format!("http://{}{path}", state.upstream);
    let upstream = state
        .client
        .request(method, url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let upstream = match upstream {
        Ok(response) => response,
        Err(error) => return bad_gateway(&error.to_string()),
    };
    let mut response = Response::builder().status(upstream.status());
    for (name, value) in upstream.headers() {
        if !is_hop_by_hop(name) {
            response = response.header(name, value);
        }
    }
    let body = match upstream.bytes().await {
        Ok(body) => body,
        Err(error) => return bad_gateway(&error.to_string()),
    };
    response.body(Body::from(body)).expect("a valid response")
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    [header::CONNECTION, header::TRANSFER_ENCODING].contains(name)
        || name.as_str().eq_ignore_ascii_case("keep-alive")
}

fn bad_gateway(message: &str) -> Response {
    Response::builder()
        .status(StatusCode::BAD_GATEWAY)
        .body(Body::from(format!("FaultProxy: {message}")))
        .expect("a valid response")
}
