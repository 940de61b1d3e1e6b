//! Which values of a YAML document are image references: one module per file kind, over the
//! tree the [`crate::yaml`] reader builds.
//!
//! A rules module sees each mapping as its consumer does ([`Map`]: the path from the root,
//! the entries with merge keys folded in, aliases followed) and reports candidates to [`Out`];
//! it knows nothing of YAML syntax. This module turns candidates into findings: one per edited
//! span however many places reach it, and an anchored scalar that is also used somewhere that
//! is not an image is reported but never written (see [`finish`]).
//!
//! Adding a kind: a module here with a type implementing [`Rules`], chosen in [`rules_for`].

mod azure;
pub(crate) mod chart_values;
mod ci_scripts;
mod cloud_build;
mod compose;
mod gitlab_ci;
pub(crate) mod helm_values;
pub(crate) mod insert;
mod kubernetes;
mod kustomize;
mod molecule;
mod tekton;
pub(crate) mod walk;
mod woodpecker;
mod workflow;

use std::cell::OnceCell;
use std::ops::Range;
use std::path::Path;

use crate::common::{FLUX_MANAGED, Found, Sink};
use crate::yaml::Tree;
use crate::yaml::tree::{NodeId, Style};
use crate::{EditSite, Error, FileKind, Status};
pub(crate) use kubernetes::{is_image_key, names_a_file};
pub(crate) use walk::{At, Doc, Entry, Offsets, ScalarAt, Seg, word_offsets};
use walk::{Limit, Use, Uses, Visitor, Words};

/// The rules of one file kind.
pub(crate) trait Rules {
    /// Reports the references `map` holds itself: its image scalars and split maps (nested
    /// mappings get their own call).
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>);

    /// Whether the file's consumer ignores values at `path` (compose's `x-*` extension
    /// fields), so an anchored scalar used there may still be rewritten.
    fn inert(&self, _path: &[Seg<'_>]) -> bool {
        false
    }

    /// Words every mapping these rules report from holds in its own source, when there are
    /// such (see [`Visitor::words`]); `None` when any mapping may hold a reference.
    fn words(&self) -> Option<&'static Words> {
        None
    }
}

/// The words of `visitor` (see [`Visitor::words`]).
pub(crate) fn walk_words(visitor: &dyn Visitor<'_>) -> Option<&'static Words> {
    visitor.words()
}

/// The words every mapping the rules for `kind` report from holds in its source, if there are
/// such (see [`Visitor::words`]).
pub(crate) fn words_for(kind: FileKind) -> Option<&'static Words> {
    rules_for(kind).words()
}

/// The rules for `kind`'s YAML documents.
fn rules_for(kind: FileKind) -> &'static dyn Rules {
    match kind {
        FileKind::Compose => &compose::Compose,
        FileKind::Workflow => &workflow::Workflow,
        FileKind::GitlabCi => &gitlab_ci::GitlabCi,
        FileKind::Kustomize => &kustomize::Kustomize,
        FileKind::CloudBuild => &cloud_build::CloudBuild,
        FileKind::Yaml
        | FileKind::HelmTemplate
        | FileKind::Dockerfile
        | FileKind::Shell
        | FileKind::Devcontainer
        | FileKind::Custom => &kubernetes::KubernetesAndHelm,
    }
}

/// A mapping as a rules module sees it.
pub(crate) struct Map<'t, 'w> {
    pub(crate) doc: Doc<'t>,
    /// The mapping itself, as reached.
    pub(crate) at: &'w At,
    pub(crate) path: &'w [Seg<'t>],
    pub(crate) entries: &'w [Entry<'t>],
    /// The mapping is aliased, or inside an aliased node: a new entry would appear in every
    /// place that uses it.
    pub(crate) shared: bool,
}

impl<'t> Map<'t, '_> {
    pub(crate) fn get(&self, key: &str) -> Option<&At> {
        self.entries.iter().find(|e| e.key == key).map(|e| &e.value)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The scalar value of `key`, if it has one.
    pub(crate) fn scalar(&self, key: &str) -> Option<ScalarAt<'t>> {
        self.doc.scalar(self.get(key)?)
    }

    /// The key this mapping is the value of, and the one above that.
    pub(crate) fn parent(&self) -> Option<&'t str> {
        match self.path.last() {
            Some(Seg::Key(key)) => Some(key),
            _ => None,
        }
    }

    pub(crate) fn grandparent(&self) -> Option<&'t str> {
        match self.path {
            [.., Seg::Key(key), Seg::Key(_)] => Some(key),
            _ => None,
        }
    }
}

