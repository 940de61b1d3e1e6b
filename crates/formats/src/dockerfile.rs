//! Dockerfiles and Containerfiles.
//!
//! - The `# syntax=<image>` parser directive, only among the directives at the very top (before
//!   any instruction, comment or blank line, as `BuildKit` reads them); `# escape=` switches the
//!   continuation character to a backquote.
//! - `FROM` in any case, skipping flags, remembering `AS name`; a literal `--platform=…` is
//!   kept on the finding (`Finding::platform`), an expansion (`$BUILDPLATFORM`) is not.
//! - `COPY --from=<image>` (a stage name or index is `local`).
//! - `RUN --mount=…,from=<image>,…` (any number of `--mount` flags).
//! - Instructions continued over several lines with the escape character; comment lines inside
//!   a continuation are skipped, and heredoc bodies (`RUN <<EOF … EOF`) are not instructions.
//! - Earlier stage names and `scratch` are `local`; anything with `$` is `templated`, unless it
//!   names `ARG`s with usable defaults ([`args`]).
//! - `# tagpin:ignore` on the instruction's line, or alone on the comment line just above it
//!   (Dockerfiles have no trailing comments), marks the reference `ignored`.

mod args;

use std::ops::Range;

use crate::Status;
use crate::common::{Found, IGNORE_MARK, Sink};

/// A word of an instruction: its text and where it starts in the file.
struct Word<'a> {
    text: &'a str,
    at: usize,
}

pub(crate) fn scan(sink: &mut Sink<'_>) {
    let text = sink.text;
    let bytes = text.as_bytes();
    let len = bytes.len();
    let mut pos = if text.starts_with(crate::common::BOM) {
        crate::common::BOM.len()
    } else {
        0
    };
    let mut escape = b'\\';
    let mut stages: Vec<String> = Vec::new();
    let mut directives = true;
    let mut previous_comment_ignores = false;
    // Every instruction's words in one list (an instruction holds its range): a list per
    // instruction grew a few times for each.
    let mut words: Vec<Word<'_>> = Vec::new();
    // Per instruction: its words, whether it is ignored, and its heredoc bodies' bytes.
    let mut ranges: Vec<(Range<usize>, bool, Range<usize>)> = Vec::new();
    let mut heredocs: Vec<(String, bool)> = Vec::new();

    while pos < len {
        let (line, next) = line_at(text, pos);
        let trimmed = line.trim_start();
        if directives {
            if let Some((name, value)) = trimmed
                .strip_prefix('#')
                .and_then(|directive| directive.split_once('='))
            {
                let name = name.trim().to_ascii_lowercase();
                if name.bytes().all(|b| b.is_ascii_alphanumeric()) && !name.is_empty() {
                    let value_trimmed = value.trim();
                    if name == "escape" && value_trimmed == "`" {
                        escape = b'`';
                    } else if name == "syntax" && !value_trimmed.is_empty() {
                        let at = pos
                            + (line.len() - value.len())
                            + (value.len() - value.trim_start().len());
                        report(sink, &stages, value_trimmed, at, false);
                    }
                    pos = next;
                    continue;
                }
            }
            directives = false;
        }
        if !heredocs.is_empty() {
            let (delimiter, strip_tabs) = &heredocs[0];
            let candidate = if *strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if candidate == delimiter.as_str() {
                heredocs.remove(0);
            }
            if let Some((_, _, body)) = ranges.last_mut() {
                body.end = next;
            }
            pos = next;
            continue;
        }
        if trimmed.is_empty() {
            previous_comment_ignores = false;
            pos = next;
            continue;
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            previous_comment_ignores = comment.trim_start().starts_with(IGNORE_MARK);
            pos = next;
            continue;
        }
        // One logical instruction: collect its words over continuation lines.
        let first_word = words.len();
        let mut line_start = pos;
        let mut line = line;
        let mut next_pos = next;
        let mut first_line = true;
        loop {
            let content = line.trim_end();
            let continued = content.as_bytes().last() == Some(&escape);
            let body = if continued {
                &content[..content.len() - 1]
            } else {
                content
            };
            let skip = !first_line && body.trim_start().starts_with('#');
            if !skip {
                split_words(body, line_start, &mut words);
            }
            first_line = false;
            if !continued || next_pos >= len {
                break;
            }
            line_start = next_pos;
            let (l, n) = line_at(text, next_pos);
            line = l;
            next_pos = n;
        }
        let ignore = std::mem::take(&mut previous_comment_ignores);
        collect_heredocs(&words[first_word..], &mut heredocs);
        ranges.push((first_word..words.len(), ignore, next_pos..next_pos));
        pos = next_pos;
    }
    let instructions: Vec<Instruction<'_, '_>> = ranges
        .into_iter()
        .map(|(range, ignore, body)| Instruction {
            words: &words[range],
            ignore,
            body: Word {
                text: &text[body.clone()],
                at: body.start,
            },
        })
        .collect();
    let mut args = args::Args::new(&instructions);
    for instruction in &instructions {
        self::instruction(sink, instruction, &mut stages, &mut args);
    }
    args.finish(sink);
}

