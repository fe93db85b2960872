//! The matcher's id-level edges and bad input, on a small raw vocabulary and CTL: EOS at the
//! end and too early, special tokens and holes, ids past the vocabulary, rollback, wrong
//! buffers; each refusal leaves the matcher exactly as it was.

mod mask_support;

use std::sync::Arc;

use frontier::ctl::{CtlMachine, Limits};
use frontier::mask::{CompiledGrammar, MaskError, MaskErrorKind, Matcher, Vocabulary};
use mask_support::{bit, brute_mask};

const CALL: u32 = 0;
const SP: u32 = 1;
const C1: u32 = 2;
const READ: u32 = 3;
const LF: u32 = 4;
const END: u32 = 5;
const BOS: u32 = 6;
const EOS: u32 = 7;
const HOLE: u32 = 8;
const ARG: u32 = 9;
const EOT: u32 = 10;
const CALL_C: u32 = 11;

fn vocab() -> Arc<Vocabulary> {
    let tokens: Vec<Vec<u8>> = [
        &b"call"[..],
        b" ",
        b"c1",
        b"read",
        b"\n",
        b"end\n",
        b"<s>",
        b"</s>",
        b"",
        b"arg",
        b"<|eot|>",
        b"call c",
    ]
    .iter()
    .map(|t| t.to_vec())
    .collect();
    Arc::new(Vocabulary::from_raw(&tokens, &[BOS], &[EOS, EOT]).unwrap())
}

fn grammar() -> Arc<CompiledGrammar<CtlMachine>> {
    CompiledGrammar::new(vocab(), CtlMachine::default())
}

/// What a caller can observe of a matcher.
fn snapshot(m: &Matcher<CtlMachine>) -> (CtlMachine, bool, usize, Vec<u32>) {
    let mut mask = vec![0; m.grammar().vocab().mask_words()];
    m.fill_mask(&mut mask).unwrap();
    (m.state(), m.is_terminated(), m.history_len(), mask)
}

fn consume_all(m: &mut Matcher<CtlMachine>, tokens: &[u32]) {
    for &t in tokens {
        m.consume(t).unwrap();
    }
}

const ONE_CALL: [u32; 7] = [CALL, SP, C1, SP, READ, LF, END];

#[test]
fn grammars_and_matchers_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<CompiledGrammar<CtlMachine>>();
    send_sync::<Matcher<CtlMachine>>();
}

#[test]
fn the_matcher_is_small() {
    let size = std::mem::size_of::<Matcher<CtlMachine>>();
    println!("Matcher<CtlMachine>: {size} bytes");
    assert!(size < 1024, "a matcher is {size} bytes");
    // One rollback entry: the state and the terminated flag. The state holds extended CTL's
    // heredoc tag (up to `MAX_TAG` bytes) inline, which is most of it.
    let entry = std::mem::size_of::<(CtlMachine, bool)>();
    assert!(entry <= 136, "a rollback entry is {entry} bytes");
}

#[test]
fn eos_at_the_end_terminates_and_leaves_only_eos() {
    let grammar = grammar();
    let mut m = grammar.matcher();
    let mut mask = vec![0u32; 1];
    m.fill_mask(&mut mask).unwrap();
    assert!(
        bit(&mask, EOS) && bit(&mask, EOT),
        "the empty stream is a sentence"
    );
    consume_all(&mut m, &ONE_CALL);
    assert!(m.accepting());
    m.consume(EOT).unwrap();
    assert!(m.is_terminated() && m.accepting() && !m.is_error());
    m.fill_mask(&mut mask).unwrap();
    assert_eq!(
        mask[0],
        (1 << EOS) | (1 << EOT),
        "after EOS the mask holds EOS only"
    );
    let before = snapshot(&m);
    for token in [CALL, SP, BOS, HOLE] {
        let err = m.consume(token).unwrap_err();
        assert_eq!(err, MaskError::Terminated { token });
        assert_eq!(err.kind(), MaskErrorKind::Terminated);
        assert_eq!(snapshot(&m), before);
    }
    assert_eq!(
        m.consume(u32::MAX),
        Err(MaskError::TokenOutOfRange {
            token: u32::MAX,
            vocab_size: 12
        })
    );
    assert_eq!(snapshot(&m), before);
    let mut forced = Vec::new();
    m.forced_bytes(&mut forced);
    assert!(forced.is_empty());
    // What the mask allows is taken: EOS after EOS, the sequence still ended, one more
    // token of history each.
    let kept = m.history_len();
    m.consume(EOS).unwrap();
    m.consume(EOT).unwrap();
    let (state, terminated, history, mask) = snapshot(&m);
    assert_eq!(
        (state, terminated, history, &mask),
        (before.0, true, kept + 2, &before.3)
    );
    assert!(m.accepting() && !m.is_error());
    assert_eq!(m.consume(CALL), Err(MaskError::Terminated { token: CALL }));
    assert_eq!(m.validate_tokens(&[EOS, EOT, EOS, CALL, EOS]), 3);
    assert_eq!(m.validate_tokens(&[EOT]), 1);
    assert_eq!(m.history_len(), kept + 2, "validate changed nothing");
    // Each EOS is undone like any token: two of them still leave the first.
    m.rollback(2).unwrap();
    assert_eq!(snapshot(&m), before);
    m.rollback(1).unwrap();
    assert!(!m.is_terminated());
    m.consume(CALL).unwrap();
}

