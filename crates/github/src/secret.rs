//! The token type: it prints as `<redacted>` however it is formatted.

use std::fmt;

/// A GitHub token. `Debug` and `Display` print `<redacted>`; the only way to the text is
/// inside this crate, where it is handed to the HTTP client's auth header and nowhere else.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// Hands the token to the one place that needs it: the HTTP client's auth header.
    pub(crate) fn into_inner(self) -> String {
        self.0
    }
}

impl From<String> for Secret {
    fn from(token: String) -> Self {
        Self(token)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn never_prints_the_token() {
        let secret = Secret::new("ghp_canary");
        assert_eq!(format!("{secret}"), "<redacted>");
        assert_eq!(format!("{secret:?}"), "<redacted>");
        assert_eq!(format!("{secret:#?}"), "<redacted>");
    }
}
