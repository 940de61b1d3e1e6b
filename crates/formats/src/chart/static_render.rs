//! A rendering of a chart without Helm, for the lines that matter: every template line that
//! reads a value of an image map is evaluated ([`super::evaluate`]) and printed as Helm would
//! print it, one document per line, so that [`super::decide`] and [`super::prove`] read it as
//! they read `helm template`'s output.
//!
//! It is conservative: a map is **blocked** (the caller writes nothing for it, with the reason)
//! when any template reads it in a way a line cannot show: the map or a map above it passed
//! whole (to a helper, to `with`, to `toYaml`), `.Values` passed whole, a value read inside a
//! named template or a `with`/`range` block, a condition on it that spans lines, or a line the
//! evaluator cannot evaluate. Files of vendored subcharts are read too (a library chart's
//! helper is one), and a map under a subchart's name is blocked: its templates see it under
//! another path.

use std::fmt::Write as _;

use serde_json::Value;

use super::evaluate::{self, Piece, Root};

/// A template file: its path as Helm names it (`chart/templates/x.yaml`) and its text.
#[derive(Clone, Debug)]
pub struct Template {
    pub source: String,
    pub text: String,
}

/// What the static rendering of a chart gave.
#[derive(Debug, Default)]
pub struct StaticRendering {
    /// The evaluated lines, as `helm template` would print documents.
    pub output: String,
    /// For each candidate path that cannot be followed, why.
    pub blocked: Vec<(usize, String)>,
}

/// A read of `.Values…` in a template: where, and the keys after `.Values`.
struct Read<'t> {
    template: usize,
    line: usize,
    keys: Vec<&'t str>,
    /// In an action that opens a block on this line and does not close it there, or in a
    /// named template, or inside `with`/`range`.
    context: Context,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A line at the top of a template file (perhaps inside `if` blocks): `.` is the root.
    Line,
    /// In `define`, `with` or `range`: `.` is something else.
    Scoped,
    /// The condition of a block that spans lines.
    Condition,
}

/// What the static reading will evaluate for a values file's candidates: the lines, the
/// candidates it cannot follow, and the top-level values keys the lines read.
#[derive(Debug, Default)]
pub struct Plan {
    /// `(template, line)`, each with the candidates it reads.
    lines: Vec<((usize, usize), Vec<usize>)>,
    blocked: Vec<(usize, String)>,
    /// The top-level keys of `.Values` the lines read: the only ones to load.
    pub top_keys: std::collections::BTreeSet<String>,
}

/// Plans the reading of `templates` for the candidates at `paths` (keys from the values root).
/// `subcharts` are the names of the chart's vendored subcharts.
pub fn plan(templates: &[Template], paths: &[Vec<String>], subcharts: &[String]) -> Plan {
    let reads = reads(templates);
    let mut plan = Plan::default();
    let mut lines: std::collections::BTreeMap<(usize, usize), Vec<usize>> =
        std::collections::BTreeMap::new();
    // Only the reads under a candidate's top-level key (and those of `.Values` whole) can
    // concern it: a values file has hundreds of maps, a chart thousands of reads.
    let mut by_top: std::collections::HashMap<&str, Vec<&Read<'_>>> =
        std::collections::HashMap::new();
    for read in &reads {
        by_top
            .entry(read.keys.first().copied().unwrap_or_default())
            .or_default()
            .push(read);
    }
    let whole = by_top.get("").cloned().unwrap_or_default();
    for (i, path) in paths.iter().enumerate() {
        let top = path.first().map_or("", String::as_str);
        let concerned: Vec<&Read<'_>> = whole
            .iter()
            .chain(by_top.get(top).into_iter().flatten())
            .copied()
            .collect();
        match follow(path, &concerned, templates, subcharts) {
            Ok(found) => {
                for line in found {
                    lines.entry(line).or_default().push(i);
                }
            }
            Err(reason) => plan.blocked.push((i, reason)),
        }
    }
    for read in &reads {
        if let (true, Some(top)) = (
            lines.contains_key(&(read.template, read.line)),
            read.keys.first(),
        ) {
            plan.top_keys.insert((*top).to_owned());
        }
    }
    plan.lines = lines.into_iter().collect();
    plan
}