#[test]
fn validate_runs_through_eos_and_the_eos_after_it() {
    let grammar = grammar();
    let m = grammar.matcher();
    let mut tokens = ONE_CALL.to_vec();
    tokens.extend([EOS, EOT, EOS]);
    assert_eq!(m.validate_tokens(&tokens), tokens.len());
    tokens.push(LF);
    assert_eq!(m.validate_tokens(&tokens), tokens.len() - 1);
    let mut fed = grammar.matcher();
    consume_all(&mut fed, &tokens[..tokens.len() - 1]);
    assert!(fed.is_terminated());
    assert_eq!(fed.history_len(), tokens.len() - 1);
}

#[test]
fn eos_too_early_is_refused_and_changes_nothing() {
    let grammar = grammar();
    let mut m = grammar.matcher();
    consume_all(&mut m, &[CALL, SP, C1]);
    let before = snapshot(&m);
    assert!(!bit(&before.3, EOS));
    let err = m.consume(EOS).unwrap_err();
    assert_eq!(err, MaskError::EosTooEarly { token: EOS });
    assert_eq!(err.kind(), MaskErrorKind::EosTooEarly);
    assert_eq!(snapshot(&m), before);
    // Still usable.
    consume_all(&mut m, &[SP, READ, LF, END, EOS]);
}

#[test]
fn special_tokens_holes_and_ids_past_the_vocabulary_are_refused() {
    let grammar = grammar();
    let mut m = grammar.matcher();
    consume_all(&mut m, &[CALL, SP]);
    let before = snapshot(&m);
    assert_eq!(m.consume(BOS), Err(MaskError::SpecialToken { token: BOS }));
    assert_eq!(
        m.consume(HOLE),
        Err(MaskError::SpecialToken { token: HOLE })
    );
    let err = m.consume(12).unwrap_err();
    assert_eq!(
        err,
        MaskError::TokenOutOfRange {
            token: 12,
            vocab_size: 12
        }
    );
    assert!(err.to_string().contains("token_out_of_range"), "{err}");
    assert_eq!(
        m.consume(u32::MAX).unwrap_err().kind(),
        MaskErrorKind::TokenOutOfRange
    );
    assert_eq!(snapshot(&m), before);
    assert!(!bit(&before.3, BOS) && !bit(&before.3, HOLE));
    // A special token in the middle of a valid stream does not break it.
    consume_all(&mut m, &[C1, SP, READ, LF, END, EOS]);
}

#[test]
fn a_refused_normal_token_names_its_byte() {
    let grammar = grammar();
    let mut m = grammar.matcher();
    consume_all(&mut m, &[CALL, SP, C1, SP, READ, LF]);
    let before = snapshot(&m);
    // `call c` after a call line: `c` is refused at byte 0 (`arg` or `end` comes next).
    assert_eq!(
        m.consume(CALL_C),
        Err(MaskError::TokenRefused {
            token: CALL_C,
            offset: 0,
            byte: b'c'
        })
    );
    // `arg` then LF: byte 0 of `\n` refused after `arg`.
    m.consume(ARG).unwrap();
    assert_eq!(
        m.consume(LF),
        Err(MaskError::TokenRefused {
            token: LF,
            offset: 0,
            byte: b'\n'
        })
    );
    m.rollback(1).unwrap();
    assert_eq!(snapshot(&m), before);
}

