//! Text output: the scan table, check's one line per floating reference, diagnostics.

use std::fmt::Write as _;
use std::io::{self, Write};

use tagpin_formats::chart::TagSource;
use tagpin_formats::{Finding, Status};

use crate::commands::check::CheckReport;
use crate::commands::scan::ScanReport;
use crate::commands::{FileError, Skipped};
use crate::settings::Verbosity;

pub const RED: &str = "\x1b[31m";
pub const YELLOW: &str = "\x1b[33m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

pub fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

fn status_style(status: Status) -> &'static str {
    match status {
        Status::Floating => YELLOW,
        Status::Pinned | Status::DigestOnly => "",
        Status::Templated | Status::Local | Status::Ignored => DIM,
    }
}

pub fn status_name(status: Status) -> &'static str {
    match status {
        Status::Floating => "floating",
        Status::Pinned => "pinned",
        Status::DigestOnly => "digest-only",
        Status::Templated => "templated",
        Status::Local => "local",
        Status::Ignored => "ignored",
    }
}

/// `LOCATION  STATUS  KIND  REFERENCE`, one reference a line, aligned.
pub fn scan_table(out: &mut impl Write, report: &ScanReport, color: bool) -> io::Result<()> {
    if report.is_empty() {
        return Ok(());
    }
    let location_of =
        |path: &str, finding: &Finding| format!("{path}:{}:{}", finding.line, finding.column);
    let location_width = report
        .findings()
        .map(|(path, finding)| location_of(path, finding).len())
        .max()
        .unwrap_or(0)
        .max(8);
    let status_width = "digest-only".len();
    let kind_width = "helm-template".len();
    let header = format!(
        "{:location_width$}  {:status_width$}  {:kind_width$}  REFERENCE",
        "LOCATION", "STATUS", "KIND"
    );
    writeln!(out, "{}", paint(&header, BOLD, color))?;
    for (path, reference) in report.findings() {
        let location = location_of(path, reference);
        let status = format!("{:status_width$}", status_name(reference.status));
        // Where a chart's tag comes from, when the values do not write it.
        let source = match reference.tag_source {
            Some(TagSource::AppVersion) => "  (tag: the chart's appVersion)",
            Some(TagSource::Chart) => "  (tag: chosen by the chart)",
            Some(TagSource::Values) | None => "",
        };
        writeln!(
            out,
            "{location:location_width$}  {}  {:kind_width$}  {}{source}",
            paint(&status, status_style(reference.status), color),
            reference.kind.name(),
            reference.text,
        )?;
    }
    Ok(())
}

/// `path:line:column: floating image reference TEXT` (with why `pin` cannot pin it, when it
/// cannot), then the warnings.
pub fn check_lines(out: &mut impl Write, report: &CheckReport, color: bool) -> io::Result<()> {
    for reference in report.floating() {
        let why = reference
            .unwritable
            .as_deref()
            .map(|reason| format!(" (pin cannot write it: {reason})"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}:{}:{}: {} {}{why}",
            reference.path,
            reference.line,
            reference.column,
            paint("floating image reference", YELLOW, color),
            reference.text
        )?;
    }
    for (kind, problem) in report.online_problems() {
        writeln!(
            out,
            "{}:{}:{}: {} {}: {}",
            problem.path,
            problem.line,
            problem.column,
            paint(kind.title(), RED, color),
            problem.text,
            problem.message
        )?;
    }
    for reference in report.warned() {
        for warning in &reference.warnings {
            writeln!(
                out,
                "{}:{}:{}: {}: {}: {}",
                reference.path,
                reference.line,
                reference.column,
                paint("warning", YELLOW, color),
                reference.text,
                warning.message
            )?;
        }
    }
    Ok(())
}

/// What goes to stderr beside the data.
pub struct Diagnostics {
    pub verbosity: Verbosity,
    pub color: bool,
}

