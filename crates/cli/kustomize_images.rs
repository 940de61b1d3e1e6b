//! Images a kustomization's `images:` entries replace in the resources it builds: Kustomize's
//! base/overlay idiom. A resource says `image: nginx` (or `myapp`, a placeholder) and a
//! `kustomization.yaml` — the same directory's, or an overlay's that reaches that directory
//! through `resources:` — has an entry `- name: nginx` with `newTag:` and/or `digest:`.
//! Kustomize's image transformer (`api/filters/imagetag/updater.go`) matches the resource's
//! name as written, exactly, and with `newTag` or `digest` set replaces both the tag and the
//! digest written in the resource ("overriding tag or digest will replace both original tag
//! and digest values"): a digest pinned there is never deployed. Such references stay
//! reported as they are, with an edit site that `pin` does not write. An entry with only
//! `newName` keeps the resource's tag and digest, and leaves the reference writable.
//!
//! The entries themselves are the scanner's (kind `kustomize`) and are left as they are.
//!
//! What a kustomization reaches: the files of its own directory (its resources and patches,
//! mostly), and, through its `resources:`, `bases:` and `components:` entries that are local
//! paths, those files and directories; a directory with a kustomization of its own, that
//! kustomization's reach in turn. Directories outside the PATHs scanned are not entered, each
//! is entered once, and no deeper than [`MAX_DEPTH`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tagpin_formats::{EditSite, FileKind, Finding, Status, Warning};

use crate::commands::ScannedFile;

/// How many `resources:` steps from a kustomization are followed.
const MAX_DEPTH: usize = 16;

/// A kustomization larger than this is not read (nothing Kustomize users write comes close).
const MAX_SIZE: u64 = 1 << 20;

/// The names Kustomize reads a directory's kustomization from.
const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Makes unwritable every floating or pinned `yaml` reference in `files` whose tag and digest
/// a kustomization among them replaces, with why (see the module docs). `paths` are the PATHs
/// scanned: no directory outside them is entered.
pub fn mark_replaced(files: &mut [ScannedFile], paths: &[PathBuf]) {
    let replacers: Vec<Replacer> = files
        .iter()
        .filter(|file| is_kustomization(file))
        .filter_map(Replacer::of)
        .collect();
    if replacers.is_empty() {
        return;
    }
    let entry_names: HashSet<&str> = replacers
        .iter()
        .flat_map(|replacer| &replacer.entries)
        .map(|entry| entry.name.as_str())
        .collect();
    let roots: Vec<PathBuf> = paths.iter().filter_map(|path| root_of(path)).collect();
    let mut reading = Reading::default();
    let reaches: Vec<Reach> = replacers
        .iter()
        .map(|replacer| reading.reach(&replacer.dir, &roots))
        .collect();
    for file in files.iter_mut() {
        // Only a file with a reference to one of the entries' names is located on disk.
        let replaceable = |finding: &Finding| {
            finding.kind == FileKind::Yaml
                && matches!(finding.status, Status::Floating | Status::Pinned)
                && !matches!(finding.site, EditSite::Unsupported { .. })
                && finding
                    .reference
                    .as_ref()
                    .is_some_and(|reference| entry_names.contains(reference.name_as_written()))
        };
        if !file.findings.iter().any(replaceable) {
            continue;
        }
        let Some((dir, located)) = reading.located(&file.path) else {
            continue;
        };
        let applying: Vec<&Replacer> = replacers
            .iter()
            .zip(&reaches)
            .filter(|(_, reach)| reach.dirs.contains(&dir) || reach.files.contains(&located))
            .map(|(replacer, _)| replacer)
            .collect();
        if applying.is_empty() {
            continue;
        }
        for finding in file
            .findings
            .iter_mut()
            .filter(|finding| replaceable(finding))
        {
            let Some(name) = finding
                .reference
                .as_ref()
                .map(tagpin_reference::ImageReference::name_as_written)
            else {
                continue;
            };
            let Some((replacer, entry)) = applying.iter().find_map(|replacer| {
                let entry = replacer.entries.iter().find(|entry| entry.name == name)?;
                Some((replacer, entry))
            }) else {
                continue;
            };
            let reason = replacer.reason(entry);
            if !entry.renders_latest {
                forget_latest(finding);
            }
            finding.site = EditSite::Unsupported { reason };
        }
    }
}

/// Whether `file` is a kustomization the scanner read as one.
fn is_kustomization(file: &ScannedFile) -> bool {
    tagpin_formats::parent_and_name(&file.path).is_some_and(|(_, name)| FILE_NAMES.contains(&name))
        && file
            .findings
            .iter()
            .any(|finding| finding.kind == FileKind::Kustomize)
}

