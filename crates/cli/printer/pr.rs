//! `pr`'s text output: one line on stdout with the outcome and the pull request's URL (with
//! `--dry-run`, the planned commit, the pull request's text and the requests); `pin`'s
//! diagnostics on stderr.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::pin;
use crate::commands::pr::{PrOutcome, PrReport};

/// The outcome line, or the dry run's plan.
pub fn outcome(out: &mut impl Write, report: &PrReport) -> io::Result<()> {
    if report.dry_run {
        return dry_run(out, report);
    }
    let number = report.number.map_or_else(String::new, |n| format!(" #{n}"));
    let url = report
        .url
        .as_deref()
        .map_or_else(String::new, |url| format!(": {url}"));
    match report.outcome {
        PrOutcome::Opened => writeln!(out, "opened pull request{number}{url}"),
        PrOutcome::Updated if report.pushed => writeln!(
            out,
            "updated pull request{number} (moved {}){url}",
            report.branch
        ),
        PrOutcome::Updated => writeln!(out, "updated pull request{number}{url}"),
        PrOutcome::Unchanged => {
            writeln!(out, "pull request{number} is up to date{url}")
        }
        PrOutcome::Closed => writeln!(
            out,
            "closed pull request{number}: nothing left to pin on {}",
            report.base
        ),
        PrOutcome::Nothing if report.complete() => {
            writeln!(out, "nothing to pin on {}; no pull request", report.base)
        }
        PrOutcome::Nothing => writeln!(
            out,
            "nothing resolved to pin on {}; the pull request was left as it is",
            report.base
        ),
    }
}

fn dry_run(out: &mut impl Write, report: &PrReport) -> io::Result<()> {
    let existing = report.number.map_or_else(
        || "no pull request is open".to_owned(),
        |n| format!("pull request #{n} is open"),
    );
    writeln!(
        out,
        "dry run: {} from {} into {} at {} ({existing}); would be: {}",
        report.repo,
        report.branch,
        report.base,
        report.base_head,
        match report.outcome {
            PrOutcome::Opened => "opened",
            PrOutcome::Updated => "updated",
            PrOutcome::Unchanged => "unchanged",
            PrOutcome::Closed => "closed",
            PrOutcome::Nothing => "nothing",
        }
    )?;
    if !report.changed_files.is_empty() {
        writeln!(out, "\nfiles:")?;
        for path in &report.changed_files {
            writeln!(out, "  {path}")?;
        }
        writeln!(out, "\ncommit message:")?;
        indented(out, &report.commit_message)?;
        writeln!(out, "\ntitle: {}\n\nbody:", report.title)?;
        indented(out, &report.body)?;
    }
    writeln!(out, "\nrequests:")?;
    let requests = report.requests.as_deref().unwrap_or_default();
    if requests.is_empty() {
        writeln!(out, "  none")?;
    }
    for request in requests {
        writeln!(
            out,
            "  {} {}  ({})",
            request.method, request.path, request.purpose
        )?;
    }
    Ok(())
}

fn indented(out: &mut impl Write, text: &str) -> io::Result<()> {
    for line in text.lines() {
        if line.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(())
}

/// The summary line on stderr, after `pin`'s.
pub fn summary_line(report: &PrReport) -> String {
    let mut line = pin::counts(&report.pin);
    let _ = write!(
        line,
        "; {} in the pull request",
        super::text::plural(report.changed_files.len(), "file")
    );
    pin::not_read(&mut line, &report.pin);
    line
}
