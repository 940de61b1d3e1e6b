//! `${{ }}` expressions: the subset action.yml uses, evaluated as GitHub does (loose equality,
//! `&&`/`||` returning an operand, status functions).

use std::collections::BTreeMap;

/// What `steps.<id>` holds.
#[derive(Default)]
pub struct StepState {
    pub outputs: BTreeMap<String, String>,
    /// `success`, `failure` or `skipped`.
    pub outcome: &'static str,
}

/// The expression contexts of a run.
pub struct Contexts<'a> {
    /// Every declared input, given or defaulted.
    pub inputs: BTreeMap<String, String>,
    pub github: BTreeMap<&'static str, String>,
    pub runner: BTreeMap<&'static str, String>,
    /// The steps with an `id` that ran or were skipped so far.
    pub steps: BTreeMap<String, StepState>,
    /// Whether a step has failed (for `success()`).
    pub failed: bool,
    /// The inputs action.yml declares, `(name, default)`.
    pub declared: &'a [(String, Option<String>)],
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    Bool(bool),
    Str(String),
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Str(text) => !text.is_empty(),
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(flag) => flag.to_string(),
        Value::Str(text) => text.clone(),
    }
}

/// Whether a step with `if: condition` runs. Without a status function (`success()`,
/// `always()`…) the condition means `success() && (condition)`.
pub fn condition(condition: &str, contexts: &Contexts<'_>) -> bool {
    let (value, status_checked) = evaluate_status(strip(condition), contexts);
    truthy(&value) && (status_checked || !contexts.failed)
}

/// `if:` may be written with or without `${{ }}`.
fn strip(condition: &str) -> &str {
    let trimmed = condition.trim();
    trimmed
        .strip_prefix("${{")
        .and_then(|rest| rest.strip_suffix("}}"))
        .unwrap_or(trimmed)
}

/// Replaces every `${{ expression }}` in `text` by its value.
pub fn substitute(text: &str, contexts: &Contexts<'_>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after
            .find("}}")
            .unwrap_or_else(|| panic!("unterminated expression in {text:?}"));
        out.push_str(&display(&evaluate(&after[..end], contexts)));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Str(String),
    Ident(String),
    Op(&'static str),
}

fn tokens(expression: &str) -> Vec<Token> {
    let chars: Vec<char> = expression.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut text = String::new();
            i += 1;
            loop {
                assert!(i < chars.len(), "unterminated string in {expression:?}");
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        text.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                text.push(chars[i]);
                i += 1;
            }
            out.push(Token::Str(text));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | '-' | '.'))
            {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = ["==", "!=", "&&", "||"]
                .into_iter()
                .find(|op| *op == two)
                .or_else(|| ["!", "(", ")"].into_iter().find(|op| op.starts_with(c)))
                .unwrap_or_else(|| panic!("unsupported character {c:?} in {expression:?}"));
            i += op.len();
            out.push(Token::Op(op));
        }
    }
    out
}

fn evaluate(expression: &str, contexts: &Contexts<'_>) -> Value {
    evaluate_status(expression, contexts).0
}

/// The value, and whether the expression called a status function (`success()`, `always()`…).
fn evaluate_status(expression: &str, contexts: &Contexts<'_>) -> (Value, bool) {
    let tokens = tokens(expression);
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        contexts,
        status_checked: false,
    };
    let value = parser.or();
    assert!(
        parser.at == tokens.len(),
        "unparsed tail in {expression:?}: {:?}",
        &tokens[parser.at..]
    );
    (value, parser.status_checked)
}

