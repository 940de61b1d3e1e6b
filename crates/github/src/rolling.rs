//! The rolling pull request: one branch, one pull request, refreshed in place.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::GitHub;
use crate::api::{Commit, Pull, check_branch};
use crate::error::{Error, Method};
use crate::git::{self, Entry};

/// A file's mode in git. tagpin keeps the mode the file has: an executable script stays
/// executable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum FileMode {
    /// `100644`
    Regular,
    /// `100755`
    Executable,
}

impl FileMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FileMode::Regular => "100644",
            FileMode::Executable => "100755",
        }
    }

    /// From Unix permission bits: executable when any execute bit is set, as git records it.
    pub fn from_unix(mode: u32) -> Self {
        if mode & 0o111 == 0 {
            FileMode::Regular
        } else {
            FileMode::Executable
        }
    }
}

impl From<FileMode> for &'static str {
    fn from(mode: FileMode) -> Self {
        mode.as_str()
    }
}

/// A file to write on the branch: its path from the repository root (`/`-separated), its new
/// content and its mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub content: Vec<u8>,
    pub mode: FileMode,
}

/// What the rolling pull request should hold.
#[derive(Debug, Clone)]
pub struct RollingPullRequest {
    /// The branch to build on and to merge into; the repository's default branch when `None`.
    pub base: Option<String>,
    /// The base head the files were computed from (a local checkout's HEAD, say). When set,
    /// the commit is built on this commit, not on whatever the base branch points at when
    /// `sync` reads it, and before writing anything `sync` checks that the base branch still
    /// points at it: if it moved, [`Error::BaseMoved`] and nothing is pushed (the files would
    /// silently revert what was pushed in between). When `None`, the base head `sync` reads.
    pub base_head: Option<String>,
    /// The branch tagpin owns and force-moves, such as `tagpin/digests`.
    pub branch: String,
    pub files: Vec<FileChange>,
    pub commit_message: String,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
}

/// What [`GitHub::sync`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum SyncOutcome {
    /// A pull request was opened (the branch was created or moved first).
    Opened { number: u64, url: String },
    /// The open pull request was kept: `pushed` tells whether the branch moved; its title,
    /// body or base may have been edited.
    Updated {
        number: u64,
        url: String,
        pushed: bool,
    },
    /// The branch already held this content and the pull request this text.
    Unchanged { number: u64, url: String },
}

/// An existing pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullRequestRef {
    pub number: u64,
    pub url: String,
}

/// A write request `sync` would send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedRequest {
    pub method: Method,
    /// Path below the API base; `{number}` stands for a pull request not opened yet.
    pub path: String,
    pub purpose: String,
}

/// What `sync` would do, found with GET requests only (for `--dry-run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub base: String,
    pub base_head: String,
    pub branch: String,
    pub branch_head: Option<String>,
    /// The id of the tree the commit would have, computed locally.
    pub tree: String,
    /// Whether a commit would be made and the branch created or moved.
    pub push: bool,
    pub pull_request: Option<PullRequestRef>,
    /// The write requests, in order.
    pub requests: Vec<PlannedRequest>,
}

/// What the read-only phase found.
struct Survey {
    base: String,
    base_head: String,
    /// `base_head` was given by the caller, not read: check it before pushing.
    expected: bool,
    base_tree: String,
    /// path → (mode, blob id), computed locally.
    changes: BTreeMap<String, (String, String)>,
    /// The root tree the commit will have, computed locally.
    tree: String,
    branch: Option<Commit>,
    pull: Option<Pull>,
}

impl Survey {
    /// The branch's head already has this tree on the current base head.
    fn holds(&self, tree: &str) -> bool {
        self.branch.as_ref().is_some_and(|head| {
            head.tree.sha == tree
                && head.parents.len() == 1
                && head.parents[0].sha == self.base_head
        })
    }
}

/// What to do after the survey; shared by `sync` and `plan_requests` so they cannot disagree.
struct Steps {
    push: bool,
    /// Fields of the open pull request to change.
    edit: Option<Value>,
    open: bool,
    labels: Vec<String>,
}

fn steps(survey: &Survey, plan: &RollingPullRequest) -> Steps {
    let push = !survey.holds(&survey.tree);
    let (edit, open, have) = match &survey.pull {
        Some(pull) => {
            let mut fields = Map::new();
            if pull.title != plan.title {
                fields.insert("title".to_owned(), json!(plan.title));
            }
            if pull.body.as_deref().unwrap_or("") != plan.body {
                fields.insert("body".to_owned(), json!(plan.body));
            }
            if pull.base.branch != survey.base {
                fields.insert("base".to_owned(), json!(survey.base));
            }
            let have: Vec<String> = pull.labels.iter().map(|l| l.name.clone()).collect();
            (
                (!fields.is_empty()).then_some(Value::Object(fields)),
                false,
                have,
            )
        }
        None => (None, true, Vec::new()),
    };
    let mut labels = Vec::new();
    for label in &plan.labels {
        if !have.contains(label) && !labels.contains(label) {
            labels.push(label.clone());
        }
    }
    Steps {
        push,
        edit,
        open,
        labels,
    }
}

