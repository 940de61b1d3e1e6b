//! `scan --format json`: the report exactly as `serde_json`'s pretty printer writes it, with
//! the rows of `references` written by hand.
//!
//! The rows are written after the walk: on a large tree they were the largest part of a scan's
//! serial end, and most of their cost was `serde_json`'s formatter writing each key,
//! indentation and colon piece by piece. A row's keys, indentation and separators are the same
//! every time, and most of its strings need no escaping; what is not plain (a string that needs
//! escaping, an enum, a warning) is still written by `serde_json`. Over a few hundred rows, two
//! threads write them in turn, a chunk each. `printer::tests` holds the output to
//! `serde_json`'s, byte for byte.

use std::io::{self, Write};
use std::sync::mpsc;

use serde::Serialize;

#[cfg(doc)]
use crate::commands::scan::ReferenceRow;
use crate::commands::scan::{RowView, ScanReport, WarningRow};

/// Writes `report` as `serde_json::to_writer_pretty` would.
pub fn write(out: &mut impl Write, report: &ScanReport) -> io::Result<()> {
    out.write_all(b"{\n  \"references\": [")?;
    let rows: Vec<RowView<'_>> = report.views().collect();
    if rows.len() > CHUNK_ROWS {
        write_rows_in_pairs(out, &rows)?;
    } else {
        write_rows(out, &rows, true)?;
    }
    out.write_all(if rows.is_empty() { b"]" } else { b"\n  ]" })?;
    out.write_all(b",\n  \"errors\": ")?;
    write_pretty(out, &report.errors, 2)?;
    out.write_all(b",\n  \"skipped\": ")?;
    write_pretty(out, &report.skipped, 2)?;
    out.write_all(b"\n}")
}

/// How many rows a chunk of [`write_rows_in_pairs`] holds.
const CHUNK_ROWS: usize = 512;

/// About how many bytes a row takes (most take 300 to 500).
const ROW_BYTES: usize = 448;

/// `rows`, written by this thread and another in turn, a chunk each: this thread writes its
/// chunks straight out, the other writes each of its chunks into a buffer that this thread
/// then copies out, in order. The rows are a large scan's serial end, after the walk; the
/// buffers go back and forth, so that a few serve every chunk (a buffer of fresh memory for
/// half the rows cost more than the writing it saved).
fn write_rows_in_pairs(out: &mut impl Write, rows: &[RowView<'_>]) -> io::Result<()> {
    let chunks: Vec<&[RowView<'_>]> = rows.chunks(CHUNK_ROWS).collect();
    let chunks = chunks.as_slice();
    let (written, take_written) = mpsc::sync_channel::<io::Result<Vec<u8>>>(1);
    let (return_used, used) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for chunk in chunks.iter().skip(1).step_by(2) {
                let mut buffer = used
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(CHUNK_ROWS * ROW_BYTES));
                buffer.clear();
                let result = write_rows(&mut buffer, chunk, false).map(|()| buffer);
                if written.send(result).is_err() {
                    // This thread stopped on an error: the rest is not wanted.
                    return;
                }
            }
        });
        let mut result = Ok(());
        for (index, chunk) in chunks.iter().enumerate() {
            result = if index % 2 == 0 {
                write_rows(out, chunk, index == 0)
            } else {
                match take_written.recv() {
                    Ok(Ok(buffer)) => {
                        let copied = out.write_all(&buffer);
                        // Gone only once the other thread has ended, which needs no buffer.
                        let _ = return_used.send(buffer);
                        copied
                    }
                    Ok(Err(error)) => Err(error),
                    Err(_) => Err(io::Error::other("the rows' writer stopped")),
                }
            };
            if result.is_err() {
                break;
            }
        }
        drop(take_written);
        result
    })
}

