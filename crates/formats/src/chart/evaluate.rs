//! A small evaluator of Go template actions, for the line of a template that builds an image
//! when no Helm is at hand: field chains (`.Values.image.tag`, `$.Values…`, `.Chart.AppVersion`,
//! `(.global).imageRegistry`), pipelines, string literals, parentheses, variables (`$x :=`,
//! `$x =`), `if`/`with`/`range`/`else`/`end` closed on the same line, the functions image lines
//! use (`default`, `quote`, `printf`, `trimPrefix`…) and those that helpers taking a `dict`
//! use (`dict`, `list`, `ternary`, `hasKey`, `get`, `kindIs`, `append`, `uniq`), and
//! `include`/`template` of a named template, whose body is evaluated whole (its blocks may span
//! lines) with `.` and `$` the argument. Anything else (`tpl`, `toYaml`, `nindent`, a float
//! printed) is an error: the caller then writes nothing.

use std::rc::Rc;

use serde_json::Value;

/// Why a line could not be evaluated.
pub type EvalError = String;

/// One piece of a template line.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'t> {
    Text(&'t str),
    /// An action's inside, trim markers removed.
    Action(&'t str),
}

/// Splits `line` into text and actions, applying `{{-` and `-}}` trimming. `None` when an
/// action is not closed on the line.
pub fn pieces(line: &str) -> Option<Vec<Piece<'_>>> {
    // Built once: every action line of every template is split here.
    static OPEN: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("{{"));
    static CLOSE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("}}"));
    let mut out = Vec::new();
    let mut rest = line;
    let mut trim_next = false;
    while let Some(open) = OPEN.find(rest.as_bytes()) {
        let mut text = &rest[..open];
        if trim_next {
            text = text.trim_start();
        }
        let after = &rest[open + 2..];
        let (trim_before, inner_start) = match after.strip_prefix("- ") {
            Some(_) => (true, 2),
            None => (false, 0),
        };
        if trim_before {
            text = text.trim_end();
        }
        if !text.is_empty() {
            out.push(Piece::Text(text));
        }
        let close = CLOSE.find(after.as_bytes())?;
        let mut inner = &after[inner_start..close];
        trim_next = inner.ends_with(" -");
        if trim_next {
            inner = &inner[..inner.len() - 2];
        }
        out.push(Piece::Action(inner.trim()));
        rest = &after[close + 2..];
    }
    let text = if trim_next { rest.trim_start() } else { rest };
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Some(out)
}

/// The root of an evaluation: `.Values`, `.Chart`, `.Release` (in a named template, its
/// argument), and the chart's named templates.
pub struct Root<'v> {
    pub data: &'v Value,
    pub defines: &'v Defines,
    /// How many `include`s deep this evaluation is.
    pub depth: usize,
}

/// The named templates of a chart and its subcharts: name → body, trimmed as Helm trims it.
pub type Defines = std::collections::BTreeMap<String, String>;

/// How deep `include`s may nest (a template that includes itself stops here).
const MAX_INCLUDE_DEPTH: usize = 16;

/// The body of the named template `name` evaluated with `arg` as `.` and `$`.
fn include(name: &str, arg: &Value, root: &Root<'_>) -> Result<Value, EvalError> {
    let body = root
        .defines
        .get(name)
        .ok_or_else(|| format!("no template named `{name}`"))?;
    if root.depth >= MAX_INCLUDE_DEPTH {
        return Err(format!(
            "`{name}` is included more than {MAX_INCLUDE_DEPTH} deep"
        ));
    }
    let inner = Root {
        data: arg,
        defines: root.defines,
        depth: root.depth + 1,
    };
    line(body, &inner).map(Value::String)
}

/// Evaluates `line` with `.` at the root. Helm's `<no value>` for a missing key is empty.
/// `line` may be a named template's whole body: its blocks may span lines.
pub fn line(line: &str, root: &Root<'_>) -> Result<String, EvalError> {
    let pieces = pieces(line).ok_or_else(|| "an action is not closed on its line".to_owned())?;
    let mut run = Run {
        root,
        out: String::new(),
        blocks: Vec::new(),
        vars: Vec::new(),
    };
    let mut at = 0;
    while let Some(piece) = pieces.get(at) {
        at += 1;
        match piece {
            Piece::Text(text) => {
                if run.kept() {
                    run.out.push_str(text);
                }
            }
            Piece::Action(action) if action.starts_with("/*") => {}
            Piece::Action(action) => {
                if let Some(back) = run.action(action, at)? {
                    at = back;
                }
            }
        }
    }
    if !run.blocks.is_empty() {
        return Err("a block is not closed on its line".to_owned());
    }
    Ok(run.out)
}

/// An evaluation under way: what it printed, the blocks open, the variables in scope.
struct Run<'r> {
    root: &'r Root<'r>,
    out: String,
    blocks: Vec<Block>,
    vars: Vars,
}

