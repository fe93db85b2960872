//! `frontier_matcher_*`: one sequence's token-mask matcher (`masks.md`) over a shared
//! vocabulary. A matcher is used by one thread at a time; clones are independent.

use std::ffi::c_char;
use std::sync::Arc;

use frontier_core::language::ParserSpec;
use frontier_core::mask::dynamic::{self, DynGrammar, DynMatcher};

use crate::boundary::{c_slice, c_text, free_handle, guard, write_message, LastError};
use crate::vocab::FrontierVocab;

/// An opaque matcher handle: the compiled grammar (shared by clones), the matcher's state and
/// its sticky error.
pub struct FrontierMatcher {
    grammar: Arc<dyn DynGrammar>,
    matcher: Box<dyn DynMatcher>,
    error: LastError,
}

impl FrontierMatcher {
    /// Runs `body` on the matcher; an error (or panic) is kept as the sticky message and
    /// turned into `failed`.
    fn run<T>(&mut self, failed: T, body: impl FnOnce(&mut Self) -> Result<T, String>) -> T {
        match guard(|| body(self)) {
            Ok(value) => value,
            Err(message) => {
                self.error.set(message);
                failed
            }
        }
    }

    /// [`run`](Self::run) for operations that do not change the matcher.
    fn read<T>(&self, failed: T, body: impl FnOnce(&Self) -> Result<T, String>) -> T {
        match guard(|| body(self)) {
            Ok(value) => value,
            Err(message) => {
                self.error.set(message);
                failed
            }
        }
    }
}

/// Reads the NULL-or-live handle `m`.
///
/// # Safety
/// `m` is NULL or a live matcher handle not used mutably elsewhere meanwhile.
unsafe fn shared<'a>(m: *const FrontierMatcher) -> Option<&'a FrontierMatcher> {
    // SAFETY: the caller's contract.
    unsafe { m.as_ref() }
}

/// # Safety
/// `m` is NULL or a live matcher handle used by no one else meanwhile.
unsafe fn exclusive<'a>(m: *mut FrontierMatcher) -> Option<&'a mut FrontierMatcher> {
    // SAFETY: the caller's contract.
    unsafe { m.as_mut() }
}

/// A matcher for `lang` in `mode` (NULL: the language's default) at the start of a stream,
/// keeping 32 tokens of rollback.
///
/// # Safety
/// `vocab` is NULL or live; `lang`, `mode` NULL or NUL-terminated; `err` NULL or `err_len`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_new(
    vocab: *const FrontierVocab,
    lang: *const c_char,
    mode: *const c_char,
    err: *mut c_char,
    err_len: usize,
) -> *mut FrontierMatcher {
    let result = guard(|| {
        // SAFETY: the caller's contract on `vocab`.
        let vocab = unsafe { vocab.as_ref() }.ok_or("vocab is NULL")?;
        // SAFETY: the caller's contract on `lang` and `mode`.
        let lang = unsafe { c_text(lang, "lang")? };
        let mode = if mode.is_null() {
            None
        } else {
            // SAFETY: as above, and non-NULL.
            Some(unsafe { c_text(mode, "mode")? })
        };
        let spec = ParserSpec::parse(lang, mode).map_err(|e| e.to_string())?;
        let grammar = dynamic::compile(&spec, Arc::clone(&vocab.vocab));
        Ok(FrontierMatcher {
            matcher: grammar.matcher(),
            grammar,
            error: LastError::default(),
        })
    });
    match result {
        Ok(matcher) => Box::into_raw(Box::new(matcher)),
        Err(message) => {
            // SAFETY: the caller's contract on `err`.
            unsafe { write_message(err, err_len, &message) };
            std::ptr::null_mut()
        }
    }
}

/// Words in one mask, `ceil(V / 32)`; 0 for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_mask_words(m: *const FrontierMatcher) -> usize {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return 0;
    };
    m.read(0, |m| Ok(m.grammar.mask_words()))
}