/// One logical instruction (continuation lines joined) and whether a `# tagpin:ignore` comment
/// line stands just above it.
struct Instruction<'w, 'a> {
    words: &'w [Word<'a>],
    ignore: bool,
    /// The lines of its heredoc bodies (`RUN <<EOF … EOF`), empty when it has none.
    body: Word<'a>,
}

/// The line starting at `pos` without its line ending, and the offset of the next line.
fn line_at(text: &str, pos: usize) -> (&str, usize) {
    let bytes = text.as_bytes();
    let eol = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
    let next = (eol + 1).min(bytes.len()).max(eol);
    let line = text.get(pos..eol).unwrap_or("");
    (line.strip_suffix('\r').unwrap_or(line), next)
}

fn split_words<'a>(body: &'a str, offset: usize, words: &mut Vec<Word<'a>>) {
    // By bytes when it can: most instructions are ASCII, and a char's whitespace test is
    // slower.
    if body.is_ascii() {
        split_ascii_words(body, offset, words);
    } else {
        split_char_words(body, offset, words);
    }
}

/// [`split_words`] of an ASCII `body`: split at the ASCII bytes `char::is_whitespace` takes
/// (which include the vertical tab).
fn split_ascii_words<'a>(body: &'a str, offset: usize, words: &mut Vec<Word<'a>>) {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let bytes = body.as_bytes();
    let mut at = 0;
    while let Some(start) = bytes[at..].iter().position(|b| !space(b)).map(|i| at + i) {
        let end = bytes[start..]
            .iter()
            .position(space)
            .map_or(bytes.len(), |i| start + i);
        words.push(Word {
            text: &body[start..end],
            at: offset + start,
        });
        at = end;
    }
}

fn split_char_words<'a>(body: &'a str, offset: usize, words: &mut Vec<Word<'a>>) {
    let mut start = None;
    for (i, c) in body.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push(Word {
                    text: &body[s..i],
                    at: offset + s,
                });
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(Word {
            text: &body[s..],
            at: offset + s,
        });
    }
}

