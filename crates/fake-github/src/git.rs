//! Git objects as GitHub stores them, with git-compatible SHA-1 object ids.
//!
//! This is written independently of the client's own hashing in tagpin-github on purpose: the
//! fake is the oracle the client is tested against, so a mistake in one should not be mirrored
//! by the other.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sha1::{Digest, Sha1};

/// A tree entry as the GitHub API spells it: `mode` is `100644`, `100755`, `120000`, `160000`
/// or `040000`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub mode: String,
    pub name: String,
    pub sha: String,
}

impl Entry {
    pub fn kind(&self) -> &'static str {
        match self.mode.as_str() {
            "040000" => "tree",
            "160000" => "commit",
            _ => "blob",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Commit {
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
    /// Seconds since the epoch; the fake's clock ticks once per commit so shas are stable.
    pub time: i64,
}

#[derive(Debug, Clone)]
pub(crate) enum Object {
    Blob(Vec<u8>),
    Tree(Vec<Entry>),
    Commit(Commit),
}

pub(crate) const AUTHOR: &str = "tagpin-fake";
pub(crate) const EMAIL: &str = "fake@tagpin.invalid";

fn hash(kind: &str, body: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("{kind} {}\0", body.len()).as_bytes());
    hasher.update(body);
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(40), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(sha: &str) -> Vec<u8> {
    (0..sha.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&sha[i..i + 2], 16).unwrap_or(0))
        .collect()
}

pub(crate) fn blob_sha(content: &[u8]) -> String {
    hash("blob", content)
}

/// Sorts entries the way git does: byte order of the name, a tree's name compared as if it
/// ended in `/`.
pub(crate) fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by_key(sort_key);
}

fn sort_key(entry: &Entry) -> Vec<u8> {
    let mut key = entry.name.as_bytes().to_vec();
    if entry.kind() == "tree" {
        key.push(b'/');
    }
    key
}

pub(crate) fn tree_sha(entries: &[Entry]) -> String {
    let mut body = Vec::new();
    for entry in entries {
        // git writes tree modes without the leading zero the API shows (`40000`).
        let mode = entry.mode.trim_start_matches('0');
        body.extend_from_slice(format!("{mode} {}\0", entry.name).as_bytes());
        body.extend_from_slice(&unhex(&entry.sha));
    }
    hash("tree", &body)
}

pub(crate) fn commit_sha(commit: &Commit) -> String {
    let mut text = format!("tree {}\n", commit.tree);
    for parent in &commit.parents {
        let _ = writeln!(text, "parent {parent}");
    }
    let _ = writeln!(text, "author {AUTHOR} <{EMAIL}> {} +0000", commit.time);
    let _ = writeln!(text, "committer {AUTHOR} <{EMAIL}> {} +0000", commit.time);
    text.push('\n');
    text.push_str(&commit.message);
    hash("commit", text.as_bytes())
}

/// A flat view of a tree: path → (mode, sha) for every non-tree entry.
pub(crate) type Leaves = BTreeMap<String, (String, String)>;

#[derive(Debug, Default)]
pub(crate) struct Store {
    pub objects: BTreeMap<String, Object>,
}

impl Store {
    pub fn put_blob(&mut self, content: Vec<u8>) -> String {
        let sha = blob_sha(&content);
        self.objects.insert(sha.clone(), Object::Blob(content));
        sha
    }

    pub fn put_tree(&mut self, mut entries: Vec<Entry>) -> String {
        sort_entries(&mut entries);
        let sha = tree_sha(&entries);
        self.objects.insert(sha.clone(), Object::Tree(entries));
        sha
    }

    pub fn put_commit(&mut self, commit: Commit) -> String {
        let sha = commit_sha(&commit);
        self.objects.insert(sha.clone(), Object::Commit(commit));
        sha
    }

    pub fn tree(&self, sha: &str) -> Option<&Vec<Entry>> {
        match self.objects.get(sha) {
            Some(Object::Tree(entries)) => Some(entries),
            _ => None,
        }
    }

    pub fn commit(&self, sha: &str) -> Option<&Commit> {
        match self.objects.get(sha) {
            Some(Object::Commit(commit)) => Some(commit),
            _ => None,
        }
    }

    pub fn blob(&self, sha: &str) -> Option<&Vec<u8>> {
        match self.objects.get(sha) {
            Some(Object::Blob(content)) => Some(content),
            _ => None,
        }
    }

    /// Every non-tree entry below `tree`, by full path.
    pub fn leaves(&self, tree: &str) -> Leaves {
        let mut out = Leaves::new();
        self.collect(tree, "", &mut out);
        out
    }

    fn collect(&self, tree: &str, prefix: &str, out: &mut Leaves) {
        for entry in self.tree(tree).into_iter().flatten() {
            let path = format!("{prefix}{}", entry.name);
            if entry.kind() == "tree" {
                self.collect(&entry.sha, &format!("{path}/"), out);
            } else {
                out.insert(path, (entry.mode.clone(), entry.sha.clone()));
            }
        }
    }

    /// Writes the nested trees for `leaves` and returns the root tree's sha.
    pub fn build_tree(&mut self, leaves: &Leaves) -> String {
        let mut here: Vec<Entry> = Vec::new();
        let mut dirs: BTreeMap<&str, Leaves> = BTreeMap::new();
        for (path, (mode, sha)) in leaves {
            match path.split_once('/') {
                Some((dir, rest)) => {
                    dirs.entry(dir)
                        .or_default()
                        .insert(rest.to_owned(), (mode.clone(), sha.clone()));
                }
                None => here.push(Entry {
                    mode: mode.clone(),
                    name: path.clone(),
                    sha: sha.clone(),
                }),
            }
        }
        for (dir, sub) in dirs {
            let sha = self.build_tree(&sub);
            here.push(Entry {
                mode: "040000".to_owned(),
                name: dir.to_owned(),
                sha,
            });
        }
        self.put_tree(here)
    }

    /// Whether `ancestor` is reachable from `commit` through parents.
    pub fn is_ancestor(&self, ancestor: &str, commit: &str) -> bool {
        let mut stack = vec![commit.to_owned()];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(sha) = stack.pop() {
            if sha == ancestor {
                return true;
            }
            if seen.insert(sha.clone())
                && let Some(c) = self.commit(&sha)
            {
                stack.extend(c.parents.iter().cloned());
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_shas_match_git_hash_object() {
        assert_eq!(blob_sha(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            blob_sha(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn empty_tree_matches_git() {
        assert_eq!(tree_sha(&[]), "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    }

    #[test]
    fn nested_tree_matches_git_mktree() {
        // `git init; printf 'hello\n' > a.sh; chmod +x a.sh; mkdir d; printf 'x' > d/b;
        //  printf 'y' > d.txt; git add -A; git write-tree`
        let mut store = Store::default();
        let mut leaves = Leaves::new();
        for (path, content, mode) in [
            ("a.sh", b"hello\n".as_slice(), "100755"),
            ("d/b", b"x", "100644"),
            ("d.txt", b"y", "100644"),
        ] {
            let sha = store.put_blob(content.to_vec());
            leaves.insert(path.to_owned(), (mode.to_owned(), sha));
        }
        assert_eq!(store.build_tree(&leaves), GIT_WRITE_TREE);
    }

    const GIT_WRITE_TREE: &str = "4dc7bafd2b819f441619243cae1889e65438a186";
}
