//! `pin`'s text output: the diff on stdout; unresolved references, files not written,
//! warnings and the summary on stderr; the resolver's figures with `-v`.

use std::fmt::Write as _;
use std::io::{self, Write};

use tagpin_registry::Stats;

use super::text::{RED, YELLOW, paint, plural, status_name};
use crate::commands::pin::PinReport;
use crate::settings::Verbosity;

/// The diff of every file that changes.
pub fn diffs(out: &mut impl Write, report: &PinReport) -> io::Result<()> {
    for diff in &report.diffs {
        out.write_all(diff.as_bytes())?;
    }
    Ok(())
}

/// Everything `pin` says on stderr.
pub fn diagnostics(
    out: &mut impl Write,
    report: &PinReport,
    verbosity: Verbosity,
    color: bool,
) -> io::Result<()> {
    findings(out, report, verbosity, color)?;
    // `-q` says nothing but errors: the summary only when something was left undone.
    if verbosity == Verbosity::Quiet && report.complete() {
        return Ok(());
    }
    writeln!(out, "{}", summary_line(report))
}

/// Unresolved references, files not written, warnings, and with `-v` the resolver's figures:
/// [`diagnostics`] without the summary line (`pr` has its own).
pub fn findings(
    out: &mut impl Write,
    report: &PinReport,
    verbosity: Verbosity,
    color: bool,
) -> io::Result<()> {
    for unresolved in &report.unresolved {
        writeln!(
            out,
            "{}: {}:{}:{}: cannot resolve {} ({}): {}",
            paint("error", RED, color),
            unresolved.path,
            unresolved.line,
            unresolved.column,
            unresolved.text,
            unresolved.error,
            unresolved.message
        )?;
    }
    for refused in &report.missing_platform {
        writeln!(
            out,
            "{}: {}:{}:{}: not written: {} for {} lacks {} (platforms in force: {})",
            paint("error", RED, color),
            refused.path,
            refused.line,
            refused.column,
            refused.new_digest,
            refused.text,
            refused.missing.join(", "),
            refused.platforms.join(", ")
        )?;
    }
    for file in &report.not_written {
        writeln!(
            out,
            "{}: {}: {}",
            paint("error", RED, color),
            file.path,
            file.message
        )?;
    }
    if verbosity == Verbosity::Quiet {
        return Ok(());
    }
    for same in &report.platforms_unchanged {
        writeln!(
            out,
            "note: {}:{}:{}: {}: index moved, platforms unchanged (now {}); kept",
            same.path, same.line, same.column, same.text, same.new_digest
        )?;
    }
    for unsupported in &report.unsupported {
        writeln!(
            out,
            "{}: {}:{}:{}: {} is not rewritten: {}",
            paint("warning", YELLOW, color),
            unsupported.path,
            unsupported.line,
            unsupported.column,
            unsupported.text,
            unsupported.reason
        )?;
    }
    for edit in &report.edits {
        for warning in &edit.warnings {
            writeln!(
                out,
                "{}: {}:{}:{}: {}: {}",
                paint("warning", YELLOW, color),
                edit.path,
                edit.line,
                edit.column,
                edit.text,
                warning.message
            )?;
        }
    }
    details_notes(out, report, verbosity)?;
    if verbosity == Verbosity::Verbose {
        stats(out, &report.stats)?;
    }
    Ok(())
}

/// `--details`: a note for each build time that could not be read (the pin went ahead
/// without it). Printed in JSON mode too, beside the document's `error` fields.
pub fn details_notes(
    out: &mut impl Write,
    report: &PinReport,
    verbosity: Verbosity,
) -> io::Result<()> {
    if verbosity == Verbosity::Quiet {
        return Ok(());
    }
    for edit in &report.edits {
        for built in edit.built.iter().flatten() {
            let Some(message) = &built.message else {
                continue;
            };
            let what = built
                .platform
                .as_deref()
                .map_or_else(String::new, |platform| format!(" of {platform}"));
            writeln!(
                out,
                "note: {}:{}:{}: {}: the build time{what} ({}) is not shown: {message}",
                edit.path, edit.line, edit.column, edit.text, built.digest
            )?;
        }
    }
    Ok(())
}