/// A reference a rules module found, before de-duplication.
pub(crate) struct Candidate {
    pub(crate) found: Found,
    /// The scalar an edit would rewrite, as reached (for the anchor check).
    pub(crate) target: Option<At>,
}

impl Candidate {
    /// Whether its reference names neither a tag nor a digest (`quay.io/ceph/daemon`): an
    /// edit would write `:latest@sha256:…`, which the rules allow only where nothing else may
    /// complete the name.
    pub(crate) fn is_untagged(&self) -> bool {
        self.found
            .reference
            .as_ref()
            .is_some_and(|r| r.tag().is_none() && r.digest().is_none())
    }
}

/// Why an image of a workload Keel updates is not written.
pub(crate) const KEEL_MANAGED: &str = "managed by Keel (`keel.sh/policy` on the workload): \
     Keel moves this image to new tags, which a digest would stop";

/// Why an image of a workload `OpenShift`'s image triggers set is not written.
pub(crate) const OPENSHIFT_TRIGGERED: &str = "set by OpenShift from an image stream (an \
     `image.openshift.io/triggers` annotation or an `ImageChange` trigger): OpenShift writes \
     the image stream's image here, so tagpin leaves it alone";

/// Why an image of a resource whose operator upgrades it is not written.
pub(crate) const OPERATOR_UPGRADED: &str = "upgraded by its operator (`spec.upgradeOptions.apply` \
     is not `disabled`): the operator writes the images its version service recommends here, \
     so a digest would be overwritten or fought over";

/// Where rules modules report candidates.
pub(crate) struct Out<'s> {
    /// The file as written (for reference texts).
    pub(crate) text: &'s str,
    /// The text the tree was read from: the same, or a Helm template with masked actions.
    pub(crate) structure: &'s str,
    /// The document is a `HelmRelease` or an Argo CD `Application`, holding chart values.
    pub(crate) chart_values: Option<chart_values::ChartValues>,
    /// What the document's `apiVersion` and `kind` make of its image keys.
    pub(crate) role: kubernetes::Role,
    /// The document names an `apiVersion`: a Kubernetes object, whose `steps` are containers
    /// (Tekton's), where a CI pipeline's (Drone's) are not.
    pub(crate) kubernetes: bool,
    /// Whether the document is a workload a controller moves to new images, read only when
    /// it has an image to report (see [`Out::managed`]).
    controllers: Controllers<'s>,
    candidates: Vec<Candidate>,
    /// The regions of the text that are shell scripts a pipeline runs, and whether each is
    /// one command line folded over several ([`Out::script`]).
    scripts: Vec<(Range<usize>, bool)>,
}

/// What [`Out::managed`] reads: the document, and what it found once asked.
struct Controllers<'s> {
    doc: Doc<'s>,
    root: NodeId,
    managed: OnceCell<Option<&'static str>>,
    /// Whether the document's text names Windows, once asked.
    windows: OnceCell<bool>,
}