/// The `latest` pull-policy warning, and its `imagePullPolicy` edit, of a reference whose tag
/// the kustomization replaces with another (or drops for a digest): kubelet never sees
/// `latest` there.
fn forget_latest(finding: &mut Finding) {
    finding
        .warnings
        .retain(|warning| *warning != Warning::LatestPullsAlways);
    if let Some(extras) = &mut finding.extras {
        extras.pull_policy = None;
        if **extras == tagpin_formats::Extras::default() {
            finding.extras = None;
        }
    }
}

/// A kustomization with `images:` entries that replace a resource's tag and digest.
struct Replacer {
    /// Its directory, canonical.
    dir: PathBuf,
    /// Its file name and its directory as shown, for the reason.
    file_name: String,
    shown_dir: String,
    entries: Vec<Entry>,
}

/// An `images:` entry with `newTag` or `digest`.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    /// The `name` it matches, exactly as a resource writes it.
    name: String,
    new_tag: bool,
    digest: bool,
    /// Whether what Kustomize renders has the tag `latest` (`newTag: latest`).
    renders_latest: bool,
    /// The line of the entry's finding (its `newName`, else its `name`).
    line: Option<usize>,
}

impl Replacer {
    fn of(file: &ScannedFile) -> Option<Self> {
        let document = read_kustomization(&file.path)?;
        let mut entries = entries_of(&document);
        // The scanner found each entry with a name, in the file's order: its finding's line.
        let found: Vec<&Finding> = file
            .findings
            .iter()
            .filter(|finding| finding.kind == FileKind::Kustomize)
            .collect();
        let mut next = 0;
        for (shown, entry) in &mut entries {
            let at = found[next..]
                .iter()
                .position(|finding| names_image(&finding.text, shown));
            if let Some(at) = at {
                if let Some(entry) = entry {
                    entry.line = Some(found[next + at].line);
                }
                next += at + 1;
            }
        }
        let entries: Vec<Entry> = entries.into_iter().filter_map(|(_, entry)| entry).collect();
        if entries.is_empty() {
            return None;
        }
        let (parent, file_name) = tagpin_formats::parent_and_name(&file.path)?;
        let dir = parent
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .canonicalize()
            .ok()?;
        let shown_dir = file
            .display
            .rsplit_once('/')
            .map_or(".", |(dir, _)| if dir.is_empty() { "/" } else { dir })
            .to_owned();
        Some(Self {
            dir,
            file_name: file_name.to_owned(),
            shown_dir,
            entries,
        })
    }

    fn reason(&self, entry: &Entry) -> String {
        let what = match (entry.new_tag, entry.digest) {
            (true, true) => "tag and digest",
            (true, false) => "tag",
            (false, _) => "digest",
        };
        let line = entry
            .line
            .map(|line| format!(" (line {line})"))
            .unwrap_or_default();
        format!(
            "not written: `{}` ({}) sets this image's {what} with its `images` entry `{}`{line}, \
             so kustomize replaces what is written here",
            self.file_name, self.shown_dir, entry.name
        )
    }
}

/// Whether `text`, a Kustomize entry's finding (`newName` or `name`, then `:tag`, `@digest`),
/// is the image `shown`.
fn names_image(text: &str, shown: &str) -> bool {
    text.strip_prefix(shown)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '@']))
}

/// Every `images:` entry that is a mapping naming an image (its `newName`, else its `name`),
/// in order, with the [`Entry`] it is when it has a `name` and sets `newTag` or `digest`.
/// Anything else (an `images:` that is not a list, an entry without `name`) gives nothing.
fn entries_of(document: &Value) -> Vec<(String, Option<Entry>)> {
    let Some(images) = document.get("images").and_then(Value::as_array) else {
        return Vec::new();
    };
    images
        .iter()
        .filter_map(|entry| {
            let text = |key: &str| entry.get(key).and_then(scalar_text);
            let name = text("name");
            let shown = text("newName").or_else(|| name.clone())?;
            let new_tag = text("newTag");
            let digest = text("digest");
            let entry = name
                .filter(|_| new_tag.is_some() || digest.is_some())
                .map(|name| Entry {
                    name,
                    new_tag: new_tag.is_some(),
                    digest: digest.is_some(),
                    renders_latest: new_tag.as_deref() == Some("latest"),
                    line: None,
                });
            Some((shown, entry))
        })
        .collect()
}

/// A scalar's text, unless it is null, empty or a collection.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(value) => Some(value.to_string()),
        _ => None,
    }
}

/// The kustomization at `path` as JSON, when it can be read as one document.
fn read_kustomization(path: &Path) -> Option<Value> {
    crate::read::yaml_document(path, MAX_SIZE)
}

/// The directory a scan root stands for, canonical: the PATH, or a file's directory.
fn root_of(path: &Path) -> Option<PathBuf> {
    let path = path.canonicalize().ok()?;
    if path.is_dir() {
        Some(path)
    } else {
        path.parent().map(Path::to_owned)
    }
}

