//! `tagpin pr`: what `pin --write` would write, committed on top of the checkout's HEAD to one
//! branch through the GitHub API, with one pull request kept up to date; the working tree is
//! left as it is. When nothing needs pinning any more, the open pull request is closed.
//!
//! Data flow: the local checkout (root, HEAD) → the remote base head, which must be that HEAD
//! → `pin::compute` (scan, resolve, plan, new texts; no writes) → the files from the
//! checkout's root with their modes → title, body, commit message → `GitHub::sync` with that
//! head as the expected base head (it refuses when the base moved on meanwhile), or
//! `close_stale`, or for `--dry-run` `plan_requests` (reads only).

mod git;
mod text;

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use serde::Serialize;
use tagpin_github::{
    FileChange, FileMode, GitHub, PlannedRequest, RollingPullRequest, SyncOutcome,
};

use crate::commands::pin::{self, PinReport};
use crate::resolve::Progress;
use crate::settings::{PrSettings, Settings};

/// What happened to the pull request (or, with `--dry-run`, what would).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PrOutcome {
    Opened,
    Updated,
    Unchanged,
    /// Nothing needs pinning; the open pull request was closed.
    Closed,
    /// Nothing needs pinning and no pull request was open, or nothing resolved.
    Nothing,
}

/// What `pr` did: the JSON document `pr --format json` prints. `outcome`, `number`, `url` and
/// `changed_files` are the GitHub Action's outputs (`action.yml`).
#[derive(Debug, Serialize)]
pub struct PrReport {
    pub outcome: PrOutcome,
    /// The pull request opened, updated, kept or closed (with `--dry-run`: the open one).
    pub number: Option<u64>,
    pub url: Option<String>,
    /// Paths from the repository's root of the files the pull request changes.
    pub changed_files: Vec<String>,
    pub dry_run: bool,
    /// Whether the branch was created or moved (with `--dry-run`: would be).
    pub pushed: bool,
    pub repo: String,
    pub base: String,
    /// The base head, which is the checkout's HEAD.
    pub base_head: String,
    pub branch: String,
    pub title: String,
    pub commit_message: String,
    pub body: String,
    /// With `--dry-run`: the write requests that would be sent, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<Vec<PlannedRequest>>,
    /// The `pin` report the pull request is made of (paths relative to the PATH given).
    pub pin: PinReport,
}

impl PrReport {
    /// Every reference resolved and every edit applied.
    pub fn complete(&self) -> bool {
        self.pin.complete()
    }
}