impl Out<'_> {
    /// Why the document's images are not written, when it is a workload a controller moves to
    /// new images (Keel's `keel.sh/policy`, `OpenShift`'s image triggers, an operator told to
    /// upgrade them).
    pub(crate) fn managed(&self) -> Option<&'static str> {
        let Controllers {
            doc, root, managed, ..
        } = &self.controllers;
        *managed.get_or_init(|| {
            chart_values::controller(*doc, *root).map(|controller| match controller {
                chart_values::Controller::Keel => KEEL_MANAGED,
                chart_values::Controller::OpenShift => OPENSHIFT_TRIGGERED,
                chart_values::Controller::Operator => OPERATOR_UPGRADED,
            })
        })
    }

    /// Whether the document's text names Windows (a CI pipeline's executor, agent or
    /// platform), searched once per document.
    pub(crate) fn names_windows(&self) -> bool {
        *self.controllers.windows.get_or_init(|| {
            let controllers = &self.controllers;
            let span = controllers.doc.tree.node(controllers.root).span.range();
            self.text.get(span).is_some_and(|document| {
                memchr::memmem::find(document.as_bytes(), b"indows").is_some()
            })
        })
    }

    /// Whether a span overlaps a masked Helm action.
    pub(crate) fn masked(&self, span: Range<usize>) -> bool {
        self.text.get(span.clone()) != self.structure.get(span)
    }

    /// Whether a candidate was reported at `span` already (a default two uses share).
    pub(crate) fn has_candidate_at(&self, span: &Range<usize>) -> bool {
        self.candidates.iter().any(|c| c.found.span == *span)
    }

    /// The candidate pushed last.
    pub(crate) fn last_candidate(&mut self) -> &mut Candidate {
        self.candidates.last_mut().expect("a candidate was pushed")
    }

    pub(crate) fn push(&mut self, found: Found, target: Option<At>) -> &mut Candidate {
        self.candidates.push(Candidate { found, target });
        self.candidates.last_mut().expect("just pushed")
    }

    /// `scalar` is a shell script a pipeline runs (a workflow step's `run`, a GitLab job's
    /// `script` line): its commands are read as a script's are. Only a scalar whose source is
    /// the script, or the one command line YAML folds it into, is read: a literal block (its
    /// lines after the indicator; the indentation YAML strips is blanks to a shell), one line
    /// with no escapes, or a plain or folded scalar with no blank line (and a folded one with
    /// no line indented deeper), which YAML joins into one line with spaces.
    pub(crate) fn script(&mut self, scalar: &ScalarAt<'_>) {
        let Some(source) = self.text.get(scalar.span.clone()) else {
            return;
        };
        let lines = source.contains('\n');
        let script = match scalar.style {
            Style::Literal | Style::Folded => {
                let Some(header) = source.find('\n') else {
                    return;
                };
                let region = scalar.span.start + header + 1..scalar.span.end;
                let folded = scalar.style == Style::Folded;
                if folded && !folds_into_one_line(source[header + 1..].lines(), true) {
                    return;
                }
                (region, folded)
            }
            Style::Plain if lines => {
                if !folds_into_one_line(source.lines().skip(1), false) {
                    return;
                }
                (scalar.span.clone(), true)
            }
            // A quoted scalar's span is inside its quotes.
            Style::Plain | Style::Single | Style::Double => {
                if scalar.decoded || lines {
                    return;
                }
                (scalar.span.clone(), false)
            }
        };
        // Pushed as often as places reach it; [`scan_scripts`] reads each once.
        let (region, _) = &script;
        if !region.is_empty() && !self.masked(region.clone()) {
            self.scripts.push(script);
        }
    }

    /// A reference written whole in `scalar` (after `prefix`, such as `docker://`).
    pub(crate) fn inline(&mut self, scalar: &ScalarAt<'_>, prefix: &str) -> Option<&mut Candidate> {
        self.inline_between(scalar, prefix, "")
    }

    /// A reference written whole in `scalar` between `prefix` and `suffix` (a compose
    /// variable's default: `${IMAGE:-` and `}`).
    pub(crate) fn inline_between(
        &mut self,
        scalar: &ScalarAt<'_>,
        prefix: &str,
        suffix: &str,
    ) -> Option<&mut Candidate> {
        if matches!(scalar.style, Style::Literal | Style::Folded) {
            return None;
        }
        let raw = self.text.get(scalar.span.clone())?;
        let raw_ref = raw.strip_prefix(prefix)?.strip_suffix(suffix)?;
        let span = scalar.span.start + prefix.len()..scalar.span.end - suffix.len();
        if raw_ref.is_empty() {
            return None;
        }
        let found = if self.masked(scalar.span.clone()) {
            Found::templated(span, raw_ref)
        } else if scalar.style == Style::Plain && is_yaml_keyword(raw_ref) {
            return None;
        } else if scalar.decoded {
            let value = scalar.value.strip_prefix(prefix)?.strip_suffix(suffix)?;
            let mut found = Found::inline(span, value)?;
            raw_ref.clone_into(&mut found.text);
            found.site = EditSite::Unsupported {
                reason: UNSUPPORTED_ESCAPES.to_owned(),
            };
            found
        } else {
            Found::inline(span, raw_ref)?
        };
        Some(self.push(found, Some(scalar.at.clone())))
    }
}