impl Run<'_> {
    /// Whether output here is kept: every block open takes its branch.
    fn kept(&self) -> bool {
        self.blocks.iter().all(|b| b.keep)
    }

    /// Evaluates one action; `next` is the index of the piece after it. Returns where to go
    /// back to when a `range` goes round again.
    fn action(&mut self, action: &str, next: usize) -> Result<Option<usize>, EvalError> {
        let kept = self.kept();
        // Shared, not copied: `.` is often the root, all the values the lines read.
        let block_dot = self.blocks.last().and_then(|b| b.dot.clone());
        let dot = block_dot.as_deref().unwrap_or(self.root.data);
        let env = Env {
            dot,
            root: self.root,
            vars: &self.vars,
        };
        let (word, rest) = action.split_once(' ').unwrap_or((action, ""));
        match word {
            "if" | "with" => {
                // A branch not taken is not evaluated, as in Go.
                let value = if kept {
                    pipeline(rest, &env)?
                } else {
                    Value::Null
                };
                let taken = kept && truthy(&value);
                let inner = if word == "with" && taken {
                    Some(Rc::new(value))
                } else {
                    block_dot
                };
                self.blocks.push(Block {
                    keep: taken,
                    taken: taken || !kept,
                    dot: inner,
                    vars: self.vars.len(),
                    range: None,
                });
            }
            "range" => self.range(rest, kept, block_dot, next)?,
            "else" => return self.otherwise(rest, dot),
            "end" => return self.end(),
            "define" | "block" | "break" | "continue" => {
                return Err(format!("`{word}` is not supported"));
            }
            _ if !kept => {}
            _ if action.starts_with('$') && assignment(action).is_some() => {
                let (name, declares, value) = assignment(action).expect("checked");
                let value = pipeline(value, &env)?;
                assign(&mut self.vars, name, declares, value)?;
            }
            "template" => {
                let text = to_text(&pipeline(&format!("include {rest}"), &env)?)?;
                self.out.push_str(&text);
            }
            _ => {
                let text = to_text(&pipeline(action, &env)?)?;
                self.out.push_str(&text);
            }
        }
        Ok(None)
    }

    /// Opens `range [$i, ][$v :=] PIPELINE`, whose body starts at the piece `body`.
    fn range(
        &mut self,
        rest: &str,
        kept: bool,
        dot: Option<Rc<Value>>,
        body: usize,
    ) -> Result<(), EvalError> {
        let (names, collection) = range_variables(rest);
        let items = if kept {
            let env = Env {
                dot: dot.as_deref().unwrap_or(self.root.data),
                root: self.root,
                vars: &self.vars,
            };
            range_items(pipeline(collection, &env)?)?
        } else {
            Vec::new()
        };
        let vars = self.vars.len();
        let Some(first) = items.first().cloned() else {
            // Nothing to go over: only an `else` branch is kept.
            self.blocks.push(Block {
                keep: false,
                taken: !kept,
                dot,
                vars,
                range: None,
            });
            return Ok(());
        };
        self.blocks.push(Block {
            keep: true,
            taken: true,
            dot: Some(Rc::new(first.1.clone())),
            vars,
            range: Some(Ranging {
                body,
                items,
                next: 1,
                names,
            }),
        });
        self.declare_range_variables(first);
        Ok(())
    }

    fn declare_range_variables(&mut self, (key, value): (Value, Value)) {
        let Some(Block {
            range: Some(ranging),
            ..
        }) = self.blocks.last()
        else {
            return;
        };
        match &ranging.names {
            (Some(index), Some(element)) => {
                let (index, element) = (index.clone(), element.clone());
                self.vars.push((index, key));
                self.vars.push((element, value));
            }
            (Some(element), None) => {
                let element = element.clone();
                self.vars.push((element, value));
            }
            _ => {}
        }
    }

    /// At the end of a `range`'s body: the next item, and the piece to go back to.
    fn next_item(&mut self) -> Option<usize> {
        let block = self.blocks.last_mut()?;
        self.vars.truncate(block.vars);
        let ranging = block.range.as_mut()?;
        let Some(item) = ranging.items.get(ranging.next).cloned() else {
            block.range = None;
            return None;
        };
        ranging.next += 1;
        let body = ranging.body;
        block.dot = Some(Rc::new(item.1.clone()));
        self.declare_range_variables(item);
        Some(body)
    }

    fn otherwise(&mut self, rest: &str, dot: &Value) -> Result<Option<usize>, EvalError> {
        if self.blocks.last().is_some_and(|b| b.range.is_some()) {
            // The `else` of a `range` ends its body: go round again, or skip the `else`.
            if let Some(back) = self.next_item() {
                return Ok(Some(back));
            }
            self.blocks.last_mut().expect("a range").keep = false;
            return Ok(None);
        }
        let parent_live = self.blocks.iter().rev().skip(1).all(|b| b.keep);
        let Some(block) = self.blocks.last_mut() else {
            return Err("`else` without `if`".to_owned());
        };
        self.vars.truncate(block.vars);
        if rest.is_empty() {
            block.keep = parent_live && !block.taken;
        } else if let Some(condition) = rest.strip_prefix("if ") {
            let asked = parent_live && !block.taken;
            let env = Env {
                dot,
                root: self.root,
                vars: &self.vars,
            };
            let taken = asked && truthy(&pipeline(condition, &env)?);
            let block = self.blocks.last_mut().expect("checked");
            block.keep = taken;
            block.taken |= taken;
        } else {
            return Err(format!("`else {rest}` is not supported"));
        }
        Ok(None)
    }

    fn end(&mut self) -> Result<Option<usize>, EvalError> {
        let ranging = self
            .blocks
            .last()
            .is_some_and(|b| b.range.is_some() && b.keep);
        if let Some(back) = ranging.then(|| self.next_item()).flatten() {
            return Ok(Some(back));
        }
        let block = self
            .blocks
            .pop()
            .ok_or_else(|| "`end` without a block".to_owned())?;
        self.vars.truncate(block.vars);
        Ok(None)
    }
}

/// An open `if`, `with` or `range`: whether its output is kept, whether a branch was taken,
/// its dot, how many variables were declared before it (those after end with it), and for a
/// `range` going round, where.
struct Block {
    keep: bool,
    taken: bool,
    /// `.` inside the block, when it is not the root.
    dot: Option<Rc<Value>>,
    vars: usize,
    range: Option<Ranging>,
}

/// A `range` going over its items: `(key or index, value)`s, the next one, the piece its
/// body starts at, and the variables it declares (`$v` or `$i, $v`).
struct Ranging {
    body: usize,
    items: Vec<(Value, Value)>,
    next: usize,
    names: (Option<String>, Option<String>),
}

/// `$i, $v := PIPELINE` or `$v := PIPELINE` or `PIPELINE`: the names and the pipeline.
fn range_variables(rest: &str) -> ((Option<String>, Option<String>), &str) {
    let Some((names, collection)) = rest.split_once(":=") else {
        return ((None, None), rest);
    };
    let names: Vec<String> = names
        .split(',')
        .map(|name| name.trim().to_owned())
        .collect();
    if !names.iter().all(|n| n.starts_with('$') && n.len() > 1) {
        return ((None, None), rest);
    }
    let mut names = names.into_iter();
    ((names.next(), names.next()), collection.trim())
}

