//! Token counts: CPAT's estimator by default, or a model's own vocabulary through
//! [`TokenCounter`].
//!
//! The budget is kept up to date without rendering the view again after every change: each
//! block keeps a [`Measure`] of what it adds to the view, and measures add up. For CPAT's
//! estimator this is exact, because the estimate is a function of two code-point counts,
//! rounded once at the end. For a tokenizer the measure is the token count of each piece, and
//! the sum can differ from the count of the concatenation by a token at each seam.

/// What a text contributes to a token count, before rounding: two counters whose meaning is
/// the counter's own (CPAT's: code points below U+2E80 and the rest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    /// The first counter (CPAT: "ascii" code points).
    pub a: u64,
    /// The second counter (CPAT: "wide" code points).
    pub b: u64,
}

impl std::ops::Add for Measure {
    type Output = Measure;
    fn add(self, o: Measure) -> Measure {
        Measure {
            a: self.a + o.a,
            b: self.b + o.b,
        }
    }
}

impl std::ops::Sub for Measure {
    type Output = Measure;
    fn sub(self, o: Measure) -> Measure {
        Measure {
            a: self.a - o.a,
            b: self.b - o.b,
        }
    }
}

/// Counts tokens. Implement it with a model's vocabulary (for instance over
/// `frontier_core::mask::Vocabulary` and its encoder) to budget in the model's own tokens.
pub trait TokenCounter: Send + Sync {
    /// A stable name, recorded in a run's configuration so that a replay uses the same count.
    fn name(&self) -> &str;
    /// The additive measure of `text`.
    fn measure(&self, text: &str) -> Measure;
    /// The token count of a measure (of one text or of several joined).
    fn tokens(&self, measure: Measure) -> u64;
    /// The token count of `text`.
    fn count(&self, text: &str) -> u64 {
        self.tokens(self.measure(text))
    }
}

/// CPAT's estimator (`misc.ts:9-17`): `max(1, ceil(0.3·ascii + 0.6·wide))` over code points,
/// where "ascii" is a code point below U+2E80.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpatEstimator;

/// The name [`CpatEstimator`] records.
pub const CPAT_ESTIMATOR: &str = "cpat";

impl TokenCounter for CpatEstimator {
    fn name(&self) -> &str {
        CPAT_ESTIMATOR
    }
    fn measure(&self, text: &str) -> Measure {
        let mut m = Measure::default();
        for c in text.chars() {
            if (c as u32) < 0x2E80 {
                m.a += 1;
            } else {
                m.b += 1;
            }
        }
        m
    }
    fn tokens(&self, m: Measure) -> u64 {
        let est = (m.a as f64 * 0.3 + m.b as f64 * 0.6).ceil();
        (est as u64).max(1)
    }
}

/// CPAT's `estimateTokens`.
pub fn estimate_tokens(text: &str) -> u64 {
    CpatEstimator.count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpat_estimates() {
        assert_eq!(estimate_tokens(""), 1);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens(&"a".repeat(10)), 3);
        assert_eq!(estimate_tokens(&"a".repeat(999)), 300);
        assert_eq!(estimate_tokens(&"a".repeat(1000)), 300);
        assert_eq!(estimate_tokens(&"a".repeat(1001)), 301);
        assert_eq!(estimate_tokens("—"), 1);
        assert_eq!(estimate_tokens("中文字"), 2);
        assert_eq!(estimate_tokens("😀😀"), 2);
    }
}
