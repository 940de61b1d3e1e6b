//! The config file's filters: `include`/`exclude` globs over paths, `ignore` patterns over
//! references.

use std::path::Path;

use anyhow::Context as _;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use tagpin_formats::{CustomPattern, Finding, Status};

/// `include` and `exclude` globs, matched against a path relative to the scanned directory.
///
/// `*` stays within one path component and `**` crosses them; a glob without `/` matches at
/// any depth (`*.tpl` is `**/*.tpl`). A directory that `exclude` matches is not entered.
#[derive(Clone, Debug)]
pub struct PathFilter {
    include: Option<GlobSet>,
    exclude: GlobSet,
    custom: CustomRules,
}

impl Default for PathFilter {
    fn default() -> Self {
        Self {
            include: None,
            exclude: GlobSet::empty(),
            custom: CustomRules::default(),
        }
    }
}

/// The config's `custom` entries: which files each reads, with which pattern.
#[derive(Clone, Debug, Default)]
pub struct CustomRules {
    /// Every entry's globs; `owners[i]` is the entry glob `i` belongs to.
    files: Option<GlobSet>,
    owners: Vec<usize>,
    patterns: Vec<CustomPattern>,
}

impl CustomRules {
    pub fn new(entries: &[crate::config::Custom]) -> anyhow::Result<Self> {
        if entries.is_empty() {
            return Ok(Self::default());
        }
        let mut globs = Vec::new();
        let mut owners = Vec::new();
        let mut patterns = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            globs.extend(entry.files.iter().cloned());
            owners.extend(std::iter::repeat_n(index, entry.files.len()));
            patterns.push(
                CustomPattern::new(&entry.pattern)
                    .with_context(|| format!("invalid `custom` pattern `{}`", entry.pattern))?,
            );
        }
        Ok(Self {
            files: Some(path_globs(&globs).context("invalid `custom` files glob")?),
            owners,
            patterns,
        })
    }

    /// The patterns of the entries whose `files` match `relative`, in config order.
    pub fn patterns_for(&self, relative: &Path) -> Vec<CustomPattern> {
        let Some(files) = &self.files else {
            return Vec::new();
        };
        let mut entries: Vec<usize> = files
            .matches(relative)
            .into_iter()
            .map(|glob| self.owners[glob])
            .collect();
        entries.sort_unstable();
        entries.dedup();
        entries
            .into_iter()
            .map(|entry| self.patterns[entry].clone())
            .collect()
    }
}

impl PathFilter {
    pub fn new(include: &[String], exclude: &[String]) -> anyhow::Result<Self> {
        let include = if include.is_empty() {
            None
        } else {
            Some(path_globs(include).context("invalid `include` glob")?)
        };
        let exclude = path_globs(exclude).context("invalid `exclude` glob")?;
        Ok(Self {
            include,
            exclude,
            custom: CustomRules::default(),
        })
    }

    /// The filter with the config's `custom` entries.
    pub fn with_custom(self, custom: CustomRules) -> Self {
        Self { custom, ..self }
    }

    /// The `custom` patterns that read the file at `relative` (empty for most files). Such a
    /// file is read whatever its name; `exclude` still applies in a walked directory.
    pub fn custom_patterns(&self, relative: &Path) -> Vec<CustomPattern> {
        self.custom.patterns_for(relative)
    }

    /// Whether the walker enters the directory at `relative`.
    pub fn enters(&self, relative: &Path) -> bool {
        !self.exclude.is_match(relative)
    }

    /// Whether the file at `relative` is read: by [`PathFilter::reads`], or, for a file
    /// `custom` names, unless `exclude` matches it.
    pub fn reads_or_custom(&self, relative: &Path, custom: bool) -> bool {
        if custom {
            !self.exclude.is_match(relative)
        } else {
            self.reads(relative)
        }
    }

    /// Whether the file at `relative` is read.
    pub fn reads(&self, relative: &Path) -> bool {
        !self.exclude.is_match(relative)
            && self
                .include
                .as_ref()
                .is_none_or(|set| set.is_match(relative))
    }
}

fn path_globs(patterns: &[String]) -> anyhow::Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim_start_matches("./").trim_end_matches('/');
        let anchored = if trimmed.contains('/') {
            trimmed.trim_start_matches('/').to_owned()
        } else {
            format!("**/{trimmed}")
        };
        let glob = GlobBuilder::new(&anchored)
            .literal_separator(true)
            .build()
            .with_context(|| format!("`{pattern}`"))?;
        set.add(glob);
    }
    Ok(set.build()?)
}

/// The config file's `ignore` patterns.
///
/// A pattern is a glob where `*` matches any run of characters, `/` included. It matches a
/// reference when it matches the reference as written, its normalised
/// `registry/repository:tag` form or its normalised `registry/repository` (so a pattern without
/// a tag ignores every tag). A templated reference is only matched as written. `{a,b}` is an
/// alternation, so a literal `{` is written `[{]`.
#[derive(Clone, Debug)]
pub struct IgnorePatterns {
    set: GlobSet,
}

impl Default for IgnorePatterns {
    fn default() -> Self {
        Self {
            set: GlobSet::empty(),
        }
    }
}

