//! GitHub workflows and `action.yml`: `jobs.*.container` (a string, or its `image`),
//! `jobs.*.services.*.image`, `uses: docker://…` in any step, `runs.image: docker://…`, and
//! the `with.image` of a step whose action runs that image ([`RUNS_WITH_IMAGE`]).
//!
//! A job's image written as a matrix value, `container: ${{ matrix.image }}`, is each of the
//! values `strategy.matrix.image` lists (and each `include` entry's `image`): written where
//! the job uses `matrix.image` nowhere else but its `name` (a condition such as
//! `if: matrix.image == 'debian:12'` would no longer hold once pinned).
//!
//! The `run` scripts of steps are read as shell scripts ([`run_steps`]). The names a
//! `docker/build-push-action` step tags its build with are `local`, and so is every use of
//! them in the file.

mod run_steps;

use super::{Map, Out, Rules, ScalarAt, Seg};
use crate::EditSite;
use crate::common::Found;
use crate::yaml::tree::Style;

pub(crate) struct Workflow;

const DOCKER: &str = "docker://";

/// Actions whose `image` input is a container image they pull and run. Any other action's
/// `image` input may name what it builds or pushes (`redhat-actions/buildah-build`), a
/// picture, or a machine: it is not read.
const RUNS_WITH_IMAGE: &[&str] = &[
    "addnab/docker-run-action",
    "kohlerdominik/docker-run-action",
    "tj-actions/docker-run",
    // The binfmt image QEMU's emulators are installed from.
    "docker/setup-qemu-action",
];

/// Why an action's `image` input with no tag and no digest is not written.
const UNTAGGED_INPUT: &str = "no tag or digest is written in the action's `image` input: \
     `:latest@sha256:…` is not written there";

impl Rules for Workflow {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if map.path.is_empty() {
            run_steps::read(map, out);
        }
        let image_prefix = match map.path {
            [Seg::Key("jobs"), Seg::Key(_), Seg::Key("container")]
            | [
                Seg::Key("jobs"),
                Seg::Key(_),
                Seg::Key("services"),
                Seg::Key(_),
            ] => Some(""),
            [Seg::Key("runs")] => Some(DOCKER),
            _ => None,
        };
        if let (Some(prefix), Some(image)) = (image_prefix, map.scalar("image")) {
            out.inline(&image, prefix);
        }
        if matches!(map.path, [Seg::Key("jobs"), Seg::Key(_)]) {
            if let Some(container) = map.scalar("container") {
                out.inline(&container, "");
            }
            matrix_images(map, out);
        }
        if let Some(uses) = map.scalar("uses") {
            if runs_with_image(uses.value) {
                action_image(map, out);
            }
            if is_action(uses.value, "docker/build-push-action") {
                built_tags(map, out);
            }
            out.inline(&uses, DOCKER);
        }
    }
}

/// Whether `uses` (`owner/repo@ref`) names an action of [`RUNS_WITH_IMAGE`].
fn runs_with_image(uses: &str) -> bool {
    RUNS_WITH_IMAGE.iter().any(|known| is_action(uses, known))
}

/// Whether `uses` (`owner/repo@ref`) names the action `known` (`owner/repo`).
fn is_action(uses: &str, known: &str) -> bool {
    let action = uses.split_once('@').map_or(uses, |(action, _)| action);
    action.eq_ignore_ascii_case(known)
}

/// The names a `docker/build-push-action` step (`map`) tags its build with (`with.tags`: one
/// name, or several split by commas or lines), reported `local`: what the workflow builds,
/// which a later step or job runs (`docker run --rm app`, `container: app:ci`).
fn built_tags(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let doc = map.doc;
    let Some(tags) = map
        .get("with")
        .and_then(|with| doc.value_of(with, "tags"))
        .and_then(|at| doc.scalar(&at))
    else {
        return;
    };
    if tags.decoded && tags.style != Style::Literal || tags.style == Style::Folded {
        return;
    }
    let source = &out.text[tags.span.clone()];
    // A literal block's lines follow its indicator.
    let body = match tags.style {
        Style::Literal => source.find('\n').map_or(source.len(), |i| i + 1),
        _ => 0,
    };
    let mut at = tags.span.start + body;
    for part in source[body..].split_inclusive([',', '\n']) {
        let name = part.trim_end_matches([',', '\n', '\r']);
        let start = at + (name.len() - name.trim_start().len());
        let name = name.trim();
        at += part.len();
        if !name.is_empty() && !name.contains('$') {
            out.push(Found::local(start..start + name.len(), name), None);
        }
    }
}

/// The `with.image` of a step (`map`) whose action runs it.
fn action_image(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(with) = map.get("with") else {
        return;
    };
    let mut inputs = Vec::new();
    map.doc.entries_into(with, &mut inputs);
    let Some(image) = inputs
        .iter()
        .find(|e| e.key == "image")
        .and_then(|e| map.doc.scalar(&e.value))
    else {
        return;
    };
    let Some(candidate) = out.inline(&image, "") else {
        return;
    };
    let untagged = candidate.is_untagged();
    if untagged && !matches!(candidate.found.site, EditSite::Unsupported { .. }) {
        candidate.found.site = EditSite::Unsupported {
            reason: UNTAGGED_INPUT.to_owned(),
        };
    }
}

