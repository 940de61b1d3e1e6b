//! Whether a chart's version satisfies a dependency's version constraint, as Helm reads one
//! (the Masterminds semver syntax of `Chart.yaml`'s `dependencies[].version`): alternatives
//! joined by `||`, each a list of comparisons (`>=1.2.0 <2`, `>=1.2.0, <2`), where a comparison
//! is `=`, `!=`, `>`, `>=`, `<`, `<=`, `~` (`~>`), `^`, a range `1.2 - 1.4.5`, or a bare
//! version whose missing or `x`/`*` parts are wildcards (`2.x.x`, `1.2`, `*`).
//!
//! ```
//! use tagpin_formats::chart::satisfies;
//!
//! assert!(satisfies("2.31.4", "2.x.x"));
//! assert!(satisfies("1.4.2", "^1.2.0"));
//! assert!(!satisfies("2.0.0", ">=1.2.0 <2.0.0"));
//! assert!(!satisfies("1.3.0-rc.1", "1.x"));
//! ```
//!
//! A version or constraint it cannot read is not satisfied: the caller then does not use the
//! chart.

use std::cmp::Ordering;

/// A version: its three numbers and its pre-release (empty for a release).
#[derive(Debug, PartialEq, Eq)]
struct Version<'a> {
    numbers: [u64; 3],
    pre: &'a str,
}

impl Version<'_> {
    fn compare(&self, other: &Self) -> Ordering {
        self.numbers.cmp(&other.numbers).then_with(|| {
            match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_pre(self.pre, other.pre),
            }
        })
    }
}

/// Semver's order of pre-releases: dot-separated parts, numbers below words.
fn compare_pre(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// A version as written in a constraint: the numbers given (a wildcard ends them).
#[derive(Debug)]
struct Partial<'a> {
    numbers: Vec<u64>,
    pre: &'a str,
}

impl<'a> Partial<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let text = text.trim().trim_start_matches(['v', 'V']);
        let text = text.split('+').next().unwrap_or_default();
        let (core, pre) = text.split_once('-').unwrap_or((text, ""));
        let mut numbers = Vec::new();
        for part in core.split('.') {
            if matches!(part, "x" | "X" | "*") {
                break;
            }
            numbers.push(part.parse().ok()?);
        }
        (numbers.len() <= 3 && !core.is_empty()).then_some(Self { numbers, pre })
    }

    /// The lowest version this stands for.
    fn floor(&self) -> Version<'a> {
        let mut numbers = [0; 3];
        numbers[..self.numbers.len()].copy_from_slice(&self.numbers);
        Version {
            numbers,
            pre: self.pre,
        }
    }

    /// The lowest version past everything this stands for, bumping the part at `index`
    /// (`None`: it stands for everything).
    fn ceiling(&self, index: usize) -> Option<Version<'static>> {
        if index >= self.numbers.len() {
            return None;
        }
        let mut numbers = [0; 3];
        numbers[..index].copy_from_slice(&self.numbers[..index]);
        numbers[index] = self.numbers[index] + 1;
        Some(Version { numbers, pre: "" })
    }
}

fn parse_version(text: &str) -> Option<Version<'_>> {
    let partial = Partial::parse(text)?;
    (partial.numbers.len() == 3).then(|| partial.floor())
}

/// Sprig's `semverCompare constraint version`, as Helm renders it: `None` where Helm fails (a
/// version or a constraint it cannot read: a tag with a digest, `latest`) and where this
/// reading is unsure of Helm's (leading zeros, a word it does not know in the constraint).
pub(crate) fn semver_compare(constraint: &str, version: &str) -> Option<bool> {
    let version = normalized_version(version)?;
    constraint_reads(constraint).then(|| satisfies(&version, constraint))
}

/// `version` with its missing parts as zeros (`v1.2` is `1.2.0`), as a lenient semver reading
/// takes it; `None` unless it is one, of at most three numbers.
fn normalized_version(text: &str) -> Option<String> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let (text, build) = text
        .split_once('+')
        .map_or((text, None), |(t, b)| (t, Some(b)));
    let (core, pre) = text
        .split_once('-')
        .map_or((text, None), |(c, p)| (c, Some(p)));
    let mut numbers: Vec<&str> = core.split('.').collect();
    let readable = numbers.len() <= 3
        && numbers.iter().all(|n| is_number(n))
        && pre.is_none_or(|pre| identifiers(pre, true))
        && build.is_none_or(|build| identifiers(build, false));
    if !readable {
        return None;
    }
    numbers.resize(3, "0");
    Some(match pre {
        Some(pre) => format!("{}-{pre}", numbers.join(".")),
        None => numbers.join("."),
    })
}