/// `rows`, each after the separator that goes before it (`first`: the first row of all).
fn write_rows(out: &mut impl Write, rows: &[RowView<'_>], first: bool) -> io::Result<()> {
    let mut first = first;
    for &row in rows {
        out.write_all(if first { b"\n    {" } else { b",\n    {" })?;
        first = false;
        write_row(out, row)?;
        out.write_all(b"\n    }")?;
    }
    Ok(())
}

/// A row's fields, in [`ReferenceRow`]'s order, each on its own line at a depth of three,
/// read from the finding itself (making a [`ReferenceRow`] copied each string).
fn write_row(out: &mut impl Write, row: RowView<'_>) -> io::Result<()> {
    fn key(out: &mut impl Write, name: &str, first: bool) -> io::Result<()> {
        out.write_all(if first { b"\n      \"" } else { b",\n      \"" })?;
        out.write_all(name.as_bytes())?;
        out.write_all(b"\": ")
    }
    let finding = row.finding;
    key(out, "path", true)?;
    write_str(out, row.path)?;
    key(out, "line", false)?;
    write_number(out, finding.line)?;
    key(out, "column", false)?;
    write_number(out, finding.column)?;
    // The names `serde` gives these enums (a test holds them alike), written directly.
    key(out, "kind", false)?;
    write_name(out, finding.kind.name())?;
    key(out, "text", false)?;
    write_str(out, &finding.text)?;
    key(out, "status", false)?;
    write_name(out, super::text::status_name(finding.status))?;
    for (name, value) in [
        ("registry", row.registry()),
        ("repository", row.repository()),
        ("tag", row.tag()),
    ] {
        key(out, name, false)?;
        match value {
            Some(value) => write_str(out, value)?,
            None => out.write_all(b"null")?,
        }
    }
    key(out, "digest", false)?;
    match row.digest() {
        // An algorithm and hex digits: nothing to escape.
        Some(digest) => {
            out.write_all(b"\"")?;
            out.write_all(digest.algorithm().name().as_bytes())?;
            out.write_all(b":")?;
            out.write_all(digest.encoded().as_bytes())?;
            out.write_all(b"\"")?;
        }
        None => out.write_all(b"null")?,
    }
    key(out, "warnings", false)?;
    if finding.warnings.is_empty() {
        // Most rows: no pretty print (and its buffer) for `[]`.
        out.write_all(b"[]")?;
    } else {
        write_pretty(out, &WarningRow::rows(&finding.warnings), 6)?;
    }
    if let Some(source) = &finding.tag_source {
        key(out, "tag_source", false)?;
        serde_json::to_writer(&mut *out, source)?;
    }
    if let Some(reason) = row.unwritable() {
        key(out, "unwritable", false)?;
        write_str(out, reason)?;
    }
    Ok(())
}

/// A line or column number, in decimal (as `Display` writes it, without its formatter).
fn write_number(out: &mut impl Write, number: usize) -> io::Result<()> {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = number;
    loop {
        at -= 1;
        // A remainder below ten is one digit.
        digits[at] = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.write_all(&digits[at..])
}

/// A name that needs no escaping, as a JSON string.
fn write_name(out: &mut impl Write, name: &str) -> io::Result<()> {
    out.write_all(b"\"")?;
    out.write_all(name.as_bytes())?;
    out.write_all(b"\"")
}

/// A JSON string: as written when nothing in it needs escaping, else by `serde_json`.
fn write_str(out: &mut impl Write, value: &str) -> io::Result<()> {
    // A fold without an early exit, so the compiler vectorises it.
    #[expect(
        clippy::needless_bitwise_bool,
        reason = "branch-free, so it vectorises"
    )]
    let escaped = value.bytes().fold(false, |escaped, b| {
        escaped | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if escaped {
        serde_json::to_writer(&mut *out, value).map_err(io::Error::from)
    } else {
        out.write_all(b"\"")?;
        out.write_all(value.as_bytes())?;
        out.write_all(b"\"")
    }
}

/// `value` printed pretty by `serde_json`, each line after its first moved right by `indent`
/// spaces (at most eight): its depth in the document.
fn write_pretty(out: &mut impl Write, value: &impl Serialize, indent: usize) -> io::Result<()> {
    let pretty = serde_json::to_vec_pretty(value)?;
    // No JSON string holds a raw line break: every one is the printer's own.
    let mut lines = pretty.split(|&b| b == b'\n');
    if let Some(first) = lines.next() {
        out.write_all(first)?;
    }
    let spaces = &b"        "[..indent];
    for line in lines {
        out.write_all(b"\n")?;
        out.write_all(spaces)?;
        out.write_all(line)?;
    }
    Ok(())
}
