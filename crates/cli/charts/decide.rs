//! One values source decided by its chart: the renderings (with the `enabled` flags that show
//! the most, and again with the chart's own where a flag hides a map), the decisions, and
//! their application to the file's findings.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use tagpin_formats::EditSite;
use tagpin_formats::chart::{
    self, Decision, Render, Rendered, Renderings, SwitchChange, ValuesImages,
};

use super::dependencies;
use super::renderer::{self, Renderer};
use super::{ChartValues, FlagSet, Helm, Source, app_version, is_split, unknown_tag_floats};
use crate::commands::ScannedFile;

/// Renders with `helm`, or without it by the static reading. `helm_failed` is why Helm could
/// not render the chart, when the static reading is the fallback: the reasons it gives say so.
pub(super) fn render_and_decide(
    file: &mut ScannedFile,
    chart: &Path,
    source: &Source<'_>,
    helm: Option<&Helm>,
    helm_failed: Option<&str>,
    prove: bool,
) -> Result<ChartValues, String> {
    // Copied only when a flag must be dropped (see `sentinels`).
    let mut images = std::borrow::Cow::Borrowed(&source.images);
    let staged = helm.map(|_| std::sync::Arc::new(dependencies::stage(chart)));
    let renderer = match (helm, &staged) {
        (Some(helm), Some(staged)) => Renderer::Helm(helm.clone(), staged.clone()),
        _ => static_renderer(chart, source)?,
    };
    let source_renderer = SourceRenderer {
        renderer: &renderer,
        values: source.values.iter().map(PathBuf::as_path).collect(),
        prove,
    };
    let sentinels = source_renderer.sentinels(&mut images)?;
    let images = &*images;
    let (renderings, blocked, originals) = source_renderer.rest(images, sentinels)?;
    // The static reading read `Chart.yaml` already.
    let app_version = match &renderer {
        Renderer::Static(read) => read.app_version().map(str::to_owned),
        Renderer::Helm(..) => app_version(chart),
    };
    let mut decisions = chart::decide(images, &renderings, app_version.as_deref());
    if let Some(staged) = staged.filter(|staged| !staged.dropped.is_empty()) {
        leave_global(images, &mut decisions, &staged);
    }
    for (i, reason) in blocked {
        if let Some(decision) = decisions.get_mut(i) {
            let reason = match helm_failed {
                Some(helm) => format!(
                    "not proven: with Helm {helm}; {}",
                    reason.strip_prefix("not proven: ").unwrap_or(&reason)
                ),
                None => reason,
            };
            // What the lines showed stays (the image, for `check`); nothing is written.
            decision.site = EditSite::Unsupported { reason };
        }
    }
    let mut sets = vec![FlagSet {
        flags: chart::overrides(images, Render::Original),
        original: originals.first,
        again: originals.again,
        failed: originals.failed,
        decided: (0..decisions.len()).collect(),
    }];
    let app_version = app_version.as_deref();
    if helm.is_some() {
        source_renderer.with_flags(images, &mut decisions, &mut sets, app_version, Flags::Own);
    }
    source_renderer.with_flags(images, &mut decisions, &mut sets, app_version, Flags::Every);
    source_renderer.take_back_with_every_flag(images, &mut decisions, app_version);
    source_renderer.take_back_switched(images, &mut decisions, &renderings.names);
    if helm.is_some() {
        take_back_other_uses(chart, source, app_version, &renderings, &mut decisions);
    }
    apply(file, source, images, &decisions);
    let at = |span: &std::ops::Range<usize>| {
        file.findings
            .iter()
            .find(|finding| finding.span == *span)
            .map(|finding| (finding.line, finding.column))
    };
    let sets = sets
        .into_iter()
        .map(|set| FlagSet {
            decided: set
                .decided
                .iter()
                .filter_map(|i| at(&decisions[*i].span))
                .collect(),
            flags: set.flags,
            original: set.original,
            again: set.again,
            failed: set.failed,
        })
        .collect();
    let drops_tag = decisions
        .iter()
        .filter(|d| d.drops_tag)
        .filter_map(|d| at(&d.span))
        .collect();
    Ok(ChartValues {
        renderer: renderer.clone(),
        sets,
        drops_tag,
        embedded: source.embedded.map(|index| (file.path.clone(), index)),
        own_values: source.own_values.is_some(),
    })
}