pub(crate) const UNSUPPORTED_ESCAPES: &str =
    "the YAML scalar uses escapes or spans lines, so its source differs from its value";

/// How many times `text` holds `needle` as a whole name: not followed by another byte of a
/// name (`matrix.image`, not `matrix.image_arch`).
pub(crate) fn whole_name_reads(text: &str, needle: &str) -> usize {
    text.match_indices(needle)
        .filter(|(at, _)| {
            let after = text[at + needle.len()..].bytes().next();
            !after.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        })
        .count()
}

/// Words YAML reads as something other than a string, which would otherwise parse as names.
pub(crate) fn is_yaml_keyword(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) || text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'+')
}

struct RuleVisitor<'r, 's> {
    rules: &'r dyn Rules,
    out: Out<'s>,
}

/// Two visitors on one walk. The walk passes over what holds none of the second one's words,
/// which must include the first one's (see [`apply_with`]).
struct Both<'a, 'b, 't>(&'a mut dyn Visitor<'t>, &'b mut dyn Visitor<'t>);

impl<'t> Visitor<'t> for Both<'_, '_, 't> {
    fn words(&self) -> Option<&'static Words> {
        self.0.words().and(self.1.words())
    }

    fn mapping(
        &mut self,
        doc: Doc<'t>,
        at: &At,
        path: &[Seg<'t>],
        entries: &[Entry<'t>],
        shared: bool,
    ) {
        self.0.mapping(doc, at, path, entries, shared);
        self.1.mapping(doc, at, path, entries, shared);
    }
}

impl<'t> Visitor<'t> for RuleVisitor<'_, '_> {
    fn words(&self) -> Option<&'static Words> {
        self.rules.words()
    }

    fn mapping(
        &mut self,
        doc: Doc<'t>,
        at: &At,
        path: &[Seg<'t>],
        entries: &[Entry<'t>],
        shared: bool,
    ) {
        let map = Map {
            doc,
            at,
            path,
            entries,
            shared,
        };
        self.rules.mapping(&map, &mut self.out);
    }
}

/// Finds the references in `tree` (read from `structure`, the file `sink.text` or its masked
/// form) by the rules of `kind`, into `sink`.
pub(crate) fn apply(
    sink: &mut Sink<'_>,
    tree: &Tree,
    structure: &str,
    path: &Path,
) -> Result<(), Error> {
    apply_with(sink, tree, structure, path, None, None)
}

/// [`apply`], with `first` called for every mapping of the first document too (its walk
/// shared): a chart's values file is walked once for its findings and its image maps. The
/// walk then passes over what holds none of `first`'s words (see [`Visitor::words`]), which
/// must include the rules' own. `known`: where some words are in `structure`, found already.
pub(crate) fn apply_with<'t>(
    sink: &mut Sink<'_>,
    tree: &'t Tree,
    structure: &'t str,
    path: &Path,
    mut first: Option<&mut dyn Visitor<'t>>,
    known: Option<Offsets<'_>>,
) -> Result<(), Error> {
    let ci = (sink.kind == FileKind::Yaml)
        .then(|| ci_scripts::CiScripts::of(path))
        .flatten();
    let rules: &dyn Rules = match sink.kind {
        FileKind::Yaml if ci.is_some() => ci.as_ref().expect("just checked"),
        FileKind::Yaml if woodpecker::is_pipeline(path) => &woodpecker::Woodpecker,
        FileKind::Yaml if molecule::is_scenario(path) => &molecule::Molecule,
        kind => rules_for(kind),
    };
    let doc = Doc { tree, structure };
    let aliased = walk::aliased(tree);
    let mut scripts = Vec::new();
    for (index, root) in tree.documents.iter().enumerate() {
        let Some(root) = root else { continue };
        let document = chart_values::read_root(doc, *root);
        let mut visitor = RuleVisitor {
            rules,
            out: Out {
                text: sink.text,
                structure,
                chart_values: document.chart_values,
                role: kubernetes::Role::of(document.api, document.kind),
                kubernetes: document.api.is_some(),
                controllers: Controllers {
                    doc,
                    root: *root,
                    managed: OnceCell::new(),
                    windows: OnceCell::new(),
                },
                candidates: Vec::new(),
                scripts: Vec::new(),
            },
        };
        let walked = match first.as_deref_mut().filter(|_| index == 0) {
            Some(also) => {
                let both = &mut Both(&mut visitor, also);
                walk::walk_knowing(doc, *root, &aliased, both, known)
            }
            None => walk::walk_knowing(doc, *root, &aliased, &mut visitor, known),
        };
        let uses = walked.map_err(|limit| {
            let (at, message) = match limit {
                Limit::Expansion(nodes) => (
                    tree.node(*root).span.start as usize,
                    format!("aliases expand the document past {nodes} nodes"),
                ),
                Limit::Depth(node) => (
                    tree.node(node).span.start as usize,
                    format!(
                        "nesting deeper than {} levels (aliases followed)",
                        crate::yaml::tree::MAX_DEPTH
                    ),
                ),
            };
            let (line, column) = sink.position(at);
            Error::Limit {
                path: path.to_path_buf(),
                line,
                column,
                message,
            }
        })?;
        finish(sink, doc, rules, visitor.out.candidates, &uses);
        scripts.extend(visitor.out.scripts);
    }
    scan_scripts(sink, scripts);
    Ok(())
}

/// Whether a step's shell is bash or sh: `bash`, `sh`, or a command line of either
/// (`/bin/bash -eo pipefail`, `bash --noprofile --norc -eo pipefail {0}`).
pub(crate) fn is_posix_shell(shell: &str) -> bool {
    let program = shell.split_whitespace().next().unwrap_or_default();
    let program = program.rsplit('/').next().unwrap_or(program);
    matches!(program, "bash" | "sh")
}

/// Whether `lines` (a plain scalar's lines after its first, or a folded block's content) fold
/// into one line with its first: none is blank, and for a folded block (`alike`), all are
/// indented alike (a folded block keeps the line breaks around a line indented deeper; a
/// plain scalar's indentation is folded away).
fn folds_into_one_line<'a>(mut lines: impl Iterator<Item = &'a str>, alike: bool) -> bool {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut first = None;
    lines.all(|line| {
        let same = *first.get_or_insert(indent(line)) == indent(line);
        !line.trim().is_empty() && (same || !alike)
    })
}