/// What `range` goes over: a list's items by index, a map's by key (in key order, as Go
/// does), nothing for nil.
fn range_items(value: Value) -> Result<Vec<(Value, Value)>, EvalError> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (Value::from(i), v))
            .collect()),
        Value::Object(map) => {
            let mut items: Vec<(Value, Value)> = map
                .into_iter()
                .map(|(k, v)| (Value::String(k), v))
                .collect();
            items.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
            Ok(items)
        }
        _ => Err("`range` over a value that is not a list or a map".to_owned()),
    }
}

/// The variables in scope, innermost last.
type Vars = Vec<(String, Value)>;

/// What a pipeline sees: `.`, the root (`$`) and the variables.
struct Env<'a> {
    dot: &'a Value,
    root: &'a Root<'a>,
    vars: &'a [(String, Value)],
}

/// `$name := value` (a declaration) or `$name = value`: the name, whether it declares, the
/// value's pipeline.
fn assignment(action: &str) -> Option<(&str, bool, &str)> {
    let name_end = action[1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(action.len(), |i| i + 1);
    let (name, rest) = action.split_at(name_end);
    let rest = rest.trim_start();
    if name.len() < 2 {
        return None;
    }
    if let Some(value) = rest.strip_prefix(":=") {
        Some((name, true, value.trim()))
    } else {
        let value = rest.strip_prefix('=').filter(|v| !v.starts_with('='))?;
        Some((name, false, value.trim()))
    }
}

fn assign(vars: &mut Vars, name: &str, declares: bool, value: Value) -> Result<(), EvalError> {
    if declares {
        vars.push((name.to_owned(), value));
        return Ok(());
    }
    let known = vars
        .iter_mut()
        .rev()
        .find(|(known, _)| known == name)
        .ok_or_else(|| format!("the variable `{name}` is assigned before it is declared"))?;
    known.1 = value;
    Ok(())
}

/// Go's truth: false, 0, nil and empty strings and collections are false.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// How a value prints in a template. Floats print differently in Go (`1.0` is `1`), and so do
/// integers of a million or more (Helm reads a values file's numbers as float64s, which print
/// `20240101` as `2.0240101e+07`), and collections as Go maps: all are errors.
fn to_text(value: &Value) -> Result<String, EvalError> {
    match value {
        Value::Null => Ok(String::new()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) if n.as_i64().is_some_and(|n| n.abs() < 1_000_000) => Ok(n.to_string()),
        Value::Number(n) => Err(format!("the number {n} prints differently in Go")),
        Value::String(s) => Ok(s.clone()),
        Value::Array(_) | Value::Object(_) => Err("a collection is printed".to_owned()),
    }
}

/// A lexed token of a pipeline.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Field(String),
    Str(String),
    Int(i64),
    Open,
    Close,
    Pipe,
    /// Fields of what a parenthesis gave: `(.global).imageRegistry`.
    Chain(String),
}

/// The functions (and words) a pipeline may use for [`is_pure`]: those this evaluator knows,
/// none of which changes a value in place or includes a template.
const PURE_WORDS: &[&str] = &[
    "default",
    "quote",
    "squote",
    "toString",
    "printf",
    "trimPrefix",
    "trimSuffix",
    "trim",
    "lower",
    "upper",
    "not",
    "empty",
    "and",
    "or",
    "eq",
    "ne",
    "coalesce",
    "dict",
    "list",
    "tuple",
    "index",
    "ternary",
    "hasKey",
    "get",
    "kindIs",
    "typeIs",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "replace",
    "indent",
    "nindent",
    "trunc",
    "substr",
    "required",
    "join",
    "append",
    "concat",
    "has",
    "toYaml",
    "semverCompare",
    "fail",
    "regexMatch",
    "mustRegexMatch",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "uniq",
    "print",
    "true",
    "false",
    "nil",
];

/// Whether evaluating `pipeline` can change nothing but its own value: it calls only functions
/// this evaluator knows, and no template (Sprig's `set`, `unset` and `merge` change a map in
/// place, which a later line would see; an included template may call them).
pub fn is_pure(pipeline: &str) -> bool {
    lex(pipeline).is_ok_and(|tokens| {
        tokens.iter().all(|token| match token {
            Token::Word(word) => PURE_WORDS.contains(&word.as_str()),
            _ => true,
        })
    })
}

fn lex(text: &str) -> Result<Vec<Token>, EvalError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(at, c)) = chars.peek() {
        match c {
            ' ' | '\t' => {
                chars.next();
            }
            '(' | ')' | '|' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Pipe,
                });
            }
            '"' => {
                chars.next();
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, 'n')) => value.push('\n'),
                            Some((_, 't')) => value.push('\t'),
                            Some((_, other @ ('"' | '\\'))) => value.push(other),
                            _ => return Err("an escape in a string is not supported".to_owned()),
                        },
                        Some((_, other)) => value.push(other),
                        None => return Err("a string is not closed".to_owned()),
                    }
                }
                tokens.push(Token::Str(value));
            }
            _ => {
                let end = text[at..]
                    .find([' ', '\t', '(', ')', '|', '"'])
                    .map_or(text.len(), |n| at + n);
                let word = &text[at..end];
                while chars.peek().is_some_and(|&(i, _)| i < end) {
                    chars.next();
                }
                let after_close = tokens.last() == Some(&Token::Close) && text[..at].ends_with(')');
                tokens.push(if after_close && word.starts_with('.') {
                    Token::Chain(word.to_owned())
                } else if word.starts_with('.') || word.starts_with('$') {
                    Token::Field(word.to_owned())
                } else if let Ok(n) = word.parse::<i64>() {
                    Token::Int(n)
                } else if word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    Token::Word(word.to_owned())
                } else {
                    return Err(format!("`{word}` is not supported"));
                });
            }
        }
    }
    Ok(tokens)
}

/// Evaluates a pipeline (`a | f b | g`).
fn pipeline(text: &str, env: &Env<'_>) -> Result<Value, EvalError> {
    let tokens = lex(text)?;
    let mut at = 0;
    let value = parse_pipeline(&tokens, &mut at, env)?;
    if at != tokens.len() {
        return Err(format!("`{text}` is not supported"));
    }
    Ok(value)
}

