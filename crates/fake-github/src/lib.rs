//! A stateful fake of the GitHub REST API endpoints tagpin uses, served on loopback.
//!
//! It keeps real git objects (blobs, trees, commits with git-compatible SHA-1 ids), refs, pull
//! requests, labels and comments, answers with bodies shaped like GitHub's (trimmed from the
//! `OpenAPI` examples to the fields clients read plus the usual ones), records every request it
//! receives, and injects faults on demand: a plain failure before a request is applied, a lost
//! response after it was applied, and both kinds of rate limiting.
//!
//! ```no_run
//! # async fn demo() {
//! use tagpin_fake_github::{FakeGitHub, Fault};
//! let github = FakeGitHub::start().await;
//! github.seed_repo("acme/app", "main", "1111111111111111111111111111111111111111",
//!     &[("deploy.yaml", b"image: nginx\n", "100644")]);
//! github.inject(Fault::after("POST", "/repos/acme/app/pulls", 502));
//! // point the client at github.url() ...
//! # }
//! ```

mod git;
mod server;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

use crate::git::{Commit, Leaves, Store};

/// How the fake is served.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A path prefix the API is mounted under, like GitHub Enterprise Server's `/api/v3`.
    /// Empty for github.com's layout.
    pub mount: String,
    /// When set, only `Authorization: Bearer <token>` or `token <token>` with exactly this
    /// token is accepted; otherwise any non-empty token is. Missing credentials get 401.
    pub token: Option<String>,
}

/// One request as the fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub method: String,
    /// The path as received, mount prefix and query string included.
    pub path: String,
}

/// A pull request as the fake holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    /// `open` or `closed`.
    pub state: String,
    pub title: String,
    pub body: Option<String>,
    /// The head branch name (same repository).
    pub head: String,
    pub base: String,
    pub labels: Vec<String>,
}

/// A commit as the fake holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
}

/// When an injected fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// The request is refused and not applied.
    BeforeApply,
    /// The request is applied, then the response is replaced: a lost response.
    AfterApply,
}

/// A one-shot fault for the next request whose method and path (below the mount, without the
/// query) match.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: String,
    pub path_prefix: String,
    pub status: u16,
    pub timing: Timing,
    pub headers: Vec<(String, String)>,
    pub message: String,
}

impl Fault {
    /// The next matching request fails with `status` and is not applied.
    pub fn before(method: &str, path_prefix: &str, status: u16) -> Self {
        Self {
            method: method.to_owned(),
            path_prefix: path_prefix.to_owned(),
            status,
            timing: Timing::BeforeApply,
            headers: Vec::new(),
            message: "Server Error".to_owned(),
        }
    }

    /// The next matching request is applied, but the client sees `status`.
    pub fn after(method: &str, path_prefix: &str, status: u16) -> Self {
        Self {
            timing: Timing::AfterApply,
            ..Self::before(method, path_prefix, status)
        }
    }

    /// Primary rate limit: 403 with `x-ratelimit-remaining: 0` and a reset `reset_in_secs` from
    /// now (epoch seconds, as GitHub sends it).
    pub fn rate_limited(method: &str, path_prefix: &str, reset_in_secs: u64) -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            headers: vec![
                ("x-ratelimit-limit".to_owned(), "5000".to_owned()),
                ("x-ratelimit-remaining".to_owned(), "0".to_owned()),
                ("x-ratelimit-used".to_owned(), "5000".to_owned()),
                ("x-ratelimit-resource".to_owned(), "core".to_owned()),
                (
                    "x-ratelimit-reset".to_owned(),
                    (now + reset_in_secs).to_string(),
                ),
            ],
            message: "API rate limit exceeded for user ID 1.".to_owned(),
            ..Self::before(method, path_prefix, 403)
        }
    }

    /// Secondary rate limit: 429 with `retry-after`.
    pub fn too_many_requests(method: &str, path_prefix: &str, retry_after_secs: u64) -> Self {
        Self {
            headers: vec![("retry-after".to_owned(), retry_after_secs.to_string())],
            message: "You have exceeded a secondary rate limit. Please wait a few minutes before \
                      you try again."
                .to_owned(),
            ..Self::before(method, path_prefix, 429)
        }
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        self.method.eq_ignore_ascii_case(method) && path.starts_with(&self.path_prefix)
    }
}

