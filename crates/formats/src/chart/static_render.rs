//! A rendering of a chart without Helm, for the lines that matter: every template line that
//! reads a value of an image map is evaluated ([`super::evaluate`]) and printed as Helm would
//! print it, one document per line, so that [`super::decide`] and [`super::prove`] read it as
//! they read `helm template`'s output.
//!
//! A value read inside a named template (`{{ define "app.image" }}`) is followed to the lines
//! that include it with the root context (`{{ include "app.image" . }}`, `{{ template … $ }}`,
//! also through other named templates): those lines are evaluated, the named template's body
//! whole.
//!
//! A map passed whole to a named template (`include "lib.image" (dict "imageRoot"
//! .Values.image)`) is read by the template, and the line is evaluated with it. A map made
//! `.` of a `with` block over several lines is read by the block's lines, each evaluated inside
//! the `with`, when no block opens, closes or branches inside it. An `if` block over several
//! lines at the top of a file whose condition reads the map, its `if`, `else`s and `end` each
//! alone on their lines, is read branch by branch: each line inside it (text lines too) is
//! evaluated inside its branch, so the rendering shows the branch the values take. A line
//! inside `with`/`range` blocks that reads only from the root (`$.Values.image.tag`, `include
//! "x" $`) is evaluated whatever the blocks range over (it renders the same in every round, and
//! a list or map empty by default, `cronjobs: []`, `podAnnotations: {}`, is one a user fills
//! in: a label there that reads the tag is a use all the same), unless a block's `else` came
//! before it. A variable
//! declared alone on its line at the top of a file is read by the later lines that use it,
//! each evaluated after the declaration. A read inside a named template that no rendered line
//! includes (only `NOTES.txt`, or nothing) never happens, and neither does one in a comment.
//!
//! It is conservative: a map is **blocked** (the caller writes nothing for it, with the reason)
//! when any template reads it in a way a line cannot show: the map or a map above it passed
//! whole other than to a named template (to `with`, to `toYaml`), a value read inside a
//! `with`/`range` block on a line that also reads `.` or a variable, or inside a named template
//! included with another argument than `.`
//! (or from such a block), read into a variable this cannot follow, read through a root
//! passed on (`.context.Values…`), in a file another includes whole by its path
//! (`include (print $.Template.BasePath "/cm.yaml")`), a condition on it that spans lines and
//! is not read branch by branch, or
//! a line the evaluator cannot evaluate. Files of vendored subcharts are read too (a library chart's
//! helper is one), and a map under a subchart's name is blocked: its templates see it under
//! another path. A subchart's own files read the subchart's values: their reads are not of the
//! chart's maps, but for `global`, which blocks.

use std::fmt::Write as _;

use memchr::memmem;
use serde_json::Value;

use super::evaluate::{self, Defines, Piece, Root};

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
    context: Context<'t>,
    /// Passed to a named template (`include "x" (dict "image" .Values.image)`).
    argument: bool,
    /// The named template the read is in, if any.
    define: Option<&'t str>,
    /// Only the map's keys or kind are read (`hasKey .Values.a "b"`), which no edit of a value
    /// changes.
    shape_only: bool,
}

/// An `include` or `template` of a named template: where, and whether with `.` or `$`.
struct Call<'t> {
    template: usize,
    line: usize,
    name: &'t str,
    root_context: bool,
    context: Context<'t>,
    /// In a subchart's file, outside named templates: its `.` is the subchart's root, whose
    /// values are not the chart's.
    foreign: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context<'t> {
    /// A line at the top of a template file (perhaps inside `if` blocks): `.` is the root.
    Line,
    /// In the body of the named template: evaluated whole where it is included.
    Define(&'t str),
    /// In `with` or `range` (outside a named template): `.` is something else.
    Scoped,
    /// The condition of a block that spans lines.
    Condition,
    /// The condition of an `if` block over lines that is read branch by branch ([`Cond`], by
    /// index): each line inside it is evaluated inside its branch.
    Cond(usize),
    /// Text a template renders with `tpl` (a values string, a file of the chart).
    Tpl,
    /// Assigned to a variable ([`Variable`], by index): the lines that use it read it.
    Assigned(usize),
    /// Read through a root passed on (`.context.Values.image`, `$root.Values.image`).
    Indirect,
    /// `global` read by a subchart's file, which sees it with the subchart's values.
    Subchart,
    /// The pipeline of a `with` block over several lines ([`With`], by index): the block's
    /// lines read it as `.`.
    With(usize),
}

/// A variable a template file assigns outside named templates: its declaration (alone on its
/// line, outside any block, as `{{- $tag := .Values.image.tag }}`), its name, the later lines
/// of the file that use it, and whether they can be read one by one, each after the
/// declaration (not when it is assigned again, declared in a block, or used inside a
/// `with`/`range` or an action over several lines).
struct Variable<'t> {
    action: &'t str,
    name: &'t str,
    lines: Vec<(usize, usize)>,
    clean: bool,
}

/// A `with` block over several lines outside named templates and other scopes: its action,
/// the lines inside it that hold actions, and whether they can be read one by one (no block
/// opens, closes or branches inside it but its own `end`, alone on its line).
struct With<'t> {
    action: &'t str,
    lines: Vec<(usize, usize)>,
    clean: bool,
}

/// An `if` block over several lines at the top of a file (outside named templates and
/// scopes): where its `if`, each `else` and its `end` stand, and whether its lines can be read
/// one by one, each inside its branch (`{{ if C }}{{ else }}line{{ end }}`): the `if`, each
/// `else` (or `else if`) and the `end` alone on their lines, and no other block opening,
/// closing or branching over lines inside it, nor an action or a comment over lines.
struct Cond<'t> {
    template: usize,
    /// The line and the action of the `if` and of each `else`, in order.
    branches: Vec<(usize, &'t str)>,
    end: Option<usize>,
    clean: bool,
}

impl Cond<'_> {
    fn is_clean(&self) -> bool {
        self.clean && self.end.is_some()
    }

    /// Each line inside the block (blank and text lines too: a branch taken or not shows in
    /// them), with the actions that put it in its branch.
    fn lines(&self) -> Vec<((usize, usize), String)> {
        let end = self.end.unwrap_or_default();
        let mut lines = Vec::new();
        let mut prefix = String::new();
        for (k, (line, action)) in self.branches.iter().enumerate() {
            let _ = write!(prefix, "{{{{ {action} }}}}");
            let next = self.branches.get(k + 1).map_or(end, |(next, _)| *next);
            lines.extend((line + 1..next).map(|at| ((self.template, at), prefix.clone())));
        }
        lines
    }
}

/// The prefix of a [`Template`]'s source that marks it as text a chart may render with `tpl`
/// (its values, its other files) rather than a template: each `.Values` read in it blocks the
/// map it reads, as no line of a template shows where it goes.
pub const TPL_SOURCE: &str = "tpl:";

/// A block open at some point of a template.
#[derive(Clone, Copy)]
enum Block<'t> {
    Define(&'t str),
    /// `with`, `range` or `block`, with its action and whether an `else` of its own was met;
    /// a `with` over several lines is tracked ([`With`]).
    Scope(Option<usize>, &'t str, bool),
    /// An `if` over several lines at the top of a file, alone on its line, is tracked
    /// ([`Cond`]).
    If(Option<usize>),
}

/// What the static reading will evaluate for a values file's candidates: the lines, the
/// candidates it cannot follow, and the top-level values keys the lines read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// `(template, line)`, each with the candidates it reads.
    lines: Vec<((usize, usize), Vec<usize>)>,
    blocked: Vec<(usize, String)>,
    /// The top-level keys of `.Values` the lines read: the only ones to load.
    pub top_keys: std::collections::BTreeSet<String>,
    /// A line passes `.Values` whole (`dict "root" .Values`): every key is loaded.
    pub every_top_key: bool,
    /// The named templates the lines may include.
    defines: Defines,
    /// What each line inside a `with` block, or using a variable, is evaluated between.
    around: std::collections::BTreeMap<(usize, usize), (String, String)>,
}

/// Plans the reading of `templates` for the candidates at `paths` (keys from the values root),
/// all of them maps. `subcharts` are the names of the chart's vendored subcharts.
pub fn plan(templates: &[Template], paths: &[Vec<String>], subcharts: &[String]) -> Plan {
    plan_for(templates, paths, &[], subcharts)
}

/// [`plan`], where the candidates whose index `strings` holds are strings (`image:
/// nginx:1.27`): a read of one of them is its value, not a map passed whole.
pub fn plan_for(
    templates: &[Template],
    paths: &[Vec<String>],
    strings: &[usize],
    subcharts: &[String],
) -> Plan {
    let plan = plan_with(templates, paths, strings, subcharts, &Related::new(paths));
    // The lines passed over change nothing: every test that plans proves it.
    #[cfg(test)]
    assert_eq!(
        plan,
        plan_with(templates, paths, strings, subcharts, &Related::every()),
        "passing over the lines no candidate is related to changed the plan"
    );
    plan
}

/// [`plan_for`], reading the lines `related` may concern.
fn plan_with(
    templates: &[Template],
    paths: &[Vec<String>],
    strings: &[usize],
    subcharts: &[String],
    related: &Related<'_>,
) -> Plan {
    // A chart none of whose files reads a value related to a candidate has nothing to follow.
    let relevant = relevant_files(templates, related);
    let Lines {
        mut reads,
        calls,
        withs,
        variables,
        conds,
        scoped,
    } = if relevant.contains(&true) {
        reads(templates, related, &relevant)
    } else {
        Lines::default()
    };
    // A read in a named template that nothing rendered includes never happens.
    let live_defines = live_defines(&calls);
    if let Ok(live) = &live_defines {
        reads.retain(|read| read.define.is_none_or(|name| live.contains(name)));
    }
    let mut plan = Plan::default();
    let mut followed = std::collections::BTreeSet::new();
    // The tracked `if` blocks whose condition reads a candidate: their lines are evaluated
    // inside their branches.
    let mut live: Vec<usize> = Vec::new();
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
        // A map at the values' root (Elastic's `image` and `imageTag`) is read by every read.
        let concerned: Vec<&Read<'_>> = match path.first() {
            Some(top) => whole
                .iter()
                .chain(by_top.get(top.as_str()).into_iter().flatten())
                .copied()
                .collect(),
            None => reads.iter().collect(),
        };
        let sources = Sources {
            templates,
            calls: &calls,
            withs: &withs,
            variables: &variables,
            conds: &conds,
            computed: live_defines.as_ref().err().map(|&at| &calls[at]),
        };
        let mut tpl = None;
        let target = Target {
            path,
            string: strings.contains(&i),
        };
        match follow(
            &target, &concerned, &sources, subcharts, &mut tpl, &mut live,
        ) {
            Ok((found, through)) => {
                for line in found {
                    lines.entry(line).or_default().push(i);
                }
                followed.extend(through);
            }
            Err(reason) => plan.blocked.push((i, reason)),
        }
        // Text rendered with `tpl` reads the map: its lines are still evaluated, to show the
        // image, but nothing is written for it.
        if let Some(reason) = tpl.filter(|_| !plan.blocked.iter().any(|(b, _)| *b == i)) {
            plan.blocked.push((i, reason));
        }
    }
    for read in &reads {
        let evaluated = match read.context {
            Context::Define(name) => followed.contains(name),
            Context::With(id) => withs[id].lines.iter().any(|at| lines.contains_key(at)),
            Context::Cond(id) => live.contains(&id),
            Context::Assigned(id) => variables[id].lines.iter().any(|at| lines.contains_key(at)),
            _ => lines.contains_key(&(read.template, read.line)),
        };
        match (evaluated, read.keys.first()) {
            (true, Some(top)) => {
                plan.top_keys.insert((*top).to_owned());
            }
            (true, None) if !read.shape_only => plan.every_top_key = true,
            _ => {}
        }
    }
    // A line inside `with`/`range` blocks that reads only from the root is evaluated inside
    // them, and what their actions read is loaded.
    for (at, inside) in &scoped {
        if lines.contains_key(at) {
            let mut before = String::new();
            for action in inside {
                let _ = write!(before, "{{{{ {action} }}}}");
            }
            plan.top_keys.extend(
                values_reads(&before)
                    .into_iter()
                    .filter_map(|read| read.keys.first().map(|top| (*top).to_owned())),
            );
            plan.around
                .insert(*at, (before, "{{ end }}".repeat(inside.len())));
        }
    }
    // A line of a `with` block is evaluated inside its `with` (but one that reads only from
    // the root, whatever the `with` is over); one that uses a variable, after its
    // declaration.
    let root_only: std::collections::HashSet<(usize, usize)> =
        scoped.iter().map(|(at, _)| *at).collect();
    for with in &withs {
        for at in with
            .lines
            .iter()
            .filter(|at| lines.contains_key(at) && !root_only.contains(at))
        {
            plan.around.insert(
                *at,
                (format!("{{{{ {} }}}}", with.action), "{{ end }}".to_owned()),
            );
        }
    }
    for variable in &variables {
        for at in variable.lines.iter().filter(|at| lines.contains_key(at)) {
            let around = plan.around.entry(*at).or_default();
            let _ = write!(around.0, "{{{{ {} }}}}", variable.action);
        }
    }
    // A line of an `if` block whose condition reads a candidate, inside its branch.
    live.sort_unstable();
    live.dedup();
    for id in live {
        for (at, branch) in conds[id].lines() {
            if lines.contains_key(&at) {
                let around = plan.around.entry(at).or_default();
                around.0.push_str(&branch);
                around.1.insert_str(0, "{{ end }}");
            }
        }
    }
    // The named templates are what the lines to evaluate may include.
    if !lines.is_empty() {
        plan.defines = defines(templates);
    }
    plan.lines = lines.into_iter().collect();
    plan
}