/// Writes the next token's mask into `dst[0 .. mask_words]` and zeros into
/// `dst[mask_words .. dst_words]` (a row as wide as the model's logits: the ids past the
/// vocabulary are never allowed): 0, or −1 (writing nothing) when `dst_words < mask_words`.
///
/// # Safety
/// `m` is NULL or live; `dst` is NULL or `dst_words` writable words.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_fill_mask(
    m: *mut FrontierMatcher,
    dst: *mut u32,
    dst_words: usize,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { exclusive(m) }) else {
        return -1;
    };
    m.run(-1, |m| {
        let words = m.grammar.mask_words();
        if dst_words < words {
            return Err(format!(
                "dst holds {dst_words} words, the mask needs {words}"
            ));
        }
        if dst_words == 0 {
            // An empty vocabulary's mask has no word: nothing to write, NULL or not.
            return Ok(0);
        }
        if dst.is_null() {
            return Err("dst is NULL".to_owned());
        }
        // SAFETY: non-NULL, and the caller guarantees `dst_words` writable words at `dst`.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst, dst_words) };
        dynamic::fill_row(&*m.matcher, words, dst).map_err(|e| e.to_string())?;
        Ok(0)
    })
}

/// Accepts `token`: 1, or 0 (refused: the matcher is unchanged and the reason is the last
/// error), or −1 for a NULL handle.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_accept_token(m: *mut FrontierMatcher, token: u32) -> i32 {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { exclusive(m) }) else {
        return -1;
    };
    m.run(-1, |m| match m.matcher.consume(token) {
        Ok(()) => Ok(1),
        Err(refusal) => {
            m.error.set(refusal);
            Ok(0)
        }
    })
}

/// Accepts all of `tokens` or none: 1, or 0 (one is refused: the matcher is unchanged and the
/// last error names the first refused token and why), or −1 for a NULL handle or array.
///
/// # Safety
/// `m` is NULL or live; `tokens` is NULL (with `n_tokens == 0`) or `n_tokens` ids.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_accept_tokens(
    m: *mut FrontierMatcher,
    tokens: *const u32,
    n_tokens: usize,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { exclusive(m) }) else {
        return -1;
    };
    m.run(-1, |m| {
        // SAFETY: the caller's contract on `tokens`.
        let tokens = unsafe { c_slice(tokens, n_tokens, "tokens")? };
        let accepted = m.matcher.validate_tokens(tokens);
        if accepted == tokens.len() {
            for &token in tokens {
                m.matcher.consume(token).map_err(|e| e.to_string())?;
            }
            return Ok(1);
        }
        // The reason, from a copy taken to the refused token (the matcher stays as it was).
        let mut probe = m.matcher.clone_box();
        for &token in &tokens[..accepted] {
            probe.consume(token).map_err(|e| e.to_string())?;
        }
        let reason = match probe.consume(tokens[accepted]) {
            Err(refusal) => refusal.to_string(),
            Ok(()) => "refused".to_string(),
        };
        m.error.set(format!(
            "token {accepted} of {} refused, none accepted: {reason}",
            tokens.len()
        ));
        Ok(0)
    })
}

/// Whether the sequence is stuck: not ended, and no token of the vocabulary (EOS included)
/// may come next; false for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_is_error(m: *const FrontierMatcher) -> bool {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return false;
    };
    m.read(false, |m| Ok(m.matcher.is_error()))
}

/// How many of `tokens` the matcher would accept in a row, without changing it; −1 for NULL.
///
/// # Safety
/// `m` is NULL or live; `tokens` is NULL (with `n_tokens == 0`) or `n_tokens` ids.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_validate_tokens(
    m: *const FrontierMatcher,
    tokens: *const u32,
    n_tokens: usize,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return -1;
    };
    m.read(-1, |m| {
        // SAFETY: the caller's contract on `tokens`.
        let tokens = unsafe { c_slice(tokens, n_tokens, "tokens")? };
        let n = m.matcher.validate_tokens(tokens);
        i32::try_from(n).map_err(|_| format!("{n} tokens accepted, past int32_t"))
    })
}

