//! `ARG` defaults that image positions use: `ARG BASE=alpine:3.20` + `FROM ${BASE}`, and
//! `ARG TAG=1.36` + `FROM busybox:${TAG}`.
//!
//! Docker's scoping rules decide which declaration a `$NAME` or `${NAME}` means:
//!
//! - a `FROM` line sees only the ARGs declared before the first `FROM` (global ARGs);
//! - inside a stage (after its `FROM`), `COPY --from=` and `RUN --mount=…,from=` see only the
//!   ARGs the stage declares from that point on; `ARG NAME` without a value re-declares a
//!   global ARG and takes its default; an `ENV NAME` anywhere makes the stage's value unknown
//!   here (ENV wins over ARG), so such uses stay `templated`.
//!
//! What is written:
//!
//! - an ARG whose every image use is the whole word (`FROM ${BASE}`) is reported once, at its
//!   default in the ARG line, and pinned there like any other reference, unless the value is
//!   also expanded outside image positions where that declaration is in scope (a stage's
//!   `ARG BASE` followed by `LABEL …base.name="${BASE}"`, `RUN`, `ENV`, a heredoc body or
//!   another ARG's default, in a stage or among the global ARGs): then it is reported and not
//!   written, the reason naming that use and its line. Other `FROM`, `COPY --from=` and
//!   `RUN --mount=…,from=` uses get the digest too and do not count; `${BASE}` in a stage that
//!   did not re-declare `BASE` expands to nothing and does not count either;
//! - an ARG that is the end of a reference (`busybox:${TAG}`, `${REPO}:${TAG}`) is reported at
//!   the image position, with the defaults joined; the digest is appended to that ARG's
//!   default only when it is the reference's one ARG and that reference is its one use in the
//!   whole file (no other image names it, and no `RUN`, `LABEL`, `ENV` or other ARG's default
//!   expands it where the declaration is in scope); otherwise the
//!   reference is reported and not written (with `${REPO}:${TAG}` a build that sets `REPO`
//!   would still get the digest `TAG` holds);
//! - a reference that does not end with an ARG (`${REGISTRY}/busybox:1.36`), and any expansion
//!   other than `$NAME` and `${NAME}` (`${TAG:-1}`), predefined ARGs (`$TARGETARCH`) and ARGs
//!   without a default stay as before: not written (`templated` when unresolved).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::{Instruction, Word, is_local};
use crate::common::{Found, Sink};
use crate::{EditSite, Status};

/// An `ARG NAME=default` declaration whose default tagpin can use.
struct Def<'a> {
    name: &'a str,
    /// The default as written, quotes stripped.
    value: &'a str,
    span: Range<usize>,
    ignore: bool,
}

/// An image position that names ARGs, all resolved.
struct Use<'a> {
    word: &'a str,
    at: usize,
    ignore: bool,
    /// The word with every ARG replaced by its default.
    composed: String,
    /// The declarations it uses, in order.
    defs: Vec<usize>,
    shape: Shape,
    /// The composed name is a stage, `scratch` or a stage index.
    local: bool,
}

/// An expansion of a declaration outside an image position (`LABEL base=${BASE}`,
/// `RUN echo $BASE`, `ARG OTHER=${BASE}`): the default's text reaches something that is not
/// an image reference.
struct OtherUse<'a> {
    def: usize,
    /// The instruction, as written (`LABEL`, `run`).
    keyword: &'a str,
    at: usize,
}

/// How an image position's word is made of ARGs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Exactly one ARG.
    Whole,
    /// Ends with an ARG (the last of [`Use::defs`]), after other text or ARGs.
    EndsWithArg,
    /// Ends with literal text.
    EndsWithText,
}

/// What each name means in a scope: a declaration with a usable default, or `None` (declared
/// without one, or with one tagpin cannot use).
type Scope<'a> = HashMap<&'a str, Option<usize>>;

