//! Directories that hold a Kubernetes test suite's steps, told by a file its runner reads:
//! Chainsaw's `chainsaw-test.yaml`, the Kyverno CLI's `kyverno-test.yaml`, a KUTTL step's
//! `01-assert.yaml` or `01-errors.yaml`.
//!
//! Their manifests are what a test applies and what it expects the cluster to hold after: a
//! KUTTL assert names the image an operator must have set from a custom resource, a policy's
//! test pod holds the very tag the policy must refuse. A digest written there breaks the test,
//! so the files of such a directory (and below it) are reported as skipped, with the reason,
//! and never written. The marker files are seen as the walk goes; the directories they mark
//! are applied once the walk is done, whatever order the files came in.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::commands::{Collected, Skipped};

/// The runner whose marker file `name` is, if it is one.
pub fn runner_of(name: &str) -> Option<&'static str> {
    match name {
        "chainsaw-test.yaml" | "chainsaw-test.yml" | "chainsaw-test.json" => Some("Chainsaw"),
        "kyverno-test.yaml" | "kyverno-test.yml" => Some("Kyverno CLI"),
        _ if is_kuttl_check(name) => Some("KUTTL"),
        _ => None,
    }
}

/// `01-assert.yaml`, `2-errors.yml`: a KUTTL step's assertion (what must exist) or errors
/// (what must not).
fn is_kuttl_check(name: &str) -> bool {
    let Some((step, rest)) = name.split_once('-') else {
        return false;
    };
    !step.is_empty()
        && step.bytes().all(|b| b.is_ascii_digit())
        && matches!(
            rest,
            "assert.yaml" | "assert.yml" | "errors.yaml" | "errors.yml"
        )
}

/// The suites' directories met on a walk, by the marker file that told each.
#[derive(Debug, Default)]
pub struct Suites {
    found: Mutex<Vec<(PathBuf, String, &'static str)>>,
}

impl Suites {
    /// Notes the directory of `path` when `path` is a marker file. Most files are not: the
    /// lock is taken only for those that are.
    pub fn note(&self, path: &Path) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            return;
        };
        let Some(runner) = runner_of(name) else {
            return;
        };
        let Some(dir) = path.parent() else {
            return;
        };
        self.found
            .lock()
            .expect("no panics while holding the lock")
            .push((dir.to_path_buf(), name.to_owned(), runner));
    }

    /// Moves the files of `collected` inside a suite's directory to its skipped files.
    pub fn skip_their_files(self, collected: &mut Collected) {
        let found = self
            .found
            .into_inner()
            .expect("no panics while holding the lock");
        if found.is_empty() {
            return;
        }
        let suite = |path: &Path| {
            found
                .iter()
                .find(|(dir, ..)| path.starts_with(dir))
                .map(|(_, marker, runner)| (marker.as_str(), *runner))
        };
        let files = std::mem::take(&mut collected.files);
        for file in files {
            match suite(&file.path) {
                Some((marker, runner)) if !file.findings.is_empty() => {
                    collected.skipped.push(Skipped {
                        path: file.display,
                        reason: format!(
                            "a {runner} test's file (`{marker}` marks the test's directory): \
                             the test applies or expects the images it names as written"
                        ),
                    });
                }
                Some(_) => {}
                None => collected.files.push(file),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_files_name_their_runner() {
        for (name, expected) in [
            ("chainsaw-test.yaml", Some("Chainsaw")),
            ("chainsaw-test.yml", Some("Chainsaw")),
            ("kyverno-test.yaml", Some("Kyverno CLI")),
            ("01-assert.yaml", Some("KUTTL")),
            ("2-errors.yml", Some("KUTTL")),
            ("00-install.yaml", None),
            ("-assert.yaml", None),
            ("v1-assert.yaml", None),
            ("01-assert.yaml.bak", None),
            ("deployment.yaml", None),
        ] {
            assert_eq!(runner_of(name), expected, "{name}");
        }
    }
}
