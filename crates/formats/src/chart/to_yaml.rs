//! Helm's `toYaml`, for the values whose spelling the static reading knows for certain: what
//! Helm's YAML library (go-yaml v2 under `sigs.k8s.io/yaml`) writes for maps, lists, null,
//! booleans, integers below a million and strings it writes plain. Whatever depends on more of
//! that library's rules is refused: floats, larger numbers (an older Helm holds every number
//! as a float64 and writes a million as `1e+06`), strings it would quote, fold or take for a
//! timestamp, keys it would quote. Pod helpers print `resources` and security contexts this
//! way, and a helper that is evaluated whole is refused if any of its lines is.
//!
//! ```text
//! {"b": [1, {"c": true}], "a": {}}   →   a: {}
//!                                         b:
//!                                         - 1
//!                                         - c: true
//! ```

use std::cmp::Ordering;

use serde_json::{Map, Value};

/// `value` as `toYaml` prints it (its final line break trimmed, as Helm trims it), or why not.
pub(super) fn to_yaml(value: &Value) -> Result<String, String> {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(&mut out, map, 0)?,
        Value::Array(items) if !items.is_empty() => sequence(&mut out, items, 0)?,
        _ => out.push_str(&inline(value)?),
    }
    if out.ends_with('\n') {
        out.pop();
    }
    Ok(out)
}

/// A value written on its key's or dash's line: a scalar, or an empty collection.
fn inline(value: &Value) -> Result<String, String> {
    Ok(match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(n) if n.abs() < 1_000_000 => n.to_string(),
            _ => return Err(format!("`toYaml` of the number {n}")),
        },
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        Value::String(s) if is_plain(s) => s.clone(),
        Value::String(_) => return Err("`toYaml` of a string Helm would quote".to_owned()),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Array(items) if items.is_empty() => "[]".to_owned(),
        Value::Object(_) | Value::Array(_) => unreachable!("inline is asked of scalars only"),
    })
}

fn is_collection(value: &Value) -> bool {
    match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => false,
    }
}

/// The entries of `map` at `indent`, by the library's order of keys.
fn mapping(out: &mut String, map: &Map<String, Value>, indent: usize) -> Result<(), String> {
    let mut keys: Vec<&String> = map.keys().collect();
    if let Some(key) = keys.iter().find(|key| !is_plain(key) || long_digits(key)) {
        return Err(format!(
            "`toYaml` of the key `{key}`, which Helm would quote or sort otherwise"
        ));
    }
    keys.sort_by(|a, b| key_order(a, b));
    for (i, key) in keys.into_iter().enumerate() {
        // The first key of a map that is a list's item goes on the dash's line.
        if i > 0 || out.is_empty() || out.ends_with('\n') {
            push_indent(out, indent);
        }
        out.push_str(key);
        out.push(':');
        let value = &map[key.as_str()];
        match value {
            // Helm's values drop a key whose value is null: it is not printed.
            Value::Null => return Err(format!("`toYaml` of `{key}: null`, which Helm drops")),
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                mapping(out, inner, indent + 2)?;
            }
            // A list in a map is not indented further.
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                sequence(out, items, indent)?;
            }
            _ => {
                out.push(' ');
                out.push_str(&inline(value)?);
                out.push('\n');
            }
        }
    }
    Ok(())
}

/// The items of `items` at `indent`, each after a dash.
fn sequence(out: &mut String, items: &[Value], indent: usize) -> Result<(), String> {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || out.is_empty() || out.ends_with('\n') {
            push_indent(out, indent);
        }
        out.push_str("- ");
        match item {
            Value::Object(map) if is_collection(item) => mapping(out, map, indent + 2)?,
            Value::Array(inner) if is_collection(item) => sequence(out, inner, indent + 2)?,
            _ => {
                out.push_str(&inline(item)?);
                out.push('\n');
            }
        }
    }
    Ok(())
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Whether the library writes `s` plain, for certain: letters, digits and `._/-`, not starting
/// with `-` or `.`, read back as the same string (not a number, boolean or null, YAML 1.1's
/// included), and no date (`2024-01-01`, which it quotes).
fn is_plain(s: &str) -> bool {
    let bytes = s.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    bytes
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'))
        && !matches!(first, b'-' | b'.')
        && !(first.is_ascii_digit() && s.contains('-'))
        && matches!(super::values_json::plain(s), Value::String(read) if read == s)
}

/// Whether `key` holds a run of digits too long for the library's order to compare as a
/// number here.
fn long_digits(key: &str) -> bool {
    key.as_bytes()
        .split(|b| !b.is_ascii_digit())
        .any(|run| run.len() > 15)
}