/// Makes the maps under `global` unwritable when Helm rendered the chart without the
/// dependencies `staged` dropped: those see `global` too, and their renderings are not in the
/// proof. So are the maps under a dropped dependency's own key (artifact-hub's
/// `postgresql.image`, which the chart's templates may read too): the dependency may print
/// the tag in a label.
fn leave_global(images: &ValuesImages, decisions: &mut [Decision], staged: &dependencies::Staged) {
    let names = || {
        staged
            .dropped
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (candidate, decision) in images.candidates.iter().zip(decisions.iter_mut()) {
        let Some(top) = candidate.path.first() else {
            continue;
        };
        let reason = if top == "global" {
            format!(
                "not proven: the chart depends on {}, in neither its charts/ nor this \
                 repository; Helm rendered it without them, and they see `global` too",
                names()
            )
        } else if staged.dropped_keys.contains(top) {
            format!(
                "not proven: `{top}` holds the values of a dependency of the chart that is in \
                 neither its charts/ nor this repository; Helm rendered the chart without it"
            )
        } else {
            continue;
        };
        decision.site = EditSite::Unsupported { reason };
    }
}

/// tagpin's own reading of `chart`, planned for the candidates of `source`.
fn static_renderer(chart: &Path, source: &Source<'_>) -> Result<Renderer, String> {
    let candidates = &source.images.candidates;
    let paths: Vec<Vec<String>> = candidates.iter().map(|c| c.path.clone()).collect();
    let strings: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.shape, chart::Shape::Inline(_)))
        .map(|(i, _)| i)
        .collect();
    let read = renderer::StaticChart::read(
        chart,
        &paths,
        &strings,
        source.own_values.as_ref(),
        &source.values,
        source.templates,
    )?;
    Ok(Renderer::Static(read.into()))
}

/// Takes back what Helm's renderings let tagpin write where tagpin's own reading of the
/// templates sees the same tag (or digest) feed something that is not an image. Helm renders
/// the chart with its values and the `enabled` flags on the way to each map; a template behind
/// another switch (a `PersistentVolumeClaim` under `persistence.enabled`, whose labels carry
/// `app.kubernetes.io/version: {{ .Values.image.tag }}`) is not in those renderings, and
/// turning that switch on would put the digest in the label. The static reading reads every
/// line that reads the map, whatever switch it sits behind.
///
/// Also taken back: a map the static reading cannot follow in a template file that Helm's
/// renderings (`helm_shown`) do not show at all (`$root.Values.image.tag` in a `Rollout` under
/// `rollout.enabled: false`): no rendering says what the edit would change there. Where the
/// static reading cannot follow the map in a file Helm renders, Helm's rendering of that file
/// stands, and so does Helm's decision where the static reading cannot read the chart.
fn take_back_other_uses(
    chart: &Path,
    source: &Source<'_>,
    app_version: Option<&str>,
    helm_shown: &Renderings,
    decisions: &mut [Decision],
) {
    let writable = |d: &Decision| !matches!(d.site, EditSite::Unsupported { .. });
    if !decisions.iter().any(writable) {
        return;
    }
    let Ok(renderer) = static_renderer(chart, source) else {
        return;
    };
    let reading = SourceRenderer {
        renderer: &renderer,
        values: source.values.iter().map(PathBuf::as_path).collect(),
        prove: false,
    };
    let mut images = std::borrow::Cow::Borrowed(&source.images);
    let Ok(sentinels) = reading.sentinels(&mut images) else {
        return;
    };
    let Ok((renderings, blocked, _)) = reading.rest(&images, sentinels) else {
        return;
    };
    if let Renderer::Static(read) = &renderer {
        take_back_unshown(read, &blocked, helm_shown, decisions);
    }
    let seen = chart::decide(&images, &renderings, app_version);
    for decision in decisions.iter_mut().filter(|d| writable(d)) {
        let other_use = seen.iter().find_map(|d| match &d.site {
            EditSite::Unsupported { reason } if d.span == decision.span && d.other_use => {
                Some(reason)
            }
            _ => None,
        });
        if let Some(reason) = other_use {
            decision.site = EditSite::Unsupported {
                reason: format!(
                    "{reason} (in a template Helm renders only with other values, where the edit \
                     would change it too)"
                ),
            };
        }
    }
}

