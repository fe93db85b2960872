//! LongBench's QA F1 (CPAT's `bench/f1.ts`): how well an agent's final answer matches the
//! reference answers of a long-context benchmark question.
//!
//! It lives beside the engine because it exists to judge governed runs: the benchmark asks
//! the same questions under different context policies (the engine with and without the
//! generational layout, the fallbacks, no governance at all) and compares the answers' F1,
//! so that a policy that saves tokens by losing the facts the question needs shows up as a
//! lower score. It has no other user in the crate.
//!
//! Both texts are normalised (lowercase; the ASCII punctuation of Python's
//! `string.punctuation` removed; the words `a`, `an`, `the` removed; whitespace collapsed),
//! then split on whitespace. The tokens they share, counted as multisets, give
//! `precision = common / answer tokens`, `recall = common / reference tokens` and
//! `F1 = 2·p·r / (p + r)`; F1 is 0 when nothing is shared, which includes either side being
//! empty. Against several references the score is the best one.

use std::collections::HashMap;

/// The words normalisation removes.
const ARTICLES: [&str; 3] = ["a", "an", "the"];

/// The normalised text: lowercase, without ASCII punctuation and articles, its words joined by
/// single spaces.
pub fn normalise(text: &str) -> String {
    tokens(text).join(" ")
}

/// The normalised words. An article is removed where it is a whole word (a maximal run of
/// letters, digits and `_`, as the regex `\b(a|an|the)\b` sees it once punctuation is gone).
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut token = String::new();
    let mut word = String::new();
    let end_word = |word: &mut String, token: &mut String, out: &mut Vec<String>| {
        if ARTICLES.contains(&word.as_str()) {
            // The article becomes a space: it ends the token.
            if !token.is_empty() {
                out.push(std::mem::take(token));
            }
        } else {
            token.push_str(word);
        }
        word.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_punctuation() {
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        end_word(&mut word, &mut token, &mut out);
        if c.is_whitespace() {
            if !token.is_empty() {
                out.push(std::mem::take(&mut token));
            }
        } else {
            token.push(c);
        }
    }
    end_word(&mut word, &mut token, &mut out);
    if !token.is_empty() {
        out.push(token);
    }
    out
}

/// The F1 of an answer against one reference.
pub fn qa_f1(answer: &str, reference: &str) -> f64 {
    let answer = tokens(answer);
    let reference = tokens(reference);
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in &reference {
        *counts.entry(t).or_default() += 1;
    }
    let mut common = 0usize;
    for t in &answer {
        if let Some(n) = counts.get_mut(t.as_str()) {
            if *n > 0 {
                *n -= 1;
                common += 1;
            }
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / answer.len() as f64;
    let recall = common as f64 / reference.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// The best F1 of an answer against several references (0 with none).
pub fn qa_f1_max<S: AsRef<str>>(answer: &str, references: &[S]) -> f64 {
    references
        .iter()
        .map(|r| qa_f1(answer, r.as_ref()))
        .fold(0.0, f64::max)
}
