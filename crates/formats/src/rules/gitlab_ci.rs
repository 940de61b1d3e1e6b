//! GitLab CI (`.gitlab-ci.yml`, `*.gitlab-ci.yml`): `image` (a string, or its `name`) and each
//! of `services` (a string, or its `name`), at the top level (the deprecated global form),
//! under `default:` and in every job, hidden jobs (`.template:`, used through `extends`)
//! included. `$CI_REGISTRY_IMAGE/app:$CI_COMMIT_SHA` and other variables are `templated`.
//!
//! The lines of `script`, `before_script` and `after_script` are read as a shell script's.
//!
//! Not jobs: the top-level `variables`, `stages`, `include`, `workflow` and `spec` keys, and the
//! global keywords (`image: {name: …}` at the top is the global image, not a job named `image`).
//! Not images: the `image` of a job tagged for GitLab's hosted macOS runners (`tags:
//! [saas-macos-medium-m1]`), which names the virtual machine (`image: macos-14-xcode-15`).
//!
//! An image written as one variable, `image: $CI_IMAGE` (or `${CI_IMAGE}`), whose value the
//! file sets to a literal reference in `variables:` (the job's own, else the top level's) is
//! reported at that value, where the digest goes, when every use of the variable in the file
//! is such an image: a variable also used elsewhere (`docker build -t $CI_IMAGE`) may name
//! what the pipeline builds, and is left `templated`, as is one whose long form lists the
//! `options` a manual run picks from (its value must stay one of them).

use super::walk::{At, Entry};
use super::{Map, Out, Rules, ScalarAt, Seg};

pub(crate) struct GitlabCi;

/// Top-level keys that are not jobs (and so hold no `image` of their own).
const NOT_JOBS: [&str; 10] = [
    "variables",
    "stages",
    "include",
    "workflow",
    "spec",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
];

/// Whether `path` is the top level, `default:` or a job.
fn is_job(path: &[Seg<'_>]) -> bool {
    match path {
        [] => true,
        [Seg::Key(key)] => !NOT_JOBS.contains(key),
        _ => false,
    }
}

impl Rules for GitlabCi {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if map.path.is_empty() {
            variable_images(map, out);
        }
        if is_job(map.path) {
            scripts(map, out);
            if let Some(image) = map.scalar("image").filter(|_| !runs_on_macos(map)) {
                out.inline(&image, "");
            }
            if let Some(services) = map.get("services") {
                for item in map.doc.items(services) {
                    if let Some(service) = map.doc.scalar(&item) {
                        out.inline(&service, "");
                    }
                }
            }
            return;
        }
        // `image: {name: …, entrypoint: […]}` and `services: [{name: …, alias: …}]`.
        let named = match map.path {
            [job @ .., Seg::Key("image")] | [job @ .., Seg::Key("services"), Seg::Item(_)] => {
                is_job(job)
            }
            _ => false,
        };
        if named && let Some(name) = map.scalar("name") {
            out.inline(&name, "");
        }
    }
}

/// The job's (or `default:`'s) `before_script`, `script` and `after_script`: a string or a
/// list of lines, a nested list among them (a `!reference` or an anchored list of lines) read
/// too, each read as a shell script.
fn scripts(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let doc = map.doc;
    for key in ["before_script", "script", "after_script"] {
        let Some(script) = map.get(key) else {
            continue;
        };
        let mut pending = vec![(script.clone(), 0)];
        while let Some((at, depth)) = pending.pop() {
            if let Some(line) = doc.scalar(&at) {
                out.script(&line);
            } else if depth < 2 {
                pending.extend(doc.items(&at).into_iter().map(|item| (item, depth + 1)));
            }
        }
    }
}

/// Whether the job `map` is tagged for GitLab's hosted macOS runners, whose `image` is a
/// virtual machine's.
fn runs_on_macos(map: &Map<'_, '_>) -> bool {
    map.get("tags").is_some_and(|tags| {
        map.doc
            .items(tags)
            .iter()
            .filter_map(|item| map.doc.scalar(item))
            .any(|tag| tag.value.starts_with("saas-macos-"))
    })
}