pub fn run(
    paths: &[PathBuf],
    pr: &PrSettings,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<PrReport> {
    super::check_paths(paths)?;
    let checkout = git::Checkout::find(paths)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The client's HTTP stack spawns its worker on the runtime it is built in. Only there:
    // `pin::compute` below starts a runtime of its own, which cannot nest.
    let github = {
        let _runtime = runtime.enter();
        GitHub::new(&pr.api_url, pr.token.clone(), pr.repo.clone())
            .context("cannot set up the GitHub client")?
    };

    // The commit is built on the remote base head with the checkout's files: were they
    // different commits, the pull request would silently undo whatever lies between them.
    let base = match &pr.base {
        Some(base) => base.clone(),
        None => runtime
            .block_on(github.default_branch())
            .with_context(|| format!("cannot read {}'s default branch", pr.repo))?,
    };
    let remote_head = runtime
        .block_on(github.branch_head(&base))
        .with_context(|| format!("cannot read the head of `{base}` in {}", pr.repo))?
        .with_context(|| format!("branch `{base}` does not exist in {}", pr.repo))?;
    if remote_head != checkout.head {
        bail!(
            "the checkout's HEAD ({}) is not the head of `{base}` in {} ({remote_head}): a commit \
             made from this checkout would undo or redo what lies between them; check out \
             `{base}` at {remote_head} (or pass the matching `--base`) and run again",
            checkout.head,
            pr.repo
        );
    }

    let mut report = pin::compute(paths, true, settings, progress)?;
    let mut files = Vec::new();
    for planned in std::mem::take(&mut report.planned) {
        let path = checkout.relative(&planned.source)?;
        match planned.rewrite() {
            Ok((_, new_text)) => files.push(FileChange {
                path,
                content: new_text.into_bytes(),
                mode: mode(&planned.source)?,
            }),
            Err(message) => report.not_written.push(crate::commands::FileError {
                path: planned.path.clone(),
                message,
            }),
        }
    }
    report.summary.files_changed = files.len();
    report.summary.files_not_written = report.not_written.len();
    let changed_files: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let dirty = checkout.changed_since_head(&changed_files)?;
    if !dirty.is_empty() {
        bail!(
            "{} differ from HEAD ({}): the pull request is built from HEAD's files; commit or \
             stash the changes first",
            if dirty.len() == 1 {
                "this file would be changed but its contents".to_owned()
            } else {
                format!("{} files would be changed but their contents", dirty.len())
            },
            dirty.join(", ")
        );
    }

    let located = |display: &str| -> String {
        report
            .sources
            .get(display)
            .and_then(|source| checkout.relative(source).ok())
            .unwrap_or_else(|| display.to_owned())
    };
    let edits = text::Located::all(&report.edits, |item| &item.path, located);
    let unresolved = text::Located::all(&report.unresolved, |item| &item.path, located);
    let command = reproduce(paths, &checkout, settings);
    let refused = text::Located::all(&report.missing_platform, |item| &item.path, located);
    let body = text::body(&edits, &unresolved, &refused, &command);
    let commit_message = text::commit_message(&pr.title, &edits);
    drop((edits, unresolved, refused));

    let plan = RollingPullRequest {
        base: Some(base.clone()),
        // The files are the checkout's, so the commit goes on the head checked above; `sync`
        // refuses if the base moved on since (another push while this ran).
        base_head: Some(remote_head.clone()),
        branch: pr.branch.clone(),
        files,
        commit_message: commit_message.clone(),
        title: pr.title.clone(),
        body: body.clone(),
        labels: pr.labels.clone(),
    };
    let mut pr_report = PrReport {
        outcome: PrOutcome::Nothing,
        number: None,
        url: None,
        changed_files,
        dry_run: pr.dry_run,
        pushed: false,
        repo: pr.repo.to_string(),
        base: base.clone(),
        base_head: remote_head,
        branch: pr.branch.clone(),
        title: pr.title.clone(),
        commit_message,
        body,
        requests: None,
        pin: report,
    };

    let synced = if plan.files.is_empty() {
        None
    } else if pr.dry_run {
        match runtime.block_on(github.plan_requests(&plan)) {
            Err(tagpin_github::Error::NoChanges { .. }) => None,
            other => Some(SyncResult::Planned(base_moved(other)?)),
        }
    } else {
        match runtime.block_on(github.sync(&plan)) {
            Err(tagpin_github::Error::NoChanges { .. }) => None,
            other => Some(SyncResult::Synced(base_moved(other)?)),
        }
    };
    match synced {
        Some(SyncResult::Synced(outcome)) => {
            let (kind, number, url, pushed) = match outcome {
                SyncOutcome::Opened { number, url } => (PrOutcome::Opened, number, url, true),
                SyncOutcome::Updated {
                    number,
                    url,
                    pushed,
                } => (PrOutcome::Updated, number, url, pushed),
                SyncOutcome::Unchanged { number, url } => {
                    (PrOutcome::Unchanged, number, url, false)
                }
            };
            pr_report.outcome = kind;
            pr_report.number = Some(number);
            pr_report.url = Some(url);
            pr_report.pushed = pushed;
        }
        Some(SyncResult::Planned(planned)) => {
            pr_report.outcome = match &planned.pull_request {
                None => PrOutcome::Opened,
                Some(_) if planned.requests.is_empty() => PrOutcome::Unchanged,
                Some(_) => PrOutcome::Updated,
            };
            pr_report.number = planned.pull_request.as_ref().map(|p| p.number);
            pr_report.url = planned.pull_request.map(|p| p.url);
            pr_report.pushed = planned.push;
            pr_report.requests = Some(planned.requests);
        }
        None => {
            pr_report.changed_files.clear();
            // Close only when nothing needs pinning: not when lookups failed, which says
            // nothing about whether the open pull request is still needed.
            if pr_report.complete() {
                close(&runtime, &github, &mut pr_report)?;
            } else if pr.dry_run {
                pr_report.requests = Some(Vec::new());
            }
        }
    }
    Ok(pr_report)
}

/// `sync`'s refusal to build on a base that moved since the HEAD check, said for `pr`.
fn base_moved<T>(result: Result<T, tagpin_github::Error>) -> anyhow::Result<T> {
    match result {
        Err(tagpin_github::Error::BaseMoved {
            base,
            expected,
            found,
        }) => bail!(
            "the base branch `{base}` moved from {expected} to {found} while tagpin ran; nothing \
             was pushed; run it again on a fresh checkout"
        ),
        other => Ok(other?),
    }
}

enum SyncResult {
    Synced(SyncOutcome),
    Planned(tagpin_github::Plan),
}

/// Nothing to pin: closes the open pull request from the branch (with `--dry-run`, says which
/// one would be closed).
fn close(
    runtime: &tokio::runtime::Runtime,
    github: &GitHub,
    report: &mut PrReport,
) -> anyhow::Result<()> {
    let comment = text::close_comment(&report.base, &report.base_head);
    if report.dry_run {
        let open = runtime.block_on(github.open_pull_requests(&report.branch))?;
        let repo = format!("/repos/{}", report.repo);
        let mut requests = Vec::new();
        for pull in &open {
            requests.push(PlannedRequest {
                method: tagpin_github::Method::Post,
                path: format!("{repo}/issues/{}/comments", pull.number),
                purpose: "comment why it closes".to_owned(),
            });
            requests.push(PlannedRequest {
                method: tagpin_github::Method::Patch,
                path: format!("{repo}/pulls/{}", pull.number),
                purpose: "close the pull request".to_owned(),
            });
        }
        if let Some(first) = open.into_iter().next() {
            report.outcome = PrOutcome::Closed;
            report.number = Some(first.number);
            report.url = Some(first.url);
        }
        report.requests = Some(requests);
        return Ok(());
    }
    if let Some(number) = runtime.block_on(github.close_stale(&report.branch, &comment))? {
        report.outcome = PrOutcome::Closed;
        report.number = Some(number);
    }
    Ok(())
}

/// The file's mode as git records it: executable when any execute bit is set.
fn mode(path: &std::path::Path) -> anyhow::Result<FileMode> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let metadata = std::fs::metadata(path)
            .with_context(|| format!("cannot read the mode of `{}`", path.display()))?;
        Ok(FileMode::from_unix(metadata.permissions().mode()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(FileMode::Regular)
    }
}

/// `tagpin pin --write PATHS…` from the repository's root, with the flags that change what it
/// resolves (config file and mirrors).
fn reproduce(paths: &[PathBuf], checkout: &git::Checkout, settings: &Settings) -> String {
    let mut words = vec!["tagpin".to_owned(), "pin".to_owned(), "--write".to_owned()];
    for path in paths {
        words.push(
            checkout
                .relative(path)
                .unwrap_or_else(|_| path.display().to_string()),
        );
    }
    if let Some(config) = &settings.config_file {
        let shown = checkout
            .relative(config)
            .unwrap_or_else(|_| config.display().to_string());
        if shown != crate::config::FILE_NAME {
            words.push("--config".to_owned());
            words.push(shown);
        }
    }
    for mirror in &settings.mirrors {
        words.push("--mirror".to_owned());
        words.push(mirror.to_string());
    }
    words
        .iter()
        .map(|word| shell_quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