impl Plan {
    /// Whether no line is to be evaluated: every rendering then prints nothing, and blocks
    /// the candidates [`Plan::blocked`] holds.
    pub fn evaluates_nothing(&self) -> bool {
        self.lines.is_empty()
    }

    /// The top-level keys of the values to load: `None` for all of them.
    pub fn keys(&self) -> Option<&std::collections::BTreeSet<String>> {
        (!self.every_top_key).then_some(&self.top_keys)
    }

    /// The candidates that cannot be followed, by index, with why.
    pub fn blocked(&self) -> &[(usize, String)] {
        &self.blocked
    }

    /// Evaluates the planned lines of `templates` with `root` (`{"Values": …, "Chart": …,
    /// "Release": …}`).
    pub fn render(&self, templates: &[Template], root: &Value) -> StaticRendering {
        let mut rendering = StaticRendering {
            output: String::new(),
            blocked: self.blocked.clone(),
        };
        let root = Root {
            data: root,
            defines: &self.defines,
            depth: 0,
        };
        for ((template, line), readers) in &self.lines {
            let text = templates[*template]
                .text
                .lines()
                .nth(*line)
                .unwrap_or_default();
            let source = &templates[*template].source;
            let wrapped = self
                .around
                .get(&(*template, *line))
                .map(|(before, after)| format!("{before}{text}{after}"));
            match evaluate::line(wrapped.as_deref().unwrap_or(text), &root) {
                Ok(evaluated) => {
                    let shown = evaluated.trim_start().trim_start_matches("- ").trim_start();
                    // A branch not taken prints nothing, as Helm does.
                    if !shown.trim().is_empty() {
                        let _ = write!(rendering.output, "---\n# Source: {source}\n{shown}\n");
                    }
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

/// The `(template, line)`s to evaluate, and the named templates followed to them.
type Followed<'t> = (Vec<(usize, usize)>, Vec<&'t str>);

/// The templates and the calls of named templates in them.
struct Sources<'a, 't> {
    templates: &'a [Template],
    calls: &'a [Call<'t>],
    withs: &'a [With<'t>],
    variables: &'a [Variable<'t>],
    conds: &'a [Cond<'t>],
    /// A call by a computed name that a template's rendering may reach (see
    /// [`live_defines`]): it may include any named template.
    computed: Option<&'a Call<'t>>,
}

impl<'t> Sources<'_, 't> {
    /// A call that includes the file `template` whole by its path.
    fn including_file(&self, template: usize) -> Option<&Call<'t>> {
        let source = &self.templates[template].source;
        self.calls
            .iter()
            .find(|call| call.name.starts_with('/') && source.ends_with(call.name))
    }

    fn at(&self, template: usize, line: usize) -> String {
        format!("{}:{}", self.templates[template].source, line + 1)
    }

    /// The lines that evaluate the named template `name` with the root context (through other
    /// named templates too), and the named templates on the way; `visiting` stops a cycle.
    fn including(
        &self,
        name: &'t str,
        visiting: &mut Vec<&'t str>,
    ) -> Result<Followed<'t>, String> {
        if visiting.contains(&name) {
            return Err(format!(
                "not proven: without Helm, the named template `{name}` includes itself"
            ));
        }
        if let Some(call) = self.computed {
            return Err(format!(
                "not proven: without Helm, the map is read inside the named template `{name}`, \
                 and {} includes a named template by a computed name",
                self.at(call.template, call.line)
            ));
        }
        if !self.calls.iter().any(|call| call.name == name) {
            return Err(format!(
                "not proven: without Helm, the map is read inside the named template `{name}`, \
                 which no template includes by its name"
            ));
        }
        visiting.push(name);
        let mut lines = Vec::new();
        let mut through = vec![name];
        // A subchart's own files include it with the subchart's root: not with these values.
        for call in self
            .calls
            .iter()
            .filter(|call| call.name == name && !call.foreign)
        {
            let at = || self.at(call.template, call.line);
            if !call.root_context {
                return Err(format!(
                    "not proven: without Helm, the map is read inside the named template \
                     `{name}`, which {} includes with another argument than `.`",
                    at()
                ));
            }
            match call.context {
                Context::Line => lines.push((call.template, call.line)),
                Context::Define(outer) => {
                    let (more, via) = self.including(outer, visiting)?;
                    lines.extend(more);
                    through.extend(via);
                }
                // An `include` is not known to be pure (it may `set` values in place), so such
                // a variable is never followed.
                Context::Assigned(_) => {
                    return Err(format!(
                        "not proven: without Helm, the map is read inside the named template \
                         `{name}`, which {} includes into a variable whose uses on other lines \
                         this reading does not follow",
                        at()
                    ));
                }
                Context::Scoped
                | Context::Condition
                | Context::Cond(_)
                | Context::Tpl
                | Context::Indirect
                | Context::Subchart
                | Context::With(_) => {
                    return Err(format!(
                        "not proven: without Helm, the map is read inside the named template \
                         `{name}`, which {} includes inside a block this reading does not follow",
                        at()
                    ));
                }
            }
        }
        visiting.pop();
        Ok((lines, through))
    }
}

/// The keys of a map that may hold a part of its image (`chart::candidates` builds an image
/// from these): the renderings' sentinels and the edits go nowhere else.
const PART_KEYS: [&str; 8] = [
    "repository",
    "image",
    "registry",
    "tag",
    "imageTag",
    "version",
    "digest",
    "sha",
];

/// A candidate to follow: its keys, and whether it is a string rather than a map.
struct Target<'p> {
    path: &'p [String],
    string: bool,
}

/// The lines that read the candidate `target` and the named templates followed to them, or
/// why it cannot be followed. A read inside text rendered with `tpl` does not stop the
/// following: it goes to `tpl`, which blocks the edit. The tracked `if` blocks whose condition
/// reads it go to `conds`: their lines are evaluated inside their branches.
fn follow<'t>(
    target: &Target<'_>,
    reads: &[&Read<'t>],
    sources: &Sources<'_, 't>,
    subcharts: &[String],
    tpl: &mut Option<String>,
    conds: &mut Vec<usize>,
) -> Result<Followed<'t>, String> {
    let path = target.path;
    if path.first().is_some_and(|top| subcharts.contains(top)) {
        return Err(format!(
            "not proven: without Helm, the values under `{}` feed a subchart, whose templates \
             this reading does not follow",
            path[0]
        ));
    }
    let mut lines = Vec::new();
    let mut through = Vec::new();
    for read in reads {
        let at = || sources.at(read.template, read.line);
        // `.Values` itself, or a map on the way to this one (or this map), passed whole. A
        // string read is its value.
        let is_the_string = target.string && read.keys.len() == path.len();
        let whole_above = read.keys.len() <= path.len()
            && !is_the_string
            && path.iter().zip(&read.keys).all(|(p, k)| p == k);
        // The keys or kind of the map or of one above it: an edit changes a scalar's value,
        // never which keys a map has or what kind a value is.
        if whole_above && read.shape_only {
            continue;
        }
        // Passed whole to a named template, or made `.` of a `with` block, it is read there,
        // and the lines evaluated show how.
        let passed_on = whole_above
            && (read.argument || matches!(read.context, Context::With(_) | Context::Assigned(_)));
        if whole_above && !passed_on {
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
        let reads_it =
            starts_with(&read.keys, path) || is_the_string && read.keys == path || passed_on;
        // A key of the map that is none of an image's parts (`create`, `pullPolicy`,
        // `resources`): no rendering puts a sentinel there, and no edit changes it.
        let beside_the_parts = !target.string
            && read.keys.len() > path.len()
            && !PART_KEYS.contains(&read.keys[path.len()]);
        if !reads_it || beside_the_parts && !passed_on {
            continue;
        }
        if let Some(call) = sources.including_file(read.template) {
            return Err(format!(
                "not proven: without Helm, {} reads the map, and {} includes that file whole \
                 (`$.Template.BasePath`), which this reading does not follow",
                at(),
                sources.at(call.template, call.line)
            ));
        }
        match read.context {
            Context::Line => lines.push((read.template, read.line)),
            Context::Define(name) => {
                let (more, via) = sources.including(name, &mut Vec::new())?;
                lines.extend(more);
                through.extend(via);
            }
            Context::Scoped => {
                return Err(format!(
                    "not proven: without Helm, the map is read inside a `with`/`range` block \
                     at {}",
                    at()
                ));
            }
            Context::Tpl => {
                tpl.get_or_insert_with(|| {
                    format!(
                        "not proven: without Helm, {} reads the map, and the chart renders \
                         text with `tpl`, which this reading does not follow",
                        at().trim_start_matches(TPL_SOURCE)
                    )
                });
            }
            Context::Condition => {
                return Err(format!(
                    "not proven: without Helm, a block that spans lines depends on the map at {}",
                    at()
                ));
            }
            Context::Cond(id) if sources.conds[id].is_clean() => {
                // Every line of the block, each inside its branch: which branch the values
                // take shows in them.
                lines.extend(sources.conds[id].lines().into_iter().map(|(at, _)| at));
                conds.push(id);
            }
            Context::Cond(_) => {
                return Err(format!(
                    "not proven: without Helm, an `if` block that spans lines depends on the map \
                     at {}, and its lines open, close or branch other blocks, or its `if`, \
                     `else` or `end` shares its line, which this reading does not follow",
                    at()
                ));
            }
            Context::With(id) if sources.withs[id].clean => {
                lines.extend(sources.withs[id].lines.iter().copied());
            }
            Context::With(_) => {
                return Err(format!(
                    "not proven: without Helm, the map is `.` of a `with` block at {} whose \
                     lines open, close or branch blocks, which this reading does not follow",
                    at()
                ));
            }
            Context::Subchart => {
                return Err(format!(
                    "not proven: without Helm, a subchart's file reads the map at {}, with the \
                     subchart's values, which this reading does not follow",
                    at()
                ));
            }
            Context::Indirect => {
                return Err(format!(
                    "not proven: without Helm, the map is read through a root passed on \
                     (`….Values`) at {}, which this reading does not follow",
                    at()
                ));
            }
            Context::Assigned(id) if sources.variables[id].clean => {
                lines.extend(sources.variables[id].lines.iter().copied());
            }
            Context::Assigned(_) => {
                return Err(format!(
                    "not proven: without Helm, the map is read into a variable at {}, whose \
                     uses on other lines this reading does not follow",
                    at()
                ));
            }
        }
    }
    Ok((lines, through))
}

fn starts_with(keys: &[&str], path: &[String]) -> bool {
    keys.len() > path.len() && path.iter().zip(keys).all(|(p, k)| p == k)
}