/// A push by someone else that the fake makes itself right after answering the `nth` request
/// whose method and path (below the mount, without the query) match; see
/// [`FakeGitHub::push_after`].
#[derive(Debug, Clone)]
pub struct PushAfter {
    pub method: String,
    pub path_prefix: String,
    /// Which matching request, counting from 1, is followed by the push.
    pub nth: usize,
    /// `owner/name`.
    pub repo: String,
    pub branch: String,
    /// `(path, content, mode)` written over the branch's tree, as in
    /// [`FakeGitHub::push_commit`].
    pub files: Vec<(String, Vec<u8>, String)>,
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    pub options: Options,
    /// `http://127.0.0.1:PORT`
    pub origin: String,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in a handler must not hide the state from the test that wants to look at it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn api_url(&self) -> String {
        format!("{}{}", self.origin, self.options.mount)
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub repos: BTreeMap<String, Repo>,
    pub requests: Vec<RecordedRequest>,
    pub faults: Vec<Fault>,
    pub pushes: Vec<PushAfter>,
    pub clock: i64,
    pub next_id: u64,
}

impl State {
    pub fn tick(&mut self) -> i64 {
        self.clock += 1;
        1_700_000_000 + self.clock
    }

    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn take_fault(&mut self, method: &str, path: &str) -> Option<Fault> {
        let index = self.faults.iter().position(|f| f.matches(method, path))?;
        Some(self.faults.remove(index))
    }

    /// Counts the request against the queued pushes and makes those whose turn it was.
    pub fn run_pushes(&mut self, method: &str, path: &str) {
        let mut due = Vec::new();
        self.pushes.retain_mut(|push| {
            if !push.method.eq_ignore_ascii_case(method) || !path.starts_with(&push.path_prefix) {
                return true;
            }
            push.nth = push.nth.saturating_sub(1);
            if push.nth == 0 {
                due.push(push.clone());
                return false;
            }
            true
        });
        for push in due {
            let files: Vec<(&str, &[u8], &str)> = push
                .files
                .iter()
                .map(|(path, content, mode)| (path.as_str(), content.as_slice(), mode.as_str()))
                .collect();
            self.add_commit(&push.repo, &push.branch, None, &files);
        }
    }

    pub fn add_commit(
        &mut self,
        full_name: &str,
        branch: &str,
        sha: Option<&str>,
        files: &[(&str, &[u8], &str)],
    ) -> String {
        let time = self.tick();
        let repo = self.repos.get_mut(full_name).expect("unknown repository");
        let key = format!("heads/{branch}");
        let parent = repo.refs.get(&key).cloned();
        let base = parent
            .as_deref()
            .and_then(|sha| repo.store.commit(sha))
            .map(|c| repo.store.leaves(&c.tree.clone()))
            .unwrap_or_default();
        let leaves = put_files(&mut repo.store, base, files);
        let tree = repo.store.build_tree(&leaves);
        let commit = Commit {
            tree,
            parents: parent.into_iter().collect(),
            message: "Push by someone else".to_owned(),
            time,
        };
        let sha = match sha {
            Some(sha) => {
                repo.store
                    .objects
                    .insert(sha.to_owned(), git::Object::Commit(commit));
                sha.to_owned()
            }
            None => repo.store.put_commit(commit),
        };
        repo.refs.insert(key, sha.clone());
        sha
    }
}

pub(crate) struct Repo {
    pub owner: String,
    pub name: String,
    pub id: u64,
    pub default_branch: String,
    pub store: Store,
    /// `heads/main` → commit sha.
    pub refs: BTreeMap<String, String>,
    pub pulls: Vec<Pull>,
    pub comments: Vec<Comment>,
    pub next_number: u64,
}

pub(crate) struct Pull {
    pub id: u64,
    pub number: u64,
    pub open: bool,
    pub title: String,
    pub body: Option<String>,
    pub head: String,
    pub base: String,
    pub labels: Vec<String>,
    pub created: i64,
    pub updated: i64,
}

pub(crate) struct Comment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub created: i64,
}

/// The running fake. Dropping it stops the server.
pub struct FakeGitHub {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
}

impl std::fmt::Debug for FakeGitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGitHub")
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

impl FakeGitHub {
    /// Serves the API at the root of `http://127.0.0.1:<random port>`.
    pub async fn start() -> Self {
        Self::start_with(Options::default()).await
    }

