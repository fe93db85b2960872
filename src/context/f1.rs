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

#[cfg(test)]
mod tests {
    //! CPAT's `bench/f1.test.ts`, the same six cases.
    use super::*;

    #[test]
    fn exact_match_scores_one() {
        assert_eq!(qa_f1("Marie Curie", "Marie Curie"), 1.0);
    }

    #[test]
    fn disjoint_answers_score_zero() {
        assert_eq!(qa_f1("Albert Einstein", "Marie Curie"), 0.0);
    }

    #[test]
    fn partial_overlap_scores_three_quarters() {
        // 3 of 4 answer tokens are in the 4-token reference: p = r = 0.75.
        assert_eq!(qa_f1("born in warsaw poland", "born in paris poland"), 0.75);
        // 3 answer tokens, all in a 5-token reference: p = 1, r = 0.6.
        let f1 = qa_f1("warsaw in 1867", "born in warsaw in 1867");
        assert!((f1 - 0.75).abs() < 1e-12, "{f1}");
    }

    #[test]
    fn normalisation_ignores_case_punctuation_and_articles() {
        assert_eq!(
            normalise("  The  Theory of  Relativity, (an) A-B test!  "),
            "theory of relativity ab test"
        );
        assert_eq!(qa_f1("THE Eiffel Tower.", "eiffel tower"), 1.0);
        assert_eq!(qa_f1("an apple", "Apple!"), 1.0);
        // Only whole words are articles: "theory", "ant", "bat" stay.
        assert_eq!(normalise("the theory an ant a bat"), "theory ant bat");
        // An article next to a non-ASCII symbol is still a word of its own.
        assert_eq!(normalise("x\u{2014}the\u{2014}y"), "x\u{2014} \u{2014}y");
        // Tokens are counted as multisets: a repeated word matches once per occurrence.
        assert_eq!(qa_f1("paris paris", "paris"), 2.0 * 0.5 / 1.5);
    }

    #[test]
    fn several_references_take_the_best() {
        let refs = ["Warsaw", "born in Warsaw Poland", "Kraków"];
        assert_eq!(
            qa_f1_max("Warsaw, Poland", &refs),
            qa_f1("Warsaw, Poland", refs[1])
        );
        assert_eq!(qa_f1("Warsaw, Poland", refs[1]), 2.0 * 1.0 * 0.5 / 1.5);
        assert_eq!(qa_f1_max("Warsaw", &refs), 1.0);
        assert_eq!(qa_f1_max("Warsaw", &[] as &[&str]), 0.0);
    }

    #[test]
    fn empty_sides_score_zero() {
        assert_eq!(qa_f1("", "Marie Curie"), 0.0);
        assert_eq!(qa_f1("Marie Curie", ""), 0.0);
        assert_eq!(qa_f1("", ""), 0.0);
        // Empty after normalisation.
        assert_eq!(qa_f1("the", "a"), 0.0);
        assert_eq!(qa_f1("?!", "..."), 0.0);
    }
}