/// Undoes the last `n_tokens` accepted tokens (EOS counts as one): 0, or −1 past the history
/// (unchanged). `rollback(0)` does nothing.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_rollback(
    m: *mut FrontierMatcher,
    n_tokens: usize,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { exclusive(m) }) else {
        return -1;
    };
    m.run(-1, |m| {
        m.matcher.rollback(n_tokens).map_err(|e| e.to_string())?;
        Ok(0)
    })
}

/// Back to the start of a stream, history dropped: 0, or −1 for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_reset(m: *mut FrontierMatcher) -> i32 {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { exclusive(m) }) else {
        return -1;
    };
    m.run(-1, |m| {
        m.matcher.reset();
        Ok(0)
    })
}

/// Whether the text so far is a sentence of the language; false for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_is_accepting(m: *const FrontierMatcher) -> bool {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return false;
    };
    m.read(false, |m| Ok(m.matcher.accepting()))
}

/// Whether an EOS token was accepted; false for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_is_terminated(m: *const FrontierMatcher) -> bool {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return false;
    };
    m.read(false, |m| Ok(m.matcher.is_terminated()))
}

/// The bytes every continuation starts with: returns their full length and writes at most
/// `cap` of them into `dst`; 0 for NULL.
///
/// # Safety
/// `m` is NULL or live; `dst` is NULL (with `cap == 0`) or `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_forced_bytes(
    m: *const FrontierMatcher,
    dst: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return 0;
    };
    m.read(0, |m| {
        let mut forced = Vec::new();
        m.matcher.forced_bytes(&mut forced);
        let n = forced.len().min(cap);
        if n > 0 && !dst.is_null() {
            // SAFETY: the caller guarantees `cap >= n` writable bytes at `dst`, not `forced`.
            unsafe { std::ptr::copy_nonoverlapping(forced.as_ptr(), dst, n) };
        }
        Ok(forced.len())
    })
}

/// An independent matcher in the same state (history and last error included); NULL for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_clone(m: *const FrontierMatcher) -> *mut FrontierMatcher {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return std::ptr::null_mut();
    };
    m.read(std::ptr::null_mut(), |m| {
        Ok(Box::into_raw(Box::new(FrontierMatcher {
            grammar: Arc::clone(&m.grammar),
            matcher: m.matcher.clone_box(),
            error: m.error.clone(),
        })))
    })
}

/// The last error's message ("" before any), in a buffer the handle owns and overwrites in
/// place: valid until `m` is freed, always the latest message. NULL for NULL.
///
/// # Safety
/// `m` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_last_error(m: *const FrontierMatcher) -> *const c_char {
    // SAFETY: the caller's contract.
    let Some(m) = (unsafe { shared(m) }) else {
        return std::ptr::null();
    };
    guard(|| Ok(m.error.as_ptr())).unwrap_or(std::ptr::null())
}

/// Frees the matcher; NULL is ignored.
///
/// # Safety
/// `m` is NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn frontier_matcher_free(m: *mut FrontierMatcher) {
    // SAFETY: the caller's contract: NULL or a live handle, not used afterwards.
    unsafe { free_handle(m) }
}