impl Plan {
    /// Evaluates the planned lines of `templates` with `root` (`{"Values": …, "Chart": …,
    /// "Release": …}`).
    pub fn render(&self, templates: &[Template], root: &Value) -> StaticRendering {
        let mut rendering = StaticRendering {
            output: String::new(),
            blocked: self.blocked.clone(),
        };
        let root = Root { root };
        for ((template, line), readers) in &self.lines {
            let text = templates[*template]
                .text
                .lines()
                .nth(*line)
                .unwrap_or_default();
            let source = &templates[*template].source;
            match evaluate::line(text, &root) {
                Ok(evaluated) => {
                    let shown = evaluated.trim_start().trim_start_matches("- ").trim_start();
                    let _ = write!(rendering.output, "---\n# Source: {source}\n{shown}\n");
                }
                Err(error) => {
                    let reason = format!(
                        "not proven: without Helm, `{}` at {source}:{} cannot be evaluated \
                         ({error})",
                        text.trim(),
                        line + 1
                    );
                    for i in readers {
                        if !rendering.blocked.iter().any(|(b, _)| b == i) {
                            rendering.blocked.push((*i, reason.clone()));
                        }
                    }
                }
            }
        }
        rendering
    }
}

/// Plans and renders in one step (see [`plan`] and [`Plan::render`]).
pub fn render(
    templates: &[Template],
    paths: &[Vec<String>],
    subcharts: &[String],
    root: &Value,
) -> StaticRendering {
    plan(templates, paths, subcharts).render(templates, root)
}

/// The lines that read the candidate at `path`, or why it cannot be followed.
fn follow(
    path: &[String],
    reads: &[&Read<'_>],
    templates: &[Template],
    subcharts: &[String],
) -> Result<Vec<(usize, usize)>, String> {
    if path.first().is_some_and(|top| subcharts.contains(top)) {
        return Err(format!(
            "not proven: without Helm, the values under `{}` feed a subchart, whose templates \
             this reading does not follow",
            path[0]
        ));
    }
    let mut lines = Vec::new();
    for read in reads {
        let at = || format!("{}:{}", templates[read.template].source, read.line + 1);
        // `.Values` itself, or a map on the way to this one, passed whole.
        let whole_above =
            read.keys.len() <= path.len() && path.iter().zip(&read.keys).all(|(p, k)| p == k);
        if whole_above {
            let shown = std::iter::once("Values")
                .chain(read.keys.iter().copied())
                .collect::<Vec<_>>()
                .join(".");
            return Err(format!(
                "not proven: without Helm, `.{shown}` is read whole at {}, which this reading \
                 does not follow",
                at()
            ));
        }
        if !starts_with(&read.keys, path) {
            continue;
        }
        match read.context {
            Context::Line => lines.push((read.template, read.line)),
            Context::Scoped => {
                return Err(format!(
                    "not proven: without Helm, the map is read inside a named template or a \
                     `with`/`range` block at {}",
                    at()
                ));
            }
            Context::Condition => {
                return Err(format!(
                    "not proven: without Helm, a block that spans lines depends on the map at {}",
                    at()
                ));
            }
        }
    }
    Ok(lines)
}

fn starts_with(keys: &[&str], path: &[String]) -> bool {
    keys.len() > path.len() && path.iter().zip(keys).all(|(p, k)| p == k)
}

/// Every read of `.Values` in `templates`, with its context.
fn reads(templates: &[Template]) -> Vec<Read<'_>> {
    let mut reads = Vec::new();
    for (template, file) in templates.iter().enumerate() {
        // The blocks open at the start of each line: true for `define`/`with`/`range`.
        let mut open: Vec<bool> = Vec::new();
        // Inside an action that began on an earlier line and has not ended yet.
        let mut in_action = false;
        for (line, text) in file.text.lines().enumerate() {
            if in_action {
                // The rest of an action over several lines: what it reads, it reads in a way
                // no line shows, which blocks it.
                in_action = !text.contains("}}");
                push_scoped(&mut reads, template, line, text);
                continue;
            }
            if !text.contains("{{") {
                // No action: no read, and no block opens or ends here.
                continue;
            }
            let scoped_before = open.iter().any(|scoped| *scoped);
            let Some(pieces) = evaluate::pieces(text) else {
                // An action over several lines starts here: read as scoped, which blocks what
                // it reads.
                in_action = true;
                push_scoped(&mut reads, template, line, text);
                continue;
            };
            let actions: Vec<&str> = pieces
                .into_iter()
                .filter_map(|p| match p {
                    Piece::Action(a) => Some(a),
                    Piece::Text(_) => None,
                })
                .collect();
            let depth_before = open.len();
            for action in &actions {
                match first_word(action) {
                    "define" | "with" | "range" | "block" => open.push(true),
                    "if" => open.push(false),
                    "end" => {
                        open.pop();
                    }
                    _ => {}
                }
            }
            // A block opened here and closed on a later line, or an `else` between lines.
            let spans =
                open.len() > depth_before || actions.iter().any(|a| first_word(a) == "else");
            for action in &actions {
                let opens = ["if", "else", "with", "range"].contains(&first_word(action));
                let context = if scoped_before {
                    Context::Scoped
                } else if spans && opens {
                    Context::Condition
                } else {
                    Context::Line
                };
                for keys in values_reads(action) {
                    reads.push(Read {
                        template,
                        line,
                        keys,
                        context,
                    });
                }
            }
        }
    }
    reads
}