    /// Serves with `options` (a mount prefix such as `/api/v3`, a required token).
    pub async fn start_with(mut options: Options) -> Self {
        options.mount = options.mount.trim_end_matches('/').to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port for the fake GitHub");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            options,
            origin: format!("http://{addr}"),
        });
        let (shutdown, stopped) = oneshot::channel::<()>();
        let app = server::router(Arc::clone(&shared));
        tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(error) = served {
                tracing::warn!(%error, "fake GitHub server stopped");
            }
        });
        Self {
            shared,
            addr,
            shutdown: Some(shutdown),
        }
    }

    /// The API base URL to hand to a client, mount prefix included, without a trailing slash.
    pub fn url(&self) -> String {
        self.shared.api_url()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Creates repository `full_name` (`owner/name`) whose `default_branch` points at a commit
    /// with id `head_sha` (given explicitly so it can equal a local `git rev-parse HEAD`) holding
    /// exactly `files` (`path`, content, mode such as `100644`).
    pub fn seed_repo(
        &self,
        full_name: &str,
        default_branch: &str,
        head_sha: &str,
        files: &[(&str, &[u8], &str)],
    ) {
        let (owner, name) = full_name
            .split_once('/')
            .expect("seed_repo takes owner/name");
        let mut state = self.shared.lock();
        let id = state.id();
        let time = state.tick();
        let mut store = Store::default();
        let leaves = put_files(&mut store, Leaves::new(), files);
        let tree = store.build_tree(&leaves);
        store.objects.insert(
            head_sha.to_owned(),
            git::Object::Commit(Commit {
                tree,
                parents: Vec::new(),
                message: "Initial commit".to_owned(),
                time,
            }),
        );
        let mut refs = BTreeMap::new();
        refs.insert(format!("heads/{default_branch}"), head_sha.to_owned());
        state.repos.insert(
            full_name.to_owned(),
            Repo {
                owner: owner.to_owned(),
                name: name.to_owned(),
                id,
                default_branch: default_branch.to_owned(),
                store,
                refs,
                pulls: Vec::new(),
                comments: Vec::new(),
                next_number: 1,
            },
        );
    }

    /// Adds a commit on `branch` (created from nothing if missing) that writes `files` over its
    /// current tree, as a push by someone else would; returns the new commit's sha.
    pub fn push_commit(
        &self,
        full_name: &str,
        branch: &str,
        files: &[(&str, &[u8], &str)],
    ) -> String {
        self.add_commit(full_name, branch, None, files)
    }

    /// Like [`FakeGitHub::push_commit`], with the commit id given, so that it can equal a local
    /// `git rev-parse HEAD` after the same change was committed locally.
    pub fn push_commit_with_sha(
        &self,
        full_name: &str,
        branch: &str,
        sha: &str,
        files: &[(&str, &[u8], &str)],
    ) {
        self.add_commit(full_name, branch, Some(sha), files);
    }

    fn add_commit(
        &self,
        full_name: &str,
        branch: &str,
        sha: Option<&str>,
        files: &[(&str, &[u8], &str)],
    ) -> String {
        self.shared.lock().add_commit(full_name, branch, sha, files)
    }

    /// Queues a one-shot fault.
    pub fn inject(&self, fault: Fault) {
        self.shared.lock().faults.push(fault);
    }

    /// Queues a one-shot push by someone else that the fake makes itself, right after it has
    /// answered the `nth` request (counting from 1) matching the trigger: a race with the
    /// client at a chosen point of its call sequence.
    pub fn push_after(&self, push: PushAfter) {
        self.shared.lock().pushes.push(push);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Every request received so far as `METHOD /path?query`.
    pub fn calls(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    /// The commit `branch` points at.
    pub fn branch_head(&self, full_name: &str, branch: &str) -> Option<String> {
        let state = self.shared.lock();
        state
            .repos
            .get(full_name)?
            .refs
            .get(&format!("heads/{branch}"))
            .cloned()
    }

    pub fn commit(&self, full_name: &str, sha: &str) -> Option<CommitInfo> {
        let state = self.shared.lock();
        let commit = state.repos.get(full_name)?.store.commit(sha)?;
        Some(CommitInfo {
            tree: commit.tree.clone(),
            parents: commit.parents.clone(),
            message: commit.message.clone(),
        })
    }

    /// The files of `commit`: path → (content, mode).
    pub fn files_at(&self, full_name: &str, commit: &str) -> BTreeMap<String, (Vec<u8>, String)> {
        let state = self.shared.lock();
        let Some(repo) = state.repos.get(full_name) else {
            return BTreeMap::new();
        };
        let Some(commit) = repo.store.commit(commit) else {
            return BTreeMap::new();
        };
        repo.store
            .leaves(&commit.tree)
            .into_iter()
            .map(|(path, (mode, sha))| {
                let content = repo.store.blob(&sha).cloned().unwrap_or_default();
                (path, (content, mode))
            })
            .collect()
    }

    /// All pull requests, open and closed, by number.
    pub fn pulls(&self, full_name: &str) -> Vec<PullRequest> {
        let state = self.shared.lock();
        state
            .repos
            .get(full_name)
            .map(|repo| {
                repo.pulls
                    .iter()
                    .map(|p| PullRequest {
                        number: p.number,
                        state: if p.open { "open" } else { "closed" }.to_owned(),
                        title: p.title.clone(),
                        body: p.body.clone(),
                        head: p.head.clone(),
                        base: p.base.clone(),
                        labels: p.labels.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn open_pulls(&self, full_name: &str) -> Vec<PullRequest> {
        let mut pulls = self.pulls(full_name);
        pulls.retain(|p| p.state == "open");
        pulls
    }

    /// The bodies of the comments on issue or pull request `number`, oldest first.
    pub fn comments(&self, full_name: &str, number: u64) -> Vec<String> {
        let state = self.shared.lock();
        state
            .repos
            .get(full_name)
            .map(|repo| {
                repo.comments
                    .iter()
                    .filter(|c| c.issue == number)
                    .map(|c| c.body.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

fn put_files(store: &mut Store, mut leaves: Leaves, files: &[(&str, &[u8], &str)]) -> Leaves {
    for (path, content, mode) in files {
        let sha = store.put_blob(content.to_vec());
        leaves.insert((*path).to_owned(), ((*mode).to_owned(), sha));
    }
    leaves
}
