//! Fetching Bearer tokens from a token realm (the distribution token protocol).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use reqwest::{Method, Url};
use serde_json::Value;

use crate::credentials::Credential;
use crate::endpoint::{Endpoint, is_loopback};
use crate::error::redact;
use crate::http::{Http, Request};
use crate::stats::Recorder;
use crate::{ResolveError, Secret};

/// How long a token lives when the response does not say (the token spec's default).
const DEFAULT_EXPIRY: Duration = Duration::from_secs(60);

/// The `OAuth2` client id sent with an identity token.
const CLIENT_ID: &str = "tagpin";

pub(crate) struct TokenRequest<'a> {
    pub realm: &'a Url,
    pub service: Option<&'a str>,
    pub scope: &'a str,
}

pub(crate) struct Token {
    value: Secret,
    /// When to stop using it: a tenth of its life before it expires.
    refresh_at: Instant,
    fetched_at: Instant,
}

impl Token {
    pub fn header(&self) -> HeaderValue {
        let mut header = HeaderValue::from_str(&format!("Bearer {}", self.value.expose()))
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
        header.set_sensitive(true);
        header
    }

    pub fn is_fresh(&self) -> bool {
        Instant::now() < self.refresh_at
    }

    pub fn fetched_at(&self) -> Instant {
        self.fetched_at
    }
}

pub(crate) fn basic_header(username: &str, password: &str) -> HeaderValue {
    let encoded = STANDARD.encode(format!("{username}:{password}"));
    let mut header =
        HeaderValue::from_str(&format!("Basic {encoded}")).expect("base64 is a valid header value");
    header.set_sensitive(true);
    header
}

/// Gets a token: `GET realm?service=…&scope=…` (with Basic credentials when there are any), or
/// for an identity token the `OAuth2` `POST realm` with `grant_type=refresh_token`.
pub(crate) async fn fetch(
    http: &Http,
    stats: &Recorder,
    endpoint: &Endpoint,
    request: &TokenRequest<'_>,
    login: Option<&Credential>,
) -> Result<Token, ResolveError> {
    let login = login.filter(|_| {
        let allowed = may_send_login(request.realm, endpoint);
        if !allowed {
            tracing::warn!(
                realm = %redact(request.realm),
                registry = endpoint.host,
                "not sending credentials to a token realm on another host over plain HTTP; asking anonymously"
            );
        }
        allowed
    });
    let mut url = request.realm.clone();
    let mut headers = HeaderMap::new();
    let mut form = None;
    match login {
        Some(Credential::IdentityToken { token }) => {
            let mut body = url::form_urlencoded::Serializer::new(String::new());
            body.append_pair("grant_type", "refresh_token")
                .append_pair("client_id", CLIENT_ID)
                .append_pair("scope", request.scope)
                .append_pair("refresh_token", token.expose());
            if let Some(service) = request.service {
                body.append_pair("service", service);
            }
            form = Some(body.finish());
        }
        login => {
            {
                let mut query = url.query_pairs_mut();
                if let Some(service) = request.service {
                    query.append_pair("service", service);
                }
                query.append_pair("scope", request.scope);
            }
            if let Some(Credential::Basic { username, password }) = login {
                headers.insert(AUTHORIZATION, basic_header(username, password.expose()));
            }
        }
    }
    let method = if form.is_some() {
        Method::POST
    } else {
        Method::GET
    };
    let host = url.host_str().unwrap_or(&endpoint.host).to_owned();
    let reply = http
        .send(
            stats,
            &Request {
                method,
                url: &url,
                host: &host,
                headers,
                form,
            },
        )
        .await?;
    let url = redact(&url);
    match reply.status.as_u16() {
        200..=299 => {}
        401 | 403 => {
            return Err(ResolveError::Unauthorized {
                url,
                status: reply.status.as_u16(),
            });
        }
        429 => {
            return Err(ResolveError::RateLimited {
                url,
                attempts: reply.attempts,
                retry_after: crate::retry::retry_after(&reply.headers),
            });
        }
        other => {
            return Err(ResolveError::Status {
                url,
                status: other,
                attempts: reply.attempts,
            });
        }
    }
    if reply.too_large {
        return Err(ResolveError::BadToken { url, source: None });
    }
    let body: Value =
        serde_json::from_slice(&reply.body).map_err(|source| ResolveError::BadToken {
            url: url.clone(),
            source: Some(source),
        })?;
    let value = ["token", "access_token"]
        .iter()
        .find_map(|name| {
            body.get(name)
                .and_then(Value::as_str)
                .filter(|value| !value.is_empty())
        })
        .ok_or_else(|| ResolveError::BadToken {
            url: url.clone(),
            source: None,
        })?;
    let lifetime = lifetime(&body, SystemTime::now());
    stats.token_fetched();
    tracing::debug!(%url, scope = request.scope, ?lifetime, "fetched token");
    let now = Instant::now();
    Ok(Token {
        value: Secret::new(value),
        refresh_at: now + lifetime.mul_f64(0.9),
        fetched_at: now,
    })
}

/// Whether the registry's credentials may go to `realm`. Over HTTPS, yes, wherever it is (Docker
/// Hub's realm is `auth.docker.io`). Over plain HTTP only where the registry itself is spoken to
/// over plain HTTP (loopback or `insecure_registries`) and the realm is that same host, or both
/// are on this machine; never to some other host in clear text because a challenge said so.
fn may_send_login(realm: &Url, endpoint: &Endpoint) -> bool {
    if realm.scheme() == "https" {
        return true;
    }
    let Some(host) = realm.host_str() else {
        return false;
    };
    let authority = match realm.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    endpoint.scheme == "http"
        && (authority == endpoint.host || (is_loopback(&authority) && is_loopback(&endpoint.host)))
}