pub(super) struct Args<'a> {
    defs: Vec<Def<'a>>,
    uses: Vec<Use<'a>>,
    others: Vec<OtherUse<'a>>,
    global: Scope<'a>,
    stage: Scope<'a>,
    /// Reading a `FROM` line: the global scope applies.
    in_from: bool,
    /// After the first `FROM`: declarations go into the stage's scope.
    in_stage: bool,
    /// Names an `ENV` instruction sets somewhere in the file.
    env: HashSet<&'a str>,
}

fn is_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A word of an image position: literal text and ARG names.
enum Part<'a> {
    Text(&'a str),
    Arg(&'a str),
}

/// The parts of `word`, or `None` when it holds an expansion other than `$NAME`/`${NAME}`.
fn parts(word: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = word;
    while let Some(dollar) = rest.find('$') {
        if dollar > 0 {
            parts.push(Part::Text(&rest[..dollar]));
        }
        let after = &rest[dollar + 1..];
        let (name, next) = if let Some(braced) = after.strip_prefix('{') {
            let close = braced.find('}')?;
            (&braced[..close], &braced[close + 1..])
        } else {
            let end = after
                .bytes()
                .position(|b| !is_name_byte(b))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if !is_name(name) {
            return None;
        }
        parts.push(Part::Arg(name));
        rest = next;
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest));
    }
    Some(parts)
}

impl<'a> Args<'a> {
    pub(super) fn new(instructions: &[Instruction<'_, 'a>]) -> Self {
        let mut env = HashSet::new();
        for instruction in instructions {
            let words = instruction.words;
            if words
                .first()
                .is_some_and(|w| w.text.eq_ignore_ascii_case("env"))
            {
                for word in &words[1..] {
                    env.insert(word.text.split_once('=').map_or(word.text, |(n, _)| n));
                }
            }
        }
        Self {
            defs: Vec::new(),
            uses: Vec::new(),
            others: Vec::new(),
            global: HashMap::new(),
            stage: HashMap::new(),
            in_from: false,
            in_stage: false,
            env,
        }
    }

    pub(super) fn enter_from(&mut self) {
        self.in_from = true;
    }

    pub(super) fn enter_stage(&mut self) {
        self.in_from = false;
        self.in_stage = true;
        self.stage.clear();
    }