/// A commit id as it goes into a request path: SHA-1 or SHA-256, lowercase hex.
fn check_commit(sha: &str) -> Result<(), Error> {
    let ok = matches!(sha.len(), 40 | 64)
        && sha
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidCommit(sha.to_owned()))
    }
}

fn check_path(path: &str) -> Result<(), Error> {
    let ok = !path.is_empty()
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && part != ".git");
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidPath(path.to_owned()))
    }
}

impl GitHub {
    /// Brings the branch and its pull request to `plan`:
    /// blobs → a tree on the base commit's tree → a commit whose parent is the base head →
    /// create the branch or move it with force → update the open pull request from the branch
    /// (title, body, base) or open one → add missing labels. Nothing is written to git when the
    /// branch's head already has the same tree on the same parent.
    ///
    /// With [`RollingPullRequest::base_head`] set, that commit is the base, the base ref is not
    /// read up front, and it is read once just before the first write: when it points elsewhere
    /// by then, [`Error::BaseMoved`] and nothing is written.
    pub async fn sync(&self, plan: &RollingPullRequest) -> Result<SyncOutcome, Error> {
        let survey = self.survey(plan).await?;
        let steps = steps(&survey, plan);
        let mut pushed = false;
        if steps.push {
            self.check_base(&survey).await?;
            pushed = self.push(&survey, plan).await?;
        }
        let (pull, edited) = match (&survey.pull, steps.edit) {
            (Some(pull), Some(fields)) => {
                tracing::info!(number = pull.number, "updating the pull request");
                (self.update_pull(pull.number, &fields).await?, true)
            }
            (Some(pull), None) => (pull.clone(), false),
            (None, _) => (self.open_pull(plan, &survey.base).await?, false),
        };
        let missing: Vec<String> = plan
            .labels
            .iter()
            .filter(|l| !pull.labels.iter().any(|have| &&have.name == l))
            .cloned()
            .collect();
        if !missing.is_empty() {
            self.add_labels(pull.number, &missing).await?;
        }
        let (number, url) = (pull.number, pull.html_url);
        Ok(if steps.open {
            SyncOutcome::Opened { number, url }
        } else if pushed || edited {
            SyncOutcome::Updated {
                number,
                url,
                pushed,
            }
        } else {
            SyncOutcome::Unchanged { number, url }
        })
    }