/// Records the reads in `text` as scoped: they block the maps they read.
fn push_scoped<'t>(reads: &mut Vec<Read<'t>>, template: usize, line: usize, text: &'t str) {
    reads.extend(values_reads(text).into_iter().map(|keys| Read {
        template,
        line,
        keys,
        context: Context::Scoped,
    }));
}

fn first_word(action: &str) -> &str {
    action.split_whitespace().next().unwrap_or_default()
}

/// The key chains after each `.Values` in `action` (`$.Values.a.b` and `.Values.a.b` give
/// `[a, b]`; `.Values` alone gives `[]`).
fn values_reads(action: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = action;
    while let Some(at) = rest.find(".Values") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + ".Values".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .unwrap_or(after.len());
        let keys = after[..end].split('.').filter(|k| !k.is_empty()).collect();
        out.push(keys);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template(source: &str, text: &str) -> Template {
        Template {
            source: source.to_owned(),
            text: text.to_owned(),
        }
    }

    fn path(dotted: &str) -> Vec<String> {
        dotted.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn image_lines_are_printed_and_other_reads_block() {
        let templates = [
            template(
                "c/templates/deploy.yaml",
                "spec:\n  {{- if .Values.worker.enabled }}\n  containers:\n    - image: \"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\"\n    - image: {{ include \"c.image\" .Values.helper }}\n  {{- end }}\n  {{- with .Values.scoped }}\n    image: {{ .repository }}\n  {{- end }}\n",
            ),
            template(
                "c/templates/_helpers.tpl",
                "{{- define \"c.x\" -}}\n{{ .Values.defined.tag }}\n{{- end -}}\n",
            ),
        ];
        let root = json!({
            "Values": {"image": {"repository": "tpsr0z", "tag": "tpst0z"}},
            "Chart": {"AppVersion": "1.0"},
        });
        let paths = [
            path("image"),
            path("helper"),
            path("scoped"),
            path("defined"),
            path("sub.image"),
        ];
        let rendering = render(&templates, &paths, &["sub".to_owned()], &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: \"tpsr0z:tpst0z\"\n"
        );
        let blocked: Vec<(usize, &str)> = rendering
            .blocked
            .iter()
            .map(|(i, reason)| (*i, reason.as_str()))
            .collect();
        assert_eq!(
            blocked,
            [
                (
                    1,
                    "not proven: without Helm, `.Values.helper` is read whole at c/templates/deploy.yaml:5, which this reading does not follow"
                ),
                (
                    2,
                    "not proven: without Helm, `.Values.scoped` is read whole at c/templates/deploy.yaml:7, which this reading does not follow"
                ),
                (
                    3,
                    "not proven: without Helm, the map is read inside a named template or a `with`/`range` block at c/templates/_helpers.tpl:2"
                ),
                (
                    4,
                    "not proven: without Helm, the values under `sub` feed a subchart, whose templates this reading does not follow"
                ),
            ]
        );
    }

    #[test]
    fn an_action_over_several_lines_blocks_what_it_reads() {
        let templates = [template(
            "c/templates/d.yaml",
            "image: {{ include \"c.image\" (dict\n  \"root\" .Values.image\n  \"ctx\" $) }}\nother: {{ .Values.image.tag }}\n",
        )];
        let root = json!({"Values": {"image": {"tag": "t"}}});
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked.len(), 1, "{:?}", rendering.blocked);
        assert!(
            rendering.blocked[0]
                .1
                .contains("is read whole at c/templates/d.yaml:2"),
            "{:?}",
            rendering.blocked
        );
    }

    #[test]
    fn a_condition_over_lines_blocks_and_one_on_the_line_is_evaluated() {
        let templates = [template(
            "c/templates/d.yaml",
            "{{- if .Values.image.digest }}\nimage: {{ .Values.image.repository }}@{{ .Values.image.digest }}\n{{- end }}\n",
        )];
        let root = json!({"Values": {"image": {"repository": "r", "digest": "d"}}});
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked.len(), 1, "{:?}", rendering.blocked);
        assert!(rendering.blocked[0].1.contains("a block that spans lines"));
        let inline = [template(
            "c/templates/d.yaml",
            "image: {{ .Values.image.repository }}{{ if .Values.image.digest }}@{{ .Values.image.digest }}{{ end }}\n",
        )];
        let rendering = render(&inline, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked, []);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/d.yaml\nimage: r@d\n"
        );
    }
}
