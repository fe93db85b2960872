//! llguidance 1.9 as an oracle: the apply_patch grammar run with the single-byte tokenizer.
//!
//! Token ids 0–255 are the bytes; the EOS bit of `compute_mask_or_eos()` is "accepting".

use frontier::ByteSet;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
use llguidance::{Matcher, ParserFactory};

/// A factory for matchers of one grammar.
pub struct Oracle {
    factory: ParserFactory,
    grammar: TopLevelGrammar,
    eos: u32,
}

/// What llguidance says after a prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub allowed: ByteSet,
    pub accepting: bool,
}

impl Oracle {
    pub fn new(lark: &str) -> Oracle {
        let env: TokEnv = ApproximateTokEnv::single_byte_env();
        let eos = env.tok_trie().eos_token();
        let mut factory = ParserFactory::new_simple(&env).expect("factory");
        factory.set_stderr_log_level(0);
        Oracle {
            factory,
            grammar: TopLevelGrammar::from_lark(lark.to_owned()),
            eos,
        }
    }

    pub fn matcher(&self) -> Matcher {
        let mut m = Matcher::new(self.factory.create_parser(self.grammar.clone()));
        assert!(!m.is_error(), "{:?}", m.get_error());
        let _ = m.compute_mask_or_eos();
        m
    }

    pub fn answer(&self, m: &mut Matcher) -> Answer {
        let mask = m.compute_mask_or_eos().expect("mask");
        let mut allowed = ByteSet::EMPTY;
        for b in 0..=255u8 {
            if mask.is_allowed(b as u32) {
                allowed = allowed.with(b);
            }
        }
        Answer {
            allowed,
            accepting: mask.is_allowed(self.eos),
        }
    }

    /// Pushes one byte; false when llguidance refuses it.
    pub fn push(&self, m: &mut Matcher, byte: u8) -> bool {
        matches!(m.try_consume_tokens(&[byte as u32]), Ok(1))
    }

    /// The answers after every prefix up to the first refused byte, and that byte's offset.
    pub fn trace(&self, input: &[u8]) -> (Vec<Answer>, Option<usize>) {
        let mut m = self.matcher();
        let mut out = Vec::with_capacity(input.len() + 1);
        for (at, &b) in input.iter().enumerate() {
            let a = self.answer(&mut m);
            out.push(a);
            if !a.allowed.contains(b) {
                return (out, Some(at));
            }
            if !self.push(&mut m, b) {
                panic!("llguidance refused byte {b:#04x} at {at} that its mask allowed");
            }
        }
        out.push(self.answer(&mut m));
        (out, None)
    }
}