    /// What [`GitHub::sync`] would do, using GET requests only.
    pub async fn plan_requests(&self, plan: &RollingPullRequest) -> Result<Plan, Error> {
        let survey = self.survey(plan).await?;
        let steps = steps(&survey, plan);
        if steps.push {
            // The same read `sync` makes before pushing, so that a dry run sees the race too.
            self.check_base(&survey).await?;
        }
        let repo = format!("/repos/{}", self.repo);
        let mut requests = Vec::new();
        let mut add = |method, path: String, purpose: String| {
            requests.push(PlannedRequest {
                method,
                path,
                purpose,
            });
        };
        if steps.push {
            for path in survey.changes.keys() {
                add(
                    Method::Post,
                    format!("{repo}/git/blobs"),
                    format!("blob for {path}"),
                );
            }
            add(
                Method::Post,
                format!("{repo}/git/trees"),
                format!("tree on {}", survey.base_tree),
            );
            add(
                Method::Post,
                format!("{repo}/git/commits"),
                format!("commit on {}", survey.base_head),
            );
            if survey.branch.is_some() {
                add(
                    Method::Patch,
                    format!("{repo}/git/refs/heads/{}", plan.branch),
                    "move the branch with force".to_owned(),
                );
            } else {
                add(
                    Method::Post,
                    format!("{repo}/git/refs"),
                    format!("create refs/heads/{}", plan.branch),
                );
            }
        }
        let number = survey
            .pull
            .as_ref()
            .map_or_else(|| "{number}".to_owned(), |p| p.number.to_string());
        if steps.open {
            add(
                Method::Post,
                format!("{repo}/pulls"),
                format!("open a pull request into {}", survey.base),
            );
        } else if let Some(fields) = &steps.edit {
            let names: Vec<&str> = fields
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.as_str())
                .collect();
            add(
                Method::Patch,
                format!("{repo}/pulls/{number}"),
                format!("edit {}", names.join(", ")),
            );
        }
        if !steps.labels.is_empty() {
            add(
                Method::Post,
                format!("{repo}/issues/{number}/labels"),
                format!("add labels {}", steps.labels.join(", ")),
            );
        }
        Ok(Plan {
            base: survey.base,
            base_head: survey.base_head,
            branch: plan.branch.clone(),
            branch_head: survey.branch.map(|c| c.sha),
            tree: survey.tree,
            push: steps.push,
            pull_request: survey.pull.map(|p| PullRequestRef {
                number: p.number,
                url: p.html_url,
            }),
            requests,
        })
    }

    /// Nothing needs pinning any more: closes each open pull request from `branch` with
    /// `comment`, and returns the number of the first one closed. The branch is left in place.
    pub async fn close_stale(&self, branch: &str, comment: &str) -> Result<Option<u64>, Error> {
        check_branch(branch)?;
        let mut closed = None;
        for pull in self.open_pulls(branch).await? {
            tracing::info!(
                number = pull.number,
                "closing the pull request: nothing to pin"
            );
            self.comment_once(pull.number, comment).await?;
            self.update_pull(pull.number, &json!({"state": "closed"}))
                .await?;
            closed.get_or_insert(pull.number);
        }
        Ok(closed)
    }

    /// The open pull requests from `branch` (what [`GitHub::close_stale`] would close), with
    /// one GET.
    pub async fn open_pull_requests(&self, branch: &str) -> Result<Vec<PullRequestRef>, Error> {
        check_branch(branch)?;
        Ok(self
            .open_pulls(branch)
            .await?
            .into_iter()
            .map(|pull| PullRequestRef {
                number: pull.number,
                url: pull.html_url,
            })
            .collect())
    }

    async fn survey(&self, plan: &RollingPullRequest) -> Result<Survey, Error> {
        check_branch(&plan.branch)?;
        let base = match &plan.base {
            Some(base) => {
                check_branch(base)?;
                base.clone()
            }
            None => self.default_branch().await?,
        };
        let mut changes = BTreeMap::new();
        for file in &plan.files {
            check_path(&file.path)?;
            changes.insert(
                file.path.clone(),
                (file.mode.as_str().to_owned(), git::blob_id(&file.content)),
            );
        }
        // An expected head is checked just before the push (`check_base`), not here: the
        // later the check, the narrower the window; and a run that pushes nothing does not
        // need it.
        let (base_head, expected) = match &plan.base_head {
            Some(head) => {
                check_commit(head)?;
                (head.clone(), true)
            }
            None => (self.read_base_head(&base).await?, false),
        };
        let base_tree = self.commit(&base_head).await?.tree.sha;
        let tree = self.tree_after(&base_tree, &changes).await?;
        if tree == base_tree {
            return Err(Error::NoChanges { base });
        }
        let branch = match self.branch_head(&plan.branch).await? {
            Some(sha) => Some(self.commit(&sha).await?),
            None => None,
        };
        let pull = self.open_pulls(&plan.branch).await?.into_iter().next();
        Ok(Survey {
            base,
            base_head,
            expected,
            base_tree,
            changes,
            tree,
            branch,
            pull,
        })
    }

    async fn read_base_head(&self, base: &str) -> Result<String, Error> {
        self.branch_head(base)
            .await?
            .ok_or_else(|| Error::BranchNotFound {
                repo: self.repo.to_string(),
                branch: base.to_owned(),
            })
    }

    /// With an expected base head: the base branch must still point at it, or the commit
    /// about to be built would be stale. One GET; nothing is written before it.
    async fn check_base(&self, survey: &Survey) -> Result<(), Error> {
        if !survey.expected {
            return Ok(());
        }
        let found = self.read_base_head(&survey.base).await?;
        if found == survey.base_head {
            return Ok(());
        }
        tracing::warn!(base = %survey.base, expected = %survey.base_head, %found, "the base branch moved; pushing nothing");
        Err(Error::BaseMoved {
            base: survey.base.clone(),
            expected: survey.base_head.clone(),
            found,
        })
    }

    /// The id of the root tree after `changes`, computed locally from the trees of the
    /// directories on the changed paths (one GET each).
    async fn tree_after(
        &self,
        base_tree: &str,
        changes: &BTreeMap<String, (String, String)>,
    ) -> Result<String, Error> {
        let mut dirs: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        for dir in git::directories(changes.keys().map(String::as_str)) {
            let sha = if dir.is_empty() {
                Some(base_tree.to_owned())
            } else {
                let (parent, name) = dir.rsplit_once('/').unwrap_or(("", &dir));
                dirs.get(parent).and_then(|entries| {
                    entries
                        .iter()
                        .find(|e| e.name == name && e.mode.trim_start_matches('0') == "40000")
                        .map(|e| e.sha.clone())
                })
            };
            let entries = match sha {
                Some(sha) => self.tree_entries(&sha).await?,
                None => Vec::new(),
            };
            dirs.insert(dir, entries);
        }
        Ok(git::root_after(dirs, changes))
    }

    /// Writes blobs, tree and commit and moves the branch. Returns false when the tree GitHub
    /// made turns out to be on the branch already (the local id disagreed).
    async fn push(&self, survey: &Survey, plan: &RollingPullRequest) -> Result<bool, Error> {
        let mut entries = Vec::new();
        for (path, (mode, local)) in &survey.changes {
            // `changes` was built from `files`, a later duplicate of a path winning.
            let Some(file) = plan.files.iter().rev().find(|f| &f.path == path) else {
                continue;
            };
            let sha = self.create_blob(&file.content).await?;
            if &sha != local {
                tracing::warn!(%path, "GitHub's blob id differs from the local one");
            }
            entries.push(json!({"path": path, "mode": mode, "type": "blob", "sha": sha}));
        }
        let tree = self.create_tree(&survey.base_tree, &entries).await?;
        if tree != survey.tree {
            tracing::warn!(local = %survey.tree, github = %tree, "GitHub's tree id differs from the local one");
            if survey.holds(&tree) {
                return Ok(false);
            }
        }
        let commit = self
            .create_commit(&plan.commit_message, &tree, &survey.base_head)
            .await?;
        if survey.branch.is_some() {
            tracing::info!(branch = %plan.branch, %commit, "moving the branch");
            self.force_ref(&plan.branch, &commit).await?;
        } else {
            tracing::info!(branch = %plan.branch, %commit, "creating the branch");
            self.create_branch(&plan.branch, &commit).await?;
        }
        Ok(true)
    }

    /// Creates the branch; a lost response is followed by a lookup, not a blind second create.
    async fn create_branch(&self, branch: &str, commit: &str) -> Result<(), Error> {
        match self.create_ref(branch, commit).await {
            Ok(()) => Ok(()),
            // It appeared since the survey (another run, or a create whose answer was lost
            // earlier): the branch is tagpin's own, so move it.
            Err(error)
                if error.status() == Some(422) && error.message().contains("already exists") =>
            {
                tracing::warn!(%error, "the branch exists already; moving it");
                self.force_ref(branch, commit).await
            }
            Err(error) if error.is_lost_response() => {
                tracing::warn!(%error, "lost the answer to creating the branch; looking it up");
                match self.branch_head(branch).await? {
                    Some(head) if head == commit => Ok(()),
                    Some(_) => self.force_ref(branch, commit).await,
                    // Not applied: one more create, known to be needed.
                    None => self.create_ref(branch, commit).await,
                }
            }
            Err(error) => Err(error),
        }
    }

    /// Opens the pull request; a lost response (or GitHub's "already exists") is followed by a
    /// lookup of the open pull request from the branch, so there is never a second one.
    async fn open_pull(&self, plan: &RollingPullRequest, base: &str) -> Result<Pull, Error> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let error = match self
                .create_pull(&plan.branch, base, &plan.title, &plan.body)
                .await
            {
                Ok(pull) => {
                    tracing::info!(number = pull.number, "opened the pull request");
                    return Ok(pull);
                }
                Err(error) => error,
            };
            let exists = error.status() == Some(422) && error.message().contains("already exists");
            if !(error.is_lost_response() || exists) {
                return Err(error);
            }
            tracing::warn!(%error, "opening the pull request did not answer; looking it up");
            if let Some(pull) = self.open_pulls(&plan.branch).await?.into_iter().next() {
                return Ok(pull);
            }
            // Not there: the create was not applied. Try once more, never more.
            if attempt >= 2 || exists {
                return Err(error);
            }
        }
    }

    /// Posts a comment once; after a lost response it posts again only if the comment is not
    /// there.
    async fn comment_once(&self, number: u64, body: &str) -> Result<(), Error> {
        match self.create_comment(number, body).await {
            Err(error) if error.is_lost_response() => {
                tracing::warn!(%error, "lost the answer to commenting; looking for the comment");
                let comments = self.comments(number).await?;
                if comments.iter().any(|c| c.body.as_deref() == Some(body)) {
                    Ok(())
                } else {
                    self.create_comment(number, body).await
                }
            }
            other => other,
        }
    }
}
