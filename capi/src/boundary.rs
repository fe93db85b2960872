//! What every entry point shares at the boundary with C: catching panics, writing messages
//! into caller buffers, the sticky per-handle error, and reading C strings and arrays.
//!
//! One mechanism for all of them, so that each entry point is a few lines of Rust inside
//! [`guard`] and the pointer checks are written (and justified) once.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; a panic becomes `Err` with the panic's message, so it never unwinds into C.
///
/// `AssertUnwindSafe` holds because a handle whose operation panicked is only ever read
/// afterwards through methods that keep their own invariants (the matcher's state is `Copy`
/// and replaced whole; a parser that panicked mid-push is reported as failed).
pub fn guard<T>(body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => Err(format!("internal error (panic): {}", panic_text(&*payload))),
    }
}

/// Runs `body`, telling a panic apart: `Err` holds the panic's message (`internal error
/// (panic): ...`), `Ok` the body's own result.
pub fn catch_panic<T>(body: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(body))
        .map_err(|payload| format!("internal error (panic): {}", panic_text(&*payload)))
}

fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "no message"
    }
}

/// Frees a handle made by `Box::into_raw`; NULL is ignored, and a panic in a destructor is
/// swallowed (there is no handle left to report it on).
///
/// # Safety
/// `handle` is NULL or a live handle from `Box::into_raw`, not used afterwards.
pub unsafe fn free_handle<T>(handle: *mut T) {
    if handle.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: the caller's contract: a live `Box` pointer, given up.
        drop(unsafe { Box::from_raw(handle) });
        Ok(())
    });
}

/// Writes `message` into the caller's buffer `err` of `err_len` bytes, NUL-terminated and
/// truncated (at a UTF-8 character boundary) to `err_len - 1` bytes. Nothing is written when
/// `err` is NULL or `err_len` is 0.
///
/// # Safety
/// `err` is NULL or points to `err_len` writable bytes.
pub unsafe fn write_message(err: *mut c_char, err_len: usize, message: &str) {
    if err.is_null() || err_len == 0 {
        return;
    }
    let mut n = message.len().min(err_len - 1);
    while !message.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the caller guarantees `err` points to `err_len` writable bytes; `n < err_len`, so
    // the copy and the NUL after it stay inside them, and a Rust `&str` cannot overlap a
    // buffer C handed in for writing.
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr(), err.cast::<u8>(), n);
        *err.add(n) = 0;
    }
}

/// The bytes a handle's last error message holds, its NUL included: a longer message is
/// truncated (at a UTF-8 character boundary) to `LAST_ERROR_CAPACITY - 1` bytes. The
/// project's messages are under 200 bytes; a panic's could be longer.
pub const LAST_ERROR_CAPACITY: usize = 512;

/// A handle's last error message, returned by `*_last_error` and kept until the next error
/// replaces it (sticky: a later success does not clear it). Empty until the first error.
///
/// The message lives in one buffer allocated with the handle and overwritten in place, so the
/// pointer `*_last_error` returns stays valid until the handle is freed and always reads the
/// latest message: C code that takes it before the call that fails (`printf("%d %s", call(m),
/// frontier_matcher_last_error(m))`, whose arguments C may evaluate right to left) reads the
/// new message, never freed memory.
#[derive(Debug)]
pub struct LastError(RefCell<Box<[u8]>>);

impl Default for LastError {
    fn default() -> LastError {
        LastError(RefCell::new(
            vec![0; LAST_ERROR_CAPACITY].into_boxed_slice(),
        ))
    }
}

impl LastError {
    /// Replaces the message. Interior NULs (which C could not see past) become spaces.
    pub fn set(&self, message: impl Display) {
        let text = message.to_string().replace('\0', " ");
        let mut n = text.len().min(LAST_ERROR_CAPACITY - 1);
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        let mut buffer = self.0.borrow_mut();
        buffer[..n].copy_from_slice(&text.as_bytes()[..n]);
        buffer[n] = 0;
    }

    /// The message as a C string, valid until the handle is freed.
    pub fn as_ptr(&self) -> *const c_char {
        self.0.borrow().as_ptr().cast()
    }

    /// The message as Rust text (for tests and for the Rust side).
    pub fn text(&self) -> String {
        let buffer = self.0.borrow();
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
        String::from_utf8_lossy(&buffer[..end]).into_owned()
    }
}

impl Clone for LastError {
    fn clone(&self) -> LastError {
        LastError(RefCell::new(self.0.borrow().clone()))
    }
}