/// The images of a job (`map`) given as matrix values: each value the matrix lists for a
/// name that the job's `container`, `container.image` or a service's `image` is written as
/// whole (`${{ matrix.image }}`).
fn matrix_images(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let doc = map.doc;
    let mut images: Vec<ScalarAt<'_>> = map.scalar("container").into_iter().collect();
    let mut entries = Vec::new();
    if let Some(container) = map.get("container") {
        doc.entries_into(container, &mut entries);
        images.extend(
            entries
                .iter()
                .filter(|e| e.key == "image")
                .filter_map(|e| doc.scalar(&e.value)),
        );
    }
    if let Some(services) = map.get("services") {
        let mut services_entries = Vec::new();
        doc.entries_into(services, &mut services_entries);
        for service in &services_entries {
            entries.clear();
            doc.entries_into(&service.value, &mut entries);
            images.extend(
                entries
                    .iter()
                    .filter(|e| e.key == "image")
                    .filter_map(|e| doc.scalar(&e.value)),
            );
        }
    }
    let mut names: Vec<&str> = images.iter().filter_map(|s| matrix_name(s.value)).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return;
    }
    let Some(matrix) = map.get("strategy").and_then(|strategy| {
        entries.clear();
        doc.entries_into(strategy, &mut entries);
        entries
            .iter()
            .find(|e| e.key == "matrix")
            .map(|e| e.value.clone())
    }) else {
        return;
    };
    let mut rows = Vec::new();
    doc.entries_into(&matrix, &mut rows);
    let job = doc.tree.node(map.at.node).span;
    let job_text = out
        .text
        .get(job.start as usize..job.end as usize)
        .unwrap_or_default();
    for name in names {
        // The job's name is its check's name, which branch protection requires by name: a
        // digest there would rename the check at every refresh. A name that reads no matrix
        // value (or none at all) gets them all appended: `test (postgres:16, 3.12)`.
        let job_name = map.scalar("name").filter(|n| n.value.contains("matrix."));
        let in_job_name = job_name
            .as_ref()
            .is_none_or(|job_name| reads_matrix_value(job_name.value, name));
        let other_use =
            in_job_name || other_matrix_use(job_text, name, names_used_as_images(&images, name));
        let mut values: Vec<ScalarAt<'_>> = Vec::new();
        for row in &rows {
            if row.key == name {
                values.extend(
                    doc.items(&row.value)
                        .iter()
                        .filter_map(|item| doc.scalar(item)),
                );
            } else if row.key == "include" {
                for item in doc.items(&row.value) {
                    entries.clear();
                    doc.entries_into(&item, &mut entries);
                    values.extend(
                        entries
                            .iter()
                            .filter(|e| e.key == name)
                            .filter_map(|e| doc.scalar(&e.value)),
                    );
                }
            }
        }
        for value in values {
            let Some(candidate) = out.inline(&value, "") else {
                continue;
            };
            if other_use && !matches!(candidate.found.site, EditSite::Unsupported { .. }) {
                candidate.found.site = EditSite::Unsupported {
                    reason: if in_job_name && job_name.is_some() {
                        format!(
                            "the job's name reads `matrix.{name}`: a digest would rename its \
                             check at every refresh, and a required check would no longer match"
                        )
                    } else if in_job_name {
                        format!(
                            "GitHub names the job's checks with its matrix values, \
                             `matrix.{name}` among them (its `name:` reads none): a digest would \
                             rename them at every refresh, and a required check would no longer \
                             match"
                        )
                    } else {
                        format!(
                            "the job uses `matrix.{name}` elsewhere than as its image (a \
                             condition, a step): a digest would change the value there too"
                        )
                    },
                };
            }
        }
    }
}

/// `NAME` when `value` is, whole, the expression `${{ matrix.NAME }}`.
fn matrix_name(value: &str) -> Option<&str> {
    let inner = value.trim().strip_prefix("${{")?.strip_suffix("}}")?.trim();
    let name = inner.strip_prefix("matrix.")?;
    (!name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')))
    .then_some(name)
}

/// How many of a job's image scalars are `${{ matrix.NAME }}`.
fn names_used_as_images(images: &[ScalarAt<'_>], name: &str) -> usize {
    images
        .iter()
        .filter(|s| matrix_name(s.value) == Some(name))
        .count()
}

/// Whether `job` (the job's source) reads `matrix.NAME` more often than as its `as_images`
/// images, outside its `name:` lines: a step's name only labels its log, and the job's own is
/// checked apart.
fn other_matrix_use(job: &str, name: &str, as_images: usize) -> bool {
    let uses = job
        .lines()
        .filter(|line| {
            let line = line.trim_start();
            !line
                .strip_prefix("- ")
                .unwrap_or(line)
                .trim_start()
                .starts_with("name:")
        })
        .map(|line| matrix_reads(line, name))
        .sum::<usize>();
    uses > as_images
}

/// Whether `text` reads `matrix.NAME`.
fn reads_matrix_value(text: &str, name: &str) -> bool {
    matrix_reads(text, name) > 0
}

/// How many times `text` reads `matrix.NAME` (not `matrix.NAME_2`).
fn matrix_reads(text: &str, name: &str) -> usize {
    super::whole_name_reads(text, &format!("matrix.{name}"))
}