#[test]
fn rollback_restores_and_refuses_past_the_history() {
    let grammar = grammar();
    let mut m = grammar.matcher_with_history(2);
    let start = snapshot(&m);
    m.consume(CALL).unwrap();
    let after_call = snapshot(&m);
    m.consume(SP).unwrap();
    m.consume(C1).unwrap();
    assert_eq!(m.history_len(), 2);
    let before = snapshot(&m);
    assert_eq!(
        m.rollback(3),
        Err(MaskError::RollbackPastHistory {
            requested: 3,
            kept: 2
        })
    );
    assert_eq!(snapshot(&m), before);
    m.rollback(0).unwrap();
    assert_eq!(snapshot(&m), before);
    m.rollback(2).unwrap();
    let now = snapshot(&m);
    assert_eq!(
        (now.0, now.1, now.3),
        (after_call.0, after_call.1, after_call.3)
    );
    assert_eq!(
        m.rollback(1).unwrap_err().kind(),
        MaskErrorKind::RollbackPastHistory
    );
    // Depth 0 keeps nothing.
    let mut none = grammar.matcher_with_history(0);
    none.consume(CALL).unwrap();
    assert!(none.rollback(1).is_err());
    none.reset();
    assert_eq!(snapshot(&none), start);
}

/// Any depth is a bound, not an allocation: a matcher told to keep `usize::MAX` tokens starts
/// (it used to abort reserving them all) and keeps every token it takes.
#[test]
fn a_matcher_of_any_depth_starts_and_keeps_what_it_takes() {
    let grammar = grammar();
    let mut deep = grammar.matcher_with_history(usize::MAX);
    let start = snapshot(&deep);
    for token in [CALL, SP, C1, SP, READ, LF] {
        deep.consume(token).unwrap();
    }
    assert_eq!(deep.history_len(), 6);
    deep.rollback(6).unwrap();
    assert_eq!(snapshot(&deep), start);
}

#[test]
fn validate_tokens_counts_the_accepted_prefix_and_changes_nothing() {
    let grammar = grammar();
    let mut m = grammar.matcher();
    m.consume(CALL).unwrap();
    let before = snapshot(&m);
    assert_eq!(
        m.validate_tokens(&[SP, C1, SP, READ, LF, END, EOS, CALL]),
        7
    );
    assert_eq!(m.validate_tokens(&[SP, C1, LF]), 2);
    assert_eq!(m.validate_tokens(&[BOS]), 0);
    assert_eq!(m.validate_tokens(&[99]), 0);
    assert_eq!(m.validate_tokens(&[]), 0);
    assert_eq!(snapshot(&m), before);
}

#[test]
fn a_buffer_of_the_wrong_length_is_an_error_and_untouched() {
    let grammar = CompiledGrammar::new(Arc::new(three_word_vocab()), CtlMachine::default());
    let m = grammar.matcher();
    let words = grammar.vocab().mask_words();
    assert_eq!(words, 3);
    for len in [0, words - 1, words + 1] {
        let mut buffer = vec![0xAAAA_AAAA; len];
        let err = m.fill_mask(&mut buffer).unwrap_err();
        assert_eq!(
            err,
            MaskError::MaskLength {
                expected: words,
                got: len
            }
        );
        assert!(buffer.iter().all(|&w| w == 0xAAAA_AAAA));
        let err = m.fill_mask_uncached(&mut buffer).unwrap_err();
        assert_eq!(err.kind(), MaskErrorKind::MaskLength);
        assert!(buffer.iter().all(|&w| w == 0xAAAA_AAAA));
    }
}

/// 65 ids (three mask words), each one byte from `!` on.
fn three_word_vocab() -> Vocabulary {
    let tokens: Vec<Vec<u8>> = (0..65u8).map(|i| vec![b'!' + i]).collect();
    Vocabulary::from_raw(&tokens, &[], &[]).unwrap()
}

