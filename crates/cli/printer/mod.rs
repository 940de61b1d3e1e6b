//! Rendering: the only place that writes to stdout and stderr.
//!
//! stdout carries data only (the table, the JSON document, annotations, SARIF); errors, notes
//! and summaries go to stderr. Writes go through locked handles with `writeln!`; a broken pipe
//! comes back as an error that `main` does not report.

pub mod diff;
mod github;
mod pin;
mod pr;
mod progress;
mod sarif;
mod scan_json;
mod text;

use std::io::{self, IsTerminal as _, Write};

use crate::args::{CheckFormat, PinFormat, ScanFormat};
use crate::commands::check::CheckReport;
use crate::commands::pin::PinReport;
use crate::commands::pr::PrReport;
use crate::commands::scan::ScanReport;
use crate::settings::{Settings, Verbosity};

/// How the printer writes, decided from the settings once.
#[derive(Clone, Copy, Debug)]
pub struct Printer {
    stdout_color: bool,
    stderr_color: bool,
    verbosity: Verbosity,
}

impl Printer {
    pub fn new(settings: &Settings) -> Self {
        Self {
            stdout_color: settings.colors(io::stdout().is_terminal()),
            stderr_color: settings.colors(io::stderr().is_terminal()),
            verbosity: settings.verbosity,
        }
    }

    /// A printer for errors that happen before the settings exist.
    pub fn plain() -> Self {
        Self {
            stdout_color: false,
            stderr_color: false,
            verbosity: Verbosity::Normal,
        }
    }

    /// A buffered stdout (a locked stdout flushes every line, one system call each), stderr,
    /// and the diagnostics writer for it.
    fn streams(
        self,
    ) -> (
        io::BufWriter<io::StdoutLock<'static>>,
        io::StderrLock<'static>,
        text::Diagnostics,
    ) {
        let stdout = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
        let diagnostics = text::Diagnostics {
            verbosity: self.verbosity,
            color: self.stderr_color,
        };
        (stdout, io::stderr().lock(), diagnostics)
    }

    pub fn scan(self, report: &ScanReport, format: ScanFormat) -> io::Result<()> {
        let (mut stdout, mut stderr, diagnostics) = self.streams();
        match format {
            ScanFormat::Text => {
                text::scan_table(&mut stdout, report, self.stdout_color)?;
                stdout.flush()?;
                diagnostics.files(&mut stderr, &report.errors, &report.skipped)?;
                diagnostics.scan_summary(&mut stderr, report)
            }
            ScanFormat::Json => {
                scan_json::write(&mut stdout, report)?;
                writeln!(stdout)?;
                stdout.flush()?;
                diagnostics.files(&mut stderr, &report.errors, &report.skipped)
            }
        }
    }

    pub fn check(self, report: &CheckReport, format: CheckFormat) -> io::Result<()> {
        let (mut stdout, mut stderr, diagnostics) = self.streams();
        match format {
            CheckFormat::Text => text::check_lines(&mut stdout, report, self.stdout_color)?,
            CheckFormat::Json => write_json(&mut stdout, report)?,
            CheckFormat::Github => github::check(&mut stdout, report)?,
            CheckFormat::Sarif => write_json(&mut stdout, &sarif::check(report))?,
        }
        stdout.flush()?;
        diagnostics.files(&mut stderr, &report.errors, &report.skipped)?;
        diagnostics.check_summary(&mut stderr, report)
    }

    pub fn pin(self, report: &PinReport, format: PinFormat) -> io::Result<()> {
        let (mut stdout, mut stderr, diagnostics) = self.streams();
        match format {
            PinFormat::Text => {
                if !report.summary.write {
                    pin::diffs(&mut stdout, report)?;
                }
                stdout.flush()?;
                diagnostics.files(&mut stderr, &report.errors, &report.skipped)?;
                pin::diagnostics(&mut stderr, report, self.verbosity, self.stderr_color)
            }
            PinFormat::Json => {
                write_json(&mut stdout, report)?;
                stdout.flush()?;
                diagnostics.files(&mut stderr, &report.errors, &report.skipped)?;
                pin::details_notes(&mut stderr, report, self.verbosity)?;
                if self.verbosity == Verbosity::Verbose {
                    pin::stats(&mut stderr, &report.stats)?;
                }
                Ok(())
            }
        }
    }

    pub fn pr(self, report: &PrReport, format: PinFormat) -> io::Result<()> {
        let (mut stdout, mut stderr, diagnostics) = self.streams();
        diagnostics.files(&mut stderr, &report.pin.errors, &report.pin.skipped)?;
        pin::findings(&mut stderr, &report.pin, self.verbosity, self.stderr_color)?;
        if self.verbosity != Verbosity::Quiet {
            writeln!(stderr, "{}", pr::summary_line(report))?;
        }
        match format {
            PinFormat::Text => pr::outcome(&mut stdout, report)?,
            PinFormat::Json => write_json(&mut stdout, report)?,
        }
        stdout.flush()
    }

    /// The progress bar for resolving tags: drawn on stderr when it is a terminal, unless
    /// `-q` or the output is JSON.
    pub fn progress(self, json: bool) -> progress::Bar {
        progress::Bar::new(
            !json && self.verbosity != Verbosity::Quiet && io::stderr().is_terminal(),
        )
    }

    /// With `-v`: which config file is in use.
    pub fn config_note(self, config_file: Option<&std::path::Path>) {
        if self.verbosity == Verbosity::Verbose {
            let mut stderr = io::stderr().lock();
            let _ = match config_file {
                Some(path) => writeln!(stderr, "note: config file: {}", path.display()),
                None => writeln!(stderr, "note: no config file"),
            };
        }
    }

    /// Writes `error: …` and its causes to stderr.
    pub fn error(self, error: &anyhow::Error) {
        // Nothing is left to tell the user if stderr itself fails.
        let _ = text::error(&mut io::stderr().lock(), error, self.stderr_color);
    }
}

fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

#[cfg(test)]
mod tests;
