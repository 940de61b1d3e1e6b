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

/// The challenge in `headers`, preferring Bearer when several are offered.
pub(crate) fn from_headers(headers: &HeaderMap) -> Option<Challenge> {
    let challenges: Vec<Challenge> = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(parse)
        .collect();
    challenges
        .iter()
        .find(|challenge| matches!(challenge, Challenge::Bearer { .. }))
        .or(challenges.first())
        .cloned()
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
    fn prefers_bearer() {
        let mut headers = HeaderMap::new();
        headers.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"r\""),
        );
        headers.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"http://127.0.0.1/token\""),
        );
        assert!(matches!(
            from_headers(&headers),
            Some(Challenge::Bearer { .. })
        ));
    }
}
