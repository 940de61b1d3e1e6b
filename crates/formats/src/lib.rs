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

mod edit;
mod error;
mod finding;
mod kind;

pub use edit::{Edit, apply_edits};
pub use error::Error;
pub use finding::{EditSite, Finding, Status, Warning};
pub use kind::FileKind;

use std::path::Path;

/// Finds every image reference in `text`, a file of `kind` at `path`.
///
/// `path` is used for error messages and for kind-specific rules (a file under `templates/`
/// is a Helm template). Findings come back in file order.
pub fn scan(path: &Path, kind: FileKind, text: &str) -> Result<Vec<Finding>, Error> {
    let _ = (path, kind, text);
    Ok(Vec::new())
}