/// Which of `templates` may concern a candidate: those that read a value `related` says may,
/// or include a template by a computed name (or a file by its path), and those that include a
/// template named in one of these, and so on. The others read nothing a candidate is related
/// to, and no line they hold includes a template that does.
fn relevant_files(templates: &[Template], related: &Related<'_>) -> Vec<bool> {
    let calls: Vec<Vec<CallSite<'_>>> = templates.iter().map(|t| calls_in(&t.text)).collect();
    let mut relevant: Vec<bool> = templates
        .iter()
        .zip(&calls)
        .map(|(t, calls)| {
            related.every
                || related.read_in(&t.text)
                || calls.iter().any(|call| call.literal_at.is_none())
        })
        .collect();
    let mut named: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut added: Vec<usize> = (0..templates.len()).filter(|i| relevant[*i]).collect();
    while !added.is_empty() {
        for i in added.drain(..) {
            let text = &templates[i].text;
            named.extend(
                DEFINE
                    .find_iter(text.as_bytes())
                    .filter_map(|at| define_name(&text[at..])),
            );
        }
        for (i, calls) in calls.iter().enumerate() {
            if !relevant[i] && calls.iter().any(|c| named.contains(c.name)) {
                relevant[i] = true;
                added.push(i);
            }
        }
    }
    relevant
}

/// Every read of `.Values` in the `relevant` of `templates` on a line that may concern a
/// candidate (see [`passes_over`]), with its context, and every call of a named template.
fn reads<'t>(templates: &'t [Template], related: &Related<'_>, relevant: &[bool]) -> Lines<'t> {
    let mut reads = Vec::new();
    let mut calls = Vec::new();
    let mut withs: Vec<With<'_>> = Vec::new();
    let mut variables: Vec<Variable<'_>> = Vec::new();
    let mut conds: Vec<Cond<'_>> = Vec::new();
    let mut scoped: Vec<((usize, usize), Vec<String>)> = Vec::new();
    for (template, file) in templates.iter().enumerate() {
        if !relevant[template] {
            continue;
        }
        if file.source.starts_with(TPL_SOURCE) {
            // Only inside actions, and not on comment lines (a values file's examples).
            let lines = file.text.lines().enumerate().filter(|(_, text)| {
                find(text, &OPEN).is_some() && !text.trim_start().starts_with('#')
            });
            for (line, text) in lines {
                // What it includes, `tpl` renders somewhere no line shows.
                calls.extend(calls_in(text).into_iter().map(|site| Call {
                    template,
                    line,
                    name: site.name,
                    root_context: site.root_context,
                    context: Context::Tpl,
                    foreign: false,
                }));
                reads.extend(values_reads(text).into_iter().map(|read| Read {
                    template,
                    line,
                    keys: read.keys,
                    context: Context::Tpl,
                    argument: false,
                    define: None,
                    shape_only: read.shape_only,
                }));
            }
            continue;
        }
        // The blocks open at the start of each line, and as each action of a line is read.
        let mut open: Vec<Block<'_>> = Vec::new();
        let mut here: Vec<Block<'_>> = Vec::new();
        // A file of a subchart (`chart/charts/sub/templates/…`).
        let subchart = file
            .source
            .split_once('/')
            .is_some_and(|(_, rest)| rest.starts_with("charts/"));
        // Inside an action that began on an earlier line and has not ended yet.
        let mut in_action = false;
        // Inside a comment over several lines (`{{/*` … `*/}}`): its examples are no reads.
        let mut in_comment = false;
        // The variables this file declares, by index in `variables`.
        let mut declared: Vec<usize> = Vec::new();
        for (line, text) in file.text.lines().enumerate() {
            if in_comment {
                in_comment = !text.contains("*/");
                continue;
            }
            if in_action {
                // The rest of an action over several lines: what it reads, it reads in a way
                // no line shows, which blocks it.
                in_action = find(text, &CLOSE).is_none();
                push_scoped(&mut reads, template, line, text);
                note_uses(&mut variables, &declared, text, None);
                continue;
            }
            if find(text, &OPEN).is_none() {
                // No action: no read, and no block opens or ends here.
                continue;
            }
            let Some(pieces) = evaluate::pieces(text) else {
                // An action or a comment over lines: the `if` blocks around it are not read
                // line by line.
                unclean_conds(&mut conds, &open);
                if opens_comment(text) {
                    in_comment = true;
                    continue;
                }
                // An action over several lines starts here: read as scoped, which blocks what
                // it reads.
                in_action = true;
                push_scoped(&mut reads, template, line, text);
                note_uses(&mut variables, &declared, text, None);
                continue;
            };
            let actions: Vec<&str> = pieces
                .into_iter()
                .filter_map(|p| match p {
                    // A comment reads nothing, whatever its words.
                    Piece::Action(a) if !a.starts_with("/*") => Some(a),
                    Piece::Action(_) | Piece::Text(_) => None,
                })
                .collect();
            if passes_over(&open, &actions, text, &declared, related) {
                continue;
            }
            here.clear();
            here.extend_from_slice(&open);
            track_with(&mut withs, &here, &actions, (template, line));
            track_cond(&mut conds, &here, &actions, text, line);
            // A line that assigns a variable passes what it uses on to it, whose uses this
            // does not follow: such a line is no use that can be read.
            let readable =
                block_context(&here) == Context::Line && !actions.iter().any(|a| assigns(a));
            note_uses(
                &mut variables,
                &declared,
                text,
                readable.then_some((template, line)),
            );
            // The `with` blocks this line opens, by the index of their action, and the `if`
            // block it opens alone.
            let mut opened = Vec::new();
            let mut opened_if = None;
            for (j, action) in actions.iter().enumerate() {
                if first_word(action) == "with" && block_context(&open) == Context::Line {
                    open.push(Block::Scope(Some(withs.len()), action, false));
                    opened.push((j, withs.len()));
                    withs.push(With {
                        action,
                        lines: Vec::new(),
                        // What follows it on its own line is inside it too: not read here.
                        clean: j + 1 == actions.len() && text.trim_end().ends_with("}}"),
                    });
                } else if first_word(action) == "if"
                    && block_context(&open) == Context::Line
                    && alone(&actions, text)
                {
                    open.push(Block::If(Some(conds.len())));
                    opened_if = Some(conds.len());
                    conds.push(Cond {
                        template,
                        branches: vec![(line, action)],
                        end: None,
                        clean: true,
                    });
                } else {
                    enter(&mut open, action);
                }
            }
            // A block opened here and closed on a later line, or an `else` between lines.
            let spans = open.len() > here.len() || actions.iter().any(|a| first_word(a) == "else");
            // Inside `with`/`range` blocks, a line that reads only from the root renders the
            // same wherever the blocks put it: it is evaluated inside them.
            let inside = (block_context(&here) == Context::Scoped
                && !spans
                && actions.iter().all(|a| reads_only_the_root(a)))
            .then(|| scope_actions(&here))
            .flatten();
            let in_scopes = inside.is_some();
            if let Some(inside) = inside {
                scoped.push(((template, line), inside));
            }
            for (j, action) in actions.iter().enumerate() {
                let opens = ["if", "else", "with", "range"].contains(&first_word(action));
                let with = opened.iter().find(|(at, _)| *at == j).map(|(_, id)| *id);
                let cond = match (first_word(action), here.last()) {
                    ("if", _) => opened_if,
                    ("else", Some(Block::If(Some(id)))) => Some(*id),
                    _ => None,
                };
                let context = match (block_context(&here), with, cond) {
                    (Context::Line, Some(id), _) if spans => Context::With(id),
                    (Context::Line, _, Some(id)) if spans && opens => Context::Cond(id),
                    (Context::Line, _, _) if spans && opens => Context::Condition,
                    (Context::Scoped, _, _) if in_scopes => Context::Line,
                    (other, _, _) => other,
                };
                enter(&mut here, action);
                let sites = calls_in(action);
                // Where the first call of a named template by its name starts: a map read after
                // it is passed to the template, which the line's evaluation follows.
                let arguments_from = sites.iter().filter_map(|site| site.literal_at).min();
                let in_define = match context {
                    Context::Define(name) => Some(name),
                    _ => None,
                };
                let assigned = (context == Context::Line && assigns(action)).then(|| {
                    // Alone on its line, outside any block: its scope is the rest of the file.
                    let alone = here.is_empty()
                        && actions.len() == 1
                        && text.trim_start().starts_with("{{")
                        && text.trim_end().ends_with("}}");
                    declare(&mut variables, &mut declared, action, alone)
                });
                // A subchart's file reads the subchart's values: only `global` is the chart's
                // too, in a way this reading does not follow.
                let foreign = subchart && in_define.is_none();
                for read in values_reads(action) {
                    if foreign && read.keys.first() != Some(&"global") {
                        continue;
                    }
                    let context = if foreign {
                        Context::Subchart
                    } else if read.indirect {
                        Context::Indirect
                    } else if let Some(id) = assigned {
                        Context::Assigned(id)
                    } else {
                        context
                    };
                    reads.push(Read {
                        template,
                        line,
                        keys: read.keys,
                        context,
                        argument: arguments_from.is_some_and(|from| read.at > from),
                        define: in_define,
                        shape_only: read.shape_only,
                    });
                }
                // What an include assigns to a variable is read where the variable is used
                // (`$version := include "app.version" .`, then `semverCompare … $version`).
                let call_context = assigned.map_or(context, Context::Assigned);
                calls.extend(sites.into_iter().map(|site| Call {
                    template,
                    line,
                    name: site.name,
                    root_context: site.root_context,
                    context: call_context,
                    foreign,
                }));
            }
        }
    }
    Lines {
        reads,
        calls,
        withs,
        variables,
        conds,
        scoped,
    }
}

/// What [`reads`] finds in a chart's templates.
#[derive(Default)]
struct Lines<'t> {
    reads: Vec<Read<'t>>,
    calls: Vec<Call<'t>>,
    withs: Vec<With<'t>>,
    variables: Vec<Variable<'t>>,
    conds: Vec<Cond<'t>>,
    /// The lines inside `with`/`range` blocks that read only from the root (`$.Values…`),
    /// each with the blocks' actions it is evaluated inside.
    scoped: Vec<((usize, usize), Vec<String>)>,
}