/// Reads the scripts the rules found as a shell script's lines are read, once each however
/// many places reach them (a GitLab `script` anchored and aliased into several jobs).
fn scan_scripts(sink: &mut Sink<'_>, mut scripts: Vec<(Range<usize>, bool)>) {
    if scripts.is_empty() {
        return;
    }
    scripts.sort_by_key(|(region, _)| (region.start, region.end));
    scripts.dedup();
    let from = sink.len();
    for (region, joined) in scripts {
        crate::shell::scan_region(sink, region, joined);
    }
    // What the file's YAML says it builds (a build action's tags) is what its scripts run.
    let made: Vec<String> = sink.findings[..from]
        .iter()
        .filter(|finding| finding.status == Status::Local)
        .map(|finding| finding.text.clone())
        .collect();
    for finding in &mut sink.findings[from..] {
        let floats = matches!(finding.status, Status::Floating | Status::Pinned);
        if floats
            && made
                .iter()
                .any(|name| crate::shell::same_local_name(name, &finding.text))
        {
            finding.status = Status::Local;
        }
    }
    crate::shell::mark_named_elsewhere(sink, from);
}

/// One finding per span. An anchored scalar used at a place the rules did not call an image
/// (and that is not inert) keeps its finding, but becomes [`EditSite::Unsupported`]: rewriting
/// it would change that other value too.
fn finish(
    sink: &mut Sink<'_>,
    doc: Doc<'_>,
    rules: &dyn Rules,
    candidates: Vec<Candidate>,
    uses: &Uses<'_>,
) {
    let mut candidates = candidates;
    mark_built(&mut candidates);
    // Stable: a span's first candidate (in walk order) stays first in its group.
    candidates.sort_by_key(|c| (c.found.span.start, c.found.span.end));
    let mut rest = candidates.into_iter().peekable();
    while let Some(first) = rest.next() {
        let span = first.found.span.clone();
        let mut group = vec![first];
        while let Some(next) = rest.next_if(|c| c.found.span == span) {
            group.push(next);
        }
        let found = merge(sink, doc, rules, group, uses);
        sink.push(found);
    }
}

