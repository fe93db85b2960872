//! Which HTTP errors are retried, and after how long.
//!
//! What users of the OpenAI and Anthropic APIs expect (their SDKs do the same): a 429 (rate
//! limited) and the overload and gateway statuses (500, 502, 503, 504, 529) are retried with
//! exponential backoff, honouring the server's `retry-after` (seconds, or an HTTP date); every
//! other status (400, 401, 403, 404, 422, …) is the caller's mistake and is not retried. The
//! bounds: at most [`RetryPolicy::max_retries`] retries per request (default 3), each wait at
//! most [`RetryPolicy::max_wait`] (default 60 s); a `retry-after` longer than that ends the
//! request at once with the server's answer, rather than sleeping past any reasonable wait.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::model::ModelError;

/// The retry bounds of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; each retry doubles it.
    pub base: Duration,
    /// The longest wait, backoff or `retry-after`.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    /// 3 retries, 1 s doubling, at most 60 s a wait.
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// Whether a status is worth another attempt.
pub fn retryable(code: u16) -> bool {
    matches!(code, 429 | 500 | 502 | 503 | 504 | 529)
}

impl RetryPolicy {
    /// How long to wait before retry number `attempt` (0 for the first) after `code`, or none
    /// when the request is not to be retried: a status that is not [`retryable`], the retries
    /// spent, or a `retry-after` beyond [`RetryPolicy::max_wait`].
    pub fn wait(
        &self,
        code: u16,
        retry_after: Option<&str>,
        attempt: u32,
        now: SystemTime,
    ) -> Option<Duration> {
        if !retryable(code) || attempt >= self.max_retries {
            return None;
        }
        if let Some(asked) = retry_after.and_then(|text| parse_retry_after(text, now)) {
            return (asked <= self.max_wait).then_some(asked);
        }
        let backoff = self
            .base
            .saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX));
        Some(backoff.min(self.max_wait))
    }
}

impl RetryPolicy {
    /// After a refusal with `code`: sleeps until retry number `*attempt + 1` and counts it,
    /// telling `notices` (`HTTP 503; retry 1 of 3 in 1s`); or, when the request is not to be
    /// retried, the error to end it with ([`refusal`]).
    pub fn wait_or_refuse(
        &self,
        code: u16,
        body: &str,
        retry_after: Option<&str>,
        attempt: &mut u32,
        key_variable: &str,
        notices: &mut dyn FnMut(&str),
    ) -> Result<(), ModelError> {
        let Some(wait) = self.wait(code, retry_after, *attempt, SystemTime::now()) else {
            return Err(refusal(
                self,
                code,
                body,
                retry_after,
                *attempt,
                key_variable,
            ));
        };
        *attempt += 1;
        notices(&format!(
            "HTTP {code}; retry {attempt} of {} in {wait:?}",
            self.max_retries
        ));
        std::thread::sleep(wait);
        Ok(())
    }
}

/// The error of a request refused with `code` and `body` (after `retries` retries): the
/// status, what it means for the user (`key_variable` names the key to check on a 401 or
/// 403), and the server's answer.
pub fn refusal(
    policy: &RetryPolicy,
    code: u16,
    body: &str,
    retry_after: Option<&str>,
    retries: u32,
    key_variable: &str,
) -> ModelError {
    let what = match code {
        401 => format!("the key was refused (check {key_variable})"),
        403 => format!("the key may not do this (check {key_variable})"),
        _ if !retryable(code) => "the request was refused, not retried".to_owned(),
        _ if retries > 0 => format!("still failing after {retries} retries"),
        _ => match retry_after {
            Some(after) => format!(
                "the server asks to wait {after:?}, beyond the {:?} a wait may last",
                policy.max_wait
            ),
            None => "not retried".to_owned(),
        },
    };
    ModelError::Status {
        code,
        detail: format!("HTTP {code}: {what}: {}", body.trim()),
    }
}

/// A `retry-after` value: whole or decimal seconds, or an HTTP date (IMF-fixdate,
/// `Sun, 06 Nov 1994 08:49:37 GMT`) read against `now` (a date in the past is no wait).
/// Anything else is none (the backoff applies).
pub fn parse_retry_after(text: &str, now: SystemTime) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<f64>() {
        return (secs.is_finite() && (0.0..1e9).contains(&secs))
            .then(|| Duration::from_secs_f64(secs));
    }
    let at = http_date(text)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the epoch of an IMF-fixdate.
fn http_date(text: &str) -> Option<u64> {
    let (_, rest) = text.split_once(", ")?;
    let mut parts = rest.split(' ');
    let day: u64 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: u64 = parts.next()?.parse().ok()?;
    let time = parts.next()?;
    if parts.next()? != "GMT" || parts.next().is_some() {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || !(1..=31).contains(&day) || year < 1970 || h > 23 || m > 59 || s > 60
    {
        return None;
    }
    Some(days_since_epoch(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year ≥ 1970).
fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    // Counted from 1 March of year 0, so the leap day ends a year.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era_days = y * 365 + y / 4 - y / 100 + y / 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    era_days + day_of_year - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 0.5 ", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Tue, 01 Mar 2000 00:00:00 GMT", UNIX_EPOCH),
            Some(Duration::from_secs(951_868_800))
        );
        for bad in [
            "",
            "-1",
            "soon",
            "Sun, 06 Nov 1994 08:49:37",
            "nan",
            "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad}");
        }
    }

    #[test]
    fn only_transient_statuses_are_retried_within_the_bounds() {
        let policy = RetryPolicy::default();
        let now = SystemTime::now();
        for code in [400, 401, 403, 404, 422] {
            assert_eq!(policy.wait(code, Some("1"), 0, now), None, "{code}");
        }
        assert_eq!(policy.wait(500, None, 0, now), Some(Duration::from_secs(1)));
        assert_eq!(policy.wait(529, None, 2, now), Some(Duration::from_secs(4)));
        assert_eq!(policy.wait(503, None, 3, now), None);
        assert_eq!(
            policy.wait(429, Some("7"), 0, now),
            Some(Duration::from_secs(7))
        );
        // A wait beyond the bound is not slept through.
        assert_eq!(policy.wait(429, Some("3600"), 0, now), None);
        let long = RetryPolicy {
            max_retries: 40,
            ..policy
        };
        assert_eq!(long.wait(500, None, 39, now), Some(long.max_wait));
    }
}