impl Diagnostics {
    /// Files that could not be read (always), files skipped (with `-v`).
    pub fn files(
        &self,
        out: &mut impl Write,
        errors: &[FileError],
        skipped: &[Skipped],
    ) -> io::Result<()> {
        for error in errors {
            writeln!(
                out,
                "{}: {}: {}",
                paint("error", RED, self.color),
                error.path,
                error.message
            )?;
        }
        if self.verbosity == Verbosity::Verbose {
            for skipped in skipped {
                writeln!(out, "note: {}: skipped: {}", skipped.path, skipped.reason)?;
            }
        }
        Ok(())
    }

    pub fn scan_summary(&self, out: &mut impl Write, report: &ScanReport) -> io::Result<()> {
        if self.verbosity == Verbosity::Quiet {
            return Ok(());
        }
        let mut line = format!(
            "{} in {}",
            plural(report.len(), "reference"),
            plural(report.files_scanned, "file")
        );
        let counts: Vec<String> = Status::ALL
            .into_iter()
            .filter_map(|status| {
                let n = report.count(status);
                (n > 0).then(|| format!("{n} {}", status_name(status)))
            })
            .collect();
        if !counts.is_empty() {
            let _ = write!(line, " ({})", counts.join(", "));
        }
        self.tail(&mut line, report.errors.len(), report.skipped.len());
        writeln!(out, "{line}")
    }

    pub fn check_summary(&self, out: &mut impl Write, report: &CheckReport) -> io::Result<()> {
        if self.verbosity == Verbosity::Quiet && report.summary.passed {
            return Ok(());
        }
        let summary = &report.summary;
        let mut problems = Vec::new();
        if summary.floating > 0 {
            problems.push(plural(summary.floating, "floating reference"));
        }
        if summary.errors > 0 {
            problems.push(format!("{} not checked", plural(summary.errors, "file")));
        }
        if summary.stale > 0 {
            problems.push(plural(summary.stale, "stale digest"));
        }
        if summary.missing > 0 {
            problems.push(plural(summary.missing, "missing image"));
        }
        if summary.unresolved > 0 {
            problems.push(format!(
                "{} not verified",
                plural(summary.unresolved, "digest")
            ));
        }
        if summary.missing_platform > 0 {
            problems.push(format!(
                "{} missing a platform",
                plural(summary.missing_platform, "digest")
            ));
        }
        let online = report
            .online
            .as_ref()
            .map(|online| format!(", {} verified online", online.verified))
            .unwrap_or_default();
        let mut line = if summary.passed {
            format!(
                "check passed: no floating references{} ({} in {}",
                if report.online.is_some() {
                    ", no stale or missing digests"
                } else {
                    ""
                },
                plural(summary.references, "reference"),
                plural(summary.files, "file")
            )
        } else {
            format!(
                "{}: {} ({} in {}",
                paint("check failed", RED, self.color),
                problems.join(", "),
                plural(summary.references, "reference"),
                plural(summary.files, "file")
            )
        };
        if summary.ignored > 0 {
            let _ = write!(line, ", {} ignored", summary.ignored);
        }
        line.push_str(&online);
        line.push(')');
        if summary.warnings > 0 {
            let _ = write!(line, "; {}", plural(summary.warnings, "warning"));
        }
        if !report.skipped.is_empty() && self.verbosity != Verbosity::Verbose {
            let _ = write!(
                line,
                "; {} skipped (-v lists them)",
                plural(report.skipped.len(), "file")
            );
        }
        writeln!(out, "{line}")
    }

    fn tail(&self, line: &mut String, errors: usize, skipped: usize) {
        if errors > 0 {
            let _ = write!(line, "; {} not read", plural(errors, "file"));
        }
        if skipped > 0 {
            let _ = write!(line, "; {} skipped", plural(skipped, "file"));
            if self.verbosity != Verbosity::Verbose {
                line.push_str(" (-v lists them)");
            }
        }
    }
}

pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `error: …`, then each cause on its own line.
pub fn error(out: &mut impl Write, error: &anyhow::Error, color: bool) -> io::Result<()> {
    writeln!(out, "{}: {error}", paint("error", RED, color))?;
    for cause in error.chain().skip(1) {
        writeln!(out, "  caused by: {cause}")?;
    }
    Ok(())
}
