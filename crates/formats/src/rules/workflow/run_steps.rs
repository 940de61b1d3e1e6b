//! The scripts of a workflow's `run` steps, and of a composite action's, read as a shell
//! script's commands are (`docker run --rm alpine:3.20 …`).
//!
//! A step runs its `run` in the shell its `shell` names, else in its job's
//! `defaults.run.shell`, else in the workflow's, else in bash (`sh` where there is no bash),
//! except on a Windows runner, where the default is PowerShell: its quoting and its line
//! continuation (a backtick) are not a POSIX shell's. Only scripts that run in bash or sh are
//! read; a step in `pwsh`, `python` or `cmd`, or with no shell named in a job whose `runs-on`
//! names Windows, is not.

use super::super::walk::{At, Doc};
use super::super::{Map, Out};

/// Reads the `run` scripts of every job's steps (`root` is the workflow's top level) and of a
/// composite action's `runs.steps`.
pub(super) fn read(root: &Map<'_, '_>, out: &mut Out<'_>) {
    let doc = root.doc;
    let workflow_shell = default_shell(doc, root.get("defaults"));
    if let Some(jobs) = root.get("jobs") {
        let mut jobs_entries = Vec::new();
        doc.entries_into(jobs, &mut jobs_entries);
        for job in &jobs_entries {
            let shell = default_shell(doc, doc.value_of(&job.value, "defaults").as_ref())
                .or(workflow_shell);
            let windows = doc
                .value_of(&job.value, "runs-on")
                .is_some_and(|runs_on| names_windows(doc, &runs_on));
            if let Some(steps) = doc.value_of(&job.value, "steps") {
                read_steps(doc, &steps, shell, windows, out);
            }
        }
    }
    // A composite action's steps name their shell, as GitHub requires.
    if let Some(steps) = root
        .get("runs")
        .and_then(|runs| doc.value_of(runs, "steps"))
    {
        read_steps(doc, &steps, None, false, out);
    }
}

/// The `run` of each step of `steps` that runs in a POSIX shell.
fn read_steps(doc: Doc<'_>, steps: &At, default: Option<&str>, windows: bool, out: &mut Out<'_>) {
    for step in doc.items(steps) {
        let Some(run) = doc.value_of(&step, "run").and_then(|at| doc.scalar(&at)) else {
            continue;
        };
        let shell = doc
            .value_of(&step, "shell")
            .and_then(|at| doc.scalar(&at))
            .map(|scalar| scalar.value)
            .or(default);
        let posix = match shell {
            Some(shell) => super::super::is_posix_shell(shell),
            None => !windows,
        };
        if posix {
            out.script(&run);
        }
    }
}

/// The `run.shell` of a `defaults:` mapping.
fn default_shell<'t>(doc: Doc<'t>, defaults: Option<&At>) -> Option<&'t str> {
    let run = doc.value_of(defaults?, "run")?;
    Some(doc.scalar(&doc.value_of(&run, "shell")?)?.value)
}

/// Whether a job's `runs-on` (a label, a list of labels, or `{group, labels}`) names a
/// Windows runner.
fn names_windows(doc: Doc<'_>, runs_on: &At) -> bool {
    let windows = |at: &At| {
        doc.scalar(at)
            .is_some_and(|label| label.value.to_ascii_lowercase().contains("windows"))
    };
    let labels = doc.value_of(runs_on, "labels");
    windows(runs_on)
        || doc.items(runs_on).iter().any(windows)
        || labels.is_some_and(|labels| windows(&labels) || doc.items(&labels).iter().any(windows))
}