/// Digits, without a leading zero (`0` itself aside), few enough for a number.
fn is_number(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 18
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

/// Dot-separated identifiers of letters, digits and `-`; in a pre-release, a number has no
/// leading zero.
fn identifiers(text: &str, pre: bool) -> bool {
    text.split('.').all(|part| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !(pre
                && part.bytes().all(|b| b.is_ascii_digit())
                && part.len() > 1
                && part.starts_with('0'))
    })
}

/// Whether every comparison of `constraint` is one [`satisfies`] reads as Helm does.
fn constraint_reads(constraint: &str) -> bool {
    constraint.split("||").all(|alternative| {
        let words: Vec<&str> = alternative
            .split([' ', ',', '\t'])
            .filter(|w| !w.is_empty())
            .collect();
        !words.is_empty()
            && words.iter().enumerate().all(|(i, word)| {
                let range = *word == "-" && i > 0 && i + 1 < words.len();
                range || comparison_reads(word)
            })
    })
}

fn comparison_reads(word: &str) -> bool {
    let operator_end = word
        .find(|c: char| c.is_ascii_alphanumeric() || c == '*')
        .unwrap_or(word.len());
    let (operator, rest) = word.split_at(operator_end);
    matches!(
        operator,
        "" | "=" | "!=" | ">" | ">=" | "<" | "<=" | "~" | "~>" | "^"
    ) && !rest.is_empty()
        && Partial::parse(rest).is_some()
}

/// Whether `version` satisfies `constraint`.
pub fn satisfies(version: &str, constraint: &str) -> bool {
    let Some(version) = parse_version(version) else {
        return false;
    };
    constraint
        .split("||")
        .any(|alternative| satisfies_all(&version, alternative))
}