/// What a kustomization reaches: whole directories (their own files) and single files.
#[derive(Debug, Default)]
struct Reach {
    dirs: HashSet<PathBuf>,
    files: HashSet<PathBuf>,
}

/// What is read from disk, each once.
#[derive(Default)]
struct Reading {
    /// A directory's kustomization's local entries (`resources`, `bases`, `components`).
    entries: HashMap<PathBuf, Vec<String>>,
    /// A directory as written, canonical.
    canonical: HashMap<PathBuf, Option<PathBuf>>,
}

impl Reading {
    /// What the kustomization in `dir` (canonical) reaches, inside `roots`.
    fn reach(&mut self, dir: &Path, roots: &[PathBuf]) -> Reach {
        let mut reach = Reach::default();
        let mut queue = vec![(dir.to_owned(), 0)];
        while let Some((dir, depth)) = queue.pop() {
            if !reach.dirs.insert(dir.clone()) || depth >= MAX_DEPTH {
                continue;
            }
            for entry in self.entries_in(&dir).to_owned() {
                let target = dir.join(&entry);
                if target.is_dir() {
                    if let Ok(target) = target.canonicalize()
                        && roots.iter().any(|root| target.starts_with(root))
                    {
                        queue.push((target, depth + 1));
                    }
                } else if target.is_file()
                    && let Some((parent, located)) = self.located(&target)
                    && roots.iter().any(|root| parent.starts_with(root))
                {
                    reach.files.insert(located);
                }
            }
        }
        reach
    }

    /// The local paths the kustomization in `dir` lists under `resources`, `bases` and
    /// `components`; none without a kustomization.
    fn entries_in(&mut self, dir: &Path) -> &[String] {
        self.entries.entry(dir.to_owned()).or_insert_with(|| {
            let Some(document) = FILE_NAMES
                .iter()
                .map(|name| dir.join(name))
                .find(|path| path.is_file())
                .and_then(|path| read_kustomization(&path))
            else {
                return Vec::new();
            };
            ["resources", "bases", "components"]
                .iter()
                .filter_map(|key| document.get(key).and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .filter(|entry| !entry.is_empty() && !entry.contains("://"))
                .map(str::to_owned)
                .collect()
        })
    }

    /// `path`'s directory, canonical, and `path` in it: a file reached through a link is
    /// where the link is, as Kustomize reads it.
    fn located(&mut self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        let (parent, name) = tagpin_formats::parent_and_name(path)?;
        let parent = parent
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = self
            .canonical
            .entry(parent.to_owned())
            .or_insert_with(|| parent.canonicalize().ok())
            .clone()?;
        let located = dir.join(name);
        Some((dir, located))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kustomization's text, and the entries read from it.
    type Case = (&'static str, Vec<(&'static str, Option<Entry>)>);

    /// Odd `images:` give what they can and never fail: not a list, entries that are not
    /// mappings, without `name`, with empty or null values, numbers for tags.
    #[test]
    fn entries_read_what_kustomize_would_apply() {
        let entry = |name: &str, new_tag: bool, digest: bool, latest: bool| Entry {
            name: name.to_owned(),
            new_tag,
            digest,
            renders_latest: latest,
            line: None,
        };
        let cases: [Case; 8] = [
            ("images: nginx\n", vec![]),
            ("images: {name: nginx, newTag: '1'}\n", vec![]),
            ("images:\n  - nginx\n  - [a]\n  - ~\n", vec![]),
            ("images:\n  - newTag: '1'\n", vec![]),
            (
                "images:\n  - newName: reg/app\n    newTag: '1'\n",
                vec![("reg/app", None)],
            ),
            (
                "images:\n  - name: nginx\n    newTag: 1.25\n  - name: app\n    newName: reg/app\n",
                vec![
                    ("nginx", Some(entry("nginx", true, false, false))),
                    ("reg/app", None),
                ],
            ),
            (
                "images:\n  - name: a\n    newTag: ''\n    digest: ~\n  - name: b\n    digest: sha256:1\n    newTag: latest\n",
                vec![("a", None), ("b", Some(entry("b", true, true, true)))],
            ),
            ("images:\n  - name: [x]\n    newTag: '1'\n", vec![]),
        ];
        for (text, expected) in cases {
            let document: Value = yaml_serde::from_str(text).unwrap();
            let expected: Vec<(String, Option<Entry>)> = expected
                .into_iter()
                .map(|(shown, entry)| (shown.to_owned(), entry))
                .collect();
            assert_eq!(entries_of(&document), expected, "{text}");
        }
    }

    #[test]
    fn an_entry_finding_names_its_image() {
        assert!(names_image("nginx:1.25", "nginx"));
        assert!(names_image("nginx@sha256:1", "nginx"));
        assert!(names_image("nginx", "nginx"));
        assert!(!names_image("nginx-exporter:1", "nginx"));
    }
}
