//! Chart templates read once: the chart reading's scans of templates, handed to the walker.
//!
//! Without Helm, deciding a chart's values reads every template of the chart (the static
//! reading), and the walker reads each template again to scan it for references. The chart
//! reading runs in the walker's thread that scanned the values file, which is most often
//! before the walker reaches the chart's `templates/` (the walker takes the directories it
//! found last first). So the chart reading, which has each template's text at hand, scans it
//! as the walker would and leaves the findings here; the walker, reaching that file, takes
//! them instead of opening it again.
//!
//! What makes this safe:
//! - Only a file [`FileKind::detect`] calls a Helm template, not named as a values file, and
//!   whose text passes the walker's own checks ([`read::is_scanned`]) is scanned
//!   here; anything else is read by the walker as before.
//! - The walker uses a scan only for a candidate of that same kind with no custom patterns,
//!   and only when its findings need nothing more of the text (see `commands::scan_file`).
//! - The walker leaves a mark on every template it visits, so a later chart reading (another
//!   values file of the same chart) does not scan that file again for no one.
//! - A store lives for one run (`commands::collect`): a file changed between runs is read
//!   anew.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Mutex;

use tagpin_formats::{FileKind, Finding};

use crate::commands::Fingerprint;
use crate::read;

/// One run's template scans, by absolute path.
#[derive(Debug, Default)]
pub struct TemplateScans {
    /// Whether a scan keeps the text's fingerprint when it has findings (`pin` and `pr`).
    fingerprints: bool,
    /// By the path's bytes: hashing a `Path` takes it apart into components, a measurable
    /// cost once per template. Both sides spell a path alike (`std::path::absolute`'s form,
    /// joined with the names a directory listing gives); a path spelt otherwise is only read
    /// again.
    entries: Mutex<HashMap<OsString, Entry>>,
}

#[derive(Debug)]
enum Entry {
    /// Scanned by the chart reading, not yet visited by the walker.
    Scanned(TemplateScan),
    /// Visited by the walker.
    Visited,
}

/// A template scanned by the chart reading: what the walker would have found in it.
#[derive(Debug)]
pub struct TemplateScan {
    pub findings: Vec<Finding>,
    /// The fingerprint of the text, when the store keeps them and there are findings.
    pub fingerprint: Option<Box<Fingerprint>>,
    /// Which file was read, when the reading knew it.
    pub identity: Option<read::Identity>,
}

impl TemplateScans {
    /// A store for one run; `fingerprints` as `commands::Keep::Fingerprint` asks.
    pub fn new(fingerprints: bool) -> Self {
        Self {
            fingerprints,
            entries: Mutex::default(),
        }
    }

    /// Scans the template at `path` (absolute), whose text the chart reading has read, unless
    /// the walker has visited it or it was scanned already.
    pub fn offer(&self, path: &Path, text: &str, identity: Option<read::Identity>) {
        if !Self::takes(path, text) || self.lock().contains_key(path.as_os_str()) {
            return;
        }
        let Ok(findings) = tagpin_formats::scan(path, FileKind::HelmTemplate, text) else {
            return;
        };
        let fingerprint = (self.fingerprints && !findings.is_empty())
            .then(|| Box::new(crate::commands::fingerprint(text)));
        self.lock()
            .entry(path.as_os_str().to_owned())
            .or_insert(Entry::Scanned(TemplateScan {
                findings,
                fingerprint,
                identity,
            }));
    }

    /// Marks `path` (absolute) as visited by the walker, and gives its scan when the chart
    /// reading left one.
    pub fn take(&self, path: &Path) -> Option<TemplateScan> {
        match self
            .lock()
            .insert(path.as_os_str().to_owned(), Entry::Visited)
        {
            Some(Entry::Scanned(scan)) => Some(scan),
            Some(Entry::Visited) | None => None,
        }
    }

    /// Whether a scan of `path` with `text` here is the walker's scan: a Helm template that
    /// is no values file, and a text the walker would read (not empty, binary or too large).
    fn takes(path: &Path, text: &str) -> bool {
        FileKind::detect(path) == Some(FileKind::HelmTemplate)
            && !crate::charts::is_values_file(path)
            && read::is_scanned(text)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<OsString, Entry>> {
        self.entries
            .lock()
            .expect("no panics while holding the lock")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "spec:\n  containers:\n    - image: nginx:1.25\n";

    #[test]
    fn the_walker_takes_a_scan_once() {
        let scans = TemplateScans::new(true);
        let path = Path::new("/repo/chart/templates/deployment.yaml");
        scans.offer(path, TEMPLATE, None);
        let scan = scans.take(path).expect("scanned");
        let expected = tagpin_formats::scan(path, FileKind::HelmTemplate, TEMPLATE).unwrap();
        assert_eq!(scan.findings, expected);
        assert_eq!(
            scan.fingerprint.as_deref(),
            Some(&crate::commands::fingerprint(TEMPLATE))
        );
        assert!(scans.take(path).is_none(), "taken once");
        // A later chart reading of the same chart scans nothing for no one.
        scans.offer(path, TEMPLATE, None);
        assert!(scans.take(path).is_none());
    }

    #[test]
    fn only_what_the_walker_would_scan_as_a_template_is_scanned() {
        let scans = TemplateScans::new(false);
        let template = Path::new("/repo/chart/templates/deployment.yaml");
        for (path, text) in [
            (Path::new("/repo/chart/templates/NOTES.txt"), TEMPLATE),
            (Path::new("/repo/chart/templates/values-cm.yaml"), TEMPLATE),
            (Path::new("/repo/chart/values.yaml"), TEMPLATE),
            (template, ""),
            (template, "image: a\0b\n"),
        ] {
            scans.offer(path, text, None);
            assert!(scans.take(path).is_none(), "{path:?} {text:?}");
        }
        let other = Path::new("/repo/chart/templates/job.yaml");
        scans.offer(other, TEMPLATE, None);
        let scan = scans.take(other).expect("scanned");
        assert!(!scan.findings.is_empty());
        assert_eq!(scan.fingerprint, None, "no fingerprints asked for");
    }
}