impl IgnorePatterns {
    pub fn new(patterns: &[String]) -> anyhow::Result<Self> {
        let mut set = GlobSetBuilder::new();
        for pattern in patterns {
            set.add(
                Glob::new(pattern)
                    .with_context(|| format!("invalid `ignore` pattern `{pattern}`"))?,
            );
        }
        Ok(Self { set: set.build()? })
    }

    /// Whether `finding` matches a pattern.
    pub fn matches(&self, finding: &Finding) -> bool {
        if self.set.is_empty() {
            return false;
        }
        if self.set.is_match(&finding.text) {
            return true;
        }
        finding.reference.as_ref().is_some_and(|reference| {
            let name = format!("{}/{}", reference.registry(), reference.repository());
            self.set.is_match(reference.as_written())
                || self
                    .set
                    .is_match(format!("{name}:{}", reference.tag_or_latest()))
                || self.set.is_match(&name)
        })
    }

    /// Marks the findings that match a pattern `ignored`; `local` findings (not registry
    /// images) stay as they are.
    pub fn apply(&self, findings: &mut [Finding]) {
        for finding in findings {
            if finding.status != Status::Local && self.matches(finding) {
                finding.status = Status::Ignored;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use tagpin_formats::{EditSite, FileKind};
    use tagpin_reference::ImageReference;

    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn finding(text: &str, status: Status) -> Finding {
        Finding {
            kind: FileKind::Yaml,
            line: 1,
            column: 8,
            span: 7..7 + text.len(),
            text: text.to_owned(),
            status,
            reference: ImageReference::parse(text).ok(),
            resolve: None,
            tag_source: None,
            extras: None,
            site: EditSite::Inline,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn ignore_patterns_match_as_written_and_normalised() {
        let patterns = IgnorePatterns::new(&strings(&[
            "ghcr.io/acme/*:dev",
            "docker.io/library/busybox",
            "redis:7*",
            "*[{][{]*",
        ]))
        .unwrap();
        for (text, ignored) in [
            ("ghcr.io/acme/api:dev", true),
            ("ghcr.io/acme/team/api:dev", true),
            ("ghcr.io/acme/api:prod", false),
            ("ghcr.io/other/api:dev", false),
            ("busybox", true),
            ("busybox:1.36", true),
            ("library/busybox:1.36", true),
            ("docker.io/library/busybox:1.36", true),
            ("alpine:3", false),
            ("redis:7.2", true),
            // Neither as written nor normalised: write the normalised form to catch every spelling.
            ("docker.io/redis:7.2", false),
            ("redis:6", false),
            ("{{ .Values.image }}", true),
        ] {
            assert_eq!(
                patterns.matches(&finding(text, Status::Floating)),
                ignored,
                "{text}"
            );
        }
    }

    #[test]
    fn pinned_references_match_their_tag_form() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let patterns = IgnorePatterns::new(&strings(&["ghcr.io/acme/*:dev"])).unwrap();
        let text = format!("ghcr.io/acme/api:dev@{digest}");
        assert!(patterns.matches(&finding(&text, Status::Pinned)));
    }

    #[test]
    fn apply_leaves_local_findings_alone() {
        let patterns = IgnorePatterns::new(&strings(&["*"])).unwrap();
        let mut findings = vec![
            finding("builder", Status::Local),
            finding("nginx:1.27", Status::Floating),
            finding("$BASE", Status::Templated),
        ];
        patterns.apply(&mut findings);
        let statuses: Vec<Status> = findings.iter().map(|f| f.status).collect();
        assert_eq!(statuses, [Status::Local, Status::Ignored, Status::Ignored]);
    }

    #[test]
    fn no_patterns_match_nothing() {
        assert!(!IgnorePatterns::default().matches(&finding("busybox", Status::Floating)));
    }

    #[test]
    fn bad_patterns_are_errors() {
        let error = IgnorePatterns::new(&strings(&["ghcr.io/[acme"])).unwrap_err();
        assert!(
            format!("{error:#}").contains("`ghcr.io/[acme`"),
            "{error:#}"
        );
        assert!(PathFilter::new(&strings(&["a/[b"]), &[]).is_err());
    }

    #[test]
    fn path_filter_table() {
        let filter = PathFilter::new(
            &strings(&["charts/**", "Dockerfile", "./deploy/*.yaml"]),
            &strings(&["vendor/", "*.tpl", "charts/old/**"]),
        )
        .unwrap();
        for (path, reads) in [
            ("charts/app/values.yaml", true),
            ("charts/app/templates/_helpers.tpl", false),
            ("charts/old/values.yaml", false),
            ("Dockerfile", true),
            ("images/api/Dockerfile", true),
            ("deploy/app.yaml", true),
            ("deploy/nested/app.yaml", false),
            ("other.yaml", false),
        ] {
            assert_eq!(filter.reads(&PathBuf::from(path)), reads, "{path}");
        }
        assert!(!filter.enters(Path::new("vendor")));
        assert!(!filter.enters(Path::new("third_party/vendor")));
        assert!(filter.enters(Path::new("charts")));
    }

    #[test]
    fn empty_include_reads_everything_not_excluded() {
        let filter = PathFilter::new(&[], &strings(&["tests/fixtures/**"])).unwrap();
        assert!(filter.reads(Path::new("a/b/values.yaml")));
        assert!(!filter.reads(Path::new("tests/fixtures/bad.yaml")));
    }
}
