//! The entry points called from Rust, over a small vocabulary from raw tokens, beside the
//! `frontier_core` matcher they wrap.

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};

use frontier_capi::matcher::*;
use frontier_capi::parser::*;
use frontier_capi::vocab::*;

const TOKENS: [&[u8]; 6] = [
    b"*** Begin Patch\n",
    b"*** Add File: a\n",
    b"+x\n",
    b"*** End Patch",
    b"<eos>",
    b"",
];
const EOS: u32 = 4;

fn vocab() -> *mut FrontierVocab {
    let lens: Vec<u32> = TOKENS.iter().map(|t| t.len() as u32).collect();
    let bytes: Vec<u8> = TOKENS.concat();
    let eos = [EOS];
    let init = FrontierVocabInit {
        struct_size: std::mem::size_of::<FrontierVocabInit>(),
        vocab_size: lens.len() as u32,
        token_lens: lens.as_ptr(),
        token_bytes: bytes.as_ptr(),
        special_ids: null(),
        n_special_ids: 0,
        eos_ids: eos.as_ptr(),
        n_eos_ids: 1,
    };
    // SAFETY: `init`'s arrays are live and of the lengths it gives.
    let v = unsafe { frontier_vocab_new(&init, null_mut(), 0) };
    assert!(!v.is_null());
    v
}

fn matcher(v: *const FrontierVocab) -> *mut FrontierMatcher {
    let mut err = [0u8; 64];
    // SAFETY: live vocabulary, literal strings, a 64-byte buffer.
    let m = unsafe {
        frontier_matcher_new(
            v,
            c"apply_patch".as_ptr(),
            null(),
            err.as_mut_ptr().cast(),
            64,
        )
    };
    assert!(!m.is_null());
    m
}

fn last_error(m: *const FrontierMatcher) -> String {
    // SAFETY: a live handle; the message is read before the next call.
    unsafe { CStr::from_ptr(frontier_matcher_last_error(m)) }
        .to_string_lossy()
        .into_owned()
}

fn mask(m: *mut FrontierMatcher) -> u32 {
    let mut word = [0u32; 1];
    // SAFETY: one writable word, which is the mask's length for 6 ids.
    assert_eq!(
        unsafe { frontier_matcher_fill_mask(m, word.as_mut_ptr(), 1) },
        0
    );
    word[0]
}

#[test]
fn a_patch_token_by_token_with_every_operation() {
    let v = vocab();
    let m = matcher(v);
    // SAFETY: `v` and `m` are live until freed at the end; every buffer has the length given.
    unsafe {
        frontier_vocab_free(v); // the matcher keeps the vocabulary alive
        assert_eq!(frontier_matcher_mask_words(m), 1);
        assert_eq!(mask(m), 0b1, "only `*** Begin Patch\\n` may start");
        assert_eq!(frontier_matcher_accept_token(m, 3), 0);
        assert!(
            last_error(m).starts_with("token_refused: "),
            "{}",
            last_error(m)
        );
        assert_eq!(
            frontier_matcher_accept_token(m, 5),
            0,
            "a hole is never accepted"
        );
        assert_eq!(frontier_matcher_accept_token(m, 6), 0, "past vocab_size");
        assert_eq!(mask(m), 0b1, "refusals changed nothing");

        let patch = [0u32, 1, 2, 3, EOS];
        assert_eq!(frontier_matcher_validate_tokens(m, patch.as_ptr(), 5), 5);
        assert_eq!(
            frontier_matcher_validate_tokens(m, [0u32, 3, 3].as_ptr(), 3),
            1
        );
        assert_eq!(mask(m), 0b1, "validate changed nothing");

        let mut forced = [0u8; 4];
        let full = frontier_matcher_forced_bytes(m, forced.as_mut_ptr(), 4);
        // After the first line, every patch's next line starts with `*** ` too.
        assert_eq!(full, b"*** Begin Patch\n*** ".len());
        assert_eq!(&forced, b"*** ");

        for &t in &patch[..4] {
            assert_eq!(frontier_matcher_accept_token(m, t), 1);
        }
        assert!(frontier_matcher_is_accepting(m));
        assert_eq!(frontier_matcher_forced_bytes(m, null_mut(), 0), 0);
        assert_eq!(mask(m), 1 << EOS);
        let fork = frontier_matcher_clone(m);
        assert_eq!(frontier_matcher_accept_token(m, EOS), 1);
        assert!(frontier_matcher_is_terminated(m));
        assert_eq!(mask(m), 1 << EOS, "after EOS, EOS only");
        assert_eq!(frontier_matcher_accept_token(m, 2), 0, "only EOS after EOS");
        assert!(
            last_error(m).starts_with("terminated: "),
            "{}",
            last_error(m)
        );
        assert_eq!(
            frontier_matcher_validate_tokens(m, [EOS, EOS, 2].as_ptr(), 3),
            2
        );
        assert_eq!(frontier_matcher_accept_token(m, EOS), 1, "EOS after EOS");
        assert!(frontier_matcher_is_terminated(m));
        assert_eq!(frontier_matcher_rollback(m, 1), 0);
        assert!(frontier_matcher_is_terminated(m), "the first EOS stays");
        assert!(
            !frontier_matcher_is_terminated(fork),
            "the clone is independent"
        );
        assert_eq!(frontier_matcher_rollback(m, 0), 0);
        assert!(
            frontier_matcher_is_terminated(m),
            "rollback(0) does nothing"
        );
        assert_eq!(
            frontier_matcher_rollback(m, 1),
            0,
            "EOS counts as one token"
        );
        assert!(!frontier_matcher_is_terminated(m));
        assert_eq!(frontier_matcher_rollback(m, 5), -1);
        assert_eq!(
            last_error(m),
            "rollback_past_history: rollback of 5 tokens, 4 kept"
        );
        assert_eq!(frontier_matcher_rollback(m, 4), 0);
        assert_eq!(mask(m), 0b1);
        assert_eq!(frontier_matcher_accept_token(m, 0), 1);
        assert_eq!(frontier_matcher_reset(m), 0);
        assert_eq!(mask(m), 0b1);
        frontier_matcher_free(fork);
        frontier_matcher_free(m);
    }
}

