//! `frontier_parser_*`: a push parser for one stream, events handed to a C callback as the
//! JSON objects `frontier events` prints (data events as the parser emits them, not merged:
//! adjacent pieces of one value share their name and fields).

use std::ffi::{c_char, c_void};

use frontier_core::contract::Verdict;
use frontier_core::dyn_parser::{self, DynParser};
use frontier_core::language::ParserSpec;

use crate::boundary::{c_slice, c_text, catch_panic, free_handle, guard, write_message, LastError};

/// Receives one event as JSON text, `json_len` bytes, not NUL-terminated, valid during the
/// call only.
pub type FrontierEventCallback =
    Option<unsafe extern "C" fn(user: *mut c_void, json: *const c_char, json_len: usize)>;

/// An opaque parser handle. The parser is taken out of the handle for the length of a push or
/// a finish, so that no Rust reference to the handle lives while C's callback runs: a callback
/// that calls the same parser back gets −1 ("busy"), never a second mutable borrow.
pub struct FrontierParser {
    parser: Option<Box<dyn DynParser>>,
    state: State,
    /// `frontier_parser_free` was called from the callback: the call under way frees it.
    free_pending: bool,
    error: LastError,
}

/// Where the handle's parser is when `parser` is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// In `parser`.
    Ready,
    /// Taken by a push or finish under way (a call from its callback sees this).
    Busy,
    /// Consumed by `finish`.
    Finished,
    /// Dropped after a panic inside it (a bug): its state could not be trusted.
    Broken,
}

/// Calls `cb` (when not NULL) with `json`.
///
/// # Safety
/// `cb` is NULL or a function that accepts `user` and a `json_len`-byte buffer.
unsafe fn deliver(cb: FrontierEventCallback, user: *mut c_void, json: &[u8]) {
    if let Some(cb) = cb {
        // SAFETY: `json` is live for the call; the caller vouches for `cb` and `user`.
        unsafe { cb(user, json.as_ptr().cast(), json.len()) }
    }
}

impl FrontierParser {
    /// Takes the parser out for a push or finish, or says why it cannot (the message is set).
    fn take(&mut self) -> Option<Box<dyn DynParser>> {
        let why = match self.state {
            State::Ready => {
                let parser = self.parser.take();
                if parser.is_some() {
                    self.state = State::Busy;
                }
                return parser;
            }
            State::Busy => BUSY,
            State::Finished => FINISHED,
            State::Broken => BROKEN,
        };
        self.error.set(why);
        None
    }
}

const FINISHED: &str = "the parser was finished";
const BUSY: &str = "the parser is busy: called from its own event callback";
const BROKEN: &str = "the parser was dropped after an internal error (panic)";

/// A parser for `lang` in `mode` (NULL: the language's default).
///
/// # Safety
/// `lang`, `mode` NULL or NUL-terminated; `err` NULL or `err_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_new(
    lang: *const c_char,
    mode: *const c_char,
    err: *mut c_char,
    err_len: usize,
) -> *mut FrontierParser {
    let result = guard(|| {
        // SAFETY: the caller's contract on `lang` and `mode`.
        let lang = unsafe { c_text(lang, "lang")? };
        let mode = if mode.is_null() {
            None
        } else {
            // SAFETY: as above, and non-NULL.
            Some(unsafe { c_text(mode, "mode")? })
        };
        let spec = ParserSpec::parse(lang, mode).map_err(|e| e.to_string())?;
        Ok(FrontierParser {
            parser: Some(dyn_parser::build(&spec)),
            state: State::Ready,
            free_pending: false,
            error: LastError::default(),
        })
    });
    match result {
        Ok(parser) => Box::into_raw(Box::new(parser)),
        Err(message) => {
            // SAFETY: the caller's contract on `err`.
            unsafe { write_message(err, err_len, &message) };
            std::ptr::null_mut()
        }
    }
}

/// Pushes `len` bytes; `cb` (may be NULL) receives each event they confirm. 0, or −1 when the
/// input leaves the language (the message gives kind, offset and byte; the events before it
/// were delivered), for NULL arguments, after `finish`, or from the parser's own callback.
///
/// # Safety
/// `p` NULL or live; `data` NULL (with `len == 0`) or `len` bytes; `cb` NULL or a function
/// taking `user`.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_push(
    p: *mut FrontierParser,
    data: *const u8,
    len: usize,
    cb: FrontierEventCallback,
    user: *mut c_void,
) -> i32 {
    // SAFETY: the caller's contract; this borrow ends before the callback can run.
    let Some(handle) = (unsafe { p.as_mut() }) else {
        return -1;
    };
    // SAFETY: the caller's contract on `data`.
    let data = match unsafe { c_slice(data, len, "data") } {
        Ok(data) => data,
        Err(message) => {
            handle.error.set(message);
            return -1;
        }
    };
    let Some(mut parser) = handle.take() else {
        return -1;
    };
    // No reference to the handle lives from here to the end of the push: a callback may call
    // any function on `p` (it finds the parser busy).
    let pushed = catch_panic(|| {
        // SAFETY: the caller's contract on `cb` and `user`.
        parser.push(data, &mut |json| unsafe { deliver(cb, user, json) })
    });
    // SAFETY: `p` is still the caller's live handle (no function frees a busy parser: see
    // `frontier_parser_free`).
    let handle = unsafe { &mut *p };
    let status = match pushed {
        Ok(result) => {
            handle.parser = Some(parser);
            handle.state = State::Ready;
            match result {
                Ok(()) => 0,
                Err(error) => {
                    handle.error.set(error);
                    -1
                }
            }
        }
        Err(panic) => {
            handle.state = State::Broken;
            handle.error.set(panic);
            -1
        }
    };
    // SAFETY: the handle is live and `handle` is not used past here.
    unsafe { settle(p, status) }
}