/// Declares the variable `action` assigns (`$name := …`); `alone` when it can be followed
/// ([`Variable`]). An assignment to a declared variable (`$name = …`) is never followed.
fn declare<'t>(
    variables: &mut Vec<Variable<'t>>,
    declared: &mut Vec<usize>,
    action: &'t str,
    alone: bool,
) -> usize {
    let end = action[1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(action.len(), |i| i + 1);
    let name = &action[..end];
    let pipeline = action[end..].trim_start();
    let is_declaration = pipeline.starts_with(":=");
    // A value changed in place (`$_ := set .Values.image "tag" …`) shows in no line.
    let pure = evaluate::is_pure(pipeline.trim_start_matches([':', '=']));
    // A name declared again: the uses after it are of either.
    for id in declared.iter().copied() {
        if variables[id].name == name {
            variables[id].clean = false;
        }
    }
    declared.push(variables.len());
    variables.push(Variable {
        action,
        name,
        lines: Vec::new(),
        clean: alone && is_declaration && pure,
    });
    variables.len() - 1
}

/// Records `text`, the line `at`, as a use of each variable of `declared` that it names, or
/// marks the variable unclean where the line cannot be read after its declaration (`at` is
/// `None`: inside a scope, in an action over lines, or assigning a variable) or assigns it
/// again.
fn note_uses(
    variables: &mut [Variable<'_>],
    declared: &[usize],
    text: &str,
    at: Option<(usize, usize)>,
) {
    for id in declared.iter().copied() {
        let variable = &mut variables[id];
        let uses: Vec<usize> = text
            .match_indices(variable.name)
            .map(|(i, _)| i + variable.name.len())
            .filter(|end| {
                !text[*end..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
            .collect();
        if uses.is_empty() {
            continue;
        }
        let assigns_again = uses.iter().any(|end| {
            let rest = text[*end..].trim_start();
            rest.starts_with(":=") || rest.starts_with('=') && !rest.starts_with("==")
        });
        match at {
            Some(at) if !assigns_again => variable.lines.push(at),
            _ => variable.clean = false,
        }
    }
}

/// Records the line `at`, with its `actions`, in the `with` block innermost in `open` (the
/// blocks open at its start), or marks the block unclean when the line opens, closes or
/// branches a block over lines.
fn track_with(withs: &mut [With<'_>], open: &[Block<'_>], actions: &[&str], at: (usize, usize)) {
    let Some(Block::Scope(Some(id), ..)) = open.last() else {
        return;
    };
    let with = &mut withs[*id];
    let mut depth = 0_i32;
    for (j, action) in actions.iter().enumerate() {
        match first_word(action) {
            "if" | "with" | "range" | "define" | "block" => depth += 1,
            "end" if depth == 0 => {
                // The block's own end: alone on its line, it ends the lines to read.
                with.clean &= actions.len() == 1 && j == 0;
                return;
            }
            "end" => depth -= 1,
            "else" if depth == 0 => with.clean = false,
            _ => {}
        }
    }
    if depth == 0 {
        with.lines.push(at);
    } else {
        with.clean = false;
    }
}

/// Records the line `line`, with its `actions`, in the tracked `if` block innermost in `open`
/// (the blocks open at its start): an `else` starts a branch, the block's own `end` ends it;
/// either not alone on its line, or a block opening, closing or branching over lines inside
/// it, marks the block unclean.
fn track_cond<'t>(
    conds: &mut [Cond<'t>],
    open: &[Block<'_>],
    actions: &[&'t str],
    text: &str,
    line: usize,
) {
    let Some(Block::If(Some(id))) = open.last() else {
        return;
    };
    let cond = &mut conds[*id];
    let mut depth = 0_i32;
    for action in actions {
        match first_word(action) {
            "if" | "with" | "range" | "define" | "block" => depth += 1,
            "end" if depth == 0 => {
                cond.clean &= alone(actions, text);
                cond.end = Some(line);
                return;
            }
            "end" => depth -= 1,
            "else" if depth == 0 => {
                // `else with` (Go 1.23) is no branch of an `if` this reads.
                let branch =
                    *action == "else" || first_word(action["else".len()..].trim_start()) == "if";
                cond.clean &= alone(actions, text) && branch;
                cond.branches.push((line, action));
                return;
            }
            _ => {}
        }
    }
    if depth != 0 {
        cond.clean = false;
    }
}

/// Marks the tracked `if` blocks of `open` unclean.
fn unclean_conds(conds: &mut [Cond<'_>], open: &[Block<'_>]) {
    for block in open {
        if let Block::If(Some(id)) = block {
            conds[*id].clean = false;
        }
    }
}

/// What a line inside the `with` and `range` blocks of `open` is evaluated inside, outermost
/// first: nothing, whatever they range over (a line that reads only from the root renders the
/// same in every round, and one a default empty list hides renders once a user fills it in).
/// `None` inside a `block` (its `.` is its argument), a named template, or after a block's
/// `else`.
fn scope_actions(open: &[Block<'_>]) -> Option<Vec<String>> {
    let followed = open.iter().all(|block| match block {
        Block::Scope(_, action, false) => matches!(first_word(action), "with" | "range"),
        Block::Scope(_, _, true) | Block::Define(_) => false,
        Block::If(_) => true,
    });
    followed.then(Vec::new)
}

/// Whether every value `action` reads is read from the root (`$.Values.image.tag`, `include
/// "x" $`), so that it is the same whatever `.` is: no read of `.` (`.name`, `.` alone, `(.x)`)
/// and no variable but `$`. String, raw string and rune literals are passed over.
fn reads_only_the_root(action: &str) -> bool {
    let s = action.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            quote @ (b'"' | b'\'' | b'`') => {
                let mut j = i + 1;
                while j < s.len() && s[j] != quote {
                    j += if quote != b'`' && s[j] == b'\\' { 2 } else { 1 };
                }
                if j >= s.len() {
                    return false;
                }
                i = j;
            }
            b'$' if s.get(i + 1).is_some_and(|&b| is_word(b)) => return false,
            b'$' if s.get(i + 1) == Some(&b'.') => {
                // The root's chain: `$.Values.image.tag`.
                i += 2;
                while i < s.len() && (is_word(s[i]) || s[i] == b'.') {
                    i += 1;
                }
                continue;
            }
            // A `.` that continues a chain (`a.b`, `(…).b`) or a number; any other reads `.`.
            b'.' if i == 0 || !(is_word(s[i - 1]) || s[i - 1] == b')') => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// Whether `text` is one action alone on its line.
fn alone(actions: &[&str], text: &str) -> bool {
    actions.len() == 1 && text.trim_start().starts_with("{{") && text.trim_end().ends_with("}}")
}

/// The blocks open after `action`.
fn enter<'t>(open: &mut Vec<Block<'t>>, action: &'t str) {
    match first_word(action) {
        "define" => open.push(Block::Define(define_name(action).unwrap_or(""))),
        "with" | "range" | "block" => open.push(Block::Scope(None, action, false)),
        "else" => {
            if let Some(Block::Scope(_, _, branched)) = open.last_mut() {
                *branched = true;
            }
        }
        "if" => open.push(Block::If(None)),
        "end" => {
            open.pop();
        }
        _ => {}
    }
}

/// The context of what follows the blocks `open`: a named template's body (whatever blocks
/// it holds: it is evaluated whole), a `with`/`range` block, or the top of the file.
fn block_context<'t>(open: &[Block<'t>]) -> Context<'t> {
    if let Some(name) = open.iter().find_map(|block| match block {
        Block::Define(name) => Some(*name),
        _ => None,
    }) {
        return Context::Define(name);
    }
    if open.iter().any(|block| matches!(block, Block::Scope(..))) {
        Context::Scoped
    } else {
        Context::Line
    }
}

/// The name `define "name"` gives.
fn define_name(action: &str) -> Option<&str> {
    let rest = action.strip_prefix("define")?.trim_start();
    let name = rest.strip_prefix('"')?;
    Some(&name[..name.find('"')?])
}

/// A call of a named template in an action.
struct CallSite<'t> {
    name: &'t str,
    /// Its argument is the root context (`.` or `$` alone).
    root_context: bool,
    /// Where its keyword starts in the action, when the name is a literal.
    literal_at: Option<usize>,
}

/// The named templates `action` includes (`include "name" ARG`, `template "name" ARG`). A name
/// that is not a literal (`include (printf …) .`) is [`COMPUTED`], or the file a
/// `$.Template.BasePath` call names.
fn calls_in(action: &str) -> Vec<CallSite<'_>> {
    let mut calls = Vec::new();
    for (keyword, finder) in [("include ", &*INCLUDE), ("template ", &*TEMPLATE)] {
        let mut from = 0;
        while let Some(found) = find(&action[from..], finder) {
            let at = from + found;
            let before = action[..at].chars().next_back();
            let after = action[at + keyword.len()..].trim_start();
            from = at + keyword.len();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let Some(quoted) = after.strip_prefix('"') else {
                // A name computed by a pipeline, a variable or a field; a word after `include`
                // is no call of it.
                if after.starts_with(['(', '$', '.']) {
                    calls.push(CallSite {
                        name: included_file(after).unwrap_or(COMPUTED),
                        root_context: false,
                        literal_at: None,
                    });
                }
                continue;
            };
            let Some(end) = quoted.find('"') else { break };
            let argument = quoted[end + 1..].trim_start();
            let root_context = ['.', '$'].iter().any(|mark| {
                argument
                    .strip_prefix(*mark)
                    .is_some_and(|tail| tail.is_empty() || tail.starts_with([' ', ')', '|']))
            });
            calls.push(CallSite {
                name: &quoted[..end],
                root_context,
                literal_at: Some(at),
            });
        }
    }
    calls
}

/// The named templates that the templates' own lines include, directly or through other named
/// templates (`NOTES.txt` is not read: `helm template` does not render it). When one of those
/// lines includes a template by a computed name, any may be: the index of that call instead.
/// One inside a named template nothing includes (a helper no template uses) never runs.
fn live_defines<'t>(calls: &[Call<'t>]) -> Result<std::collections::BTreeSet<&'t str>, usize> {
    let mut live = std::collections::BTreeSet::new();
    let mut queue: Vec<&str> = Vec::new();
    let live_call = |call: &Call<'t>, live: &std::collections::BTreeSet<&str>| match call.context {
        Context::Define(outer) => live.contains(outer),
        _ => true,
    };
    loop {
        for (at, call) in calls.iter().enumerate() {
            if !live.contains(call.name) && live_call(call, &live) {
                if call.name == COMPUTED {
                    return Err(at);
                }
                queue.push(call.name);
            }
        }
        if queue.is_empty() {
            return Ok(live);
        }
        live.extend(queue.drain(..));
    }
}

/// Whether `text`'s last action is a comment that it does not close (`{{/*`, `{{- /*`).
fn opens_comment(text: &str) -> bool {
    let Some(open) = text.rfind("{{") else {
        return false;
    };
    let inside = text[open + 2..].trim_start_matches('-').trim_start();
    inside.starts_with("/*") && !inside.contains("*/")
}

/// Whether `action` assigns a variable (`$x := …`, `$x = …`).
fn assigns(action: &str) -> bool {
    let Some(rest) = action.strip_prefix('$') else {
        return false;
    };
    let rest = rest
        .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
        .trim_start();
    rest.starts_with(":=") || rest.starts_with('=') && !rest.starts_with("==")
}

/// Where each `.Values` starts in `bytes`, in order. Found by its `V`, which a template
/// holds little elsewhere: a `memmem` search per read (a template has one on most lines) cost
/// a searcher's start each time, a `memchr` far less.
///
/// The field named as a string counts as a read of the values whole: `index . "Values" "image"
/// "tag"` and `get $ "Values"` read them through the root, with no `.Values` written.
fn values_starts(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'V', bytes)
        .filter(move |&v| {
            v > 0
                && match bytes[v - 1] {
                    b'.' => bytes[v..].starts_with(b"Values"),
                    b'"' => bytes[v..].starts_with(b"Values\""),
                    _ => false,
                }
        })
        .map(|v| v - 1)
}

/// Where the keys of the `.Values` read whose field ends at `start` begin: after `.AsMap`,
/// which gives the values whole, as a map (`dig "image" "tag" "" .Values.AsMap`).
fn keys_start(bytes: &[u8], start: usize) -> usize {
    match bytes
        .get(start..)
        .and_then(|rest| rest.strip_prefix(b".AsMap"))
    {
        Some(rest) if !rest.first().is_some_and(|&b| is_key_byte(b)) => start + ".AsMap".len(),
        _ => start,
    }
}

/// Searchers built once: the reading searches every action of every template for these.
static OPEN: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new("{{"));
static CLOSE: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new("}}"));
static INCLUDE: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new("include "));
static TEMPLATE: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new("template "));
static DEFINE: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new("define"));

fn find(text: &str, finder: &memmem::Finder<'_>) -> Option<usize> {
    finder.find(text.as_bytes())
}

/// The file a call includes by its path (`include (print $.Template.BasePath "/cm.yaml") .`,
/// the checksum idiom), from the call's argument: `/cm.yaml`. Every template file is a named
/// template by its path, and no `define` names one with a leading `/`.
fn included_file(argument: &str) -> Option<&str> {
    let close = argument.find(')').unwrap_or(argument.len());
    let within = &argument[..close];
    let after = &within[within.find(".Template.BasePath")?..];
    let literal = &after[after.find('"')? + 1..];
    let name = &literal[..literal.find('"')?];
    name.starts_with('/').then_some(name)
}

/// The name of a call whose name is computed: it may be any named template.
const COMPUTED: &str = "";

/// Records the reads in `text` as scoped: they block the maps they read.
fn push_scoped<'t>(reads: &mut Vec<Read<'t>>, template: usize, line: usize, text: &'t str) {
    reads.extend(values_reads(text).into_iter().map(|read| Read {
        template,
        line,
        keys: read.keys,
        context: Context::Scoped,
        argument: false,
        define: None,
        shape_only: read.shape_only,
    }));
}

/// One action of a template's text: where it is, its inside, and its trim markers.
struct Action<'t> {
    start: usize,
    end: usize,
    inside: &'t str,
    trims_before: bool,
    trims_after: bool,
}