    /// An `ARG` instruction's words (after `ARG`): `NAME`, `NAME=value`, `NAME="value"`.
    pub(super) fn declare(&mut self, words: &[Word<'a>], ignore: bool) {
        for word in words {
            let (name, meaning, stop) = match word.text.split_once('=') {
                None => {
                    let inherited = if self.in_stage {
                        self.global.get(word.text).copied().flatten()
                    } else {
                        None
                    };
                    (word.text, inherited, false)
                }
                Some((name, raw)) => {
                    // Another ARG's default takes this one's value (before this word declares
                    // anything: `ARG BASE=${BASE}` means the earlier one).
                    self.value_use("ARG", raw, word.at + name.len() + 1);
                    let mut value = raw;
                    let mut at = word.at + name.len() + 1;
                    let mut stop = false;
                    if let Some(&quote @ (b'"' | b'\'')) = raw.as_bytes().first() {
                        match raw[1..].strip_suffix(char::from(quote)) {
                            Some(inner) => {
                                value = inner;
                                at += 1;
                            }
                            // A quoted value with spaces: the words after it are not names.
                            None => stop = true,
                        }
                    }
                    let usable =
                        !stop && !value.is_empty() && !value.contains(['$', '\\', '"', '\'', '`']);
                    let meaning = usable.then(|| {
                        self.defs.push(Def {
                            name,
                            value,
                            span: at..at + value.len(),
                            ignore,
                        });
                        self.defs.len() - 1
                    });
                    (name, meaning, stop)
                }
            };
            if !is_name(name) {
                break;
            }
            let scope = if self.in_stage {
                &mut self.stage
            } else {
                &mut self.global
            };
            scope.insert(name, meaning);
            if stop {
                break;
            }
        }
    }

    /// Records the expansions in `text` (at byte `at`, in instruction `keyword`), outside any
    /// image position, of declarations the current scope sees: `$NAME`, `${NAME}` and
    /// `${NAME…}` (`${NAME:-x}`). A name the scope does not hold expands to nothing (a global
    /// ARG not re-declared in the stage) and is no use; ENV and shell quoting are not looked
    /// at, so a use may be counted that a build would not make, never the other way round.
    pub(super) fn value_use(&mut self, keyword: &'a str, text: &str, at: usize) {
        if self.defs.is_empty() || !text.contains('$') {
            return;
        }
        let scope = if self.in_from || !self.in_stage {
            &self.global
        } else {
            &self.stage
        };
        for (dollar, _) in text.match_indices('$') {
            let after = &text[dollar + 1..];
            let after = after.strip_prefix('{').unwrap_or(after);
            let end = after
                .bytes()
                .position(|b| !is_name_byte(b))
                .unwrap_or(after.len());
            if let Some(&Some(def)) = scope.get(&after[..end]) {
                self.others.push(OtherUse {
                    def,
                    keyword,
                    at: at + dollar,
                });
            }
        }
    }

    /// Records an image position `word` (at byte `at`) that holds `$`: `true` when every ARG
    /// it names resolves to a default (it is reported by [`Args::finish`]), `false` when the
    /// caller should report it as it is (`templated`).
    pub(super) fn image_use(
        &mut self,
        stages: &[String],
        word: &'a str,
        at: usize,
        ignore: bool,
    ) -> bool {
        let Some(parts) = parts(word) else {
            return false;
        };
        let scope = if self.in_from {
            &self.global
        } else {
            &self.stage
        };
        let mut composed = String::new();
        let mut defs = Vec::new();
        for part in &parts {
            match part {
                Part::Text(text) => composed.push_str(text),
                Part::Arg(name) => {
                    let Some(&Some(def)) = scope.get(name) else {
                        return false;
                    };
                    if !self.in_from && self.env.contains(name) {
                        return false;
                    }
                    composed.push_str(self.defs[def].value);
                    defs.push(def);
                }
            }
        }
        let local = is_local(stages, &composed);
        self.uses.push(Use {
            word,
            at,
            ignore,
            composed,
            defs,
            shape: match parts.last() {
                Some(Part::Arg(_)) if parts.len() == 1 => Shape::Whole,
                Some(Part::Arg(_)) => Shape::EndsWithArg,
                _ => Shape::EndsWithText,
            },
            local,
        });
        true
    }

    /// Reports every recorded use: at the ARG line for whole-word uses, at the image position
    /// otherwise.
    pub(super) fn finish(self, sink: &mut Sink<'_>) {
        let mut handled = vec![false; self.uses.len()];
        for (index, def) in self.defs.iter().enumerate() {
            let uses: Vec<usize> = (0..self.uses.len())
                .filter(|&u| self.uses[u].defs.contains(&index))
                .collect();
            if uses.is_empty() || !uses.iter().all(|&u| self.uses[u].shape == Shape::Whole) {
                continue;
            }
            let ignore = def.ignore || uses.iter().any(|&u| self.uses[u].ignore);
            let found = if uses.iter().any(|&u| self.uses[u].local) {
                Some(Found::local(def.span.clone(), def.value))
            } else {
                Found::inline(def.span.clone(), def.value)
            };
            if let Some(mut found) = found {
                if ignore {
                    found.status = Status::Ignored;
                }
                if found.reference.is_some()
                    && let Some(reason) = self.used_elsewhere(sink, index)
                {
                    found.site = EditSite::Unsupported { reason };
                }
                sink.push(found);
                for u in uses {
                    handled[u] = true;
                }
            }
        }
        for (index, image) in self.uses.iter().enumerate() {
            if handled[index] {
                continue;
            }
            let span = image.at..image.at + image.word.len();
            let found = if image.local {
                Some(Found::local(span.clone(), &image.composed))
            } else {
                Found::inline(span.clone(), &image.composed)
            };
            let mut found = found.unwrap_or_else(|| Found::templated(span, image.word));
            if found.reference.is_some() {
                found.site = self.site(sink, image);
            }
            found.also_lines = image
                .defs
                .iter()
                .map(|&def| self.defs[def].span.start)
                .collect();
            if image.ignore || image.defs.iter().any(|&def| self.defs[def].ignore) {
                found.status = Status::Ignored;
            }
            sink.push(found);
        }
    }

    /// Why declaration `index`, a whole reference, is not written: its value is also expanded
    /// outside image positions (a `LABEL`, a `RUN`, another ARG's default), where the digest
    /// would change it. `None` when every use is an image position.
    fn used_elsewhere(&self, sink: &mut Sink<'_>, index: usize) -> Option<String> {
        let mut others = self.others.iter().filter(|other| other.def == index);
        let first = others.next()?;
        let more = others.count();
        let def = &self.defs[index];
        let (line, _) = sink.position(def.span.start);
        let (use_line, _) = sink.position(first.at);
        let keyword = first.keyword.to_ascii_uppercase();
        let more = match more {
            0 => String::new(),
            1 => " and 1 other place".to_owned(),
            n => format!(" and {n} other places"),
        };
        Some(format!(
            "ARG {name} (line {line}) is also used outside image references ({keyword} on line \
             {use_line}{more}); a digest in its default would change that use too",
            name = def.name
        ))
    }

    /// Where the digest of a composed reference goes: the default of the ARG that ends it,
    /// when nothing else uses that ARG.
    fn site(&self, sink: &mut Sink<'_>, image: &Use<'_>) -> EditSite {
        let unsupported = |reason: String| EditSite::Unsupported { reason };
        let Some(&last) = image
            .defs
            .last()
            .filter(|_| image.shape != Shape::EndsWithText)
        else {
            return unsupported(
                "the reference does not end with an ARG: the digest would go into this line, \
                 and tagpin writes only ARG defaults here"
                    .to_owned(),
            );
        };
        let def = &self.defs[last];
        let (line, _) = sink.position(def.span.start);
        let name = def.name;
        if image.shape == Shape::Whole {
            return unsupported(format!(
                "ARG {name} (line {line}) is also part of another image reference; a digest in \
                 its default would break that one"
            ));
        }
        let others: Vec<&str> = image
            .defs
            .iter()
            .filter(|&&other| other != last)
            .map(|&other| self.defs[other].name)
            .collect();
        if let Some(other) = others.first() {
            // `--build-arg` may set the other one: the digest in this default would then pin
            // the image the defaults name, whatever the build asked for
            // (`golang:${GO_VERSION}-alpine${ALPINE_VERSION}` built with GO_VERSION=1.25).
            return unsupported(format!(
                "the reference is made of several ARGs ({other} and {name}); a digest in \
                 {name}'s default (line {line}) would pin this image even when a build sets \
                 {other} to another value"
            ));
        }
        if image.defs.iter().filter(|&&def| def == last).count() > 1 {
            return unsupported(format!(
                "ARG {name} (line {line}) is used more than once in this reference; a digest in \
                 its default would land in each place"
            ));
        }
        let images = self
            .uses
            .iter()
            .filter(|other| other.defs.contains(&last))
            .count();
        if images > 1 {
            return unsupported(format!(
                "ARG {name} (line {line}) is used in {images} image references; its default is \
                 written only when one reference uses it"
            ));
        }
        // Where the declaration is in scope only: `${TAG}` in a stage that did not re-declare
        // a global `TAG` expands to nothing.
        if let Some(reason) = self.used_elsewhere(sink, last) {
            return unsupported(reason);
        }
        EditSite::SplitTag {
            span: def.span.clone(),
            tag: def.value.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests;