/// Whether `version` satisfies every comparison of one alternative.
fn satisfies_all(version: &Version<'_>, alternative: &str) -> bool {
    let words: Vec<&str> = alternative
        .split([' ', ',', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    // A pre-release is considered only by an alternative that names one.
    if !version.pre.is_empty() && !words.iter().any(|w| w.contains('-') && *w != "-") {
        return false;
    }
    if words.is_empty() {
        return true;
    }
    let mut i = 0;
    while i < words.len() {
        let satisfied = if words.get(i + 1) == Some(&"-") {
            let (Some(low), Some(high)) = (Partial::parse(words[i]), words.get(i + 2)) else {
                return false;
            };
            let Some(high) = Partial::parse(high) else {
                return false;
            };
            i += 3;
            version.compare(&low.floor()) != Ordering::Less && at_most(version, &high)
        } else {
            i += 1;
            compare_one(version, words[i - 1]).unwrap_or(false)
        };
        if !satisfied {
            return false;
        }
    }
    true
}

/// `version <= high`, where `high`'s missing parts are wildcards.
fn at_most(version: &Version<'_>, high: &Partial<'_>) -> bool {
    match high.ceiling(high.numbers.len().saturating_sub(1)) {
        _ if high.numbers.len() == 3 => version.compare(&high.floor()) != Ordering::Greater,
        Some(past) => version.compare(&past) == Ordering::Less,
        None => true,
    }
}

/// One comparison; `None` when it cannot be read.
fn compare_one(version: &Version<'_>, comparison: &str) -> Option<bool> {
    let operator_end = comparison
        .find(|c: char| c.is_ascii_alphanumeric() || c == '*')
        .unwrap_or(comparison.len());
    let (operator, rest) = comparison.split_at(operator_end);
    if rest.is_empty() {
        return None;
    }
    let target = Partial::parse(rest)?;
    let order = version.compare(&target.floor());
    let within = |past: Option<Version<'_>>| {
        order != Ordering::Less && past.is_none_or(|past| version.compare(&past) == Ordering::Less)
    };
    let wildcard_end = target.ceiling(target.numbers.len().saturating_sub(1));
    Some(match operator {
        "" | "=" => {
            within(wildcard_end.filter(|_| target.numbers.len() < 3))
                && (target.numbers.len() < 3 || order == Ordering::Equal)
        }
        "!=" => {
            !(within(wildcard_end.filter(|_| target.numbers.len() < 3))
                && (target.numbers.len() < 3 || order == Ordering::Equal))
        }
        ">" => match target.numbers.len() {
            3 => order == Ordering::Greater,
            _ => wildcard_end.is_none_or(|past| version.compare(&past) != Ordering::Less),
        },
        ">=" => order != Ordering::Less,
        "<" => order == Ordering::Less,
        "<=" => at_most(version, &target),
        // `~1` allows any 1.x; `~1.2` and `~1.2.3` any 1.2.x.
        "~" | "~>" => within(target.ceiling(usize::from(target.numbers.len() != 1))),
        "^" => {
            let first_nonzero = target
                .numbers
                .iter()
                .position(|n| *n != 0)
                .unwrap_or(target.numbers.len().saturating_sub(1));
            within(target.ceiling(first_nonzero))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::satisfies;

    #[test]
    fn constraints_read_as_helm_reads_them() {
        for (version, constraint, expected) in [
            ("2.31.4", "2.x.x", true),
            ("3.0.0", "2.x.x", false),
            ("2.31.4", "2.x", true),
            ("2.31.4", "*", true),
            ("2.31.4", "", true),
            ("1.2.3", "1.2.3", true),
            ("1.2.4", "1.2.3", false),
            ("1.2.4", "=1.2", true),
            ("1.2.4", "!=1.2.4", false),
            ("1.2.4", ">1.2.3", true),
            ("1.2.3", ">1.2.3", false),
            ("1.3.0", ">1.2", true),
            ("1.2.9", ">1.2", false),
            ("1.2.3", ">=1.2.3 <2.0.0", true),
            ("2.0.0", ">=1.2.3 <2.0.0", false),
            ("1.9.0", ">=1.2.3, <2.0.0", true),
            ("1.2.9", "<=1.2", true),
            ("1.3.0", "<=1.2", false),
            ("1.2.9", "~1.2.3", true),
            ("1.3.0", "~1.2.3", false),
            ("1.9.0", "~1", true),
            ("2.0.0", "~1", false),
            ("1.9.0", "^1.2.3", true),
            ("2.0.0", "^1.2.3", false),
            ("0.2.9", "^0.2.3", true),
            ("0.3.0", "^0.2.3", false),
            ("1.4.5", "1.2 - 1.4.5", true),
            ("1.4.6", "1.2 - 1.4.5", false),
            ("1.4.9", "1.2 - 1.4", true),
            ("1.1.9", "1.2 - 1.4", false),
            ("3.1.0", "^1.0 || ^3.0", true),
            ("2.1.0", "^1.0 || ^3.0", false),
            ("1.3.0-rc.1", "1.x", false),
            ("1.3.0-rc.1", ">=1.3.0-rc.0", true),
            ("1.3.0-rc.1", ">=1.3.0-rc.2", false),
            ("v1.2.3", "1.2.3", true),
            ("1.2", "1.x", false),
            ("1.2.3", "latest", false),
            ("1.2.3", ">=", false),
        ] {
            assert_eq!(
                satisfies(version, constraint),
                expected,
                "{version} against {constraint}"
            );
        }
    }

    #[test]
    fn semver_compare_reads_what_helm_reads_and_refuses_what_helm_fails_on() {
        use super::semver_compare;
        for (constraint, version, expected) in [
            (">=0.27.0-0", "v1.10.1", Some(true)),
            (">=1.4.0-0", "1.9.1", Some(true)),
            (">=1.4.0-0", "v1.3", Some(false)),
            ("<2", "1.2.3-rc.1", Some(false)),
            (">=1.2.0-0 <2", "1.2.3-rc.1", Some(true)),
            (">=1.19-0", "v1.20.0+k3s1", Some(true)),
            ("^1.2 || ^3", "3.1", Some(true)),
            // Helm fails on these: a digest in the tag, a word, a bad constraint.
            (">=1.4.0-0", "v1.9.1@sha256:ab", None),
            (">=1.4.0-0", "latest", None),
            (">=1.4.0-0", "", None),
            ("", "1.2.3", None),
            ("latest", "1.2.3", None),
            // Unsure of Helm's reading: left unread.
            (">=1", "01.2.3", None),
            (">=1", "1.2.3.4", None),
            (">=1", "1.2.3-01", None),
        ] {
            assert_eq!(
                semver_compare(constraint, version),
                expected,
                "{constraint} {version}"
            );
        }
    }
}