/// Fills the masks of a batch on up to `n_threads` threads (0: the machine's cores), as
/// llguidance's `llg_par_compute_mask` does: `matchers[i]`'s mask goes into row `rows[i]`
/// (`rows` NULL: row `i`) of `dst`, `n_rows` rows of `row_words` words each, with zeros past
/// the matcher's `mask_words` (a row as wide as the logits). 0, or −1 with the reason in `err`
/// and nothing written: a NULL array with a non-zero length, a NULL matcher, a row past
/// `n_rows` or given twice, `row_words` below a matcher's `mask_words`.
///
/// # Safety
/// `matchers` is NULL (with `n_matchers == 0`) or `n_matchers` pointers, each NULL or a live
/// matcher that no thread changes during the call (the same one may appear twice); `rows` is
/// NULL or `n_matchers` indices; `dst` is NULL (with `n_rows * row_words == 0`) or
/// `n_rows * row_words` writable words; `err` is NULL or `err_len` writable bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn frontier_matcher_fill_masks(
    matchers: *const *mut FrontierMatcher,
    n_matchers: usize,
    rows: *const usize,
    dst: *mut u32,
    n_rows: usize,
    row_words: usize,
    n_threads: usize,
    err: *mut c_char,
    err_len: usize,
) -> i32 {
    let result = guard(|| {
        // SAFETY: the caller's contract on `matchers` and `rows`.
        let handles = unsafe {
            c_slice(
                matchers.cast::<*const FrontierMatcher>(),
                n_matchers,
                "matchers",
            )?
        };
        let rows = if rows.is_null() {
            None
        } else {
            // SAFETY: as above, and non-NULL.
            Some(unsafe { c_slice(rows, n_matchers, "rows")? })
        };
        let total = n_rows
            .checked_mul(row_words)
            .ok_or("n_rows * row_words is past memory")?;
        let mut matchers = Vec::with_capacity(n_matchers);
        for (i, &handle) in handles.iter().enumerate() {
            // SAFETY: the caller's contract: NULL or a live matcher not changed meanwhile.
            let m = unsafe { handle.as_ref() }.ok_or_else(|| format!("matchers[{i}] is NULL"))?;
            let words = m.grammar.mask_words();
            if row_words < words {
                return Err(format!(
                    "rows hold {row_words} words, matchers[{i}]'s mask needs {words}"
                ));
            }
            matchers.push((&*m.matcher, words));
        }
        if total == 0 {
            // No row holds a word (every mask has none); the rows must still be rows.
            let mut seen = std::collections::BTreeSet::new();
            for i in 0..n_matchers {
                let row = rows.map_or(i, |rows| rows[i]);
                if row >= n_rows {
                    return Err(format!("row {row} is past the {n_rows} rows"));
                }
                if !seen.insert(row) {
                    return Err(format!("row {row} is given twice"));
                }
            }
            return Ok(0);
        }
        if dst.is_null() {
            return Err(format!("dst is NULL but holds {total} words"));
        }
        if total > isize::MAX as usize / std::mem::size_of::<u32>() {
            return Err(format!("dst: {total} words is too large"));
        }
        // SAFETY: non-NULL, the byte length fits in isize (checked above), and the caller
        // guarantees `n_rows * row_words` writable words at `dst`, not otherwise referenced
        // during the call.
        let all = unsafe { std::slice::from_raw_parts_mut(dst, total) };
        let mut slots: Vec<Option<&mut [u32]>> = all.chunks_mut(row_words).map(Some).collect();
        let mut jobs = Vec::with_capacity(n_matchers);
        for (i, (matcher, words)) in matchers.into_iter().enumerate() {
            let row = rows.map_or(i, |rows| rows[i]);
            let slot = slots
                .get_mut(row)
                .ok_or_else(|| format!("row {row} is past the {n_rows} rows"))?;
            let dst_row = slot
                .take()
                .ok_or_else(|| format!("row {row} is given twice"))?;
            jobs.push((matcher, words, dst_row));
        }
        let threads = match n_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        dynamic::fill_batch(jobs, threads)
            .map(|()| 0)
            .map_err(|e| match e {
                dynamic::BatchFillError::Mask(e) => e.to_string(),
                dynamic::BatchFillError::Panic => {
                    "internal error (panic): a mask thread panicked".to_owned()
                }
            })
    });
    match result {
        Ok(status) => status,
        Err(message) => {
            // SAFETY: the caller's contract on `err`.
            unsafe { write_message(err, err_len, &message) };
            -1
        }
    }
}