/// The images of the file written as one variable (`$NAME`, `${NAME}`) that `variables:` sets
/// to a literal, reported at the variable's value (`root` is the top-level mapping).
fn variable_images(root: &Map<'_, '_>, out: &mut Out<'_>) {
    let doc = root.doc;
    let global = root.get("variables").map(|at| entries(root, at));
    let mut jobs: Vec<(Option<Vec<Entry<'_>>>, Vec<Entry<'_>>)> =
        vec![(None, root.entries.to_vec())];
    for entry in root.entries {
        if NOT_JOBS.contains(&entry.key) || !doc.is_mapping(&entry.value) {
            continue;
        }
        let job = entries(root, &entry.value);
        let own = job
            .iter()
            .find(|e| e.key == "variables")
            .map(|e| entries(root, &e.value));
        jobs.push((own, job));
    }
    // Each image written as a variable, once however many jobs merge it in (`<<: *base`).
    let mut uses: Vec<(&str, std::ops::Range<usize>)> = Vec::new();
    let mut values = Vec::new();
    for (own, job) in &jobs {
        for (name, span) in image_variables(root, job) {
            let value = [own.as_ref(), global.as_ref()]
                .into_iter()
                .flatten()
                .find_map(|vars| vars.iter().find(|e| e.key == name))
                .and_then(|e| variable_value(root, &e.value));
            if !uses.iter().any(|(n, s)| *n == name && *s == span) {
                uses.push((name, span));
            }
            if let Some(value) = value
                && !values
                    .iter()
                    .any(|(_, v): &(&str, ScalarAt<'_>)| v.span == value.span)
            {
                values.push((name, value));
            }
        }
    }
    for (name, value) in values {
        let images = uses.iter().filter(|(n, _)| *n == name).count();
        if !value.value.contains('$') && uses_in(out.text, name) == images {
            out.inline(&value, "");
        }
    }
}

/// A mapping's entries, merge keys followed.
fn entries<'t>(map: &Map<'t, '_>, at: &At) -> Vec<Entry<'t>> {
    let mut entries = Vec::new();
    map.doc.entries_into(at, &mut entries);
    entries
}

/// The variables named whole as a job's `image` and `services` (strings, or their `name`),
/// with where each is written.
fn image_variables<'t>(
    map: &Map<'t, '_>,
    job: &[Entry<'t>],
) -> Vec<(&'t str, std::ops::Range<usize>)> {
    let doc = map.doc;
    let named = |at: &At| -> Option<ScalarAt<'t>> {
        doc.scalar(at).or_else(|| {
            let inner = entries(map, at);
            inner
                .iter()
                .find(|e| e.key == "name")
                .and_then(|e| doc.scalar(&e.value))
        })
    };
    let mut scalars = Vec::new();
    for entry in job {
        match entry.key {
            "image" => scalars.extend(named(&entry.value)),
            "services" => scalars.extend(doc.items(&entry.value).iter().filter_map(named)),
            _ => {}
        }
    }
    scalars
        .into_iter()
        .filter_map(|scalar| Some((variable_name(scalar.value)?, scalar.span)))
        .collect()
}

/// `NAME` of a value that is `$NAME` or `${NAME}` whole.
fn variable_name(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('$')?;
    let name = rest
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or(rest);
    let valid = name
        .bytes()
        .enumerate()
        .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
    (valid && !name.is_empty()).then_some(name)
}

/// A variable's literal value: a scalar, or the `value` of its long form, unless that lists
/// the `options` a manual run chooses from: GitLab requires the value to be one of them, and
/// an option is a choice of the person running the pipeline, not this file's to pin.
fn variable_value<'t>(map: &Map<'t, '_>, at: &At) -> Option<ScalarAt<'t>> {
    map.doc.scalar(at).or_else(|| {
        let long = entries(map, at);
        if long.iter().any(|e| e.key == "options") {
            return None;
        }
        long.iter()
            .find(|e| e.key == "value")
            .and_then(|e| map.doc.scalar(&e.value))
    })
}

/// How many times the variable `NAME` is expanded in `text`: `$NAME`, or `${NAME` and
/// whatever a shell adds (`${NAME}`, `${NAME:-x}`).
fn uses_in(text: &str, name: &str) -> usize {
    let bytes = text.as_bytes();
    let is_name = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
    text.match_indices(name)
        .filter(|&(at, _)| {
            let before = &bytes[..at];
            let ends = !bytes.get(at + name.len()).copied().is_some_and(is_name);
            ends && (before.ends_with(b"$") || before.ends_with(b"${"))
        })
        .count()
}