/// Every action of `text`, comments (`{{/* … */}}`, which may hold `}}`) included.
fn actions(text: &str) -> Vec<Action<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = find(&text[from..], &OPEN).map(|i| from + i) {
        let after = &text[open + 2..];
        let trims_before = after.starts_with('-') && after[1..].starts_with(char::is_whitespace);
        let inside_start = open + 2 + usize::from(trims_before);
        let rest = &text[inside_start..];
        let close = if rest.trim_start().starts_with("/*") {
            rest.find("*/")
                .and_then(|c| find(&rest[c..], &CLOSE).map(|d| c + d))
        } else {
            find(rest, &CLOSE)
        };
        let Some(close) = close.map(|c| inside_start + c) else {
            break;
        };
        let mut inside = &text[inside_start..close];
        let trims_after =
            inside.ends_with('-') && inside[..inside.len() - 1].ends_with(char::is_whitespace);
        if trims_after {
            inside = &inside[..inside.len() - 1];
        }
        out.push(Action {
            start: open,
            end: close + 2,
            inside: inside.trim(),
            trims_before,
            trims_after,
        });
        from = close + 2;
    }
    out
}

/// The named templates of `templates`: each `define`'s body up to its `end`, trimmed as its
/// markers say. A name defined twice with different bodies is left out (which one Helm uses
/// depends on the order it loads the files): including it is then an error.
fn defines(templates: &[Template]) -> Defines {
    let mut defines = Defines::new();
    let mut twice = std::collections::BTreeSet::new();
    for template in templates {
        let text = &template.text;
        let actions = actions(text);
        let mut i = 0;
        while i < actions.len() {
            let Some(name) = define_name(actions[i].inside) else {
                i += 1;
                continue;
            };
            let mut depth = 0_usize;
            let mut close = None;
            for (j, action) in actions.iter().enumerate().skip(i + 1) {
                match first_word(action.inside) {
                    "if" | "with" | "range" | "define" | "block" => depth += 1,
                    "end" if depth == 0 => {
                        close = Some(j);
                        break;
                    }
                    "end" => depth -= 1,
                    _ => {}
                }
            }
            let Some(close) = close else { break };
            let mut body = &text[actions[i].end..actions[close].start];
            if actions[i].trims_after {
                body = body.trim_start();
            }
            if actions[close].trims_before {
                body = body.trim_end();
            }
            match defines.get(name) {
                Some(known) if known != body => {
                    twice.insert(name.to_owned());
                }
                Some(_) => {}
                None => {
                    defines.insert(name.to_owned(), body.to_owned());
                }
            }
            i = close + 1;
        }
    }
    defines.retain(|name, _| !twice.contains(name));
    defines
}

/// The first word of `action` (actions are trimmed): every action of every template is asked
/// for it several times, so it is found by bytes.
fn first_word(action: &str) -> &str {
    let end = action
        .bytes()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(action.len());
    &action[..end]
}

/// A read of `.Values` in an action: the keys after it, where it starts, and whether it is
/// read through something else than the root (`$ctx.Values.a`, `.context.Values.a`: a root
/// passed on in a `dict`, whose reads no line shows).
struct ValuesRead<'t> {
    keys: Vec<&'t str>,
    at: usize,
    indirect: bool,
    shape_only: bool,
}

/// The key chains after each `.Values` in `action` (`$.Values.a.b` and `.Values.a.b` give
/// `[a, b]`; `.Values` alone gives `[]`), with the literal keys `index` and `get` take after
/// them (`index .Values "grafana.ini"` gives `[grafana.ini]`: keys no field chain can spell).
fn values_reads(action: &str) -> Vec<ValuesRead<'_>> {
    values_occurrences(action)
        .map(|(at, dotted, indirect)| {
            let mut keys: Vec<&str> = keys_of(dotted).collect();
            keys.extend(literal_keys(
                action,
                at,
                at + ".Values".len() + dotted.len(),
            ));
            ValuesRead {
                keys,
                at,
                indirect,
                shape_only: reads_only_the_shape(action, at),
            }
        })
        .collect()
}

/// Whether the read of `.Values` at `at` is the argument of a function that looks only at
/// the map's keys or kind: the first of `hasKey`, the one of `typeOf`/`kindOf`, or the second
/// of `kindIs`/`typeIs` after a literal.
fn reads_only_the_shape(action: &str, at: usize) -> bool {
    if function_before(action, at, &["hasKey", "typeOf", "kindOf"]).is_some() {
        return true;
    }
    // `kindIs "map" .Values.a`: the literal, then the function before it.
    let head = action[..at].strip_suffix('$').unwrap_or(&action[..at]);
    let Some(open) = head.trim_end().strip_suffix('"') else {
        return false;
    };
    open.rfind('"')
        .filter(|&start| !open[start + 1..].contains('\\'))
        .is_some_and(|start| function_before(action, start, &["kindIs", "typeIs"]).is_some())
}

/// Which of `names` is the function whose argument starts at `at` in `action`: the name, a
/// whole word (no `.`, `$` or word byte before it), then a space (a `$` before the argument
/// is part of it).
fn function_before<'n>(action: &str, at: usize, names: &[&'n str]) -> Option<&'n str> {
    let head = action[..at].strip_suffix('$').unwrap_or(&action[..at]);
    let trimmed = head.trim_end();
    if trimmed.len() == head.len() {
        return None;
    }
    names.iter().copied().find(|name| {
        trimmed.strip_suffix(name).is_some_and(|rest| {
            rest.bytes()
                .last()
                .is_none_or(|b| !(is_word(b) || b == b'.' || b == b'$'))
        })
    })
}

/// The string literals after the read of `.Values` at `at` (ending at `end`) when it is the
/// first argument of `index` or `get`: the keys they read under it, as far as they are
/// literals. A key after them that is not a literal leaves the map they reach read whole.
fn literal_keys(action: &str, at: usize, end: usize) -> Vec<&str> {
    let Some(function) = function_before(action, at, &["index", "get"]) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    let mut rest = &action[end..];
    while let Some(quoted) = rest.strip_prefix(' ').map(|r| r.trim_start_matches(' ')) {
        let Some(body) = quoted.strip_prefix('"') else {
            break;
        };
        // A literal with an escape is not read here: the map it names is left read whole.
        match body.find(['"', '\\']) {
            Some(close) if body.as_bytes()[close] == b'"' => {
                keys.push(&body[..close]);
                rest = &body[close + 1..];
            }
            _ => break,
        }
        if function == "get" {
            break;
        }
    }
    keys
}

/// Each `.Values` in `text`: where it starts, the dotted keys after it (`.a.b`, or empty), and
/// whether something other than the root comes before it.
fn values_occurrences(text: &str) -> impl Iterator<Item = (usize, &str, bool)> {
    // Every template of every chart is searched for each values file: by bytes, not chars
    // (`.Values` and the keys after it are ASCII; what ends them is any other byte).
    let bytes = text.as_bytes();
    values_starts(bytes).filter_map(move |at| {
        let start = at + ".Values".len();
        if bytes.get(start).is_some_and(|&b| is_word(b)) {
            return None;
        }
        let indirect = at > 0 && is_word(bytes[at - 1]);
        Some((at, dotted_at(text, keys_start(bytes, start)), indirect))
    })
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A byte a key of a `.Values` read holds (besides the dots between keys).
fn is_key_byte(b: u8) -> bool {
    is_word(b) || b == b'-'
}

/// The dotted keys (`.a.b`, or empty) of the `.Values` read whose keys start at `start`.
fn dotted_at(text: &str, start: usize) -> &str {
    let after = &text.as_bytes()[start..];
    let end = after
        .iter()
        .position(|&b| !(is_key_byte(b) || b == b'.'))
        .unwrap_or(after.len());
    &text[start..start + end]
}

fn keys_of(dotted: &str) -> impl Iterator<Item = &str> + Clone {
    dotted.split('.').filter(|key| !key.is_empty())
}

/// The candidates' paths by their top-level key: which reads may concern one of them. A read
/// concerns a candidate only when one of their key chains starts the other (`.Values` itself,
/// a map above the candidate, the candidate, or a value inside it); a chart reads hundreds of
/// values no candidate is related to, on lines that need no reading.
struct Related<'p> {
    /// Sorted by top-level key, for a binary search: a chart has a few dozen candidates, and
    /// every read of every template is looked up.
    by_top: Vec<(&'p str, Vec<&'p [String]>)>,
    /// The first bytes of the top-level keys: most reads are of keys no candidate starts with,
    /// and are told apart by it without a search.
    first_bytes: [bool; 256],
    /// A candidate is the values' root: every read concerns it.
    every: bool,
}

impl<'p> Related<'p> {
    fn new(paths: &'p [Vec<String>]) -> Self {
        let mut by_top: Vec<(&str, Vec<&[String]>)> = Vec::new();
        let mut first_bytes = [false; 256];
        let mut every = false;
        for path in paths {
            let Some(top) = path.first() else {
                every = true;
                continue;
            };
            if let Some(&first) = top.as_bytes().first() {
                first_bytes[usize::from(first)] = true;
            }
            match by_top.binary_search_by(|(key, _)| (*key).cmp(top.as_str())) {
                Ok(i) => by_top[i].1.push(path),
                Err(i) => by_top.insert(i, (top, vec![path])),
            }
        }
        Self {
            by_top,
            first_bytes,
            every,
        }
    }

    /// Every read concerns a candidate: no line is passed over.
    #[cfg(test)]
    fn every() -> Self {
        Self {
            by_top: Vec::new(),
            first_bytes: [true; 256],
            every: true,
        }
    }