#[test]
fn forced_bytes_accepting_clone_and_reset() {
    let grammar = grammar();
    let mut m = grammar.matcher();
    consume_all(&mut m, &[CALL, SP, C1, SP, READ, LF]);
    let mut forced = Vec::new();
    m.forced_bytes(&mut forced);
    assert_eq!(forced, b"");
    let mut fork = m.clone();
    fork.consume(ARG).unwrap();
    forced.clear();
    fork.forced_bytes(&mut forced);
    assert_eq!(forced, b" ");
    assert!(!m.accepting());
    m.consume(END).unwrap();
    assert!(m.accepting() && !fork.accepting(), "a fork is independent");
    m.reset();
    assert_eq!(m.state(), CtlMachine::default());
    assert_eq!(m.history_len(), 0);
}

#[test]
fn a_sequence_the_vocabulary_cannot_continue_is_an_error() {
    // No token holds LF: after `call c1 x` the name may go on, but the only token would put
    // a space into the call line, and EOS is not allowed inside a frame.
    let tokens: Vec<Vec<u8>> = vec![b"call c1 x".to_vec(), b"</s>".to_vec()];
    let vocab = Arc::new(Vocabulary::from_raw(&tokens, &[], &[1]).unwrap());
    let grammar = CompiledGrammar::new(Arc::clone(&vocab), CtlMachine::default());
    let mut m = grammar.matcher();
    assert!(!m.is_error());
    m.consume(0).unwrap();
    assert!(m.is_error());
    let mut mask = vec![0u32; 1];
    m.fill_mask(&mut mask).unwrap();
    assert_eq!(mask, brute_mask(&vocab, &m.state()));
    assert_eq!(mask, [0]);
}

#[test]
fn small_limits_shape_the_mask() {
    // With max_line 12, `call c1 read` (12 bytes) cannot end its line: `read` is refused.
    let grammar = CompiledGrammar::new(
        vocab(),
        CtlMachine::new(Limits {
            max_line: 12,
            max_arg: 9,
        }),
    );
    let mut m = grammar.matcher();
    consume_all(&mut m, &[CALL, SP, C1, SP]);
    let mut mask = vec![0u32; 1];
    m.fill_mask(&mut mask).unwrap();
    assert!(!bit(&mask, READ));
    assert_eq!(mask, brute_mask(grammar.vocab(), &m.state()));
    assert_eq!(
        m.consume(READ),
        Err(MaskError::TokenRefused {
            token: READ,
            offset: 3,
            byte: b'd'
        })
    );
}

#[test]
fn the_embedding_names_are_the_same_matcher() {
    use frontier::language::ParserSpec;
    use frontier::mask::dynamic::{compile, DynMatcher};

    let grammar = grammar();
    let mut m = grammar.matcher();
    // accept_tokens is all or nothing: a refused token anywhere leaves the matcher untouched.
    let before = snapshot(&m);
    assert!(!m.accept_tokens(&[CALL, SP, C1, LF]));
    assert!(!m.accept_tokens(&[CALL, SP, 99]));
    assert_eq!(snapshot(&m), before);
    assert!(m.accept_tokens(&[CALL, SP, C1, SP]));
    assert_eq!(m.history_len(), 4);
    assert!(!m.accept_token(LF));
    assert!(m.accept_token(READ));
    let mut by_new_name = vec![0; m.grammar().vocab().mask_words()];
    m.fill_next_token_bitmask(&mut by_new_name).unwrap();
    assert_eq!(by_new_name, snapshot(&m).3);
    assert!(m.accept_tokens(&[LF, END]));
    assert!(m.is_accepting() && m.accepting());
    assert!(m.accept_token(EOS));
    assert!(m.is_terminated());
    assert!(!m.accept_token(CALL));
    assert!(m.accept_tokens(&[]));

    // The same names through the run-time matcher a host holds.
    let dynamic = compile(&ParserSpec::parse("ctl", None).unwrap(), vocab());
    let mut d: Box<dyn DynMatcher> = dynamic.matcher_with_history(8);
    assert!(!d.accept_tokens(&[CALL, SP, C1, LF]));
    assert!(d.accept_tokens(&ONE_CALL));
    assert!(d.is_accepting());
    let mut words = vec![0; vocab().mask_words()];
    d.fill_next_token_bitmask(&mut words).unwrap();
    assert!(bit(&words, EOS) && bit(&words, CALL) && !bit(&words, LF));
    assert!(d.accept_token(EOS) && d.is_terminated());
}
