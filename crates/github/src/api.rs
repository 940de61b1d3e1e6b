//! One method per endpoint, each reading only the fields tagpin uses.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{Error, Method};
use crate::git::Entry;
use crate::transport::Replay;
use crate::{GitHub, RepoName};

#[derive(Debug, Deserialize)]
struct Repository {
    default_branch: String,
}

#[derive(Debug, Deserialize)]
struct Reference {
    object: ShaOnly,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ShaOnly {
    pub sha: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Commit {
    pub sha: String,
    pub tree: ShaOnly,
    pub parents: Vec<ShaOnly>,
}

#[derive(Debug, Deserialize)]
struct Tree {
    sha: String,
    tree: Vec<TreeEntry>,
}

#[derive(Debug, Deserialize)]
struct TreeEntry {
    path: String,
    mode: String,
    sha: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Pull {
    pub number: u64,
    pub html_url: String,
    pub title: String,
    pub body: Option<String>,
    #[serde(default)]
    pub labels: Vec<Label>,
    pub base: PullBase,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Label {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PullBase {
    #[serde(rename = "ref")]
    pub branch: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct IssueComment {
    pub body: Option<String>,
}

/// Checks a branch name well enough that it can go into a URL path unescaped: git's own rules
/// (`git check-ref-format`) minus the characters that would need percent-encoding.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "git refuses names ending in exactly `.lock`"
)]
pub(crate) fn check_branch(branch: &str) -> Result<(), Error> {
    let ok = !branch.is_empty()
        && !branch.starts_with('/')
        && !branch.ends_with('/')
        && !branch.ends_with(".lock")
        && !branch.ends_with('.')
        && !branch.contains("..")
        && !branch.contains("//")
        && !branch.contains("@{")
        && !branch.split('/').any(|part| part.starts_with('.'))
        && branch.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+' | '=' | ',' | '@')
        });
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidBranch(branch.to_owned()))
    }
}

