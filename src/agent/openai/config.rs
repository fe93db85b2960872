//! The settings of the OpenAI source: where, which model, the waits, the token field; read
//! from the environment by `frontier run`, each bounded and checked when read.

use std::time::Duration;

use super::DEFAULT_BASE_URL;
use crate::agent::retry::RetryPolicy;

/// How long the server may stay silent (before the head, or between two reads of the body)
/// when `OPENAI_READ_TIMEOUT` is not set: 300 s.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest read timeout accepted: one day.
pub const MAX_READ_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// How long to wait after the `finish_reason` for `[DONE]` or the close when
/// `OPENAI_FINISH_GRACE` is not set: 2 s.
pub const DEFAULT_FINISH_GRACE: Duration = Duration::from_secs(2);
/// The longest finish grace accepted: 60 s.
pub const MAX_FINISH_GRACE: Duration = Duration::from_secs(60);

/// Which request field carries the output limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenField {
    /// `max_tokens`: what OpenAI-compatible servers (vLLM, llama.cpp, Ollama, …) take.
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI's own API wants (its newer models refuse
    /// `max_tokens`).
    MaxCompletionTokens,
}

impl TokenField {
    /// The field's name in the request.
    pub fn name(self) -> &'static str {
        match self {
            TokenField::MaxTokens => "max_tokens",
            TokenField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// What the session is told when the server refused this field with `code`: the other
    /// is sent from now on.
    pub fn switch_notice(self, code: u16) -> String {
        format!(
            "the server refused `{}` (HTTP {code}); retrying with `{}`, kept for the rest of the \
             session (set OPENAI_TOKEN_FIELD to skip this)",
            self.name(),
            self.other().name()
        )
    }

    /// The field called `name`.
    pub fn from_name(name: &str) -> Option<TokenField> {
        match name {
            "max_tokens" => Some(TokenField::MaxTokens),
            "max_completion_tokens" => Some(TokenField::MaxCompletionTokens),
            _ => None,
        }
    }

    /// The default for `base_url`: `max_completion_tokens` for `api.openai.com`,
    /// `max_tokens` for every other server.
    pub fn default_for(base_url: &str) -> TokenField {
        let rest = base_url
            .split_once("://")
            .map_or(base_url, |(_, rest)| rest);
        let host = rest.split(['/', ':']).next().unwrap_or("");
        if host.eq_ignore_ascii_case("api.openai.com") {
            TokenField::MaxCompletionTokens
        } else {
            TokenField::MaxTokens
        }
    }

    /// The other field: what a refusal of this one is retried with.
    pub fn other(self) -> TokenField {
        match self {
            TokenField::MaxTokens => TokenField::MaxCompletionTokens,
            TokenField::MaxCompletionTokens => TokenField::MaxTokens,
        }
    }
}

/// Where and what to ask.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The API's base URL, up to and including `/v1` (`OPENAI_BASE_URL`).
    pub base_url: String,
    /// The bearer token (`OPENAI_API_KEY`); none for local servers that need none.
    pub api_key: Option<String>,
    /// The model's name (`OPENAI_MODEL`).
    pub model: String,
    /// How long the server may stay silent before the turn fails as disconnected
    /// (`OPENAI_READ_TIMEOUT`, seconds).
    pub read_timeout: Duration,
    /// How long to wait after the `finish_reason` for `[DONE]` or the close
    /// (`OPENAI_FINISH_GRACE`, seconds).
    pub finish_grace: Duration,
    /// The field of the output limit (`OPENAI_TOKEN_FIELD`).
    pub token_field: TokenField,
    /// Which error statuses are retried, how often, how long apart.
    pub retry: RetryPolicy,
}

impl OpenAiConfig {
    /// `model` at `base_url`, no key, the default timeouts and token field.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        let base_url = base_url.into();
        OpenAiConfig {
            token_field: TokenField::default_for(&base_url),
            base_url,
            api_key: None,
            model: model.into(),
            read_timeout: DEFAULT_READ_TIMEOUT,
            finish_grace: DEFAULT_FINISH_GRACE,
            retry: RetryPolicy::default(),
        }
    }

    /// Reads `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]), `OPENAI_API_KEY`,
    /// `OPENAI_MODEL` (required), `OPENAI_READ_TIMEOUT` (seconds, more than 0, at most
    /// 86400; default 300), `OPENAI_FINISH_GRACE` (seconds, 0 to 60; default 2) and
    /// `OPENAI_TOKEN_FIELD` (`max_tokens` or `max_completion_tokens`; default by host, see
    /// [`TokenField::default_for`]). An error names the variable at fault.
    pub fn from_env() -> Result<OpenAiConfig, String> {
        let base_url = env("OPENAI_BASE_URL")?.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let model = env("OPENAI_MODEL")?
            .ok_or_else(|| "OPENAI_MODEL is not set (the model to ask)".to_owned())?;
        let mut config = OpenAiConfig::new(base_url, model);
        config.api_key = env("OPENAI_API_KEY")?.filter(|k| !k.is_empty());
        if let Some(text) = env("OPENAI_READ_TIMEOUT")? {
            config.read_timeout = seconds(&text, false, MAX_READ_TIMEOUT)
                .map_err(|e| format!("OPENAI_READ_TIMEOUT={text:?}: {e}"))?;
        }
        if let Some(text) = env("OPENAI_FINISH_GRACE")? {
            config.finish_grace = seconds(&text, true, MAX_FINISH_GRACE)
                .map_err(|e| format!("OPENAI_FINISH_GRACE={text:?}: {e}"))?;
        }
        if let Some(text) = env("OPENAI_TOKEN_FIELD")? {
            config.token_field = TokenField::from_name(&text).ok_or_else(|| {
                format!("OPENAI_TOKEN_FIELD={text:?}: expected max_tokens or max_completion_tokens")
            })?;
        }
        Ok(config)
    }
}

fn env(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not UTF-8")),
    }
}

/// A number of seconds (decimals allowed), above 0 unless `zero` is allowed, at most `max`.
pub fn seconds(text: &str, zero: bool, max: Duration) -> Result<Duration, String> {
    let range = format!(
        "expected seconds, {} to {}",
        if zero { "0" } else { "more than 0" },
        max.as_secs()
    );
    let secs: f64 = text.trim().parse().map_err(|_| range.clone())?;
    if !secs.is_finite() || secs < 0.0 || (secs == 0.0 && !zero) || secs > max.as_secs_f64() {
        return Err(range);
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_token_field_depends_on_the_host() {
        for (url, field) in [
            ("https://api.openai.com/v1", TokenField::MaxCompletionTokens),
            (
                "https://API.openai.com:443/v1/",
                TokenField::MaxCompletionTokens,
            ),
            ("http://localhost:8000/v1", TokenField::MaxTokens),
            (
                "https://api.openai.com.example.org/v1",
                TokenField::MaxTokens,
            ),
            ("api.openai.com", TokenField::MaxCompletionTokens),
        ] {
            assert_eq!(TokenField::default_for(url), field, "{url}");
        }
    }

    #[test]
    fn seconds_are_bounded() {
        let max = Duration::from_secs(60);
        assert_eq!(seconds("0.25", false, max), Ok(Duration::from_millis(250)));
        assert_eq!(seconds("0", true, max), Ok(Duration::ZERO));
        assert_eq!(seconds(" 60 ", true, max), Ok(max));
        for bad in ["0", "-1", "61", "nan", "inf", "", "1e400", "2s"] {
            assert!(seconds(bad, false, max).is_err(), "{bad}");
        }
    }
}