struct Parser<'t, 'c> {
    tokens: &'t [Token],
    at: usize,
    contexts: &'c Contexts<'c>,
    status_checked: bool,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Token::Op(found)) if *found == op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Value {
        let mut left = self.and();
        while self.eat("||") {
            let right = self.and();
            if !truthy(&left) {
                left = right;
            }
        }
        left
    }

    fn and(&mut self) -> Value {
        let mut left = self.unary();
        while self.eat("&&") {
            let right = self.unary();
            if truthy(&left) {
                left = right;
            }
        }
        left
    }

    fn unary(&mut self) -> Value {
        if self.eat("!") {
            return Value::Bool(!truthy(&self.unary()));
        }
        let left = self.primary();
        if self.eat("==") {
            let right = self.primary();
            return Value::Bool(equal(&left, &right));
        }
        if self.eat("!=") {
            let right = self.primary();
            return Value::Bool(!equal(&left, &right));
        }
        left
    }

    fn primary(&mut self) -> Value {
        if self.eat("(") {
            let value = self.or();
            assert!(self.eat(")"), "missing ) in {:?}", self.tokens);
            return value;
        }
        let token = self.peek().cloned();
        self.at += 1;
        match token {
            Some(Token::Str(text)) => Value::Str(text),
            Some(Token::Ident(name)) if self.eat("(") => {
                assert!(
                    self.eat(")"),
                    "functions with arguments are not simulated: {name}"
                );
                self.status_checked = true;
                match name.as_str() {
                    "success" => Value::Bool(!self.contexts.failed),
                    "failure" => Value::Bool(self.contexts.failed),
                    "always" => Value::Bool(true),
                    "cancelled" => Value::Bool(false),
                    other => panic!("function {other}() is not simulated"),
                }
            }
            Some(Token::Ident(name)) => match name.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                path => self.lookup(path),
            },
            other => panic!("unexpected {other:?} in {:?}", self.tokens),
        }
    }

    fn lookup(&self, path: &str) -> Value {
        let parts: Vec<&str> = path.split('.').collect();
        let contexts = self.contexts;
        match parts.as_slice() {
            ["inputs", name] => {
                assert!(
                    contexts
                        .declared
                        .iter()
                        .any(|(declared, _)| declared == name),
                    "inputs.{name} is not declared"
                );
                contexts
                    .inputs
                    .get(*name)
                    .map_or(Value::Null, |value| Value::Str(value.clone()))
            }
            ["github", name] => Value::Str(
                contexts
                    .github
                    .get(name)
                    .unwrap_or_else(|| panic!("github.{name} is not simulated"))
                    .clone(),
            ),
            ["runner", name] => Value::Str(
                contexts
                    .runner
                    .get(name)
                    .unwrap_or_else(|| panic!("runner.{name} is not simulated"))
                    .clone(),
            ),
            ["steps", id, "outputs", name] => contexts
                .steps
                .get(*id)
                .and_then(|step| step.outputs.get(*name))
                .map_or(Value::Null, |value| Value::Str(value.clone())),
            ["steps", id, "outcome" | "conclusion"] => contexts
                .steps
                .get(*id)
                .map_or(Value::Null, |step| Value::Str(step.outcome.to_owned())),
            _ => panic!("{path} is not simulated"),
        }
    }
}

/// GitHub's loose equality for the types action.yml compares: strings case-insensitively,
/// null equal to the empty string.
fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Str(a), Value::Str(b)) => a.eq_ignore_ascii_case(b),
        (Value::Null, Value::Null) => true,
        (Value::Null, Value::Str(text)) | (Value::Str(text), Value::Null) => text.is_empty(),
        (Value::Bool(a), Value::Bool(b)) => a == b,
        other => panic!("comparing {other:?} is not simulated"),
    }
}

#[test]
fn expressions_evaluate_as_on_github() {
    let declared = [("dry-run".to_owned(), None), ("title".to_owned(), None)];
    let contexts = Contexts {
        inputs: BTreeMap::from([
            ("dry-run".to_owned(), "false".to_owned()),
            ("title".to_owned(), "it's ${{ x }}".to_owned()),
        ]),
        github: BTreeMap::from([("token", "t0ken".to_owned())]),
        runner: BTreeMap::from([("os", "Linux".to_owned())]),
        steps: BTreeMap::from([(
            "prepare".to_owned(),
            StepState {
                outputs: BTreeMap::from([("mode".to_owned(), "release".to_owned())]),
                outcome: "success",
            },
        )]),
        failed: false,
        declared: &declared,
    };
    for (text, expected) in [
        ("steps.prepare.outputs.mode == 'release'", true),
        ("steps.prepare.outputs.mode == 'RELEASE'", true),
        ("steps.prepare.outputs.mode == 'source'", false),
        ("${{ steps.prepare.outputs.mode != 'source' }}", true),
        // A missing output is null, which is not 'true' but equals ''.
        ("steps.cache.outputs.cache-hit != 'true'", true),
        ("steps.cache.outputs.cache-hit == ''", true),
        (
            "steps.prepare.outputs.mode == 'source' || steps.prepare.outputs.mode == 'release'",
            true,
        ),
        (
            "steps.prepare.outputs.mode == 'release' && steps.cache.outputs.cache-hit == 'true'",
            false,
        ),
        ("!(steps.prepare.outputs.mode == 'release')", false),
        ("inputs.dry-run == 'false' && runner.os == 'Linux'", true),
        ("steps.prepare.outcome == 'success'", true),
        ("always()", true),
    ] {
        assert_eq!(condition(text, &contexts), expected, "{text}");
    }
    // A condition without a status function does not run after a failure; always() does.
    let failed = Contexts {
        failed: true,
        ..contexts
    };
    assert!(!condition(
        "steps.prepare.outputs.mode == 'release'",
        &failed
    ));
    assert!(condition("always()", &failed));
    // Substitution: the value is inserted once, never evaluated again.
    assert_eq!(
        substitute(
            "[${{ inputs.title }}] ${{ github.token }}${{ steps.x.outputs.y }}",
            &failed
        ),
        "[it's ${{ x }}] t0ken"
    );
    assert_eq!(substitute("${{ 'it''s' }}", &failed), "it's");
}