fn encode_query(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

impl GitHub {
    fn repo_path(&self) -> String {
        let RepoName { owner, name } = &self.repo;
        format!("/repos/{owner}/{name}")
    }

    /// The repository's default branch.
    pub async fn default_branch(&self) -> Result<String, Error> {
        let repo: Repository = self
            .transport
            .call(Method::Get, &self.repo_path(), None, Replay::Safe)
            .await?;
        Ok(repo.default_branch)
    }

    /// The commit `branch` points at, or `None` when there is no such branch.
    pub async fn branch_head(&self, branch: &str) -> Result<Option<String>, Error> {
        check_branch(branch)?;
        let path = format!("{}/git/ref/heads/{branch}", self.repo_path());
        match self
            .transport
            .call::<Reference>(Method::Get, &path, None, Replay::Safe)
            .await
        {
            Ok(reference) => Ok(Some(reference.object.sha)),
            Err(error) if error.status() == Some(404) => Ok(None),
            Err(error) => Err(error),
        }
    }

    pub(crate) async fn commit(&self, sha: &str) -> Result<Commit, Error> {
        let path = format!("{}/git/commits/{sha}", self.repo_path());
        self.transport
            .call(Method::Get, &path, None, Replay::Safe)
            .await
    }

    /// The entries of one tree (not recursive).
    pub(crate) async fn tree_entries(&self, sha: &str) -> Result<Vec<Entry>, Error> {
        let path = format!("{}/git/trees/{sha}", self.repo_path());
        let tree: Tree = self
            .transport
            .call(Method::Get, &path, None, Replay::Safe)
            .await?;
        let _ = tree.sha;
        Ok(tree
            .tree
            .into_iter()
            .map(|e| Entry {
                mode: e.mode,
                name: e.path,
                sha: e.sha,
            })
            .collect())
    }

    /// Blobs are content-addressed: sending the same content twice names the same object, so a
    /// lost response is simply sent again.
    pub(crate) async fn create_blob(&self, content: &[u8]) -> Result<String, Error> {
        use base64::Engine as _;
        let body = json!({
            "content": base64::engine::general_purpose::STANDARD.encode(content),
            "encoding": "base64",
        });
        let path = format!("{}/git/blobs", self.repo_path());
        let blob: ShaOnly = self
            .transport
            .call(Method::Post, &path, Some(&body), Replay::Safe)
            .await?;
        Ok(blob.sha)
    }

    /// Trees are content-addressed too: re-sending one is harmless.
    pub(crate) async fn create_tree(
        &self,
        base_tree: &str,
        entries: &[Value],
    ) -> Result<String, Error> {
        let body = json!({"base_tree": base_tree, "tree": entries});
        let path = format!("{}/git/trees", self.repo_path());
        let tree: ShaOnly = self
            .transport
            .call(Method::Post, &path, Some(&body), Replay::Safe)
            .await?;
        Ok(tree.sha)
    }

    /// A commit's id includes the server's timestamp, so re-sending after a lost response may
    /// make a second commit object with another id. That is harmless: nothing refers to either
    /// until the branch is moved to the one whose id we did receive, and GitHub collects the
    /// other as garbage.
    pub(crate) async fn create_commit(
        &self,
        message: &str,
        tree: &str,
        parent: &str,
    ) -> Result<String, Error> {
        let body = json!({"message": message, "tree": tree, "parents": [parent]});
        let path = format!("{}/git/commits", self.repo_path());
        let commit: ShaOnly = self
            .transport
            .call(Method::Post, &path, Some(&body), Replay::Safe)
            .await?;
        Ok(commit.sha)
    }

    /// Creating a ref is not idempotent (a second create answers 422): it is sent once, and a
    /// lost response is followed by a lookup.
    pub(crate) async fn create_ref(&self, branch: &str, sha: &str) -> Result<(), Error> {
        let body = json!({"ref": format!("refs/heads/{branch}"), "sha": sha});
        let path = format!("{}/git/refs", self.repo_path());
        self.transport
            .send(Method::Post, &path, Some(&body), Replay::Never)
            .await
            .map(drop)
    }

    /// Moving a ref with force to a given commit is idempotent.
    pub(crate) async fn force_ref(&self, branch: &str, sha: &str) -> Result<(), Error> {
        let body = json!({"sha": sha, "force": true});
        let path = format!("{}/git/refs/heads/{branch}", self.repo_path());
        self.transport
            .send(Method::Patch, &path, Some(&body), Replay::Safe)
            .await
            .map(drop)
    }

    /// Open pull requests whose head is `branch` in this repository.
    pub(crate) async fn open_pulls(&self, branch: &str) -> Result<Vec<Pull>, Error> {
        let head = encode_query(&format!("{}:{branch}", self.repo.owner));
        let path = format!("{}/pulls?head={head}&state=open", self.repo_path());
        self.transport
            .call(Method::Get, &path, None, Replay::Safe)
            .await
    }

    /// Not idempotent: sent once; the caller recovers from a lost response by a lookup.
    pub(crate) async fn create_pull(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<Pull, Error> {
        let request = json!({"title": title, "head": branch, "base": base, "body": body});
        let path = format!("{}/pulls", self.repo_path());
        self.transport
            .call(Method::Post, &path, Some(&request), Replay::Never)
            .await
    }

    /// Setting fields of a pull request to given values is idempotent.
    pub(crate) async fn update_pull(&self, number: u64, fields: &Value) -> Result<Pull, Error> {
        let path = format!("{}/pulls/{number}", self.repo_path());
        self.transport
            .call(Method::Patch, &path, Some(fields), Replay::Safe)
            .await
    }

    /// Adding labels is a set union: sending it twice changes nothing more.
    pub(crate) async fn add_labels(&self, number: u64, labels: &[String]) -> Result<(), Error> {
        let body = json!({"labels": labels});
        let path = format!("{}/issues/{number}/labels", self.repo_path());
        self.transport
            .send(Method::Post, &path, Some(&body), Replay::Safe)
            .await
            .map(drop)
    }

    pub(crate) async fn comments(&self, number: u64) -> Result<Vec<IssueComment>, Error> {
        let path = format!("{}/issues/{number}/comments?per_page=100", self.repo_path());
        self.transport
            .call(Method::Get, &path, None, Replay::Safe)
            .await
    }

    /// Not idempotent (a second comment would show twice): sent once.
    pub(crate) async fn create_comment(&self, number: u64, body: &str) -> Result<(), Error> {
        let request = json!({"body": body});
        let path = format!("{}/issues/{number}/comments", self.repo_path());
        self.transport
            .send(Method::Post, &path, Some(&request), Replay::Never)
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::check_branch;

    #[test]
    fn branch_names() {
        for ok in ["tagpin/digests", "main", "release-1.2", "user@x"] {
            assert!(check_branch(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "/x", "x/", "a..b", "a b", "a?b", "a#b", "x.lock", ".x", "a/.b", "a%2f", "a@{1}",
        ] {
            assert!(check_branch(bad).is_err(), "{bad}");
        }
    }
}
