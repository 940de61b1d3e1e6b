use reqwest::Url;
use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

/// How a registry asks to be authenticated (`WWW-Authenticate` on a 401).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// Get a token from `realm` for `service` and a scope, then send `Bearer <token>`.
    Bearer { realm: Url, service: Option<String> },
    /// Send `Basic base64(user:password)`.
    Basic,
}

/// Every challenge in `headers`, Bearer ones first, then Basic, each in the order offered. A
/// `WWW-Authenticate` header may hold several challenges (`Negotiate, Bearer realm="…"`), and
/// there may be several headers; schemes tagpin does not speak are left out.
pub(crate) fn from_headers(headers: &HeaderMap) -> Vec<Challenge> {
    let mut challenges: Vec<Challenge> = Vec::new();
    for value in headers.get_all(WWW_AUTHENTICATE) {
        let Ok(value) = value.to_str() else { continue };
        for text in split_challenges(value) {
            if let Some(challenge) = parse(&text)
                && !challenges.contains(&challenge)
            {
                challenges.push(challenge);
            }
        }
    }
    challenges.sort_by_key(|challenge| match challenge {
        Challenge::Bearer { .. } => 0,
        Challenge::Basic => 1,
    });
    challenges
}

/// Splits a header value into its challenges: a challenge starts at each comma-separated item
/// that begins with a scheme (a token followed by a space, or alone), not with `name=`.
fn split_challenges(value: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut item = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in value.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items.push(item);
    let mut challenges: Vec<String> = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let head = item.split([' ', '=']).next().unwrap_or("");
        let starts_scheme = item
            .get(head.len()..)
            .is_none_or(|rest| rest.is_empty() || rest.starts_with(' '));
        match challenges.last_mut() {
            Some(last) if !starts_scheme => {
                last.push_str(", ");
                last.push_str(item);
            }
            _ => challenges.push(item.to_owned()),
        }
    }
    challenges
}

/// Parses one challenge: a scheme, then `key="value"` or `key=token` pairs separated by commas.
fn parse(text: &str) -> Option<Challenge> {
    let text = text.trim();
    let (scheme, rest) = text.split_once(' ').unwrap_or((text, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let params = parameters(rest);
    let find = |name: &str| {
        params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    };
    let realm = Url::parse(&find("realm")?).ok()?;
    Some(Challenge::Bearer {
        realm,
        service: find("service"),
    })
}

fn parameters(mut rest: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some((key, after)) = rest.split_once('=') else {
            return params;
        };
        let key = key.trim().to_owned();
        let after = after.trim_start();
        let value;
        if let Some(quoted) = after.strip_prefix('"') {
            let mut text = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((index, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            text.push(escaped);
                        }
                    }
                    '"' => {
                        end = index + 1;
                        break;
                    }
                    c => text.push(c),
                }
            }
            value = text;
            rest = &quoted[end..];
        } else {
            let end = after.find(',').unwrap_or(after.len());
            value = after[..end].trim().to_owned();
            rest = &after[end..];
        }
        params.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderMap, HeaderValue, WWW_AUTHENTICATE};

    use super::{Challenge, from_headers, parse};

    fn headers(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(WWW_AUTHENTICATE, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn parses_challenges() {
        let hub = parse(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull""#,
        );
        assert_eq!(
            hub,
            Some(Challenge::Bearer {
                realm: "https://auth.docker.io/token".parse().unwrap(),
                service: Some("registry.docker.io".to_owned()),
            })
        );
        let unquoted = parse("bearer realm=https://ghcr.io/token, service=ghcr.io");
        assert_eq!(
            unquoted,
            Some(Challenge::Bearer {
                realm: "https://ghcr.io/token".parse().unwrap(),
                service: Some("ghcr.io".to_owned()),
            })
        );
        let escaped = parse(r#"Bearer realm="http://127.0.0.1/t",service="a\"b""#);
        assert!(matches!(escaped, Some(Challenge::Bearer { service: Some(s), .. }) if s == "a\"b"));
        assert_eq!(
            parse(r#"Basic realm="Registry Realm""#),
            Some(Challenge::Basic)
        );
        assert_eq!(parse("Negotiate"), None);
        assert_eq!(parse(r#"Bearer service="x""#), None, "no realm");
    }

    #[test]
    fn lists_every_challenge_bearer_first() {
        let bearer = |realm: &str| Challenge::Bearer {
            realm: realm.parse().unwrap(),
            service: Some("s".to_owned()),
        };
        let cases: [(&[&'static str], Vec<Challenge>); 5] = [
            (
                &[
                    "Basic realm=\"r\"",
                    "Bearer realm=\"http://127.0.0.1/t\",service=\"s\"",
                ],
                vec![bearer("http://127.0.0.1/t"), Challenge::Basic],
            ),
            (
                &[
                    "Negotiate, Bearer realm=\"http://127.0.0.1/t\", service=s, Basic realm=\"a, b\"",
                ],
                vec![bearer("http://127.0.0.1/t"), Challenge::Basic],
            ),
            (
                &[
                    "Bearer realm=\"http://127.0.0.1/a\",service=\"s\", Bearer realm=\"http://127.0.0.1/b\",service=\"s\"",
                ],
                vec![bearer("http://127.0.0.1/a"), bearer("http://127.0.0.1/b")],
            ),
            (&["Negotiate", "NTLM"], vec![]),
            (&["Basic", "Basic realm=x"], vec![Challenge::Basic]),
        ];
        for (values, expected) in cases {
            assert_eq!(from_headers(&headers(values)), expected, "{values:?}");
        }
    }
}