/// Takes back each writable decision whose map the static reading `read` could not follow
/// (`blocked`) in a template file none of Helm's renderings show a document of.
fn take_back_unshown(
    read: &renderer::StaticChart,
    blocked: &[(usize, String)],
    helm_shown: &Renderings,
    decisions: &mut [Decision],
) {
    let shown: BTreeSet<&str> = [
        &helm_shown.sentinels,
        &helm_shown.names,
        &helm_shown.undigested,
    ]
    .into_iter()
    .flat_map(|rendering| rendering.documents.iter().map(|d| d.source.as_str()))
    .collect();
    // A file Helm renders no document of by design: a named templates' file (`_helpers.tpl`),
    // text `tpl` renders. What they hold shows where it is included.
    let unshown = |source: &&str| {
        let name = source.rsplit('/').next().unwrap_or(source);
        !name.starts_with('_') && !source.starts_with(chart::TPL_SOURCE) && !shown.contains(source)
    };
    for (i, reason) in blocked {
        let Some(decision) = decisions
            .get_mut(*i)
            .filter(|d| !matches!(d.site, EditSite::Unsupported { .. }))
        else {
            continue;
        };
        let cited = read
            .sources()
            .filter(unshown)
            .find(|source| reason.contains(&format!("{source}:")));
        if let Some(file) = cited {
            let why = reason
                .strip_prefix("not proven: without Helm, ")
                .unwrap_or(reason);
            decision.site = EditSite::Unsupported {
                reason: format!(
                    "not proven: Helm renders {file} only with other values, and tagpin's own \
                     reading of it does not follow the map ({why})"
                ),
            };
        }
    }
}

/// What renders one values source's chart.
struct SourceRenderer<'a> {
    renderer: &'a Renderer,
    values: Vec<&'a Path>,
    /// Also render what the proof needs (`pin`).
    prove: bool,
}

/// The three renderings of a flag setting, the maps tagpin's own reading could not follow,
/// and the original values rendered twice (for the proof).
type Rendered3 = (Renderings, Vec<(usize, String)>, Originals);

/// The original values rendered twice, and the maps whose lines tagpin's own reading could
/// not evaluate in that rendering: the edited rendering must fail on no other.
struct Originals {
    first: Rendered,
    again: Rendered,
    failed: BTreeSet<usize>,
}

