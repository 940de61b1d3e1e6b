use std::ops::Range;

use tagpin_reference::{Digest, ImageReference};

use crate::{Edit, FileKind};

/// Where a reference stands, which decides whether tagpin touches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A tag (or none, meaning `latest`) and no digest: what tagpin pins.
    Floating,
    /// A tag and a digest: refreshed when the tag moves.
    Pinned,
    /// A digest and no tag: left alone, there is no tag to follow.
    DigestOnly,
    /// Contains `{{`, `${`, `$VAR` or another expansion: cannot be resolved here.
    Templated,
    /// Not a registry image: a Dockerfile stage, `scratch`, a compose image beside `build:`.
    Local,
    /// Excluded by an inline `# tagpin:ignore` comment (or, in the binary, by config).
    Ignored,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Self; 6] = [
        Self::Floating,
        Self::Pinned,
        Self::DigestOnly,
        Self::Templated,
        Self::Local,
        Self::Ignored,
    ];
}

/// Where the digest goes when the reference is pinned or refreshed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditSite {
    /// The whole reference is written in one place, [`Finding::span`]: it is replaced by
    /// `name:tag@digest` in the user's spelling.
    Inline,
    /// A Helm values split map with a `digest` key: `sha256:…` (or, when `bare`, only the hex
    /// digits: the chart's template adds `sha256:` itself) replaces the value inside its quotes
    /// at `span` (an empty `""` included).
    SplitDigest { span: Range<usize>, bare: bool },
    /// A Helm values split map without a `digest` key: the tag scalar's content at `span`,
    /// currently `tag` (as written, possibly with an old `@digest`), becomes `tag@digest`.
    SplitTag { span: Range<usize>, tag: String },
    /// The digest goes into a key the file does not have yet: `before`, the digest and `after`
    /// are inserted at byte `at` (a Kustomize image entry's new `digest:`).
    InsertKey {
        at: usize,
        before: String,
        after: String,
    },
    /// The reference is reported but tagpin will not write it: `reason` says why (for example
    /// a double-quoted YAML scalar whose escapes make the source differ from the value).
    /// [`Finding::edit`] returns `None`.
    Unsupported { reason: String },
}

/// A lint finding attached to a reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Warning {
    /// A Kubernetes container whose tag is `latest` (written or implied) and that sets no
    /// `imagePullPolicy`: kubelet defaults it to `Always`, even with a digest.
    LatestPullsAlways,
}

impl Warning {
    pub fn message(self) -> &'static str {
        match self {
            Self::LatestPullsAlways => {
                "tag `latest` without imagePullPolicy: kubelet defaults to Always, even with a \
                 digest, so every pod start pulls from the registry; set imagePullPolicy: \
                 IfNotPresent or use a versioned tag"
            }
        }
    }
}

/// One image reference found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The file kind whose rules found it.
    pub kind: FileKind,
    /// 1-based line of the span's first byte (for split maps, of the repository or name scalar).
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// Byte range of the reference in the file. For split maps, the range of the repository
    /// scalar; the digest goes to [`Finding::site`].
    pub span: Range<usize>,
    /// The reference as written. For split maps, the parts joined as a chart would join them
    /// (`registry/repository:tag@digest`).
    pub text: String,
    pub status: Status,
    /// The parsed reference, for every status except `templated` (and `local` stage names).
    pub reference: Option<ImageReference>,
    pub site: EditSite,
    pub warnings: Vec<Warning>,
    /// The reference to look the digest up for when it is not the one written: a chart
    /// renders a values string with a registry of its own. `None`: the written one.
    pub resolve: Option<Box<ImageReference>>,
    /// For a chart's values, where the tag the chart renders comes from.
    pub tag_source: Option<crate::chart::TagSource>,
    /// What only some findings have (boxed: most have none, and every finding of a run is
    /// kept until the report): see [`Finding::platform`] and [`Finding::pull_policy`].
    pub extras: Option<Box<Extras>>,
}

/// The rarer facts about a finding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extras {
    /// See [`Finding::platform`].
    pub platform: Option<String>,
    /// See [`Finding::pull_policy`].
    pub pull_policy: Option<Edit>,
    /// See [`Finding::unproven`].
    pub unproven: Option<String>,
}

impl Finding {
    /// The platform a Dockerfile `FROM --platform=…` names literally (`linux/arm64`), as
    /// written: the only one this reference is pulled for. `None` elsewhere, and when the
    /// value is an expansion (`$BUILDPLATFORM`).
    pub fn platform(&self) -> Option<&str> {
        self.extras.as_ref()?.platform.as_deref()
    }

    /// For a Kubernetes container with the [`Warning::LatestPullsAlways`] warning, the edit
    /// that adds `imagePullPolicy: IfNotPresent` right after its `image:` line
    /// (`pin --latest pull-policy`). `None` where no insertion can be proven to land in that
    /// container only (an anchored mapping, a Helm action on the line, …).
    pub fn pull_policy(&self) -> Option<&Edit> {
        self.extras.as_ref()?.pull_policy.as_ref()
    }
    /// For a split map in chart values that no rendering can prove (a Flux `HelmRelease`'s or
    /// an Argo CD `Application`'s values, whose chart tagpin does not read), why: the binary
    /// makes the finding unwritable with this reason unless the user opted in to key-name
    /// rules (`unproven_values: key-names`). The edit site is the one the key names give.
    pub fn unproven(&self) -> Option<&str> {
        self.extras.as_ref()?.unproven.as_deref()
    }

    /// The reference whose tag is looked up: [`Finding::resolve`], or the one written.
    pub fn lookup(&self) -> Option<&ImageReference> {
        self.resolve.as_deref().or(self.reference.as_ref())
    }

    /// The edit that writes `digest` into this reference, or `None` when the status is not
    /// `floating` or `pinned`, or the reference already carries that digest.
    pub fn edit(&self, digest: &Digest) -> Option<Edit> {
        if !matches!(self.status, Status::Floating | Status::Pinned) {
            return None;
        }
        let reference = self.reference.as_ref()?;
        if reference.digest() == Some(digest) {
            return None;
        }
        let (span, replacement) = match &self.site {
            EditSite::Inline => (self.span.clone(), reference.pinned_text(digest)),
            EditSite::SplitDigest { span, bare: false } => (span.clone(), digest.to_string()),
            EditSite::SplitDigest { span, bare: true } => {
                (span.clone(), digest.encoded().to_owned())
            }
            EditSite::SplitTag { span, tag } => {
                let bare = tag.split_once('@').map_or(tag.as_str(), |(tag, _)| tag);
                (span.clone(), format!("{bare}@{digest}"))
            }
            EditSite::InsertKey { at, before, after } => {
                (*at..*at, format!("{before}{digest}{after}"))
            }
            EditSite::Unsupported { .. } => return None,
        };
        Some(Edit { span, replacement })
    }
}

#[cfg(test)]
mod size {
    /// A tree of small files keeps one finding per reference until the report is made: a
    /// field added here costs its size times every reference (100,000 and more).
    #[test]
    fn a_finding_stays_small() {
        let size = size_of::<super::Finding>();
        // 296 before issue 13; its two rarer facts (a Dockerfile platform, a pull-policy
        // insertion) share one boxed pointer: 304.
        assert!(size <= 304, "a Finding is {size} bytes");
    }
}