fn parse_pipeline(tokens: &[Token], at: &mut usize, env: &Env<'_>) -> Result<Value, EvalError> {
    let mut value: Option<Value> = None;
    loop {
        let mut args = Vec::new();
        let mut name = None;
        while let Some(token) = tokens.get(*at) {
            match token {
                Token::Pipe | Token::Close => break,
                // `true` and `false` are values, also first (`$found := false`); Go refuses a
                // `nil` there.
                Token::Word(word)
                    if name.is_none()
                        && args.is_empty()
                        && !matches!(word.as_str(), "true" | "false") =>
                {
                    name = Some(word.clone());
                    *at += 1;
                }
                _ => args.push(operand(tokens, at, env)?),
            }
        }
        if let Some(previous) = value.take() {
            args.push(previous);
        }
        value = Some(match name {
            Some(name) if name == "include" => match args.as_slice() {
                [Value::String(template), arg] => include(template, arg, env.root)?,
                _ => return Err("`include` takes a template name and one argument".to_owned()),
            },
            Some(name) => call(&name, args)?,
            None if args.len() == 1 => args.pop().expect("one"),
            None => return Err("an empty or ambiguous command".to_owned()),
        });
        if tokens.get(*at) == Some(&Token::Pipe) {
            *at += 1;
        } else {
            return value.ok_or_else(|| "an empty pipeline".to_owned());
        }
    }
}

fn operand(tokens: &[Token], at: &mut usize, env: &Env<'_>) -> Result<Value, EvalError> {
    let token = tokens
        .get(*at)
        .ok_or_else(|| "a missing operand".to_owned())?;
    *at += 1;
    match token {
        Token::Str(s) => Ok(Value::String(s.clone())),
        Token::Int(n) => Ok(Value::from(*n)),
        Token::Field(path) => field(path, env),
        Token::Open => {
            let mut value = parse_pipeline(tokens, at, env)?;
            if tokens.get(*at) != Some(&Token::Close) {
                return Err("a parenthesis is not closed".to_owned());
            }
            *at += 1;
            if let Some(Token::Chain(path)) = tokens.get(*at) {
                *at += 1;
                value = fields(&value, path, path)?.clone();
                if value.as_str() == Some(super::values_json::UNTYPED) {
                    return Err(format!("`{path}` may be typed otherwise by Helm"));
                }
            }
            Ok(value)
        }
        Token::Chain(path) => Err(format!(
            "`{path}` after something that is not a parenthesis"
        )),
        Token::Word(word) => match word.as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            "nil" => Ok(Value::Null),
            _ => Err(format!("`{word}` as an argument is not supported")),
        },
        Token::Pipe | Token::Close => Err("a misplaced `|` or `)`".to_owned()),
    }
}

/// `.a.b`, `$.a.b`, `$name.a.b`, `.`, `$` or `$name`: a missing key is nil, as Helm renders
/// it.
fn field(path: &str, env: &Env<'_>) -> Result<Value, EvalError> {
    let (mut value, rest) = if let Some(rest) = path.strip_prefix('$') {
        let name_end = rest.find('.').unwrap_or(rest.len());
        if name_end == 0 {
            (env.root.data, rest)
        } else {
            let name = &path[..=name_end];
            let known = env
                .vars
                .iter()
                .rev()
                .find(|(known, _)| known == name)
                .ok_or_else(|| format!("the variable `{name}` is not declared"))?;
            (&known.1, &rest[name_end..])
        }
    } else {
        (env.dot, path)
    };
    value = fields(value, rest, path)?;
    if value.as_str() == Some(super::values_json::UNTYPED) {
        return Err(format!("`{path}` may be typed otherwise by Helm"));
    }
    Ok(value.clone())
}

/// The value at the dotted `keys` under `value` (nil for a missing key, as Helm renders it);
/// `path` is how the read was written, for the error.
fn fields<'v>(mut value: &'v Value, keys: &str, path: &str) -> Result<&'v Value, EvalError> {
    for key in keys.split('.').filter(|key| !key.is_empty()) {
        value = match value {
            Value::Object(map) => map.get(key).unwrap_or(&Value::Null),
            Value::Null => &Value::Null,
            _ => return Err(format!("`{path}` reads a field of a scalar")),
        };
    }
    Ok(value)
}

/// `Ok` when the function `name` has `n` arguments.
fn arity(name: &str, args: &[Value], n: usize) -> Result<(), EvalError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "`{name}` with {} arguments is not supported",
            args.len()
        ))
    }
}

fn text_arg(value: &Value) -> Result<String, EvalError> {
    to_text(value)
}

