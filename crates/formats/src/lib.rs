//! Finding image references in files, and splicing digests into them byte-exactly.
//!
//! Each file kind has a scanner that takes the file's text and returns every image reference
//! it holds, with its position, its text exactly as written and its [`Status`]. A [`Finding`]
//! knows where a digest goes ([`EditSite`]), so the caller turns a resolved digest into an
//! [`Edit`] and [`apply_edits`] produces the new file content, changing nothing outside the
//! edited spans. This crate does no I/O: text in, findings and edits out.
//!
//! ```
//! use std::path::Path;
//! use tagpin_formats::{FileKind, Status, apply_edits, scan};
//! use tagpin_reference::Digest;
//!
//! let text = "spec:\n  containers:\n    - name: app\n      image: \"nginx:1.27\" # web\n";
//! let findings = scan(Path::new("deploy.yaml"), FileKind::Yaml, text).unwrap();
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].status, Status::Floating);
//! assert_eq!((findings[0].line, findings[0].column), (4, 15));
//!
//! let digest = Digest::parse(&format!("sha256:{}", "1".repeat(64))).unwrap();
//! let edit = findings[0].edit(&digest).unwrap();
//! let new_text = apply_edits(text, &[edit]).unwrap();
//! assert_eq!(
//!     new_text,
//!     format!("spec:\n  containers:\n    - name: app\n      image: \"nginx:1.27@{digest}\" # web\n"),
//! );
//! ```

pub mod chart;
mod common;
mod custom;
mod devcontainer;
mod dockerfile;
mod edit;
mod error;
mod finding;
mod helm;
mod kind;
mod pipeline_builds;
mod rules;
mod shell;
mod yaml;

pub use custom::{CustomPattern, CustomPatternError};
pub use edit::{Edit, apply_edits};
pub use error::Error;
pub use finding::{EditSite, Extras, Finding, Status, Warning};
pub use kind::{FileKind, parent_and_name};

use std::path::Path;

/// Finds every image reference in `text`, a file of `kind` at `path`.
///
/// `path` is used for error messages. Findings come back in file order (by span).
///
/// YAML kinds (YAML, compose, workflow, GitLab CI, Kustomize) can fail with [`Error::Syntax`]
/// (path, line and column) when they are not well-formed YAML (an unterminated quoted scalar
/// or flow collection, text after a quoted scalar, flow entries without `,`, a `key: value`
/// inside a plain scalar), and dev containers on an unterminated string or comment. Helm
/// templates, Dockerfiles and shell files are read leniently and never fail.
///
/// Files that cannot hold a reference of their kind (no `mage` for YAML, no `from`/`syntax`
/// for a Dockerfile, …) are skipped with a `memchr` check before any parsing.
pub fn scan(path: &Path, kind: FileKind, text: &str) -> Result<Vec<Finding>, Error> {
    if !may_hold_reference(kind, text.as_bytes()) {
        return Ok(Vec::new());
    }
    let mut sink = common::Sink::new(text, kind);
    match kind {
        FileKind::Yaml
        | FileKind::Compose
        | FileKind::Workflow
        | FileKind::GitlabCi
        | FileKind::CloudBuild
        | FileKind::Kustomize => {
            let tree = yaml::read(path, text, yaml::Mode::Strict)?;
            rules::apply(&mut sink, &tree, text, path)?;
            if matches!(kind, FileKind::Workflow | FileKind::GitlabCi) {
                // A pipeline's jobs that run what an earlier job built.
                pipeline_builds::mark(&mut sink);
            }
        }
        FileKind::HelmTemplate => {
            let masked = helm::mask(text);
            // A document holding none of the rules' words gives no finding (the walk would pass
            // over its root): it is not read. Helm templates are read leniently, and one
            // document's lines never change how another reads.
            let tree = match rules::words_for(kind) {
                Some(words) => {
                    yaml::read_lenient_where(&masked, &|document| words.any_in(document))
                }
                None => yaml::read(path, &masked, yaml::Mode::Lenient)?,
            };
            rules::apply(&mut sink, &tree, &masked, path)?;
        }
        FileKind::Dockerfile => dockerfile::scan(&mut sink),
        FileKind::Devcontainer => devcontainer::scan(&mut sink, path)?,
        // Read through `scan_custom`, with the patterns that name the file.
        FileKind::Custom => {}
        FileKind::Shell => shell::scan(&mut sink),
    }
    Ok(sink.finish())
}