/// How long a token stays valid from now: `expires_in` (default 60 s) counted from `issued_at`
/// (RFC 3339) when the response has one, else from now. An `issued_at` in the future, or so far
/// back that a token just handed out would already have expired, can only be clock skew between
/// us and the token server: then the lifetime counts from now.
fn lifetime(body: &Value, now: SystemTime) -> Duration {
    let expires_in = body
        .get("expires_in")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_EXPIRY, Duration::from_secs);
    let issued_at = body
        .get("issued_at")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339);
    issued_at
        .and_then(|issued_at| now.duration_since(issued_at).ok())
        .and_then(|age| expires_in.checked_sub(age))
        .filter(|left| !left.is_zero())
        .unwrap_or(expires_in)
}

/// Parses an RFC 3339 timestamp (`2024-01-02T03:04:05.678Z`, `…+01:00`), to the second.
fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let bytes = text.as_bytes();
    let number = |start: usize, len: usize| decimal(bytes.get(start..start + len)?);
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if separators.iter().any(|&(at, c)| bytes.get(at) != Some(&c))
        || !matches!(bytes.get(10), Some(b'T' | b't' | b' '))
    {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // Leap seconds (60) are folded into the next second.
    if second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &fraction[digits..];
    }
    let offset = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = decimal(&[*h1, *h2])?;
            let minutes = decimal(&[*m1, *m2])?;
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).ok()?))
}

/// An unsigned decimal number, digits only.
fn decimal(digits: &[u8]) -> Option<i64> {
    digits
        .iter()
        .all(u8::is_ascii_digit)
        .then(|| digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use serde_json::json;

    use tagpin_reference::TagKey;

    use super::{lifetime, may_send_login, parse_rfc3339};
    use crate::endpoint::Endpoint;

    fn at(text: &str) -> SystemTime {
        parse_rfc3339(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn parses_rfc3339() {
        let http = |text| httpdate::parse_http_date(text).unwrap();
        assert_eq!(
            at("2015-10-21T07:28:00Z"),
            http("Wed, 21 Oct 2015 07:28:00 GMT")
        );
        assert_eq!(
            at("2015-10-21T09:28:00.123456789+02:00"),
            http("Wed, 21 Oct 2015 07:28:00 GMT")
        );
        assert_eq!(
            at("2024-02-29T23:30:00-01:00"),
            http("Fri, 01 Mar 2024 00:30:00 GMT")
        );
        assert_eq!(at("1970-01-01t00:00:00z"), SystemTime::UNIX_EPOCH);
        for bad in [
            "",
            "2015-10-21",
            "2015-10-21T07:28:00",
            "2015-13-21T07:28:00Z",
            "2015-10-21T07:28:00.Z",
            "2015-10-21T07:28:00+0200",
            "+015-10-21T07:28:00Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn lifetime_counts_from_issued_at() {
        let now = at("2024-01-01T00:01:40Z");
        let cases = [
            (json!({"expires_in": 300}), 300),
            (json!({}), 60),
            (
                json!({"expires_in": 300, "issued_at": "2024-01-01T00:00:00Z"}),
                200,
            ),
            (json!({"issued_at": "2024-01-01T00:01:00Z"}), 20),
            // Clock skew: issued "in the future", or "expired" on arrival.
            (
                json!({"expires_in": 300, "issued_at": "2024-01-01T00:05:00Z"}),
                300,
            ),
            (
                json!({"expires_in": 60, "issued_at": "2023-12-31T00:00:00Z"}),
                60,
            ),
            (json!({"expires_in": 300, "issued_at": "yesterday"}), 300),
        ];
        for (body, seconds) in cases {
            assert_eq!(lifetime(&body, now), Duration::from_secs(seconds), "{body}");
        }
    }

    #[test]
    fn credentials_go_to_plain_http_realms_only_on_the_same_host() {
        let insecure = vec!["registry.lan:5000".to_owned()];
        let endpoint = |registry: &str| {
            Endpoint::for_key(&TagKey::new(registry, "org/img", "v1"), &[], &insecure)
        };
        let cases = [
            ("docker.io", "https://auth.docker.io/token", true),
            ("registry.lan:5000", "https://auth.example/token", true),
            ("registry.lan:5000", "http://registry.lan:5000/token", true),
            ("127.0.0.1:5000", "http://127.0.0.1:5000/token", true),
            ("127.0.0.1:5000", "http://localhost:6000/token", true),
            ("[::1]:5000", "http://127.0.0.1:6000/token", true),
            ("registry.lan:5000", "http://registry.lan:5001/token", false),
            ("registry.lan:5000", "http://auth.example/token", false),
            ("registry.lan:5000", "http://127.0.0.1:6000/token", false),
            ("127.0.0.1:5000", "http://auth.example/token", false),
            ("quay.io", "http://quay.io/token", false),
            ("ghcr.io", "http://127.0.0.1/token", false),
        ];
        for (registry, realm, expected) in cases {
            let realm = realm.parse().unwrap();
            assert_eq!(
                may_send_login(&realm, &endpoint(registry)),
                expected,
                "{registry} -> {realm}"
            );
        }
    }
}