fn call(name: &str, args: Vec<Value>) -> Result<Value, EvalError> {
    let arity = |n: usize| arity(name, &args, n);
    let string = |s: String| Ok(Value::String(s));
    match name {
        "default" => {
            arity(2)?;
            let [fallback, given]: [Value; 2] = args.try_into().expect("two");
            Ok(if empty(&given) { fallback } else { given })
        }
        "quote" | "squote" => {
            arity(1)?;
            let text = text_arg(&args[0])?;
            if text.contains(['"', '\\', '\n']) {
                return Err(format!("`{name}` of a string that needs escapes"));
            }
            let mark = if name == "quote" { '"' } else { '\'' };
            string(format!("{mark}{text}{mark}"))
        }
        "toString" => {
            arity(1)?;
            string(text_arg(&args[0])?)
        }
        "printf" => printf(&args),
        "trimPrefix" | "trimSuffix" => {
            arity(2)?;
            let (affix, text) = (text_arg(&args[0])?, text_arg(&args[1])?);
            let trimmed = if name == "trimPrefix" {
                text.strip_prefix(affix.as_str())
            } else {
                text.strip_suffix(affix.as_str())
            };
            string(trimmed.unwrap_or(&text).to_owned())
        }
        "trim" | "lower" | "upper" => {
            arity(1)?;
            let text = text_arg(&args[0])?;
            string(match name {
                "trim" => text.trim().to_owned(),
                "lower" => text.to_lowercase(),
                _ => text.to_uppercase(),
            })
        }
        "not" => {
            arity(1)?;
            Ok(Value::Bool(!truthy(&args[0])))
        }
        "empty" => {
            arity(1)?;
            Ok(Value::Bool(empty(&args[0])))
        }
        "and" | "or" if !args.is_empty() => {
            let want = name == "or";
            let last = args.last().expect("not empty").clone();
            Ok(args.into_iter().find(|a| truthy(a) == want).unwrap_or(last))
        }
        "eq" | "ne" => {
            arity(2)?;
            let same = text_arg(&args[0])? == text_arg(&args[1])?;
            Ok(Value::Bool(same == (name == "eq")))
        }
        "coalesce" => Ok(args.into_iter().find(|a| !empty(a)).unwrap_or(Value::Null)),
        // Sprig's argument order: what to look for first, the text last.
        "contains" | "hasPrefix" | "hasSuffix" => {
            arity(2)?;
            let (part, text) = (text_arg(&args[0])?, text_arg(&args[1])?);
            Ok(Value::Bool(match name {
                "contains" => text.contains(&part),
                "hasPrefix" => text.starts_with(&part),
                _ => text.ends_with(&part),
            }))
        }
        // Helm's `required`: the value, or a failed rendering when it is nil or an empty string.
        "required" => {
            arity(2)?;
            let [message, value]: [Value; 2] = args.try_into().expect("two");
            if value.is_null() || value.as_str() == Some("") {
                return Err(format!(
                    "`required` fails: {}",
                    message.as_str().unwrap_or("a value is required")
                ));
            }
            Ok(value)
        }
        "replace" => {
            arity(3)?;
            let (old, new, text) = (
                text_arg(&args[0])?,
                text_arg(&args[1])?,
                text_arg(&args[2])?,
            );
            string(text.replace(&old, &new))
        }
        _ => cuts(name, args),
    }
}

/// Sprig's functions that indent or cut a text. Their counts are bytes, as in Go; a cut inside
/// a character, or past the text where Go would fail, is not evaluated.
fn cuts(name: &str, args: Vec<Value>) -> Result<Value, EvalError> {
    let arity = |n: usize| arity(name, &args, n);
    let count = |value: &Value| {
        value
            .as_i64()
            .ok_or_else(|| format!("`{name}` with a count that is not an integer"))
    };
    let cut = |text: &str, range: std::ops::Range<usize>| {
        text.get(range)
            .map(|part| Value::String(part.to_owned()))
            .ok_or_else(|| format!("`{name}` cuts inside a character or past the text"))
    };
    match name {
        "indent" | "nindent" => {
            arity(2)?;
            let spaces = usize::try_from(count(&args[0])?)
                .map_err(|_| format!("`{name}` by a negative count"))?;
            let pad = " ".repeat(spaces);
            let text = text_arg(&args[1])?;
            let indented = format!("{pad}{}", text.replace('\n', &format!("\n{pad}")));
            Ok(Value::String(if name == "nindent" {
                format!("\n{indented}")
            } else {
                indented
            }))
        }
        // `trunc n`: the first n bytes, or with n below zero the last -n.
        "trunc" => {
            arity(2)?;
            let (n, text) = (count(&args[0])?, text_arg(&args[1])?);
            let len = i64::try_from(text.len()).unwrap_or(i64::MAX);
            let from = usize::try_from(len + n).unwrap_or(0);
            let to = usize::try_from(n).unwrap_or(0);
            match n {
                n if n < 0 && len + n > 0 => cut(&text, from..text.len()),
                n if n >= 0 && len > n => cut(&text, 0..to),
                _ => Ok(Value::String(text)),
            }
        }
        // `substr start end`: Sprig's reading of the bounds, where Go would fail refused.
        "substr" => {
            arity(3)?;
            let (start, end) = (count(&args[0])?, count(&args[1])?);
            let text = text_arg(&args[2])?;
            let len = i64::try_from(text.len()).unwrap_or(i64::MAX);
            let at = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
            if start < 0 {
                cut(&text, 0..at(end))
            } else if end < 0 || end > len {
                cut(&text, at(start)..text.len())
            } else {
                cut(&text, at(start)..at(end))
            }
        }
        _ => regexes(name, args),
    }
}

/// Sprig's regular expressions (Go's syntax, which the `regex` crate shares for what charts
/// write: `@sha256:[a-f0-9]+`). A replacement that names groups (`$1`) is not evaluated:
/// Go and the crate read such names alike only mostly.
fn regexes(name: &str, args: Vec<Value>) -> Result<Value, EvalError> {
    let compile = |pattern: &Value| {
        regex::Regex::new(&text_arg(pattern)?)
            .map_err(|_| format!("`{name}` of an expression this reading does not take"))
    };
    match name {
        "regexMatch" | "mustRegexMatch" => {
            arity(name, &args, 2)?;
            Ok(Value::Bool(
                compile(&args[0])?.is_match(&text_arg(&args[1])?),
            ))
        }
        "regexReplaceAll"
        | "mustRegexReplaceAll"
        | "regexReplaceAllLiteral"
        | "mustRegexReplaceAllLiteral" => {
            arity(name, &args, 3)?;
            let (text, replacement) = (text_arg(&args[1])?, text_arg(&args[2])?);
            let literal = name.ends_with("Literal");
            if !literal && replacement.contains('$') {
                return Err(format!("`{name}` with a replacement that names groups"));
            }
            let replaced = compile(&args[0])?.replace_all(&text, regex::NoExpand(&replacement));
            Ok(Value::String(replaced.into_owned()))
        }
        _ => collections(name, args),
    }
}