/// `pinned 5, refreshed 1, unchanged 2, unresolved 1 (of 14 references in 9 files); skipped: 3
/// templated, 2 local; 4 files would change (--write writes them)`.
pub fn summary_line(report: &PinReport) -> String {
    let summary = &report.summary;
    let mut line = counts(report);
    if summary.write {
        let _ = write!(line, "; wrote {}", plural(summary.files_written, "file"));
        if summary.files_not_written > 0 {
            let _ = write!(line, ", {} not written", summary.files_not_written);
        }
    } else if summary.files_changed > 0 {
        let _ = write!(
            line,
            "; {} would change (--write writes them)",
            plural(summary.files_changed, "file")
        );
    } else {
        line.push_str("; nothing to change");
    }
    not_read(&mut line, report);
    line
}

/// `; 2 files not read`, when some were not.
pub fn not_read(line: &mut String, report: &PinReport) {
    if !report.errors.is_empty() {
        let _ = write!(line, "; {} not read", plural(report.errors.len(), "file"));
    }
}

/// The counts that open the summary line: `pinned 5, refreshed 1, unchanged 2, unresolved 1
/// (of 14 references in 9 files); skipped: 3 templated, 2 local`.
pub fn counts(report: &PinReport) -> String {
    let summary = &report.summary;
    let mut line = format!(
        "pinned {}, refreshed {}, unchanged {}, unresolved {} ({} in {})",
        summary.pinned,
        summary.refreshed,
        summary.unchanged,
        summary.unresolved,
        plural(summary.references, "reference"),
        plural(summary.files, "file"),
    );
    if summary.platforms_unchanged > 0 {
        let _ = write!(
            line,
            "; {} moved with the platforms unchanged",
            plural(summary.platforms_unchanged, "tag")
        );
    }
    if summary.missing_platform > 0 {
        let _ = write!(
            line,
            "; {} refused for a missing platform",
            plural(summary.missing_platform, "reference")
        );
    }
    let skipped: Vec<String> = summary
        .skipped
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(status, n)| format!("{n} {}", status_name(*status)))
        .collect();
    if !skipped.is_empty() {
        let _ = write!(line, "; skipped: {}", skipped.join(", "));
    }
    if summary.unsupported > 0 {
        let _ = write!(line, "; {} not rewritable", summary.unsupported);
    }
    if summary.warnings > 0 {
        let _ = write!(line, "; {}", plural(summary.warnings, "warning"));
    }
    line
}

/// The resolver's figures, for `-v`.
pub fn stats(out: &mut impl Write, stats: &Stats) -> io::Result<()> {
    let mut requests = Vec::new();
    for (method, statuses) in &stats.requests {
        for (status, n) in statuses {
            requests.push(format!("{method} {status}: {n}"));
        }
    }
    writeln!(
        out,
        "note: registry: {} looked up, {} saved by de-duplication; requests: {}; {} fetched; {}",
        plural(usize::try_from(stats.lookups).unwrap_or(usize::MAX), "tag"),
        stats.deduplicated,
        if requests.is_empty() {
            "none".to_owned()
        } else {
            requests.join(", ")
        },
        plural(
            usize::try_from(stats.tokens_fetched).unwrap_or(usize::MAX),
            "token"
        ),
        match stats.retries {
            1 => "1 retry".to_owned(),
            n => format!("{n} retries"),
        },
    )?;
    if stats.cache_hits > 0 {
        writeln!(
            out,
            "note: cache: {} read instead of fetched",
            plural(
                usize::try_from(stats.cache_hits).unwrap_or(usize::MAX),
                "manifest"
            )
        )?;
    }
    if let Some(limit) = &stats.ratelimit_remaining {
        match limit.window_seconds {
            Some(window) => writeln!(
                out,
                "note: Docker Hub ratelimit-remaining: {} (window {window} s)",
                limit.remaining
            )?,
            None => writeln!(
                out,
                "note: Docker Hub ratelimit-remaining: {}",
                limit.remaining
            )?,
        }
    }
    Ok(())
}