/// Reads the C string `text`, named `what` in the errors: NULL or invalid UTF-8 is an error.
///
/// # Safety
/// `text` is NULL or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn c_text<'a>(text: *const c_char, what: &str) -> Result<&'a str, String> {
    if text.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: non-NULL, and the caller guarantees a NUL-terminated string living for 'a.
    let bytes = unsafe { CStr::from_ptr(text) };
    bytes
        .to_str()
        .map_err(|_| format!("{what} is not valid UTF-8"))
}

/// Reads the C string `text` as a file path, named `what` in the errors: NULL is an error; on
/// Unix any bytes are a path (file names need not be UTF-8), elsewhere it must be UTF-8.
///
/// # Safety
/// `text` is NULL or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn c_path<'a>(text: *const c_char, what: &str) -> Result<&'a std::path::Path, String> {
    if text.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: non-NULL, and the caller guarantees a NUL-terminated string living for 'a.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(std::path::Path::new)
            .map_err(|_| format!("{what} is not valid UTF-8"))
    }
}

/// The C array `data` of `len` elements, named `what` in the errors. NULL is allowed only with
/// `len == 0` (an empty array).
///
/// # Safety
/// `data` is NULL or points to `len` initialised elements that outlive `'a` and are not
/// written while the slice lives.
pub unsafe fn c_slice<'a, T>(data: *const T, len: usize, what: &str) -> Result<&'a [T], String> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(format!("{what} is NULL but its length is {len}"));
    }
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(format!("{what}: length {len} is too large"));
    }
    // SAFETY: non-NULL, the byte length fits in isize (checked above), and the caller
    // guarantees `len` initialised, unaliased-for-writing elements living for 'a.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(message: &str, len: usize) -> Vec<u8> {
        let mut buf = vec![0x55u8; len + 2];
        // SAFETY: `buf` has `len + 2` writable bytes, more than `len`.
        unsafe { write_message(buf.as_mut_ptr().cast(), len, message) };
        buf
    }

    #[test]
    fn messages_are_truncated_inside_the_buffer_and_terminated() {
        let buf = written("unknown language", 5);
        assert_eq!(&buf[..5], b"unkn\0");
        assert_eq!(&buf[5..], &[0x55, 0x55], "nothing past err_len");
        let buf = written("ok", 8);
        assert_eq!(&buf[..3], b"ok\0");
    }

    #[test]
    fn truncation_keeps_utf8_characters_whole() {
        // "é" is two bytes; a 3-byte buffer holds "a" and the NUL, not half of "é".
        let buf = written("aé", 3);
        assert_eq!(&buf[..2], b"a\0");
    }

    #[test]
    fn a_zero_length_buffer_is_left_alone() {
        let buf = written("x", 0);
        assert_eq!(buf, vec![0x55, 0x55]);
    }

    #[test]
    fn a_panic_becomes_an_error() {
        let r: Result<(), String> = guard(|| panic!("boom"));
        assert_eq!(r.unwrap_err(), "internal error (panic): boom");
    }

    #[test]
    fn the_last_error_is_overwritten_in_place_and_truncated() {
        let error = LastError::default();
        let before = error.as_ptr();
        // SAFETY: `before` points into `error`'s buffer, alive and NUL-terminated.
        assert_eq!(unsafe { CStr::from_ptr(before) }.to_bytes(), b"");
        error.set("token_refused: token 7");
        error.set("eos_too_early: x\0y");
        assert_eq!(error.as_ptr(), before, "the same buffer");
        // SAFETY: as above.
        assert_eq!(
            unsafe { CStr::from_ptr(before) }.to_bytes(),
            b"eos_too_early: x y"
        );
        error.set("é".repeat(LAST_ERROR_CAPACITY));
        let text = error.text();
        assert_eq!(text.len(), LAST_ERROR_CAPACITY - 2, "whole characters only");
        assert!(text.chars().all(|c| c == 'é'));
        let copy = error.clone();
        error.set("x");
        assert_eq!(
            (copy.text().len(), error.text()),
            (LAST_ERROR_CAPACITY - 2, "x".into())
        );
    }

    #[test]
    fn null_text_and_arrays_are_errors() {
        // SAFETY: NULL is allowed by both functions' contracts.
        let text = unsafe { c_text(std::ptr::null(), "lang") };
        assert_eq!(text.unwrap_err(), "lang is NULL");
        // SAFETY: as above.
        let slice = unsafe { c_slice::<u32>(std::ptr::null(), 3, "tokens") };
        assert_eq!(slice.unwrap_err(), "tokens is NULL but its length is 3");
        // SAFETY: as above; a zero length never reads the pointer.
        let empty = unsafe { c_slice::<u32>(std::ptr::null(), 0, "tokens") };
        assert!(empty.unwrap().is_empty());
    }
}