/// The functions that build and read lists and maps (Sprig's, as helpers that take a `dict`
/// use them).
fn collections(name: &str, args: Vec<Value>) -> Result<Value, EvalError> {
    let arity = |n: usize| arity(name, &args, n);
    match name {
        "dict" => {
            if args.len() % 2 == 1 {
                return Err("`dict` with a key and no value".to_owned());
            }
            let mut map = serde_json::Map::new();
            let mut args = args.into_iter();
            while let (Some(key), Some(value)) = (args.next(), args.next()) {
                map.insert(text_arg(&key)?, value);
            }
            Ok(Value::Object(map))
        }
        // Sprig's `tuple` is `list` by another name (cert-manager's `image` helper takes one).
        "list" | "tuple" => Ok(Value::Array(args)),
        "index" if !args.is_empty() => {
            let mut args = args.into_iter();
            let mut value = args.next().expect("not empty");
            for key in args {
                value = index(value, &key)?;
            }
            Ok(value)
        }
        "ternary" => {
            arity(3)?;
            let [yes, no, condition]: [Value; 3] = args.try_into().expect("three");
            Ok(if truthy(&condition) { yes } else { no })
        }
        "hasKey" | "get" => {
            arity(2)?;
            let Value::Object(map) = &args[0] else {
                return Err(format!("`{name}` of a value that is not a map"));
            };
            let key = text_arg(&args[1])?;
            Ok(match name {
                "hasKey" => Value::Bool(map.contains_key(&key)),
                _ => map
                    .get(&key)
                    .cloned()
                    .unwrap_or(Value::String(String::new())),
            })
        }
        "kindIs" | "typeIs" => {
            arity(2)?;
            let (kind, type_name) = match &args[1] {
                Value::Null => ("invalid", "<nil>"),
                Value::Bool(_) => ("bool", "bool"),
                Value::String(_) => ("string", "string"),
                Value::Array(_) => ("slice", "[]interface {}"),
                Value::Object(_) => ("map", "map[string]interface {}"),
                // Helm reads a values file through JSON: every number is a float64.
                Value::Number(_) => ("float64", "float64"),
            };
            if name == "typeIs" && args[1].is_number() {
                // Go's name for it (`float64`, `int64`) depends on how Helm read the number.
                return Err("`typeIs` of a number".to_owned());
            }
            let wanted = if name == "kindIs" { kind } else { type_name };
            Ok(Value::Bool(text_arg(&args[0])? == wanted))
        }
        "append" => {
            arity(2)?;
            let [list, item]: [Value; 2] = args.try_into().expect("two");
            match list {
                Value::Array(mut items) => {
                    items.push(item);
                    Ok(Value::Array(items))
                }
                Value::Null => Ok(Value::Array(vec![item])),
                _ => Err("`append` to a value that is not a list".to_owned()),
            }
        }
        // Whether the list holds the value. Go compares a number by how it was read (a
        // literal's int against a values file's float64): not evaluated.
        "has" => {
            arity(2)?;
            let items = match &args[1] {
                Value::Array(items) => items.as_slice(),
                Value::Null => &[],
                _ => return Err("`has` in a value that is not a list".to_owned()),
            };
            if args[0].is_number() || items.iter().any(Value::is_number) {
                return Err("`has` of numbers".to_owned());
            }
            Ok(Value::Bool(items.contains(&args[0])))
        }
        // Sprig fails on anything but lists (nil included).
        "concat" => {
            let mut joined = Vec::new();
            for list in args {
                let Value::Array(items) = list else {
                    return Err("`concat` of a value that is not a list".to_owned());
                };
                joined.extend(items);
            }
            Ok(Value::Array(joined))
        }
        "uniq" => {
            arity(1)?;
            let Value::Array(items) = &args[0] else {
                return Err("`uniq` of a value that is not a list".to_owned());
            };
            let mut kept: Vec<Value> = Vec::new();
            for item in items {
                if !kept.contains(item) {
                    kept.push(item.clone());
                }
            }
            Ok(Value::Array(kept))
        }
        // Helm's `tpl` renders its text as a template: a text without an action renders as
        // itself. One with actions would be a template this reading does not follow.
        "semverCompare" => {
            arity(2)?;
            let (constraint, version) = (text_arg(&args[0])?, text_arg(&args[1])?);
            super::constraint::semver_compare(&constraint, &version)
                .map(Value::Bool)
                .ok_or_else(|| {
                    format!("`semverCompare` of `{version}` against `{constraint}`, which Helm may not read")
                })
        }
        // Helm's `fail`: the rendering fails.
        "fail" => Err(format!(
            "`fail`: {}",
            args.first().and_then(Value::as_str).unwrap_or_default()
        )),
        "toYaml" => {
            arity(1)?;
            super::to_yaml::to_yaml(&args[0]).map(Value::String)
        }
        "tpl" => {
            arity(2)?;
            match &args[0] {
                Value::String(text) if !text.contains("{{") => Ok(Value::String(text.clone())),
                Value::String(_) => Err("`tpl` of a text with actions is not supported".to_owned()),
                _ => Err("`tpl` of a value that is not a string".to_owned()),
            }
        }
        "join" => {
            arity(2)?;
            let Value::Array(items) = &args[1] else {
                return Err("`join` of a value that is not a list".to_owned());
            };
            let separator = text_arg(&args[0])?;
            let texts = items.iter().map(text_arg).collect::<Result<Vec<_>, _>>()?;
            Ok(Value::String(texts.join(&separator)))
        }
        "print" if args.iter().all(Value::is_string) => Ok(Value::String(
            args.iter().filter_map(Value::as_str).collect(),
        )),
        _ => Err(format!("the function `{name}` is not supported")),
    }
}

/// Go's `index` of `value` by one `key`: a list's item by its position, a map's value by its
/// key (nil when the map lacks it).
fn index(value: Value, key: &Value) -> Result<Value, EvalError> {
    match (value, key) {
        (Value::Array(items), Value::Number(n)) => n
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| items.into_iter().nth(i))
            .ok_or_else(|| format!("`index` {n} is out of the list's range")),
        (Value::Object(mut map), Value::String(key)) => Ok(map.remove(key).unwrap_or(Value::Null)),
        _ => Err(
            "`index` of a value that is not a list or a map, or by a key of another kind"
                .to_owned(),
        ),
    }
}

/// Sprig's `empty`, which `default` uses: Go's falsehood.
fn empty(value: &Value) -> bool {
    !truthy(value)
}