/// The library's order of keys: by character, a letter after anything else, and runs of
/// digits by their numbers (`a9` before `a10`).
fn key_order(a: &str, b: &str) -> Ordering {
    if less(a.as_bytes(), b.as_bytes()) {
        Ordering::Less
    } else if less(b.as_bytes(), a.as_bytes()) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn less(a: &[u8], b: &[u8]) -> bool {
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (a_letter, b_letter) = (a[i].is_ascii_alphabetic(), b[i].is_ascii_alphabetic());
        if a_letter && b_letter {
            return a[i] < b[i];
        }
        if a_letter || b_letter {
            return b_letter;
        }
        // Both are digits or marks: compare the numbers the digits from here spell, a zero
        // inside a run of digits counting as a leading one would not.
        let inside_a_number = (a[i] == b'0' || b[i] == b'0')
            && a[..i]
                .iter()
                .rev()
                .take_while(|d| d.is_ascii_digit())
                .any(|&d| d != b'0');
        let number = |s: &[u8]| {
            let run = s[i..].iter().take_while(|d| d.is_ascii_digit()).count();
            let value = s[i..i + run]
                .iter()
                .fold(i64::from(inside_a_number), |n, d| {
                    n * 10 + i64::from(d - b'0')
                });
            (value, run)
        };
        let ((a_number, a_run), (b_number, b_run)) = (number(a), number(b));
        if a_number != b_number {
            return a_number < b_number;
        }
        if a_run != b_run {
            return a_run < b_run;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each expected text is what `helm template` printed for the same values (Helm 3, through
    /// helm-python-sdk).
    #[test]
    fn values_are_printed_as_helm_prints_them() {
        let values = json!({
            "a": 1, "b_c": 2, "B": 3, "a10": "x", "a-b": "z", "a9": true,
            "list": ["a", "b"],
            "maps": [{"k": "v", "z": 2, "nested": {"q": 1}}, {}],
            "nested": [["a", "b"], [], [{"m": 1}]],
            "empty": {}, "el": [], "t": true, "s": "",
            "mid": 999_999, "neg": -5, "str": "hello-World_1.2/x",
            "deep": {"a": {"b": {"c": [1, 2]}}},
        });
        assert_eq!(
            to_yaml(&values).unwrap(),
            "B: 3\na: 1\na-b: z\na9: true\na10: x\nb_c: 2\ndeep:\n  a:\n    b:\n      c:\n      - 1\n      - 2\n\
             el: []\nempty: {}\nlist:\n- a\n- b\nmaps:\n- k: v\n  nested:\n    q: 1\n  z: 2\n- {}\n\
             mid: 999999\nneg: -5\nnested:\n- - a\n  - b\n- []\n- - m: 1\ns: \"\"\n\
             str: hello-World_1.2/x\nt: true"
        );
        for (value, expected) in [
            (json!(["a", "b"]), "- a\n- b"),
            (json!("hello-World_1.2/x"), "hello-World_1.2/x"),
            (json!(null), "null"),
            (json!({}), "{}"),
            (json!([]), "[]"),
            (json!(""), "\"\""),
            (json!(true), "true"),
            (json!(5), "5"),
            (
                json!({"cpu": "100m", "memory": "128Mi"}),
                "cpu: 100m\nmemory: 128Mi",
            ),
        ] {
            assert_eq!(to_yaml(&value).as_deref(), Ok(expected), "{value}");
        }
    }

    #[test]
    fn what_helm_may_spell_otherwise_is_refused() {
        for value in [
            json!(1_000_000),
            json!(1.5),
            json!("2024-01-01"),
            json!("y"),
            json!("null"),
            json!("1e3"),
            json!("a b"),
            json!("a: b"),
            json!("-x"),
            json!(".x"),
            json!("é"),
            json!({"y": "z"}),
            json!({"a": {"dropped": null}}),
            json!({"1": "z"}),
            json!({"a b": 1}),
            json!({"a1234567890123456": 1}),
            json!([{"k": "two\nlines"}]),
            json!(super::super::values_json::UNTYPED),
        ] {
            assert!(to_yaml(&value).is_err(), "{value}");
        }
    }

    #[test]
    fn keys_are_ordered_as_the_library_orders_them() {
        // The order `helm template` printed these keys in.
        let helm = [
            "_x", "B", "Z", "a", "a-b", "a.b", "a_b", "a0", "a1b", "a01", "a9", "a10", "ab00c",
            "ab0c", "b", "x0", "x00", "x000", "x1", "x01", "x001", "x10",
        ];
        let mut keys = helm;
        keys.reverse();
        keys.sort_by(|a, b| key_order(a, b));
        assert_eq!(keys, helm);
    }
}

/// Random values (`tests/fixtures/to_yaml/values.yaml`, 400 cases) printed by `helm template` with
/// `{{ toYaml .Values.caseN }}` (`helm.txt`): every case this printer does not refuse is
/// printed as Helm printed it, read from the values file as the static reading reads it.
#[cfg(test)]
mod helm_differential {
    use std::collections::BTreeSet;
    use std::path::Path;

    #[test]
    fn every_printed_case_is_printed_as_helm_printed_it() {
        let values = include_str!("../../tests/fixtures/to_yaml/values.yaml");
        let helm = include_str!("../../tests/fixtures/to_yaml/helm.txt");
        let printed: Vec<&str> = helm.split("<<<case").skip(1).collect();
        assert_eq!(printed.len(), 400);
        let (mut same, mut refused) = (0, 0);
        for (i, block) in printed.iter().enumerate() {
            let (number, text) = block.split_once('\n').unwrap();
            assert_eq!(number, i.to_string());
            let key = format!("case{i}");
            let keys = BTreeSet::from([key.clone()]);
            let read =
                super::super::values_json(Path::new("values.yaml"), values, Some(&keys)).unwrap();
            match super::to_yaml(&read[&key]) {
                Ok(ours) => {
                    assert_eq!(ours, text.trim_end_matches('\n'), "case{i}");
                    same += 1;
                }
                Err(_) => refused += 1,
            }
        }
        // Not a test that passes by refusing everything.
        assert!(same >= 150, "{same} printed, {refused} refused");
    }
}