    /// Whether a read of the keys `dotted` (`.a.b`, or empty for `.Values` itself) may
    /// concern a candidate.
    fn read(&self, dotted: &str) -> bool {
        if self.every {
            return true;
        }
        // The top key by bytes: most reads end here, and a `split` per read was a measurable
        // share of a chart's reading.
        let bytes = dotted.as_bytes();
        let Some(start) = bytes.iter().position(|&b| b != b'.') else {
            return true;
        };
        if !self.first_bytes[usize::from(bytes[start])] {
            return false;
        }
        let end = memchr::memchr(b'.', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let top = &dotted[start..end];
        let keys = keys_of(dotted);
        self.by_top
            .binary_search_by(|(key, _)| (*key).cmp(top))
            .is_ok_and(|i| {
                self.by_top[i]
                    .1
                    .iter()
                    .any(|path| path.iter().zip(keys.clone()).all(|(p, k)| p == k))
            })
    }

    /// Whether `text` reads a value a candidate is related to.
    fn read_in(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        values_starts(bytes).any(|at| {
            let start = at + ".Values".len();
            if bytes.get(start).is_some_and(|&b| is_word(b)) {
                // `.Valuesx`: another word, no read.
                return false;
            }
            let start = keys_start(bytes, start);
            // What `read` decides by the top key's first byte, decided before the end of the
            // keys is looked for: every template is searched for each values file, and most
            // reads are of keys no candidate starts with.
            let first = bytes[start..].iter().find(|&&b| b != b'.');
            if first.is_some_and(|&b| {
                is_key_byte(b) && !self.every && !self.first_bytes[usize::from(b)]
            }) {
                return false;
            }
            self.read(dotted_at(text, start))
        })
    }
}

/// Whether a line at the top of its file, whose actions are `actions`, can be passed over by
/// [`reads`]: it opens, closes or branches no block, includes no template, declares no
/// variable and uses none of `declared` (it has no `$`), and reads no value a candidate is
/// related to. Then it concerns no candidate, and no line to evaluate is it.
fn passes_over(
    open: &[Block<'_>],
    actions: &[&str],
    text: &str,
    declared: &[usize],
    related: &Related<'_>,
) -> bool {
    block_context(open) == Context::Line
        && (declared.is_empty() || !text.contains('$'))
        && actions.iter().all(|action| {
            !matches!(
                first_word(action),
                "if" | "else" | "with" | "range" | "define" | "block" | "end"
            ) && !assigns(action)
                && calls_in(action).is_empty()
                && !related.read_in(action)
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_read_concerns_a_candidate_when_one_key_chain_starts_the_other() {
        let paths = vec![
            vec!["api".to_owned(), "image".to_owned()],
            vec!["worker".to_owned()],
        ];
        let related = Related::new(&paths);
        for (dotted, expected) in [
            ("", true),
            (".", true),
            (".api", true),
            (".api.image", true),
            (".api.image.tag", true),
            ("..api.image", true),
            (".api.replicas", false),
            (".apis", false),
            (".ap", false),
            (".worker.anything", true),
            (".zeta", false),
            (".a-b", false),
        ] {
            assert_eq!(related.read(dotted), expected, "{dotted:?}");
        }
    }

    #[test]
    fn every_values_read_starts_where_a_search_for_it_finds_it() {
        for text in [
            "",
            "Values",
            ".Values",
            "V.Values",
            ".Values.Values",
            "..Values.x .Value .Valuesx $.Values",
            "{{ .Values.a }}\n{{- if .Values.b.enabled }}VV.V.Val",
            "caf\u{e9} .Values \u{e9}.Values",
            "{{ index . \"Values\" \"image\" }} \"Value\" \"Values \"Valuesx\"",
        ] {
            let mut searched: Vec<usize> = memmem::find_iter(text.as_bytes(), ".Values").collect();
            searched.extend(memmem::find_iter(text.as_bytes(), "\"Values\""));
            searched.sort_unstable();
            assert_eq!(
                values_starts(text.as_bytes()).collect::<Vec<_>>(),
                searched,
                "{text:?}"
            );
        }
    }

    /// `read_in` decides some reads by their first byte before finding their keys: it must
    /// say what asking `read` of every read says.
    #[test]
    fn a_text_reads_a_related_value_when_one_of_its_reads_does() {
        let paths = vec![
            vec!["api".to_owned(), "image".to_owned()],
            vec!["-x".to_owned()],
        ];
        let texts = [
            "",
            "{{ .Values }}",
            "{{ .Values. }}",
            "{{ .Values.. }}",
            "{{ .Values.api.image }}",
            "{{ .Values..api }}",
            "{{ .Values.apis }}",
            "{{ .Values.zeta }} {{ .Values.api.image.tag }}",
            "{{ .Values.zeta }} {{ .Values.zoo }}",
            "{{ .Valuesapi }}",
            "{{ $.Values.api | quote }}",
            "{{ .Values.-x }}",
            "{{ .Values.-y }}",
            "{{ .Values.a-b }}",
            "{{ .Values }}x",
            ".Values",
            ".Values.",
            ".Values.api",
            "{{ dig \"image\" \"tag\" \"\" .Values.AsMap }}",
            "{{ .Values.AsMap.api.image }}",
            "{{ .Values.AsMapper }}",
            "{{ index . \"Values\" \"image\" \"tag\" }}",
        ];
        for related in [Related::new(&paths), Related::every()] {
            for text in texts {
                let expected = values_occurrences(text).any(|(_, dotted, _)| related.read(dotted));
                assert_eq!(related.read_in(text), expected, "{text:?}");
            }
        }
        let related = Related::new(&paths);
        assert!(related.read_in("{{ .Values.zeta }} {{ .Values.api }}"));
        assert!(!related.read_in("{{ .Values.zeta }} {{ .Values.apis }}"));
        // The values whole, read through `AsMap` or named as a string on the root.
        assert!(related.read_in("{{ dig \"image\" \"tag\" \"\" .Values.AsMap }}"));
        assert!(related.read_in("{{ .Values.AsMap.api }}"));
        assert!(!related.read_in("{{ .Values.AsMap.zeta }}"));
        assert!(!related.read_in("{{ .Values.AsMapper }}"));
        assert!(related.read_in("{{ index $ \"Values\" \"image\" }}"));
    }

    fn template(source: &str, text: &str) -> Template {
        Template {
            source: source.to_owned(),
            text: text.to_owned(),
        }
    }

    /// The maps `rendering` blocked, with why.
    fn blocked(rendering: &StaticRendering) -> Vec<(usize, &str)> {
        rendering
            .blocked
            .iter()
            .map(|(i, reason)| (*i, reason.as_str()))
            .collect()
    }

    fn path(dotted: &str) -> Vec<String> {
        dotted.split('.').map(str::to_owned).collect()
    }

    /// Asserts that the template `text` blocks the candidate `image`, for a reason that says
    /// `why`.
    fn assert_blocks_the_image_map(text: &str, root: &Value, why: &str) {
        let rendering = render(
            &[template("c/templates/d.yaml", text)],
            &[path("image")],
            &[],
            root,
        );
        assert_eq!(
            rendering.blocked.len(),
            1,
            "{text:?}: {:?}",
            rendering.blocked
        );
        assert!(
            rendering.blocked[0].1.contains(why),
            "{text:?}: {:?}",
            rendering.blocked
        );
    }

    /// The templates under `dir` (its own and its subcharts'), named from `name`.
    fn templates_under(dir: &std::path::Path, name: &str, out: &mut Vec<Template>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let path = entry.path();
            let shown = format!("{name}/{}", entry.file_name().to_string_lossy());
            if path.is_dir() {
                templates_under(&path, &shown, out);
            } else if shown.contains("/templates/")
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.push(Template {
                    source: shown,
                    text,
                });
            }
        }
    }

    /// The real charts of the corpus (`../shared/corpus`, see its SOURCE.md), each values file
    /// with its chart's templates (and Bitnami's `common`): passing over the lines no candidate
    /// is related to plans what reading every line plans (`plan_for` asserts it in test
    /// builds). The corpus exists in CI and the development environment; without it this says
    /// so and passes.
    #[test]
    #[expect(
        clippy::print_stderr,
        reason = "a skipped corpus test must say so visibly"
    )]
    fn the_corpus_charts_plan_alike_with_the_unrelated_lines_passed_over() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
        if !corpus.join("bitnami/SOURCE.md").is_file() {
            eprintln!("corpus: ../shared/corpus not found; skipping");
            return;
        }
        let mut values_files = Vec::new();
        let mut stack = vec![corpus.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if entry.file_name() == "values.yaml" {
                    values_files.push(path);
                }
            }
        }
        values_files.sort();
        let common = corpus.join("bitnami/bitnami/common");
        let (mut planned, mut lines) = (0, 0);
        for values in &values_files {
            let chart = values.parent().unwrap();
            let mut templates = Vec::new();
            templates_under(chart, "chart", &mut templates);
            if chart.starts_with(corpus.join("bitnami")) && chart != common {
                templates_under(&common, "chart/charts/common", &mut templates);
            }
            let text = std::fs::read_to_string(values).unwrap();
            let Ok(images) = super::super::values_images(values, &text) else {
                continue;
            };
            let paths: Vec<Vec<String>> =
                images.candidates.iter().map(|c| c.path.clone()).collect();
            let strings: Vec<usize> = (0..paths.len())
                .filter(|i| matches!(images.candidates[*i].shape, super::super::Shape::Inline(_)))
                .collect();
            let plan = plan_for(&templates, &paths, &strings, &["common".to_owned()]);
            planned += usize::from(!paths.is_empty());
            lines += plan.lines.len();
        }
        assert!(
            planned >= 15,
            "{planned} of {} values files planned",
            values_files.len()
        );
        assert!(lines > 0, "no line planned");
    }

    #[test]
    fn index_and_get_of_values_by_literal_keys_read_those_keys() {
        for (action, expected) in [
            ("index .Values \"grafana.ini\"", vec![vec!["grafana.ini"]]),
            ("(index $.Values \"a\" \"b.c\").d", vec![vec!["a", "b.c"]]),
            ("get .Values \"a\" \"b\"", vec![vec!["a"]]),
            ("index .Values.x \"y\" .z \"w\"", vec![vec!["x", "y"]]),
            ("index .Values \"a\\\"b\"", vec![vec![]]),
            ("index .Values", vec![vec![]]),
            ("toYaml .Values \"a\"", vec![vec![]]),
            ("myindex .Values \"a\"", vec![vec![]]),
            ("$.index .Values \"a\"", vec![vec![]]),
            (
                "index .Values.a | get .Values \"b\"",
                vec![vec!["a"], vec!["b"]],
            ),
        ] {
            let keys: Vec<Vec<&str>> = values_reads(action).into_iter().map(|r| r.keys).collect();
            assert_eq!(keys, expected, "{action}");
        }
        // grafana reads its `grafana.ini` so: the image map is not read by it.
        let templates = [template(
            "c/templates/deploy.yaml",
            "data: {{ (index .Values \"grafana.ini\").paths.data }}\nimage: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
        )];
        let root = json!({
            "Values": {"image": {"repository": "tpsr0z", "tag": "tpst0z"}, "grafana.ini": {"paths": {"data": "/d"}}},
        });
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: tpsr0z:tpst0z\n"
        );
        assert!(rendering.blocked.is_empty());
    }

    #[test]
    fn the_keys_or_kind_of_a_map_above_the_image_do_not_block_it() {
        let cases: [(&str, &[bool]); 10] = [
            ("if hasKey .Values.controller \"maxUnavailable\"", &[true]),
            (
                "if and .Values.x (not (hasKey $.Values.controller \"y\"))",
                &[false, true],
            ),
            ("eq (typeOf .Values.provider) \"string\"", &[true]),
            ("kindIs \"map\" .Values.provider", &[true]),
            ("kindIs \"m\\\"ap\" .Values.provider", &[false]),
            ("typeIs \"string\" $.Values.provider", &[true]),
            ("mykindIs \"map\" .Values.provider", &[false]),
            ("myhasKey .Values.a \"b\"", &[false]),
            ("toYaml .Values.a", &[false]),
            ("hasKey(.Values.a)", &[false]),
        ];
        for (action, expected) in cases {
            let shapes: Vec<bool> = values_reads(action)
                .into_iter()
                .map(|r| r.shape_only)
                .collect();
            assert_eq!(shapes, expected, "{action}");
        }
        let templates = [template(
            "c/templates/deploy.yaml",
            "{{- if and .Values.controller.min (not (hasKey .Values.controller \"max\")) }}\nmin: 1\n{{- end }}\nkind: {{ typeOf .Values.controller }}\nimage: {{ .Values.controller.image.repository }}:{{ .Values.controller.image.tag }}\n{{- if hasKey .Values.controller.image \"digest\" }}\ndigest: yes\n{{- end }}\n",
        )];
        let root = json!({
            "Values": {"controller": {"image": {"repository": "tpsr0z", "tag": "tpst0z"}, "min": 1}},
        });
        let rendering = render(&templates, &[path("controller.image")], &[], &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: tpsr0z:tpst0z\n"
        );
        assert!(rendering.blocked.is_empty());
    }

    #[test]
    fn reads_of_a_map_s_other_keys_than_its_image_parts_do_not_concern_it() {
        // flux2's controllers: the file's `if` reads `create`, and holds blocks of its own.
        let templates = [template(
            "c/templates/deploy.yaml",
            "{{- if .Values.ctl.create }}\nkind: Deployment\n{{- with .Values.ctl.labels }}\nlabels: {{ toYaml . }}\n{{- end }}\nimage: {{ .Values.ctl.image }}:{{ .Values.ctl.tag }}\npolicy: {{ .Values.ctl.pullPolicy }}\n{{- end }}\n",
        )];
        let root = json!({"Values": {"ctl": {"create": true, "image": "tpsr0z", "tag": "tpst0z", "pullPolicy": "Always"}}});
        let rendering = render(&templates, &[path("ctl")], &[], &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: tpsr0z:tpst0z\n"
        );
        assert!(rendering.blocked.is_empty(), "{:?}", rendering.blocked);
    }

    #[test]
    fn image_lines_are_printed_and_other_reads_block() {
        let templates = [
            template(
                "c/templates/deploy.yaml",
                "spec:\n  {{- if .Values.worker.enabled }}\n  containers:\n    - image: \"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\"\n    - image: {{ include \"c.image\" .Values.helper }}\n  {{- end }}\n  {{- with .Values.scoped }}\n    image: {{ .repository }}\n  {{- end }}\n  name: {{ include \"c.y\" . }}\n",
            ),
            template(
                "c/templates/_helpers.tpl",
                "{{- define \"c.x\" -}}\n{{ .Values.defined.tag }}\n{{- end -}}\n{{- define \"c.y\" -}}{{ include \"c.x\" (dict \"a\" 1) }}{{- end -}}\n",
            ),
        ];
        let root = json!({
            "Values": {"image": {"repository": "tpsr0z", "tag": "tpst0z"}, "scoped": {"repository": "tpsr2z"}},
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
            "---\n# Source: c/templates/deploy.yaml\nimage: \"tpsr0z:tpst0z\"\n\
             ---\n# Source: c/templates/deploy.yaml\nimage: tpsr2z\n"
        );
        assert_eq!(
            blocked(&rendering),
            [
                (
                    3,
                    "not proven: without Helm, the map is read inside the named template `c.x`, which c/templates/_helpers.tpl:4 includes with another argument than `.`"
                ),
                (
                    4,
                    "not proven: without Helm, the values under `sub` feed a subchart, whose templates this reading does not follow"
                ),
                // Passed whole to a named template, the map's line is evaluated: here the
                // template is missing.
                (
                    1,
                    "not proven: without Helm, `- image: {{ include \"c.image\" .Values.helper }}` at c/templates/deploy.yaml:5 cannot be evaluated (no template named `c.image`)"
                ),
            ]
        );
    }

    #[test]
    fn values_passed_whole_load_every_top_key() {
        // Datadog's `image-path`: the registry read through `.root`, a key no line names.
        let helpers = "{{- define \"c.image\" -}}{{ .root.registry }}/{{ .image.name }}:{{ .image.tag }}{{- end -}}\n";
        let deploy = "spec:\n  containers:\n    - image: {{ include \"c.image\" (dict \"root\" .Values \"image\" .Values.agents.image) }}\n";
        let templates = [
            template("c/templates/_helpers.tpl", helpers),
            template("c/templates/deploy.yaml", deploy),
        ];
        let whole = plan(&templates, &[path("agents.image")], &[]);
        assert!(whole.every_top_key);
        assert_eq!(whole.keys(), None);
        // A read of the map alone loads its key only.
        let deploy = "spec:\n  containers:\n    - image: {{ .Values.agents.image.repository }}:{{ .Values.agents.image.tag }}\n";
        let templates = [template("c/templates/deploy.yaml", deploy)];
        let map_only = plan(&templates, &[path("agents.image")], &[]);
        assert_eq!(
            map_only
                .keys()
                .map(|keys| keys.iter().map(String::as_str).collect::<Vec<_>>()),
            Some(vec!["agents"])
        );
    }

    #[test]
    fn named_templates_included_with_the_root_context_are_followed() {
        let helpers = "{{/*\nUse: {{ include \"c.image\" . }}\n*/}}\n{{- define \"c.image\" -}}\n\
                       {{- if .Values.image.digest -}}\n\
                       {{ .Values.image.repository }}@{{ .Values.image.digest }}\n\
                       {{- else -}}\n\
                       {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\n\
                       {{- end -}}\n{{- end }}\n\
                       {{- define \"c.side\" }}{{ include \"c.sideImage\" $ }}{{ end }}\n\
                       {{- define \"c.sideImage\" -}}{{ .Values.side.repository }}:{{ .Values.side.tag }}{{- end -}}\n\
                       {{- define \"c.scoped\" -}}{{ .Values.scoped.repository }}{{- end -}}\n";
        let deploy = "spec:\n  containers:\n    - image: {{ include \"c.image\" . | quote }}\n    \
                      - image: {{ template \"c.side\" . }}\n  {{- with .Values.x }}\n    \
                      - image: {{ include \"c.scoped\" $ }}\n  {{- end }}\n";
        let templates = [
            template("c/templates/_helpers.tpl", helpers),
            template("c/templates/deploy.yaml", deploy),
        ];
        let paths = [path("image"), path("side"), path("scoped")];
        let plan = plan(&templates, &paths, &[]);
        // `c.scoped`, included with `$` inside a `with`, is evaluated whatever the `with` is
        // over.
        assert_eq!(
            plan.top_keys.iter().map(String::as_str).collect::<Vec<_>>(),
            ["image", "scoped", "side", "x"]
        );
        let root = json!({
            "Values": {
                "image": {"repository": "r", "tag": "", "digest": ""},
                "side": {"repository": "s", "tag": "1"},
                "scoped": {"repository": "q"},
            },
            "Chart": {"AppVersion": "2.0"},
        });
        let rendering = plan.render(&templates, &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: \"r:2.0\"\n\
             ---\n# Source: c/templates/deploy.yaml\nimage: s:1\n\
             ---\n# Source: c/templates/deploy.yaml\nimage: q\n"
        );
        assert_eq!(rendering.blocked, []);
        let mut with_x = root.clone();
        with_x["Values"]["x"] = json!(true);
        assert!(
            plan.render(&templates, &with_x)
                .output
                .ends_with("---\n# Source: c/templates/deploy.yaml\nimage: q\n")
        );
        // The digest branch, on another line of the body.
        let digested = json!({
            "Values": {"image": {"repository": "r", "tag": "1", "digest": "sha256:ab"}},
            "Chart": {"AppVersion": "2.0"},
        });
        assert!(
            plan.render(&templates, &digested)
                .output
                .contains("image: \"r@sha256:ab\"\n")
        );
    }

    #[test]
    fn a_named_template_nothing_includes_is_not_read_and_one_of_a_computed_name_blocks() {
        let helpers = template(
            "c/templates/_helpers.tpl",
            "{{- define \"c.image\" -}}{{ .Values.image.repository }}{{- end -}}\n",
        );
        let root = json!({"Values": {"image": {"repository": "r"}}});
        for (deploy, reason) in [
            // Helm never renders the template's read: the line shows the image.
            ("image: {{ .Values.image.repository }}\n", None),
            (
                "image: {{ include \"c.image\" . }}\nother: {{ include (printf \"c.%s\" \"image\") . }}\n",
                Some(
                    "not proven: without Helm, the map is read inside the named template `c.image`, and c/templates/deploy.yaml:2 includes a named template by a computed name",
                ),
            ),
            // A computed include inside a named template no line reaches never runs
            // (argo-rollouts' unused `argo-rollouts.render` helper); one a reached template
            // makes does.
            (
                "image: {{ include \"c.image\" . }}\n{{- define \"c.unused\" -}}{{ include (print \"c.\" .x) . }}{{- end -}}\n",
                None,
            ),
            (
                "image: {{ include \"c.image\" . }}\nx: {{ include \"c.used\" . }}\n{{- define \"c.used\" -}}{{ include (print \"c.\" .x) . }}{{- end -}}\n",
                Some(
                    "not proven: without Helm, the map is read inside the named template `c.image`, and c/templates/deploy.yaml:3 includes a named template by a computed name",
                ),
            ),
        ] {
            let templates = [helpers.clone(), template("c/templates/deploy.yaml", deploy)];
            let rendering = render(&templates, &[path("image")], &[], &root);
            let blocked: Vec<(usize, String)> =
                reason.map(|r| (0, r.to_owned())).into_iter().collect();
            assert_eq!(rendering.blocked, blocked, "{deploy}");
        }
        // Text the chart renders with `tpl` may include it: it is read, and blocks.
        let templates = [
            helpers,
            template(
                "c/templates/deploy.yaml",
                "image: {{ .Values.image.repository }}\n",
            ),
            template(
                &format!("{TPL_SOURCE}c/values.yaml"),
                "x: '{{ include \"c.image\" . }}'\n",
            ),
        ];
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked.len(), 1, "{:?}", rendering.blocked);
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

    /// A label that reads the tag through the values whole (`dig … .Values.AsMap`, `index .
    /// "Values" …`) blocks the map: this reading does not follow it, and the digest would show
    /// in the label.
    #[test]
    fn values_read_whole_through_the_root_block_the_map() {
        for label in [
            "{{ dig \"image\" \"tag\" \"\" .Values.AsMap | quote }}",
            "{{ index . \"Values\" \"image\" \"tag\" | quote }}",
        ] {
            let templates = [template(
                "c/templates/d.yaml",
                &format!(
                    "metadata:\n  labels:\n    version: {label}\nspec:\n  containers:\n    - image: \"{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag }}}}\"\n"
                ),
            )];
            let root = json!({"Values": {"image": {"repository": "tpsr0z", "tag": "tpst0z"}}});
            let rendering = render(&templates, &[path("image")], &[], &root);
            assert_eq!(
                rendering.blocked.len(),
                1,
                "{label}: {:?}",
                rendering.blocked
            );
            assert!(
                rendering.blocked[0]
                    .1
                    .contains("`.Values` is read whole at c/templates/d.yaml:3"),
                "{label}: {:?}",
                rendering.blocked
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// Templates of `if`, `else`, `with`, `range` and `end` lines (alone or sharing a line,
        /// balanced or not), comments and actions over lines, image and text lines: planning
        /// and rendering never panic, and the plan is the one every line read gives (the check
        /// inside [`plan_for`]); a blocked map says why, and every document rendered comes
        /// from the template.
        #[test]
        fn blocks_of_any_shape_are_planned_and_rendered(
            lines in proptest::collection::vec(proptest::sample::select(vec![
                "{{- if .Values.image.digest }}",
                "{{- if .Values.other }}",
                "{{- if eq .Values.image.tag \"1\" }}",
                "{{- else }}",
                "{{- else if .Values.image.tag }}",
                "{{- else with .Values.image }}",
                "{{- end }}",
                "{{- with .Values.image }}",
                "{{- range .Values.list }}",
                "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}",
                "image: {{ .Values.image.repository }}@{{ .Values.image.digest }}{{- end }}",
                "x: {{ if .Values.image.tag }}",
                "text: plain",
                "{{/* a comment",
                "*/}}",
                "{{ include \"x\"",
                ". }}",
                "",
            ]), 0..14),
        ) {
            let templates = [template("c/templates/d.yaml", &lines.join("\n"))];
            let root = json!({"Values": {"image": {"repository": "r", "tag": "1", "digest": "d"}, "other": true, "list": [1]}});
            let rendering = render(&templates, &[path("image")], &[], &root);
            for (_, reason) in &rendering.blocked {
                proptest::prop_assert!(reason.starts_with("not proven: without Helm"), "{}", reason);
            }
            // Every document is one of the template's lines, as evaluated.
            for document in rendering.output.split("---\n").skip(1) {
                proptest::prop_assert!(
                    document.starts_with("# Source: c/templates/d.yaml\n"),
                    "{:?}",
                    rendering.output
                );
            }
        }
    }

    #[test]
    fn an_action_reads_only_the_root_when_no_read_starts_at_dot() {
        for (action, expected) in [
            ("$.Values.image.tag", true),
            ("include \"x\" $", true),
            (
                "printf \"%s.%s\" $.Values.a (($.Values.global).registry)",
                true,
            ),
            ("$.Values.image.tag | default \".x\" | quote", true),
            ("`.raw`", true),
            ("1.5", true),
            ("end", true),
            (".Values.image.tag", false),
            (".", false),
            ("include \"x\" .", false),
            ("$.Values.image.tag | default .tag", false),
            ("$root.Values.image", false),
            ("$tag", false),
            ("(.global).x", false),
            ("\"unterminated", false),
        ] {
            assert_eq!(reads_only_the_root(action), expected, "{action}");
        }
    }

    /// A `with` over a map empty by default hides no use of the tag: the annotation shows.
    #[test]
    fn a_line_inside_with_over_an_empty_map_is_evaluated() {
        let templates = [template(
            "c/templates/d.yaml",
            "metadata:\n  {{- with .Values.podAnnotations }}\n  annotations:\n    {{- toYaml . | nindent 4 }}\n    app-version: {{ $.Values.image.tag | quote }}\n  {{- end }}\nimage: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
        )];
        let root =
            json!({"Values": {"image": {"repository": "r", "tag": "1"}, "podAnnotations": {}}});
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked, []);
        assert!(
            rendering.output.contains("app-version: \"1\""),
            "{}",
            rendering.output
        );
    }

    /// Whatever the block ranges over: a list empty by default is one a user fills in.
    #[test]
    fn a_line_inside_range_that_reads_only_the_root_is_evaluated_inside_it() {
        let templates = [template(
            "c/templates/w.yaml",
            "{{- range .Values.workers }}\nname: {{ .name }}\nimage: {{ $.Values.image.repository }}:{{ $.Values.image.tag }}\n{{- end }}\n",
        )];
        let plan = plan(&templates, &[path("image")], &[]);
        assert_eq!(
            plan.top_keys.iter().map(String::as_str).collect::<Vec<_>>(),
            ["image"]
        );
        let shown = "---\n# Source: c/templates/w.yaml\nimage: r:1\n";
        for (workers, output) in [
            (json!([{"name": "a"}, {"name": "b"}]), shown),
            (json!([]), shown),
        ] {
            let root =
                json!({"Values": {"image": {"repository": "r", "tag": "1"}, "workers": workers}});
            let rendering = plan.render(&templates, &root);
            assert_eq!(rendering.blocked, []);
            assert_eq!(rendering.output, output);
        }
        // A line that also reads `.` depends on the item, one after the block's `else` renders
        // when the others do not: neither is followed.
        let root = json!({"Values": {"image": {"repository": "r", "tag": "1"}, "workers": []}});
        for text in [
            "{{- range .Values.workers }}\nimage: {{ $.Values.image.repository }}:{{ .tag | default $.Values.image.tag }}\n{{- end }}\n",
            "{{- range $i, $w := .Values.workers }}\nx: {{ $i }}\n{{- else }}\nimage: {{ $.Values.image.repository }}:{{ $.Values.image.tag }}\n{{- end }}\n",
        ] {
            assert_blocks_the_image_map(text, &root, "inside a `with`/`range` block");
        }
    }

    #[test]
    fn a_condition_over_lines_is_read_branch_by_branch_when_alone_on_its_lines() {
        let branches = [template(
            "c/templates/d.yaml",
            "{{- if .Values.image.digest }}\nimage: {{ .Values.image.repository }}@{{ .Values.image.digest }}\n{{- else }}\nimage: {{ .Values.image.repository }}:{{ .Values.image.tag }}\npolicy: tagged\n{{- end }}\n",
        )];
        for (digest, shown) in [
            ("d", "image: r@d\n"),
            (
                "",
                "image: r:t\n---\n# Source: c/templates/d.yaml\npolicy: tagged\n",
            ),
        ] {
            let root =
                json!({"Values": {"image": {"repository": "r", "tag": "t", "digest": digest}}});
            let rendering = render(&branches, &[path("image")], &[], &root);
            assert_eq!(rendering.blocked, []);
            assert_eq!(
                rendering.output,
                format!("---\n# Source: c/templates/d.yaml\n{shown}"),
                "digest {digest:?}"
            );
        }
        let root = json!({"Values": {"image": {"repository": "r", "digest": "d"}, "x": 1}});
        // A block over lines inside it, an `if` sharing its line, an `end` sharing its line.
        for text in [
            "{{- if .Values.image.digest }}\n{{- with .Values.x }}\nx: {{ . }}\n{{- end }}\nimage: {{ .Values.image.repository }}\n{{- end }}\n",
            "image: {{ .Values.image.repository }}{{- if .Values.image.digest }}\n@{{ .Values.image.digest }}\n{{- end }}\n",
            "{{- if .Values.image.digest }}\nimage: {{ .Values.image.repository }}@{{ .Values.image.digest }}{{- end }}\n",
        ] {
            assert_blocks_the_image_map(text, &root, "block that spans lines");
        }
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

    #[test]
    fn a_map_passed_in_a_dict_or_to_a_variable_is_read_where_used_and_a_root_passed_on_blocks() {
        let helpers = "{{- define \"lib.image\" -}}\n\
            {{- $registry := default .imageRoot.registry ((.global).imageRegistry) -}}\n\
            {{- $end := .imageRoot.tag | toString -}}\n\
            {{- if .imageRoot.digest }}{{ $end = printf \"@%s\" .imageRoot.digest }}{{ else }}{{ $end = printf \":%s\" $end }}{{ end -}}\n\
            {{- printf \"%s/%s%s\" $registry .imageRoot.repository $end -}}\n\
            {{- end -}}\n\
            {{- define \"c.image\" -}}{{ include \"lib.image\" (dict \"imageRoot\" .Values.image \"global\" .Values.global) }}{{- end -}}\n\
            {{- define \"c.label\" -}}{{ .context.Values.side.tag }}{{- end -}}\n";
        let templates = [
            template("c/templates/_helpers.tpl", helpers),
            template(
                "c/templates/deploy.yaml",
                "metadata:\n  labels:\n    v: {{ include \"c.label\" (dict \"context\" $) }}\n\
                 spec:\n  {{- $tag := .Values.kept.tag }}\n  containers:\n    - image: {{ include \"c.image\" . }}\n\
                    - image: {{ .Values.side.repository }}:{{ .Values.side.tag }}\n\
                    - image: {{ .Values.kept.repository }}:{{ $tag }}\n\
                      env: {{ $tag | quote }}\n\
                  {{- $again := .Values.again.tag }}\n\
                    - image: {{ .Values.again.repository }}:{{ $again }}\n\
                  {{- $again = \"x\" }}\n\
                  {{- $_ := set .Values.mutated \"tag\" \"x\" }}\n\
                    - image: {{ .Values.mutated.repository }}:{{ .Values.mutated.tag }}\n\
                  {{- $chained := .Values.chained.tag }}\n\
                  {{- $label := $chained | upper }}\n\
                    - image: {{ .Values.chained.repository }}:{{ $chained }}\n\
                      label: {{ $label }}\n",
            ),
        ];
        let root = json!({
            "Values": {
                "image": {"registry": "r.example", "repository": "app", "tag": "1.0", "digest": "sha256:ab"},
                "global": {"imageRegistry": ""},
                "side": {"repository": "side", "tag": "2.0"},
                "kept": {"repository": "kept", "tag": "3.0"},
                "again": {"repository": "again", "tag": "4.0"},
                "chained": {"repository": "chained", "tag": "5.0"},
                "mutated": {"repository": "mutated", "tag": "6.0"},
            },
            "Chart": {"AppVersion": "1.0"},
        });
        let rendering = render(
            &templates,
            &[
                path("image"),
                path("side"),
                path("kept"),
                path("again"),
                path("chained"),
                path("mutated"),
            ],
            &[],
            &root,
        );
        // A variable declared alone on its line is read where each later line uses it.
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: r.example/app@sha256:ab\n\
             ---\n# Source: c/templates/deploy.yaml\nimage: kept:3.0\n\
             ---\n# Source: c/templates/deploy.yaml\nenv: \"3.0\"\n"
        );
        assert_eq!(
            blocked(&rendering),
            [
                (
                    1,
                    "not proven: without Helm, the map is read through a root passed on (`….Values`) at c/templates/_helpers.tpl:8, which this reading does not follow"
                ),
                (
                    3,
                    "not proven: without Helm, the map is read into a variable at c/templates/deploy.yaml:11, whose uses on other lines this reading does not follow"
                ),
                // Passed on to another variable, whose uses no line shows as the map's.
                (
                    4,
                    "not proven: without Helm, the map is read into a variable at c/templates/deploy.yaml:16, whose uses on other lines this reading does not follow"
                ),
                // Changed in place, which no later line shows.
                (
                    5,
                    "not proven: without Helm, the map is read into a variable at c/templates/deploy.yaml:14, whose uses on other lines this reading does not follow"
                ),
            ]
        );
    }

    /// A named template included into a variable (traefik's `$version := include
    /// "traefik.proxyVersion" $`, then `semverCompare … $version`) reads the map where the
    /// variable is used, which this reading does not follow (an `include` may change values in
    /// place): the map is blocked, as one read into a variable directly is. Before, the include
    /// was taken for a line that prints the map, and a tag `semverCompare` checks was written.
    #[test]
    fn a_helper_included_into_a_variable_blocks_the_map() {
        let helpers = "{{- define \"c.version\" -}}{{ .Values.image.tag }}{{- end -}}\n";
        let templates = [
            template("c/templates/_helpers.tpl", helpers),
            template(
                "c/templates/deploy.yaml",
                "{{- $version := include \"c.version\" . }}\n\
                 spec:\n  containers:\n\
                   - image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n\
                   {{- if semverCompare \">=1.0.0-0\" $version }}\n\
                     args: [new]\n\
                   {{- end }}\n",
            ),
        ];
        let root = json!({
            "Values": {"image": {"repository": "app", "tag": "1.0"}},
            "Chart": {"AppVersion": "1.0"},
        });
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(
            blocked(&rendering),
            [(
                0,
                "not proven: without Helm, the map is read inside the named template `c.version`, which c/templates/deploy.yaml:1 includes into a variable whose uses on other lines this reading does not follow"
            )]
        );
    }

    #[test]
    fn the_examples_of_a_comment_over_several_lines_are_not_read() {
        let helpers = "{{/*\nExample:\n{{ include \"c.unused\" (dict \"context\" $) }}\n*/}}\n\
            {{- define \"c.unused\" -}}{{ .context.Values.image.tag }}{{- end -}}\n";
        let templates = [
            template("c/templates/_helpers.tpl", helpers),
            template(
                "c/templates/pod.yaml",
                "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
            ),
        ];
        let root = json!({"Values": {"image": {"repository": "r", "tag": "1"}}});
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked, []);
        assert!(
            rendering.output.contains("image: r:1\n"),
            "{}",
            rendering.output
        );
    }

    #[test]
    fn a_file_included_whole_by_its_path_blocks_the_maps_it_reads() {
        let templates = [
            template(
                "c/templates/deploy.yaml",
                "metadata:\n  annotations:\n    checksum: {{ include (print $.Template.BasePath \"/cm.yaml\") . | sha256sum }}\nspec:\n  image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
            ),
            template(
                "c/templates/cm.yaml",
                "data:\n  tag: {{ .Values.image.tag }}\n",
            ),
            template(
                "c/templates/other.yaml",
                "data:\n  tag: {{ .Values.side.tag }}\n",
            ),
        ];
        let root =
            json!({"Values": {"image": {"repository": "r", "tag": "1"}, "side": {"tag": "2"}}});
        let rendering = render(&templates, &[path("image"), path("side")], &[], &root);
        assert_eq!(
            rendering.blocked,
            [(
                0,
                "not proven: without Helm, c/templates/cm.yaml:2 reads the map, and c/templates/deploy.yaml:3 includes that file whole (`$.Template.BasePath`), which this reading does not follow".to_owned()
            )]
        );
        assert_eq!(
            included_file("(print $.Template.BasePath \"/a/b.yaml\") ."),
            Some("/a/b.yaml")
        );
        assert_eq!(included_file("(printf \"%s\" .name) ."), None);
    }

    #[test]
    fn the_lines_of_a_with_block_read_its_map_unless_blocks_open_inside_it() {
        let deploy = "spec:\n  {{- with .Values.image }}\n  image: \"{{ .registry }}/{{ .name }}:{{ .tag }}{{ if .digest }}@{{ .digest }}{{ end }}\"\n  {{- end }}\n\
                      {{- with .Values.side }}\n  {{- if .digest }}\n  image: {{ .name }}@{{ .digest }}\n  {{- else }}\n  image: {{ .name }}:{{ .tag }}\n  {{- end }}\n  {{- end }}\n";
        let templates = [template("c/templates/deploy.yaml", deploy)];
        let root = json!({"Values": {
            "image": {"registry": "r", "name": "app", "tag": "1", "digest": "sha256:ab"},
            "side": {"name": "side", "tag": "2", "digest": ""},
        }});
        let rendering = render(&templates, &[path("image"), path("side")], &[], &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: \"r/app:1@sha256:ab\"\n"
        );
        assert_eq!(
            blocked(&rendering),
            [(
                1,
                "not proven: without Helm, the map is `.` of a `with` block at c/templates/deploy.yaml:5 whose lines open, close or branch blocks, which this reading does not follow"
            )]
        );
    }

    #[test]
    fn a_subchart_s_files_read_the_subchart_s_values_not_the_chart_s() {
        let templates = [
            template(
                "c/templates/pod.yaml",
                "image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
            ),
            template(
                "c/charts/sub/templates/_helpers.tpl",
                "{{- define \"sub.image\" -}}{{ .Values.image.repository }}{{- end -}}\n",
            ),
            template(
                "c/charts/sub/templates/pod.yaml",
                "metadata:\n  labels:\n    version: {{ .Values.image.tag }}\nspec:\n  image: {{ include \"sub.image\" . }}\n  registry: {{ .Values.global.registry.repository }}\n",
            ),
        ];
        let root = json!({"Values": {"image": {"repository": "r", "tag": "1"}, "global": {"registry": {"repository": "h"}}}});
        // `global.registry.repository` is read by the subchart: the map is blocked.
        let rendering = render(
            &templates,
            &[path("image"), path("global.registry")],
            &["sub".to_owned()],
            &root,
        );
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/pod.yaml\nimage: r:1\n"
        );
        assert_eq!(
            blocked(&rendering),
            [(
                1,
                "not proven: without Helm, a subchart's file reads the map at c/charts/sub/templates/pod.yaml:6, with the subchart's values, which this reading does not follow"
            )]
        );
    }
}
