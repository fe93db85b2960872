//! `frontier_parser_*`: a push parser for one stream, events handed to a C callback as the
//! JSON objects `frontier events` prints (data events as the parser emits them, not merged:
//! adjacent pieces of one value share their name and fields).

use std::ffi::{c_char, c_void};

use frontier_core::contract::Verdict;
use frontier_core::dyn_parser::{self, DynParser};
use frontier_core::language::ParserSpec;

use crate::boundary::{c_slice, c_text, free_handle, guard, write_message, LastError};

/// Receives one event as JSON text, `json_len` bytes, not NUL-terminated, valid during the
/// call only.
pub type FrontierEventCallback =
    Option<unsafe extern "C" fn(user: *mut c_void, json: *const c_char, json_len: usize)>;

/// An opaque parser handle. `parser` is `None` once `finish` has taken it.
pub struct FrontierParser {
    parser: Option<Box<dyn DynParser>>,
    error: LastError,
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
    fn run(&mut self, body: impl FnOnce(&mut Self) -> Result<i32, String>) -> i32 {
        match guard(|| body(self)) {
            Ok(status) => status,
            Err(message) => {
                self.error.set(message);
                -1
            }
        }
    }
}

const FINISHED: &str = "the parser was finished";

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
/// were delivered), for NULL arguments, or after `finish`.
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
    // SAFETY: the caller's contract.
    let Some(p) = (unsafe { p.as_mut() }) else {
        return -1;
    };
    p.run(|p| {
        // SAFETY: the caller's contract on `data`.
        let data = unsafe { c_slice(data, len, "data")? };
        let parser = p.parser.as_mut().ok_or(FINISHED)?;
        // SAFETY: the caller's contract on `cb` and `user`.
        parser
            .push(data, &mut |json| unsafe { deliver(cb, user, json) })
            .map_err(|e| e.to_string())?;
        Ok(0)
    })
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
/// incomplete, 2 error (what was left open or the error is the last error), −1 for NULL or a
/// second `finish`.
///
/// # Safety
/// `p` NULL or live; `cb` NULL or a function taking `user`.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_finish(
    p: *mut FrontierParser,
    cb: FrontierEventCallback,
    user: *mut c_void,
) -> i32 {
    // SAFETY: the caller's contract.
    let Some(p) = (unsafe { p.as_mut() }) else {
        return -1;
    };
    p.run(|p| {
        let parser = p.parser.take().ok_or(FINISHED)?;
        // SAFETY: the caller's contract on `cb` and `user`.
        let outcome = parser.finish(&mut |json| unsafe { deliver(cb, user, json) });
        Ok(match outcome.verdict {
            Verdict::Complete => 0,
            Verdict::Incomplete(unclosed) => {
                p.error.set(format!("incomplete: {unclosed}"));
                1
            }
            Verdict::Error(error) => {
                p.error.set(error.to_string());
                2
            }
        })
    })
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

/// Frees the parser; NULL is ignored.
///
/// # Safety
/// `p` NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn frontier_parser_free(p: *mut FrontierParser) {
    // SAFETY: the caller's contract: NULL or a live handle, not used afterwards.
    unsafe { free_handle(p) }
}