fn instruction<'a>(
    sink: &mut Sink<'_>,
    instruction: &Instruction<'_, 'a>,
    stages: &mut Vec<String>,
    scope: &mut args::Args<'a>,
) {
    let (words, ignore) = (instruction.words, instruction.ignore);
    let Some(first) = words.first() else {
        return;
    };
    let args = &words[1..];
    let image = |sink: &mut Sink<'_>,
                 scope: &mut args::Args<'a>,
                 stages: &[String],
                 value: &'a str,
                 at: usize| {
        if value.contains('$') && scope.image_use(stages, value, at, ignore) {
            return;
        }
        report(sink, stages, value, at, ignore);
    };
    let keyword = first.text;
    // Flags come first: `COPY --from=…` and `RUN --mount=…` are read among them only.
    let flags = args.iter().take_while(|w| w.text.starts_with("--")).count();
    if keyword.eq_ignore_ascii_case("arg") {
        scope.declare(args, ignore);
    } else if keyword.eq_ignore_ascii_case("from") {
        let mut rest = args[flags..].iter();
        let Some(from) = rest.next() else {
            return;
        };
        let pushed = sink.len();
        // `FROM` sees the global ARGs only; the stage it opens starts with none.
        scope.enter_from();
        for word in args.iter().filter(|w| w.at != from.at) {
            scope.value_use(keyword, word.text, word.at);
        }
        image(sink, scope, stages, from.text, from.at);
        scope.enter_stage();
        let platform = args[..flags]
            .iter()
            .find_map(|w| w.text.strip_prefix("--platform="))
            .map(|value| value.trim_matches(|c| c == '"' || c == '\''))
            .filter(|value| !value.is_empty() && !value.contains('$'));
        if let Some(platform) = platform
            && sink.len() > pushed
        {
            sink.set_platform_of_last(platform);
        }
        if let (Some(as_word), Some(name)) = (rest.next(), rest.next())
            && as_word.text.eq_ignore_ascii_case("as")
        {
            stages.push(name.text.to_ascii_lowercase());
        }
    } else if keyword.eq_ignore_ascii_case("copy") {
        for (index, word) in args.iter().enumerate() {
            match word.text.strip_prefix("--from=") {
                Some(value) if index < flags => {
                    image(sink, scope, stages, value, word.at + "--from=".len());
                }
                _ => scope.value_use(keyword, word.text, word.at),
            }
        }
    } else if keyword.eq_ignore_ascii_case("run") {
        for (index, word) in args.iter().enumerate() {
            let Some(options) = word.text.strip_prefix("--mount=").filter(|_| index < flags) else {
                scope.value_use(keyword, word.text, word.at);
                continue;
            };
            let mut offset = word.at + "--mount=".len();
            for option in options.split(',') {
                if let Some(value) = option.strip_prefix("from=") {
                    image(sink, scope, stages, value, offset + "from=".len());
                } else {
                    scope.value_use(keyword, option, offset);
                }
                offset += option.len() + 1;
            }
        }
    } else {
        for word in args {
            scope.value_use(keyword, word.text, word.at);
        }
    }
    // What a heredoc holds reaches the command or the file it feeds.
    scope.value_use(keyword, instruction.body.text, instruction.body.at);
}

fn collect_heredocs(words: &[Word<'_>], heredocs: &mut Vec<(String, bool)>) {
    for word in words.iter().skip(1) {
        // By bytes, without a searcher: words are short, and a searcher's start cost more than
        // the search, for every word of every file.
        let Some(at) = word
            .text
            .as_bytes()
            .windows(2)
            .position(|pair| pair == b"<<")
        else {
            continue;
        };
        let mut rest = &word.text[at + 2..];
        let strip_tabs = rest.starts_with('-');
        if strip_tabs {
            rest = &rest[1..];
        }
        let delimiter = rest.trim_matches(|c| c == '"' || c == '\'');
        if !delimiter.is_empty()
            && delimiter
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            heredocs.push((delimiter.to_owned(), strip_tabs));
        }
    }
}

/// Whether `value`, in an image position, names a stage, `scratch` or a stage index.
fn is_local(stages: &[String], value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    lower == "scratch" || stages.contains(&lower) || value.bytes().all(|b| b.is_ascii_digit())
}

fn report(sink: &mut Sink<'_>, stages: &[String], value: &str, at: usize, ignore: bool) {
    if value.is_empty() {
        return;
    }
    let span = at..at + value.len();
    let local = is_local(stages, value);
    let found = if local {
        Some(Found::local(span, value))
    } else {
        Found::inline(span, value)
    };
    let Some(mut found) = found else {
        return;
    };
    if ignore || sink.line_is_ignored(at) {
        found.status = Status::Ignored;
    }
    sink.push(found);
}

#[cfg(test)]
mod tests {
    use super::{Word, split_ascii_words, split_char_words};

    fn words(
        split: for<'a> fn(&'a str, usize, &mut Vec<Word<'a>>),
        body: &str,
    ) -> Vec<(String, usize)> {
        let mut words = Vec::new();
        split(body, 7, &mut words);
        words
            .into_iter()
            .map(|w| (w.text.to_owned(), w.at))
            .collect()
    }

    #[test]
    fn ascii_words_split_where_chars_split() {
        for body in [
            "",
            "   ",
            "RUN echo a && make -C /src x",
            "  FROM  nginx:1.27   AS web ",
            "RUN\ta\x0bb\x0cc\rd\ne",
            "COPY --from=build /a /b",
            "x",
        ] {
            assert_eq!(
                words(split_ascii_words, body),
                words(split_char_words, body),
                "{body:?}"
            );
        }
    }
}