/// `printf` with `%s`, `%v`, `%d` and `%%`.
fn printf(args: &[Value]) -> Result<Value, EvalError> {
    let Some((format, rest)) = args.split_first() else {
        return Err("`printf` without a format".to_owned());
    };
    let Value::String(format) = format else {
        return Err("`printf` with a format that is not a string".to_owned());
    };
    let mut out = String::new();
    let mut values = rest.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s' | 'v' | 'd') => {
                let value = values
                    .next()
                    .ok_or_else(|| "`printf` with too few arguments".to_owned())?;
                out.push_str(&text_arg(value)?);
            }
            _ => return Err("a `printf` verb that is not supported".to_owned()),
        }
    }
    if values.next().is_some() {
        return Err("`printf` with too many arguments".to_owned());
    }
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn image_lines_evaluate_as_helm_renders_them() {
        let root = json!({
            "Values": {
                "image": {"repository": "ghcr.io/acme/app", "tag": "", "digest": "sha256:ab", "n": 1.5, "date": 20_240_101, "small": 999_999, "resources": {"memory": "1Gi", "cpu": "100m"}},
                "global": {"imageRegistry": ""},
                "templated": "{{ .Chart.Name }}:1",
            },
            "Chart": {"AppVersion": "1.8.2", "Name": "app"},
        });
        let defines = Defines::new();
        let root = Root {
            data: &root,
            defines: &defines,
            depth: 0,
        };
        for (template, expected) in [
            (
                r#"image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}""#,
                Ok(r#"image: "ghcr.io/acme/app:1.8.2""#),
            ),
            (
                r#"image: {{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default (printf "v%s" .Chart.AppVersion)) | quote }}"#,
                Ok(r#"image: "ghcr.io/acme/app:v1.8.2""#),
            ),
            (
                "image: {{ .Values.image.repository }}{{ if .Values.image.digest }}@{{ .Values.image.digest }}{{ else }}:x{{ end }}",
                Ok("image: ghcr.io/acme/app@sha256:ab"),
            ),
            (
                "image: {{ with .Values.image }}{{ .repository }}{{ end }}{{- with .Values.missing }}@{{ . }}{{ end }}",
                Ok("image: ghcr.io/acme/app"),
            ),
            (
                "  - {{ $.Values.global.imageRegistry | default \"docker.io\" }}/{{ .Values.image.repository | trimPrefix \"ghcr.io/\" }}",
                Ok("  - docker.io/acme/app"),
            ),
            ("image: {{ include \"x\" . }}", Err("no template named `x`")),
            (
                "image: {{ .Values.image.n }}",
                Err("the number 1.5 prints differently in Go"),
            ),
            // Helm prints a values file's 20240101 as `2.0240101e+07`.
            (
                "image: {{ .Values.image.date }}",
                Err("the number 20240101 prints differently in Go"),
            ),
            ("image: {{ .Values.image.small }}", Ok("image: 999999")),
            (
                "{{- if .Values.image.digest }}",
                Err("a block is not closed on its line"),
            ),
            ("image: {{ .Values.image }}", Err("a collection is printed")),
            (
                "image: {{ $t := .Values.image.tag | default .Chart.AppVersion }}{{ $r := .Values.image.repository }}{{ if .Values.image.digest }}{{ $t = \"d\" }}{{ end }}{{ printf \"%s:%s\" $r $t }}",
                Ok("image: ghcr.io/acme/app:d"),
            ),
            (
                "{{ if .Values.missing }}{{ $in := 1 }}{{ end }}{{ $in }}",
                Err("the variable `$in` is not declared"),
            ),
            // A branch not taken is not evaluated.
            (
                "a{{ if .Values.missing }}{{ $undeclared }}{{ end }}",
                Ok("a"),
            ),
            ("image: {{ $x }}", Err("the variable `$x` is not declared")),
            (
                "{{ $r := default .Values.image.registry ((.Values.global).imageRegistry) }}{{ $d := dict \"root\" .Values.image \"n\" \"x\" }}{{ printf \"%s/%s@%s\" ($r | default \"docker.io\") $d.root.repository (ternary \"y\" \"n\" (hasKey $d \"n\")) }}",
                Ok("docker.io/ghcr.io/acme/app@y"),
            ),
            (
                "{{ $l := list }}{{ range $i, $v := list \"a\" \"b\" \"a\" }}{{ $l = append $l $v }}[{{ $i }}{{ . }}]{{ end }}{{ range $l | uniq }}{{ . }}{{ end }}",
                Ok("[0a][1b][2a]ab"),
            ),
            (
                "{{ range .Values.none }}x{{ else }}empty{{ end }}{{ range $k, $v := .Values.image }}{{ if kindIs \"string\" $v }}{{ $k }},{{ end }}{{ end }}",
                Ok("emptydigest,repository,tag,"),
            ),
            (
                "{{ range .Values.image.repository }}{{ end }}",
                Err("`range` over a value that is not a list or a map"),
            ),
            (
                "{{ (.Values.image).n.x }}",
                Err("`.n.x` reads a field of a scalar"),
            ),
            (
                "{{ $x = 1 }}",
                Err("the variable `$x` is assigned before it is declared"),
            ),
            // `tpl` of a text without actions renders the text; with actions it is refused.
            (
                "image: {{ tpl .Values.image.repository . }}:{{ tpl (.Values.image.tag | default .Chart.AppVersion) $ }}",
                Ok("image: ghcr.io/acme/app:1.8.2"),
            ),
            (
                "image: {{ tpl .Values.templated . }}",
                Err("`tpl` of a text with actions is not supported"),
            ),
            (
                "image: {{ tpl .Values.image . }}",
                Err("`tpl` of a value that is not a string"),
            ),
            (
                "{{ if typeIs \"string\" .Values.image.tag }}s{{ end }}{{ if typeIs \"map[string]interface {}\" .Values.global }}m{{ end }}{{ if kindIs \"string\" .Values.image.n }}x{{ end }}",
                Ok("sm"),
            ),
            (
                "{{ typeIs \"float64\" .Values.image.n }}",
                Err("`typeIs` of a number"),
            ),
            (
                "{{ if contains \"acme\" .Values.image.repository }}c{{ end }}{{ if hasPrefix \"ghcr.io/\" .Values.image.repository }}p{{ end }}{{ if hasSuffix \"/app\" .Values.image.repository }}s{{ end }}{{ if hasPrefix \"app\" .Values.image.repository }}x{{ end }}:{{ replace \"ghcr.io\" \"docker.io\" .Values.image.repository }}",
                Ok("cps:docker.io/acme/app"),
            ),
            (
                "image: {{ join \":\" (list (required \"a repository\" .Values.image.repository) .Chart.AppVersion) }}",
                Ok("image: ghcr.io/acme/app:1.8.2"),
            ),
            (
                "image: {{ required \"image.tag is required\" .Values.image.tag }}",
                Err("`required` fails: image.tag is required"),
            ),
            (
                "{{ join \",\" .Values.image.repository }}",
                Err("`join` of a value that is not a list"),
            ),
            // `tuple` is `list`; `index` takes a list's item or a map's value (nil if missing).
            (
                "image: {{ with index (tuple .Values.image .Chart.AppVersion) 0 }}{{ .repository }}:{{ index $.Values.image \"tag\" | default (index (tuple 1 $.Chart.AppVersion) 1) }}{{ end }}{{ index .Values.image \"missing\" }}",
                Ok("image: ghcr.io/acme/app:1.8.2"),
            ),
            (
                "{{ index (tuple 1) 1 }}",
                Err("`index` 1 is out of the list's range"),
            ),
            (
                "{{ index .Values.image.repository 0 }}",
                Err("`index` of a value that is not a list or a map, or by a key of another kind"),
            ),
            // flux2's image helper: a digest in the tag, told by its first seven bytes.
            (
                "image: {{ if eq (substr 0 7 .Values.image.digest) \"sha256:\" }}@{{ else }}:{{ end }}{{ substr 0 99 .Chart.AppVersion }}{{ substr -1 3 .Chart.AppVersion }}{{ substr 2 3 .Chart.AppVersion }}",
                Ok("image: @1.8.21.88"),
            ),
            (
                "{{ substr 3 2 .Chart.AppVersion }}",
                Err("`substr` cuts inside a character or past the text"),
            ),
            (
                "{{ substr 9 99 .Chart.AppVersion }}",
                Err("`substr` cuts inside a character or past the text"),
            ),
            (
                "{{ substr 0 1 \"é\" }}",
                Err("`substr` cuts inside a character or past the text"),
            ),
            (
                "{{ trunc 3 .Chart.AppVersion }}|{{ trunc -3 .Chart.AppVersion }}|{{ trunc 9 .Chart.AppVersion }}|{{ trunc -9 .Chart.AppVersion }}",
                Ok("1.8|8.2|1.8.2|1.8.2"),
            ),
            (
                "{{ trunc .Chart.AppVersion 3 }}",
                Err("`trunc` with a count that is not an integer"),
            ),
            (
                "env:{{ printf \"a: 1\\nb: %s\" .Chart.Name | nindent 2 }}\n{{ .Chart.Name | indent 4 }}",
                Ok("env:\n  a: 1\n  b: app\n    app"),
            ),
            (
                "{{ indent -1 .Chart.Name }}",
                Err("`indent` by a negative count"),
            ),
            // grafana's and argo-rollouts' version labels: the digest cut off the tag.
            (
                "version: {{ mustRegexReplaceAllLiteral \"@sha.*\" \"1.2@sha256:ab\" \"\" }}|{{ regexReplaceAll \"@sha256:[a-f0-9]+\" \"1.2@sha256:ab\" \"\" }}|{{ regexMatch \"^v[0-9]\" .Chart.AppVersion }}|{{ regexReplaceAllLiteral \"[.]\" .Chart.AppVersion \"$1\" }}",
                Ok("version: 1.2|1.2|false|1$18$12"),
            ),
            (
                "{{ regexReplaceAll \"(a)\" \"a\" \"$1\" }}",
                Err("`regexReplaceAll` with a replacement that names groups"),
            ),
            (
                "{{ regexMatch \"(\" \"a\" }}",
                Err("`regexMatch` of an expression this reading does not take"),
            ),
            (
                "{{ $found := false }}{{ if not $found }}{{ true }}{{ end }}",
                Ok("true"),
            ),
            (
                "{{ has \"b\" (list \"a\" \"b\") }}{{ has \"c\" (list \"a\") }}{{ has \"a\" .Values.missing }}",
                Ok("truefalsefalse"),
            ),
            ("{{ has 1 (list 1) }}", Err("`has` of numbers")),
            // ingress-nginx's check of its tag; a tag Helm cannot read fails its rendering.
            (
                "{{ if not (semverCompare \">=0.27.0-0\" .Chart.AppVersion) }}{{ fail \"too old\" }}{{ end }}ok",
                Ok("ok"),
            ),
            (
                "{{ if semverCompare \">=1\" .Values.image.repository }}x{{ end }}",
                Err("`semverCompare` of `ghcr.io/acme/app` against `>=1`, which Helm may not read"),
            ),
            ("{{ fail \"no\" }}", Err("`fail`: no")),
            // `toYaml` (see `to_yaml`), as resources are printed.
            (
                "resources:{{ toYaml .Values.image.resources | nindent 2 }}",
                Ok("resources:\n  cpu: 100m\n  memory: 1Gi"),
            ),
            // The pull secrets helper of prometheus-community's charts.
            (
                "{{ range (concat (list \"a\") (list) (list \"b\" \"c\")) }}{{ . }}{{ end }}",
                Ok("abc"),
            ),
            (
                "{{ concat (list) .Values.missing }}",
                Err("`concat` of a value that is not a list"),
            ),
        ] {
            assert_eq!(
                line(template, &root).as_deref(),
                expected.map_err(str::to_owned).as_deref(),
                "{template}"
            );
        }
    }

    #[test]
    fn trim_markers_remove_the_spaces_beside_them() {
        assert_eq!(
            pieces("a  {{- .x -}}  b").unwrap(),
            [Piece::Text("a"), Piece::Action(".x"), Piece::Text("b")]
        );
        assert_eq!(pieces("a {{ .x"), None);
    }
}