/// [`scan`] of a chart's values file (YAML), which also returns what the scan read of it for
/// the chart's reading ([`chart::ValuesFile`]): a chart's values file is often its largest,
/// and is read once for both. As [`scan`], it reads nothing of a file that cannot hold a
/// reference, which gives no findings and no [`chart::ValuesFile`].
pub fn scan_values<'t>(
    path: &Path,
    text: &'t str,
) -> Result<(Vec<Finding>, Option<chart::ValuesFile<'t>>), Error> {
    scan_values_reading(path, text, true)
}

/// [`scan_values`]; `defer`: leave unread the flow collections the walk would pass over
/// (`yaml::read_values`).
fn scan_values_reading<'t>(
    path: &Path,
    text: &'t str,
    defer: bool,
) -> Result<(Vec<Finding>, Option<chart::ValuesFile<'t>>), Error> {
    if !may_hold_reference(FileKind::Yaml, text.as_bytes()) {
        return Ok((Vec::new(), None));
    }
    // One walk of the tree for the findings and the chart's image maps.
    let mut images = chart::Collect::new(text);
    // The walk passes over a collection without the image maps' words (which include the
    // rules'), so the reader need not read one into nodes.
    let words = rules::walk_words(&images).filter(|_| defer);
    let offsets = words.map(|words| rules::word_offsets(text, words));
    let known = words
        .zip(offsets.as_deref())
        .map(|(words, offsets)| rules::Offsets { words, offsets });
    let tree = match known {
        Some(known) => yaml::read_values(path, text, known.offsets)?,
        None => yaml::read(path, text, yaml::Mode::Strict)?,
    };
    let mut sink = common::Sink::new(text, FileKind::Yaml);
    // The walk finds the words where the reader found them.
    rules::apply_with(&mut sink, &tree, text, path, Some(&mut images), known)?;
    let images = images.finish();
    Ok((
        sink.finish(),
        Some(chart::ValuesFile::of(path, text, tree, images)),
    ))
}

/// Finds the references the user's `patterns` match in `text` (a file of kind
/// [`FileKind::Custom`]), in file order. Never fails: any text can be matched.
pub fn scan_custom(text: &str, patterns: &[CustomPattern]) -> Vec<Finding> {
    let mut sink = common::Sink::new(text, FileKind::Custom);
    custom::scan(&mut sink, patterns);
    sink.finish()
}

/// The cheap pre-check: whether `text` contains a word every reference of `kind` needs.
fn may_hold_reference(kind: FileKind, text: &[u8]) -> bool {
    use memchr::memmem::find;
    // Built once: every file is searched for it, most of them small.
    static MAGE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("mage"));
    let mage = || MAGE.find(text).is_some();
    match kind {
        // `image`, `*Image` keys and split maps (which sit under such a key, or beside an
        // `image` name part) all contain `mage`.
        // So do a resource's chart values, except a `repository` with its `tag` under a key
        // that does not say image (`redis: {repository, tag}` in a `HelmRelease`).
        FileKind::Yaml => {
            mage()
                || find(text, b"repository").is_some()
                    && (find(text, b"HelmRelease").is_some()
                        || find(text, b"valuesObject").is_some())
        }
        // A Kustomization's `helmCharts[*].valuesInline` are chart values too.
        FileKind::Kustomize => {
            mage() || find(text, b"repository").is_some() && find(text, b"valuesInline").is_some()
        }
        // Compose's build arguments name images in upper case too (`BASE_IMAGE`).
        FileKind::Compose => mage() || find(text, b"MAGE").is_some(),
        FileKind::HelmTemplate | FileKind::Devcontainer => mage(),
        // A step's or job's script may run a container CLI.
        FileKind::Workflow => {
            mage()
                || find(text, b"docker://").is_some()
                || find(text, b"container").is_some()
                || names_a_cli(text)
        }
        FileKind::GitlabCi => mage() || find(text, b"services").is_some() || names_a_cli(text),
        FileKind::CloudBuild => find(text, b"steps").is_some(),
        FileKind::Dockerfile => {
            text.windows(4).any(|w| w.eq_ignore_ascii_case(b"from"))
                || find(text, b"syntax").is_some()
        }
        FileKind::Custom => false,
        FileKind::Shell => mage() || names_a_cli(text),
    }
}

/// Whether `text` names a container CLI, or a variable that holds one (what a script's
/// commands need).
fn names_a_cli(text: &[u8]) -> bool {
    shell::CLIS
        .iter()
        .any(|cli| memchr::memmem::find(text, cli.as_bytes()).is_some())
        || shell::may_name_an_engine(text)
}

#[cfg(test)]
mod tests;