/// Marks `local` the references to an image the file builds (compose's `worker: {image:
/// app:1}` beside `api: {image: app:1, build: .}`: what runs is the build), and the image
/// Kubebuilder and Operator SDK scaffold as a placeholder (`controller:latest`, which
/// `make docker-build` builds and `kustomize edit set image controller=${IMG}` replaces).
fn mark_built(candidates: &mut [Candidate]) {
    let built: Vec<String> = candidates
        .iter()
        .filter(|c| c.found.status == Status::Local)
        .map(|c| c.found.text.clone())
        .collect();
    for candidate in candidates.iter_mut() {
        let found = &mut candidate.found;
        if !matches!(found.status, Status::Floating | Status::Pinned) {
            continue;
        }
        let placeholder = found
            .reference
            .as_ref()
            .is_some_and(|r| r.name_as_written() == "controller");
        if placeholder || built.contains(&found.text) {
            found.status = Status::Local;
        }
    }
}

/// The finding for every candidate at one span.
fn merge(
    sink: &mut Sink<'_>,
    doc: Doc<'_>,
    rules: &dyn Rules,
    group: Vec<Candidate>,
    uses: &Uses<'_>,
) -> Found {
    let base = group
        .iter()
        .position(|c| c.found.status != Status::Local)
        .unwrap_or(0);
    let pull_policy = group.iter().find_map(|c| c.found.pull_policy.clone());
    let unproven = group.iter().find_map(|c| c.found.unproven.clone());
    let mut chains = Vec::new();
    let mut target_node = None;
    let mut warnings = Vec::new();
    let mut also = Vec::new();
    for candidate in &group {
        for warning in &candidate.found.warnings {
            if !warnings.contains(warning) {
                warnings.push(*warning);
            }
        }
        also.extend(&candidate.found.also_lines);
        if let Some(target) = &candidate.target {
            target_node = Some(target.node);
            if let Some(&alias) = target.chain.last() {
                also.push(doc.tree.node(alias).span.start as usize);
            }
            chains.push(target.chain.clone());
        }
    }
    let mut found = group
        .into_iter()
        .nth(base)
        .expect("groups are not empty")
        .found;
    found.warnings = warnings;
    found.also_lines = also;
    found.pull_policy = pull_policy;
    found.unproven = unproven;
    // A Flux image-automation marker on any of its lines: Flux owns the reference.
    let flux = std::iter::once(found.span.start)
        .chain(found.also_lines.iter().copied())
        .any(|at| sink.line_is_flux_managed(at));
    if flux && found.status != Status::Local {
        found.status = Status::Ignored;
        found.site = EditSite::Unsupported {
            reason: FLUX_MANAGED.to_owned(),
        };
        // Flux owns it, whatever a chart would show.
        found.unproven = None;
        return found;
    }
    let editable = !matches!(found.site, EditSite::Unsupported { .. });
    if let (true, Some(node)) = (editable, target_node) {
        let other_use = uses
            .of(node)
            .find(|u| !chains.contains(&u.chain) && !rules.inert(uses.path(u)));
        if let Some(other) = other_use {
            found.site = EditSite::Unsupported {
                reason: shared_anchor_reason(sink, doc, node, (other, uses.path(other)), &chains),
            };
        }
    }
    found
}

/// "anchor `&ver` is also used at labels.version (line 7)".
fn shared_anchor_reason(
    sink: &mut Sink<'_>,
    doc: Doc<'_>,
    node: NodeId,
    (other, other_path): (&Use, &[Seg<'_>]),
    image_chains: &[walk::Chain],
) -> String {
    let alias = other
        .chain
        .last()
        .or_else(|| image_chains.iter().find_map(|chain| chain.last()))
        .copied();
    let name = alias
        .and_then(|alias| doc.structure.get(doc.tree.node(alias).span.range()))
        .map_or("", |text| text.trim_start_matches('*'));
    let at = other
        .chain
        .last()
        .map_or(doc.tree.node(node).span.start, |&alias| {
            doc.tree.node(alias).span.start
        });
    let (line, _) = sink.position(at as usize);
    format!(
        "anchor `&{name}` is also used at {} (line {line}), which is not an image; rewriting it \
         would change that value too",
        walk::display_path(other_path)
    )
}

#[cfg(test)]
mod tests;
