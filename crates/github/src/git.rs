//! Git object ids computed locally, so `sync` can tell that the branch already holds the tree it
//! would write without writing anything (and `--dry-run` can say so too).
//!
//! Kept independent of the fake's implementation on purpose: the fake is the oracle.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sha1::{Digest, Sha1};

/// A tree entry as the API spells it (`040000` for a tree, `100644`, `100755`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub mode: String,
    pub name: String,
    pub sha: String,
}

impl Entry {
    fn is_tree(&self) -> bool {
        self.mode.trim_start_matches('0') == "40000"
    }
}

fn object_id(kind: &str, body: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("{kind} {}\0", body.len()).as_bytes());
    hasher.update(body);
    hasher.finalize().iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(crate) fn blob_id(content: &[u8]) -> String {
    object_id("blob", content)
}

/// The id of a tree with `entries` (any order; sorted here the way git sorts: by name bytes,
/// a subtree's name compared as if it ended in `/`).
pub(crate) fn tree_id(entries: &[Entry]) -> String {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by_cached_key(|e| {
        let mut key = e.name.as_bytes().to_vec();
        if e.is_tree() {
            key.push(b'/');
        }
        key
    });
    let mut body = Vec::new();
    for entry in sorted {
        // The API shows `040000`; git's tree format writes `40000`.
        body.extend_from_slice(entry.mode.trim_start_matches('0').as_bytes());
        body.push(b' ');
        body.extend_from_slice(entry.name.as_bytes());
        body.push(0);
        for i in (0..entry.sha.len()).step_by(2) {
            body.push(u8::from_str_radix(entry.sha.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0));
        }
    }
    object_id("tree", &body)
}

/// The directories whose trees must be known to rebuild the root after changing `paths`:
/// `""` and every ancestor directory, parents before children.
pub(crate) fn directories<'a>(paths: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut dirs = std::collections::BTreeSet::new();
    dirs.insert(String::new());
    for path in paths {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            dirs.insert(path[..end].to_owned());
            end += 1;
        }
    }
    let mut dirs: Vec<String> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| {
        if d.is_empty() {
            0
        } else {
            d.matches('/').count() + 1
        }
    });
    dirs
}

/// Rebuilds the root tree id from the current entries of each directory on the changed paths
/// (`dirs`, keyed by directory path, `""` for the root; a directory absent from the base maps to
/// no entries) and the changes (path → (mode, blob id)).
pub(crate) fn root_after(
    mut dirs: BTreeMap<String, Vec<Entry>>,
    changes: &BTreeMap<String, (String, String)>,
) -> String {
    for (path, (mode, sha)) in changes {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        upsert(dirs.entry(dir.to_owned()).or_default(), name, mode, sha);
    }
    // Deepest first, so each directory's id is known before its parent is hashed.
    let mut order: Vec<String> = dirs.keys().cloned().collect();
    order.sort_by_key(|d| {
        std::cmp::Reverse(if d.is_empty() {
            0
        } else {
            d.matches('/').count() + 1
        })
    });
    for dir in order {
        if dir.is_empty() {
            continue;
        }
        let id = tree_id(&dirs[&dir]);
        let (parent, name) = dir.rsplit_once('/').unwrap_or(("", &dir));
        let (parent, name) = (parent.to_owned(), name.to_owned());
        upsert(dirs.entry(parent).or_default(), &name, "040000", &id);
    }
    tree_id(dirs.get("").map_or(&[][..], Vec::as_slice))
}

fn upsert(entries: &mut Vec<Entry>, name: &str, mode: &str, sha: &str) {
    entries.retain(|e| e.name != name);
    entries.push(Entry {
        mode: mode.to_owned(),
        name: name.to_owned(),
        sha: sha.to_owned(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_match_git_hash_object() {
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn empty_tree_matches_git() {
        assert_eq!(tree_id(&[]), "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    }

    #[test]
    fn rebuilt_root_matches_git_write_tree() {
        // `printf 'hello\n' > a.sh; chmod +x a.sh; mkdir d; printf x > d/b; printf y > d.txt;
        //  git add -A; git write-tree` gives 4dc7baf…; `d.txt` sorts before the tree `d`.
        let changes: BTreeMap<String, (String, String)> = [
            ("a.sh", "100755", b"hello\n".as_slice()),
            ("d/b", "100644", b"x"),
            ("d.txt", "100644", b"y"),
        ]
        .into_iter()
        .map(|(p, m, c)| (p.to_owned(), (m.to_owned(), blob_id(c))))
        .collect();
        let dirs = directories(changes.keys().map(String::as_str))
            .into_iter()
            .map(|d| (d, Vec::new()))
            .collect();
        assert_eq!(
            root_after(dirs, &changes),
            "4dc7bafd2b819f441619243cae1889e65438a186"
        );
    }

    #[test]
    fn directories_parents_first() {
        assert_eq!(
            directories(["a/b/c.yaml", "x.yaml", "a/d.yaml"].into_iter()),
            vec!["", "a", "a/b"]
        );
    }
}