/// The bytes that may come next, as 32 bytes (bit `b % 8` of byte `b / 8`); all zero after an
/// error, after `finish`, or for a NULL handle.
///
/// # Safety
/// `p` NULL or live; `out` NULL or 32 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_allowed(p: *const FrontierParser, out: *mut u8) {
    if out.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let p = unsafe { p.as_ref() };
    let set = guard(|| {
        Ok(p.and_then(|p| p.parser.as_ref())
            .map(|parser| parser.allowed()))
    })
    .ok()
    .flatten()
    .unwrap_or([0; 32]);
    // SAFETY: the caller guarantees 32 writable bytes at `out`.
    unsafe { std::ptr::copy_nonoverlapping(set.as_ptr(), out, 32) };
}

/// Whether the input so far is a sentence; false for NULL or after `finish`.
///
/// # Safety
/// `p` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_accepting(p: *const FrontierParser) -> bool {
    // SAFETY: the caller's contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return false;
    };
    guard(|| Ok(p.parser.as_ref().is_some_and(|parser| parser.accepting()))).unwrap_or(false)
}

/// Ends the stream: `cb` receives the events only the end confirms; returns 0 complete, 1
/// incomplete, 2 error (what was left open or the error is the last error), −1 for NULL, a
/// second `finish`, or a call from the parser's own callback.
///
/// # Safety
/// `p` NULL or live; `cb` NULL or a function taking `user`.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_finish(
    p: *mut FrontierParser,
    cb: FrontierEventCallback,
    user: *mut c_void,
) -> i32 {
    // SAFETY: the caller's contract; this borrow ends before the callback can run.
    let Some(handle) = (unsafe { p.as_mut() }) else {
        return -1;
    };
    let Some(parser) = handle.take() else {
        return -1;
    };
    // SAFETY: the caller's contract on `cb` and `user`.
    let outcome = catch_panic(|| parser.finish(&mut |json| unsafe { deliver(cb, user, json) }));
    // SAFETY: `p` is still the caller's live handle, as in `frontier_parser_push`.
    let handle = unsafe { &mut *p };
    handle.state = State::Finished;
    let status = match outcome.map(|outcome| outcome.verdict) {
        Ok(Verdict::Complete) => 0,
        Ok(Verdict::Incomplete(unclosed)) => {
            handle.error.set(format!("incomplete: {unclosed}"));
            1
        }
        Ok(Verdict::Error(error)) => {
            handle.error.set(error);
            2
        }
        Err(panic) => {
            handle.error.set(panic);
            -1
        }
    };
    // SAFETY: the handle is live and `handle` is not used past here.
    unsafe { settle(p, status) }
}

/// The last error's message ("" before any), in a buffer the handle owns and overwrites in
/// place: valid until `p` is freed, always the latest message. NULL for NULL.
///
/// # Safety
/// `p` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_last_error(p: *const FrontierParser) -> *const c_char {
    // SAFETY: the caller's contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return std::ptr::null();
    };
    guard(|| Ok(p.error.as_ptr())).unwrap_or(std::ptr::null())
}

/// Frees the parser; NULL is ignored. Called from the parser's own callback, the free waits
/// for the push or finish under way, which frees the handle as it returns.
///
/// # Safety
/// `p` NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_free(p: *mut FrontierParser) {
    // SAFETY: the caller's contract: NULL or a live handle; no other reference to it lives
    // (a push or finish under way holds none while its callback runs).
    if let Some(handle) = unsafe { p.as_mut() } {
        if handle.state == State::Busy {
            handle.free_pending = true;
            return;
        }
    }
    // SAFETY: the caller's contract: NULL or a live handle, not used afterwards.
    unsafe { free_handle(p) }
}

/// Ends a push or finish on `p`: `status`, after freeing the handle if its callback asked.
///
/// # Safety
/// `p` is a live handle with no reference to it alive, not used afterwards if freed.
unsafe fn settle(p: *mut FrontierParser, status: i32) -> i32 {
    // SAFETY: the caller's contract.
    if unsafe { (*p).free_pending } {
        // SAFETY: as above; the callback gave the handle up.
        unsafe { free_handle(p) };
    }
    status
}