impl SourceRenderer<'_> {
    /// A rendering, and the maps tagpin's own reading could not follow in it.
    fn render(
        &self,
        images: &ValuesImages,
        which: Render,
    ) -> Result<(Rendered, Vec<(usize, String)>), String> {
        if let Some(output) = self.renderer.known_output() {
            return Ok((Rendered::parse(&output.text), output.blocked));
        }
        let output = self
            .renderer
            .render(&self.values, &chart::overrides(images, which))
            .map_err(|error| format!("the chart does not render ({error})"))?;
        Ok((Rendered::parse(&output.text), output.blocked))
    }

    /// The sentinel rendering. With every `enabled` flag on the candidates' paths on, more of
    /// the chart shows; a chart may refuse one (a feature that needs values of its own): then
    /// each flag is tried alone and those the chart accepts are kept in `images`. What the
    /// others keep off is not rendered.
    fn sentinels(
        &self,
        images: &mut std::borrow::Cow<'_, ValuesImages>,
    ) -> Result<Rendered, String> {
        match self.render(images, Render::Sentinels) {
            Ok((sentinels, _)) => Ok(sentinels),
            Err(_) if !images.disabled.is_empty() => {
                let images = images.to_mut();
                let flags = std::mem::take(&mut images.disabled);
                let accepted: Vec<_> = flags
                    .into_iter()
                    .filter(|flag| {
                        let alone = ValuesImages {
                            candidates: images.candidates.clone(),
                            disabled: vec![flag.clone()],
                            every_flag: images.every_flag,
                        };
                        self.render(&alone, Render::Sentinels).is_ok()
                    })
                    .collect();
                images.disabled = accepted;
                Ok(self.render(images, Render::Sentinels)?.0)
            }
            Err(error) => Err(error),
        }
    }

    /// Every rendering of the flag setting `images`: the sentinels, then [`Self::rest`].
    fn render_all(&self, images: &ValuesImages) -> Result<Rendered3, String> {
        self.render(images, Render::Sentinels)
            .and_then(|(sentinels, _)| self.rest(images, sentinels))
    }

    /// Takes back the digests written for maps whose image changes with a key beside them
    /// (see [`chart::take_back_switched`]) against `names` ([`Render::Names`]): every key
    /// changed at once, then, for the maps whose image that changed (or all, when the chart
    /// refuses it), each key on its own. A rendering the chart refuses tells nothing, and
    /// keeps the decisions.
    fn take_back_switched(
        &self,
        images: &ValuesImages,
        decisions: &mut [Decision],
        names: &Rendered,
    ) {
        if !chart::needs_switched(images, decisions) {
            return;
        }
        let suspects: Vec<usize> = match self.switched(images, images, decisions, Render::Switched)
        {
            Some(all) => chart::switch_changes(images, decisions, names, &all)
                .iter()
                .enumerate()
                .filter(|(_, change)| **change != SwitchChange::Unchanged)
                .map(|(i, _)| i)
                .collect(),
            None => (0..decisions.len())
                .filter(|&i| chart::needs_switched_at(images, decisions, i))
                .collect(),
        };
        let rounds = suspects
            .iter()
            .map(|&i| images.candidates[i].beside.len())
            .max()
            .unwrap_or(0);
        // For each map, the keys that change its image alone, and whether one only adds to it.
        let mut by_key = vec![(Vec::new(), false); decisions.len()];
        for j in 0..rounds {
            let one = chart::one_key(images, &suspects, j);
            for (i, extends) in self.changed_by(&one, images, decisions, names) {
                by_key[i].0.push(j);
                by_key[i].1 |= extends;
            }
        }
        chart::take_back_switched(images, decisions, &by_key);
    }

    /// The maps whose image changes with the keys of `one` (one key each) in a way that
    /// matters to their edit, and whether the change only adds to it.
    fn changed_by(
        &self,
        one: &ValuesImages,
        images: &ValuesImages,
        decisions: &[Decision],
        names: &Rendered,
    ) -> Vec<(usize, bool)> {
        let Some(switched) = self.switched(one, images, decisions, Render::Switched) else {
            return Vec::new();
        };
        let changed: Vec<(usize, bool)> = chart::switch_changes(one, decisions, names, &switched)
            .into_iter()
            .enumerate()
            .filter_map(|(i, change)| match change {
                SwitchChange::Changed { extends } => Some((i, extends)),
                _ => None,
            })
            .collect();
        // A digest key matters only where the changed image still pulls it.
        let digested = changed
            .iter()
            .any(|(i, _)| chart::writes_a_digest_key(decisions, *i))
            .then(|| self.switched(one, images, decisions, Render::SwitchedDigested))
            .flatten();
        changed
            .into_iter()
            .filter(|(i, _)| {
                !chart::writes_a_digest_key(decisions, *i)
                    || digested
                        .as_ref()
                        .is_some_and(|d| chart::pulls_the_digest(*i, d))
            })
            .collect()
    }

    /// The rendering `which` of `rendered`, unless the chart refuses it or the static
    /// reading cannot follow a map of `images` it is for (a `fail` on its line).
    fn switched(
        &self,
        rendered: &ValuesImages,
        images: &ValuesImages,
        decisions: &[Decision],
        which: Render,
    ) -> Option<Rendered> {
        let (switched, blocked) = self.render(rendered, which).ok()?;
        let followed = !blocked
            .iter()
            .any(|(i, _)| chart::needs_switched_at(images, decisions, *i));
        followed.then_some(switched)
    }

    /// The renderings after the sentinels, and the originals for the proof.
    fn rest(&self, images: &ValuesImages, sentinels: Rendered) -> Result<Rendered3, String> {
        let (undigested, blocked) = self.render(images, Render::Undigested)?;
        let renderings = Renderings {
            sentinels,
            names: self.render(images, Render::Names)?.0,
            undigested,
        };
        let originals = if self.prove {
            let (first, failed) = self.render(images, Render::Original)?;
            Originals {
                first,
                again: self.render(images, Render::Original)?.0,
                failed: failed.into_iter().map(|(i, _)| i).collect(),
            }
        } else {
            Originals {
                first: Rendered::default(),
                again: Rendered::default(),
                failed: BTreeSet::new(),
            }
        };
        Ok((renderings, blocked, originals))
    }

    /// Takes back each writable decision whose value, with every `enabled: false` of the values
    /// turned on, also feeds something that is not its image: a label under
    /// `metrics.enabled` or `serviceMonitor.enabled`, a switch off the map's path that the
    /// first renderings leave off. Helm evaluates whatever the template does to the value
    /// there; tagpin's own reading, the branches a named template's body takes with those
    /// flags (an Argo `Rollout` helper under `rollout.enabled`). A chart that does not render
    /// so keeps its decisions.
    fn take_back_with_every_flag(
        &self,
        images: &ValuesImages,
        decisions: &mut [Decision],
        app_version: Option<&str>,
    ) {
        let writable = |d: &Decision| !matches!(d.site, EditSite::Unsupported { .. });
        if images.disabled.is_empty() || !decisions.iter().any(writable) {
            return;
        }
        let every = every_flag(images);
        let Ok((renderings, blocked, _)) = self.render_all(&every) else {
            return;
        };
        // tagpin's own reading could not evaluate a line that reads the map with those flags:
        // what it would print there is unknown.
        for (i, reason) in blocked {
            if let Some(decision) = decisions.get_mut(i).filter(|d| writable(d)) {
                decision.site = EditSite::Unsupported {
                    reason: format!("{reason} (with every `enabled` flag of the values on)"),
                };
            }
        }
        let again = chart::decide(&every, &renderings, app_version);
        for (decision, seen) in decisions.iter_mut().zip(&again) {
            if let (true, true, EditSite::Unsupported { reason }) =
                (writable(decision), seen.other_use, &seen.site)
            {
                decision.site = EditSite::Unsupported {
                    reason: format!(
                        "{reason} (with every `enabled` flag of the values on, where the edit \
                         would change it too)"
                    ),
                };
            }
        }
    }

    /// The maps no rendering showed are looked for again with other flags (see [`Flags`]),
    /// and proven in that setting too (`sets`).
    fn with_flags(
        &self,
        images: &ValuesImages,
        decisions: &mut [Decision],
        sets: &mut Vec<FlagSet<usize>>,
        app_version: Option<&str>,
        flags: Flags,
    ) {
        let hidden: BTreeSet<usize> = decisions
            .iter()
            .enumerate()
            .filter(|(_, d)| d.rendered.is_none() && hidden_by_flags(&d.site))
            .map(|(i, _)| i)
            .collect();
        if hidden.is_empty() || images.disabled.is_empty() {
            return;
        }
        let own_flags = match flags {
            Flags::Own => ValuesImages {
                candidates: images.candidates.clone(),
                disabled: Vec::new(),
                every_flag: false,
            },
            Flags::Every => every_flag(images),
        };
        let Ok((renderings, _, originals)) = self.render_all(&own_flags) else {
            return;
        };
        let again_decided = chart::decide(&own_flags, &renderings, app_version);
        let shown: BTreeSet<usize> = hidden
            .into_iter()
            .filter(|i| again_decided[*i].rendered.is_some())
            .collect();
        for &i in &shown {
            decisions[i] = again_decided[i].clone();
        }
        sets[0].decided.retain(|i| !shown.contains(i));
        sets.push(FlagSet {
            flags: chart::overrides(&own_flags, Render::Original),
            original: originals.first,
            again: originals.again,
            failed: originals.failed,
            decided: shown,
        });
    }
}