#[test]
fn a_longer_mask_buffer_gets_zeros_past_the_vocabulary() {
    let v = vocab();
    let m = matcher(v);
    // SAFETY: live handles; each buffer has the length given.
    unsafe {
        let mut row = [0xabab_abab_u32; 4];
        assert_eq!(frontier_matcher_fill_mask(m, row.as_mut_ptr(), 4), 0);
        assert_eq!(row, [0b1, 0, 0, 0], "the mask, then zeros");
        assert_eq!(frontier_matcher_accept_token(m, 0), 1);
        let mut row = [u32::MAX; 2];
        assert_eq!(frontier_matcher_fill_mask(m, row.as_mut_ptr(), 2), 0);
        assert_eq!(row, [0b10, 0]);
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}

#[test]
fn an_empty_vocabularys_mask_needs_no_array() {
    let init = FrontierVocabInit {
        struct_size: std::mem::size_of::<FrontierVocabInit>(),
        vocab_size: 0,
        token_lens: null(),
        token_bytes: null(),
        special_ids: null(),
        n_special_ids: 0,
        eos_ids: null(),
        n_eos_ids: 0,
    };
    // SAFETY: `init` holds no arrays; the handles are live until freed; nothing is written.
    unsafe {
        let v = frontier_vocab_new(&init, null_mut(), 0);
        assert!(!v.is_null());
        let m = matcher(v);
        assert_eq!(frontier_matcher_fill_mask(m, null_mut(), 0), 0);
        assert_eq!(frontier_matcher_fill_mask(m, null_mut(), 1), -1);
        assert_eq!(last_error(m), "dst is NULL");
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}

#[test]
fn a_short_mask_buffer_is_an_error_that_writes_nothing() {
    let v = vocab();
    let m = matcher(v);
    // SAFETY: live handles; a zero-length buffer is never written.
    unsafe {
        let mut word = [7u32];
        assert_eq!(frontier_matcher_fill_mask(m, word.as_mut_ptr(), 0), -1);
        assert_eq!(word, [7]);
        assert_eq!(last_error(m), "dst holds 0 words, the mask needs 1");
        assert_eq!(frontier_matcher_fill_mask(m, null_mut(), 1), -1);
        assert_eq!(last_error(m), "dst is NULL");
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}

#[test]
fn the_default_rollback_depth_is_32_tokens() {
    let v = vocab();
    let m = matcher(v);
    // SAFETY: live handles.
    unsafe {
        assert_eq!(frontier_matcher_accept_token(m, 0), 1);
        assert_eq!(frontier_matcher_accept_token(m, 1), 1);
        for _ in 0..40 {
            assert_eq!(frontier_matcher_accept_token(m, 2), 1);
        }
        assert_eq!(frontier_matcher_rollback(m, 33), -1);
        assert_eq!(frontier_matcher_rollback(m, 32), 0);
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}

extern "C" fn collect(user: *mut c_void, json: *const c_char, len: usize) {
    // SAFETY: `user` is the `Vec<String>` passed with this callback; `json` holds `len` bytes.
    unsafe {
        let out = &mut *user.cast::<Vec<String>>();
        let bytes = std::slice::from_raw_parts(json.cast::<u8>(), len);
        out.push(String::from_utf8(bytes.to_vec()).unwrap());
    }
}

#[test]
fn the_parser_hands_each_event_to_the_callback() {
    let mut err = [0u8; 64];
    let mut events: Vec<String> = Vec::new();
    let user = (&mut events as *mut Vec<String>).cast::<c_void>();
    let input = TOKENS[..4].concat();
    // SAFETY: literal strings, a 64-byte buffer, `input` live, `user` a live Vec for `collect`.
    unsafe {
        let p = frontier_parser_new(c"apply_patch".as_ptr(), null(), err.as_mut_ptr().cast(), 64);
        assert!(!p.is_null());
        let mut set = [0u8; 32];
        frontier_parser_allowed(p, set.as_mut_ptr());
        assert_eq!(set[5], 1 << 2, "`*` is byte 42: bit 2 of byte 5");
        assert_eq!(
            frontier_parser_push(p, input.as_ptr(), input.len(), Some(collect), user),
            0
        );
        assert!(frontier_parser_accepting(p));
        assert_eq!(frontier_parser_finish(p, Some(collect), user), 0);
        assert_eq!(events.first().unwrap(), r#"{"event":"begin_patch"}"#);
        assert_eq!(events.last().unwrap(), r#"{"event":"end_patch"}"#);
        assert_eq!(
            frontier_parser_push(p, input.as_ptr(), 1, None, null_mut()),
            -1
        );
        let message = CStr::from_ptr(frontier_parser_last_error(p));
        assert_eq!(message.to_str().unwrap(), "the parser was finished");
        frontier_parser_free(p);

        let p = frontier_parser_new(
            c"ctl".as_ptr(),
            c"loose".as_ptr(),
            err.as_mut_ptr().cast(),
            64,
        );
        assert!(p.is_null());
        let message = CStr::from_bytes_until_nul(&err).unwrap().to_str().unwrap();
        assert!(message.contains("loose"), "{message}");
    }
}

/// GPT-2's byte-level spelling of `byte`.
fn gpt2_char(byte: u8) -> char {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable(byte) {
        return char::from(byte);
    }
    let n = (0..byte).filter(|&b| !printable(b)).count() as u32;
    char::from_u32(256 + n).unwrap()
}

#[test]
fn a_tokenizer_json_with_its_config_gives_the_eos() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_tokenizer_json");
    std::fs::create_dir_all(&dir).unwrap();
    let vocab: serde_json::Map<String, serde_json::Value> = (0..=255u8)
        .map(|b| (gpt2_char(b).to_string(), u32::from(b).into()))
        .collect();
    let json = serde_json::json!({
        "version": "1.0",
        "added_tokens": [{"id": 256, "content": "<eos>", "special": true, "normalized": false}],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "byte_fallback": false,
                  "ignore_merges": true, "vocab": vocab, "merges": []}
    });
    std::fs::write(dir.join("tokenizer.json"), json.to_string()).unwrap();
    std::fs::write(
        dir.join("tokenizer_config.json"),
        r#"{"eos_token": "<eos>"}"#,
    )
    .unwrap();
    let path = std::ffi::CString::new(dir.join("tokenizer.json").to_str().unwrap()).unwrap();
    let mut err = [0u8; 256];
    // SAFETY: a NUL-terminated path, a 256-byte buffer; the handles are live until freed.
    unsafe {
        let v = frontier_vocab_from_tokenizer_json(path.as_ptr(), err.as_mut_ptr().cast(), 256);
        assert!(!v.is_null(), "{:?}", CStr::from_bytes_until_nul(&err));
        assert_eq!(frontier_vocab_size(v), 257);
        let m = matcher(v);
        for &byte in b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch" {
            assert_eq!(frontier_matcher_accept_token(m, u32::from(byte)), 1);
        }
        assert_eq!(frontier_matcher_accept_token(m, 256), 1, "<eos> is EOS");
        assert!(frontier_matcher_is_terminated(m));
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}

#[test]
fn one_vocabulary_and_one_grammar_serve_matchers_on_several_threads() {
    let v = vocab();
    let proto = matcher(v);
    // Handles cross threads as addresses: the vocabulary is only read, and each thread has its
    // own matcher (a fresh one and a clone of `proto`, sharing its grammar and cache).
    let (v_addr, proto_addr) = (v as usize, proto as usize);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let v = v_addr as *const FrontierVocab;
                let proto = proto_addr as *const FrontierMatcher;
                // SAFETY: `v` and `proto` outlive the threads (joined below) and are only read;
                // the matchers made here are this thread's own.
                unsafe {
                    let own = matcher(v);
                    let fork = frontier_matcher_clone(proto);
                    for m in [own, fork] {
                        for _ in 0..100 {
                            for t in [0, 1, 2, 3, EOS] {
                                assert_eq!(frontier_matcher_accept_token(m, t), 1);
                            }
                            assert!(frontier_matcher_is_terminated(m));
                            assert_eq!(frontier_matcher_reset(m), 0);
                        }
                        frontier_matcher_free(m);
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    // SAFETY: the threads are done; both handles are freed once.
    unsafe {
        assert_eq!(mask(proto), 0b1, "the clones did not move the original");
        frontier_matcher_free(proto);
        frontier_vocab_free(v);
    }
}

fn batch_error(
    matchers: &[*mut FrontierMatcher],
    rows: Option<&[usize]>,
    dst: &mut [u32],
    n_rows: usize,
    row_words: usize,
) -> String {
    let mut err = [0u8; 128];
    let before = dst.to_vec();
    // SAFETY: live handles (or NULL), `rows` of `matchers.len()` entries, `dst` of at least
    // `n_rows * row_words` words, a 128-byte error buffer.
    let status = unsafe {
        frontier_matcher_fill_masks(
            matchers.as_ptr(),
            matchers.len(),
            rows.map_or(null(), <[usize]>::as_ptr),
            dst.as_mut_ptr(),
            n_rows,
            row_words,
            2,
            err.as_mut_ptr().cast(),
            err.len(),
        )
    };
    assert_eq!(status, -1);
    assert_eq!(dst, &before[..], "nothing written");
    let end = err.iter().position(|&b| b == 0).unwrap();
    String::from_utf8(err[..end].to_vec()).unwrap()
}

#[test]
fn a_batch_filled_on_several_threads_equals_each_row_filled_alone() {
    let v = vocab();
    // One matcher per prefix of the patch, EOS taken last: every mask differs.
    let plan = [0, 1, 2, 3, EOS];
    let matchers: Vec<*mut FrontierMatcher> = (0..=plan.len())
        .map(|n| {
            let m = matcher(v);
            for &t in &plan[..n] {
                // SAFETY: a live handle.
                assert_eq!(unsafe { frontier_matcher_accept_token(m, t) }, 1);
            }
            m
        })
        .collect();
    let alone: Vec<u32> = matchers.iter().map(|&m| mask(m)).collect();
    let rows: Vec<usize> = (0..matchers.len()).map(|i| (i * 5 + 3) % 8).collect();
    for threads in [1, 3, 0] {
        let mut dst = vec![0xabab_abab_u32; 8 * 2];
        // SAFETY: live handles, `rows` of one index a matcher, `dst` of 8 rows of 2 words.
        let status = unsafe {
            frontier_matcher_fill_masks(
                matchers.as_ptr(),
                matchers.len(),
                rows.as_ptr(),
                dst.as_mut_ptr(),
                8,
                2,
                threads,
                null_mut(),
                0,
            )
        };
        assert_eq!(status, 0);
        for (i, &row) in rows.iter().enumerate() {
            assert_eq!(
                dst[row * 2..row * 2 + 2],
                [alone[i], 0],
                "threads {threads}"
            );
        }
        let untouched: Vec<usize> = (0..8).filter(|r| !rows.contains(r)).collect();
        for row in untouched {
            assert_eq!(dst[row * 2..row * 2 + 2], [0xabab_abab; 2], "row {row}");
        }
    }
    // rows NULL: row i; the same matcher twice is read twice.
    let twice = [matchers[1], matchers[1]];
    let mut dst = [0u32; 2];
    // SAFETY: live handles, 2 rows of 1 word.
    let status = unsafe {
        frontier_matcher_fill_masks(
            twice.as_ptr(),
            2,
            null(),
            dst.as_mut_ptr(),
            2,
            1,
            2,
            null_mut(),
            0,
        )
    };
    assert_eq!((status, dst), (0, [alone[1], alone[1]]));

    let mut dst = [7u32; 4];
    let m = &matchers[..2];
    assert_eq!(
        batch_error(m, Some(&[0, 0]), &mut dst, 4, 1),
        "row 0 is given twice"
    );
    assert_eq!(
        batch_error(m, Some(&[0, 4]), &mut dst, 4, 1),
        "row 4 is past the 4 rows"
    );
    assert_eq!(
        batch_error(m, None, &mut dst, 4, 0),
        "rows hold 0 words, matchers[0]'s mask needs 1"
    );
    assert_eq!(
        batch_error(&[matchers[0], null_mut()], None, &mut dst, 4, 1),
        "matchers[1] is NULL"
    );
    let mut err = [0u8; 64];
    // SAFETY: NULL arrays with lengths are refused before anything is read.
    unsafe {
        let status = frontier_matcher_fill_masks(
            null(),
            2,
            null(),
            dst.as_mut_ptr(),
            4,
            1,
            1,
            err.as_mut_ptr().cast(),
            64,
        );
        assert_eq!(status, -1);
        assert!(CStr::from_ptr(err.as_ptr().cast())
            .to_bytes()
            .starts_with(b"matchers is NULL"));
        let status = frontier_matcher_fill_masks(
            m.as_ptr(),
            2,
            null(),
            null_mut(),
            4,
            1,
            1,
            err.as_mut_ptr().cast(),
            64,
        );
        assert_eq!(status, -1);
        assert_eq!(
            CStr::from_ptr(err.as_ptr().cast()).to_bytes(),
            b"dst is NULL but holds 4 words"
        );
        // An empty batch writes nothing and needs no array.
        assert_eq!(
            frontier_matcher_fill_masks(null(), 0, null(), null_mut(), 0, 0, 0, null_mut(), 0),
            0
        );
        for m in matchers {
            frontier_matcher_free(m);
        }
        frontier_vocab_free(v);
    }
}

/// What `reenter` saw, calling its own parser back from inside the callback.
struct Reentry {
    parser: *mut FrontierParser,
    free_on_first: bool,
    events: usize,
    seen: Vec<(i32, i32, bool, [u8; 32], String)>,
}

extern "C" fn reenter(user: *mut c_void, _json: *const c_char, _len: usize) {
    // SAFETY: `user` is the live `Reentry` passed with this callback, and its parser is the one
    // calling back, live until the free below (which the push under way defers).
    unsafe {
        let r = &mut *user.cast::<Reentry>();
        r.events += 1;
        if r.free_on_first {
            if r.events == 1 {
                frontier_parser_free(r.parser);
            }
            return;
        }
        let p = r.parser;
        let pushed = frontier_parser_push(p, b"x".as_ptr(), 1, None, null_mut());
        let finished = frontier_parser_finish(p, None, null_mut());
        let mut set = [0xffu8; 32];
        frontier_parser_allowed(p, set.as_mut_ptr());
        let message = CStr::from_ptr(frontier_parser_last_error(p))
            .to_string_lossy()
            .into_owned();
        r.seen
            .push((pushed, finished, frontier_parser_accepting(p), set, message));
    }
}

#[test]
fn a_callback_calling_its_own_parser_back_finds_it_busy() {
    let input = TOKENS[..4].concat();
    let mut err = [0u8; 64];
    // SAFETY: literal strings, a 64-byte buffer; `r` outlives every call that hands it over.
    unsafe {
        let p = frontier_parser_new(c"apply_patch".as_ptr(), null(), err.as_mut_ptr().cast(), 64);
        let mut r = Reentry {
            parser: p,
            free_on_first: false,
            events: 0,
            seen: Vec::new(),
        };
        let user = (&mut r as *mut Reentry).cast::<c_void>();
        assert_eq!(
            frontier_parser_push(p, input.as_ptr(), 20, Some(reenter), user),
            0
        );
        assert!(r.events > 0 && r.seen.len() == r.events);
        let busy = "the parser is busy: called from its own event callback".to_owned();
        for seen in &r.seen {
            assert_eq!(seen, &(-1, -1, false, [0; 32], busy.clone()));
        }
        // The parser went on where the callback found it: the rest of the patch completes it.
        let rest = &input[20..];
        let before = r.events;
        assert_eq!(
            frontier_parser_push(p, rest.as_ptr(), rest.len(), Some(reenter), user),
            0
        );
        assert!(r.events > before);
        assert_eq!(r.seen.last().unwrap().4, busy);
        assert!(frontier_parser_accepting(p));
        assert_eq!(frontier_parser_finish(p, Some(reenter), user), 0);
        frontier_parser_free(p);

        // Freed from its callback: the push under way ends, then frees the handle.
        let p = frontier_parser_new(c"apply_patch".as_ptr(), null(), err.as_mut_ptr().cast(), 64);
        let mut r = Reentry {
            parser: p,
            free_on_first: true,
            events: 0,
            seen: Vec::new(),
        };
        let user = (&mut r as *mut Reentry).cast::<c_void>();
        assert_eq!(
            frontier_parser_push(p, input.as_ptr(), input.len(), Some(reenter), user),
            0
        );
        assert!(r.events > 1, "the events after the free still arrive");
    }
}

#[test]
fn accept_tokens_takes_all_or_none_and_names_the_refused_one() {
    let v = vocab();
    let m = matcher(v);
    // SAFETY: live handles; each array has the length given.
    unsafe {
        assert_eq!(
            frontier_matcher_accept_tokens(m, [0u32, 1, 3].as_ptr(), 3),
            0
        );
        assert_eq!(
            last_error(m),
            "token 2 of 3 refused, none accepted: token_refused: token 3: its byte 0 (0x2a) is \
             not allowed there",
            "an added file has a line before the end"
        );
        assert_eq!(mask(m), 0b1, "none of them was accepted");
        assert_eq!(
            frontier_matcher_accept_tokens(m, [0u32, 1, 2].as_ptr(), 3),
            1
        );
        assert_eq!(mask(m), 0b1110, "another file, another line or the end");
        assert_eq!(
            frontier_matcher_accept_tokens(m, null(), 0),
            1,
            "none is all"
        );
        assert_eq!(frontier_matcher_accept_tokens(m, null(), 2), -1);
        assert_eq!(
            frontier_matcher_rollback(m, 3),
            0,
            "three tokens of history"
        );
        assert_eq!(mask(m), 0b1);
        assert_eq!(
            frontier_matcher_accept_tokens(null_mut(), [0u32].as_ptr(), 1),
            -1
        );
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}

#[test]
fn is_error_says_when_no_token_may_follow() {
    // `*** Begin Patch` needs an LF next, and no token of this vocabulary starts with one.
    let tokens: [&[u8]; 2] = [b"*** Begin Patch", b"x"];
    let lens: Vec<u32> = tokens.iter().map(|t| t.len() as u32).collect();
    let bytes = tokens.concat();
    let init = FrontierVocabInit {
        struct_size: std::mem::size_of::<FrontierVocabInit>(),
        vocab_size: 2,
        token_lens: lens.as_ptr(),
        token_bytes: bytes.as_ptr(),
        special_ids: null(),
        n_special_ids: 0,
        eos_ids: null(),
        n_eos_ids: 0,
    };
    // SAFETY: `init`'s arrays are live and of the lengths it gives; live handles after.
    unsafe {
        let v = frontier_vocab_new(&init, null_mut(), 0);
        assert!(!v.is_null());
        let m = matcher(v);
        assert!(!frontier_matcher_is_error(m));
        assert_eq!(frontier_matcher_accept_token(m, 0), 1);
        assert!(frontier_matcher_is_error(m));
        assert_eq!(mask(m), 0);
        assert!(!frontier_matcher_is_error(null()));
        frontier_matcher_free(m);
        frontier_vocab_free(v);
    }
}