/// `images` with every `enabled: false` of the values turned on.
fn every_flag(images: &ValuesImages) -> ValuesImages {
    ValuesImages {
        every_flag: true,
        ..images.clone()
    }
}

/// The flags of a second look for the maps the first rendering (their own paths' flags on)
/// did not show.
#[derive(Clone, Copy)]
enum Flags {
    /// The chart's own: a flag turned on for one map can switch another map's branch off (`if
    /// .alt.enabled` … `else` the main image). tagpin's own reading evaluates a template's
    /// lines whatever blocks enclose them, and needs none of this.
    Own,
    /// Every `enabled: false` of the values turned on: a named template evaluated whole (a pod
    /// helper) may add a map's container only when another feature is on.
    Every,
}

/// Whether a decision says the chart showed no image for the map: with other maps' flags on,
/// it may have been switched off.
fn hidden_by_flags(site: &EditSite) -> bool {
    matches!(site, EditSite::Unsupported { reason }
        if reason.starts_with("the chart's templates do not render this value as an image")
            || reason.starts_with("the chart renders this value only with other values"))
}

/// Applies `decisions` to the findings of `file` inside `source`: with findings for the maps
/// the key-name rules did not see, and the maps they saw that stay unwritten with an unknown
/// tag counted as floating.
fn apply(
    file: &mut ScannedFile,
    source: &Source<'_>,
    images: &ValuesImages,
    decisions: &[Decision],
) {
    // The maps the key-name rules saw: whatever the chart shows of them, they are images.
    let split_spans: Vec<_> = file
        .findings
        .iter()
        .filter(|f| is_split(&f.site) || f.status == tagpin_formats::Status::Templated)
        .map(|f| f.span.clone())
        .collect();
    let unseen = chart::unseen_findings(source.text, images, decisions, &file.findings);
    if !unseen.is_empty() {
        file.findings.extend(unseen);
        file.findings.sort_by_key(|f| (f.span.start, f.span.end));
    }
    chart::apply_within(&mut file.findings, decisions, &source.within);
    for finding in file
        .findings
        .iter_mut()
        .filter(|f| split_spans.contains(&f.span))
    {
        unknown_tag_floats(finding);
    }
}
