//! `frontier_vocab_*`: a vocabulary built once and shared, read-only, by matchers on any
//! thread (the handle holds an `Arc`; each matcher holds another).

use std::ffi::c_char;
use std::sync::Arc;

use frontier_core::mask::vocab::MAX_TOKEN_LEN;
use frontier_core::mask::vocab::{hf, tiktoken};
use frontier_core::mask::{VocabError, VocabErrorKind, Vocabulary};

use crate::boundary::{c_path, c_slice, free_handle, guard, write_message};

/// An opaque vocabulary handle.
pub struct FrontierVocab {
    pub(crate) vocab: Arc<Vocabulary>,
}

/// The token table an engine holds, as `frontier_vocab_new` reads it. `struct_size` is
/// `sizeof(FrontierVocabInit)` as the caller compiled it: a smaller one is refused, a larger
/// one (a newer header) accepted with its tail ignored.
#[repr(C)]
pub struct FrontierVocabInit {
    pub struct_size: usize,
    pub vocab_size: u32,
    pub token_lens: *const u32,
    pub token_bytes: *const u8,
    pub special_ids: *const u32,
    pub n_special_ids: usize,
    pub eos_ids: *const u32,
    pub n_eos_ids: usize,
}

/// Boxes `result` into a handle, or writes its error into `err` and returns NULL.
///
/// # Safety
/// `err` is NULL or points to `err_len` writable bytes.
unsafe fn handle_or_null(
    result: Result<Vocabulary, String>,
    err: *mut c_char,
    err_len: usize,
) -> *mut FrontierVocab {
    match result {
        Ok(vocab) => Box::into_raw(Box::new(FrontierVocab {
            vocab: Arc::new(vocab),
        })),
        Err(message) => {
            // SAFETY: passed on from the caller's contract.
            unsafe { write_message(err, err_len, &message) };
            std::ptr::null_mut()
        }
    }
}

/// The vocabulary `init` describes.
///
/// # Safety
/// `init` is NULL or points to a `FrontierVocabInit` whose arrays hold the lengths it gives;
/// `err` is NULL or points to `err_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_vocab_new(
    init: *const FrontierVocabInit,
    err: *mut c_char,
    err_len: usize,
) -> *mut FrontierVocab {
    let result = guard(|| {
        if init.is_null() {
            return Err("init is NULL".to_owned());
        }
        // SAFETY: non-NULL; `struct_size` is the first field, present in every version.
        let size = unsafe { (*init).struct_size };
        if size < std::mem::size_of::<FrontierVocabInit>() {
            return Err(format!(
                "init.struct_size is {size}, smaller than sizeof(FrontierVocabInit) = {}",
                std::mem::size_of::<FrontierVocabInit>()
            ));
        }
        // SAFETY: the struct is at least as large as the fields read here (checked above).
        let init = unsafe { &*init };
        // SAFETY: the caller guarantees each array holds the length the struct gives.
        let (lens, special, eos) = unsafe {
            (
                c_slice(init.token_lens, init.vocab_size as usize, "init.token_lens")?,
                c_slice(init.special_ids, init.n_special_ids, "init.special_ids")?,
                c_slice(init.eos_ids, init.n_eos_ids, "init.eos_ids")?,
            )
        };
        // Each length is checked before any byte is read: one absurd length (a -1 used as a
        // marker) would otherwise make the table's sum, and the slice read, run past the bytes.
        if let Some((id, &len)) = lens
            .iter()
            .enumerate()
            .find(|(_, &len)| len as usize > MAX_TOKEN_LEN)
        {
            let message = format!("token id {id} has {len} bytes (the limit is {MAX_TOKEN_LEN})");
            return Err(VocabError::new(VocabErrorKind::TokenTooLong, message).to_string());
        }
        let total = lens
            .iter()
            .try_fold(0usize, |sum, &len| sum.checked_add(len as usize))
            .ok_or("init.token_lens add up to more than memory holds")?;
        // SAFETY: the caller guarantees `token_bytes` holds the lengths' sum.
        let bytes = unsafe { c_slice(init.token_bytes, total, "init.token_bytes")? };
        vocab_from_table(lens, bytes, special, eos)
    });
    // SAFETY: the caller's contract on `err`.
    unsafe { handle_or_null(result, err, err_len) }
}

/// `Vocabulary::from_raw` over a lengths-and-bytes table.
fn vocab_from_table(
    lens: &[u32],
    bytes: &[u8],
    special: &[u32],
    eos: &[u32],
) -> Result<Vocabulary, String> {
    let mut tokens = Vec::with_capacity(lens.len());
    let mut at = 0;
    for &len in lens {
        let end = at + len as usize;
        tokens.push(bytes[at..end].to_vec());
        at = end;
    }
    Vocabulary::from_raw(&tokens, special, eos).map_err(|e| e.to_string())
}

/// The vocabulary of a `tokenizer.json` file; the EOS token is `eos_token` of a
/// `tokenizer_config.json` in the same folder, if there is one.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `err` is NULL or `err_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_vocab_from_tokenizer_json(
    path: *const c_char,
    err: *mut c_char,
    err_len: usize,
) -> *mut FrontierVocab {
    let result = guard(|| {
        // SAFETY: the caller's contract on `path`.
        let path = unsafe { c_path(path, "path")? };
        hf::from_file(path, &[]).map_err(|e| format!("{}: {e}", path.display()))
    });
    // SAFETY: the caller's contract on `err`.
    unsafe { handle_or_null(result, err, err_len) }
}

/// A tiktoken encoding built in, `cl100k_base` or `o200k_base`; any other `name` is the path
/// of a `.tiktoken` rank file, whose special tokens and EOS are decided as `masks.md` (the
/// project's docs) says: OpenAI's own `cl100k_base.tiktoken` or `o200k_base.tiktoken` is that
/// built-in, any other file gets `<|endoftext|>` as its EOS (a rank spelling it, else the id
/// past the ranks).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `err` is NULL or `err_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn frontier_vocab_from_tiktoken(
    name: *const c_char,
    err: *mut c_char,
    err_len: usize,
) -> *mut FrontierVocab {
    let result = guard(|| {
        // SAFETY: the caller's contract on `name`.
        let path = unsafe { c_path(name, "name")? };
        match path.to_str() {
            Some(name) => tiktoken::from_name_or_path(name, &[]),
            // Not UTF-8, so no built-in name: a rank file's path (file names are bytes).
            None => tiktoken::from_path(path, &[]),
        }
        .map_err(|e| e.to_string())
    });
    // SAFETY: the caller's contract on `err`.
    unsafe { handle_or_null(result, err, err_len) }
}

/// The number of ids, `V`; 0 for NULL.
///
/// # Safety
/// `vocab` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn frontier_vocab_size(vocab: *const FrontierVocab) -> usize {
    // SAFETY: the caller's contract: NULL or a live handle.
    let Some(vocab) = (unsafe { vocab.as_ref() }) else {
        return 0;
    };
    guard(|| Ok(vocab.vocab.size() as usize)).unwrap_or(0)
}

/// Frees the handle (matchers made from it keep the vocabulary alive). NULL is ignored.
///
/// # Safety
/// `vocab` is NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn frontier_vocab_free(vocab: *mut FrontierVocab) {
    // SAFETY: the caller's contract: NULL or a live handle, not used afterwards.
    unsafe { free_handle(vocab) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(lens: &[u32], bytes: &[u8], eos: &[u32]) -> FrontierVocabInit {
        FrontierVocabInit {
            struct_size: std::mem::size_of::<FrontierVocabInit>(),
            vocab_size: lens.len() as u32,
            token_lens: lens.as_ptr(),
            token_bytes: bytes.as_ptr(),
            special_ids: std::ptr::null(),
            n_special_ids: 0,
            eos_ids: eos.as_ptr(),
            n_eos_ids: eos.len(),
        }
    }

    fn error_of(build: impl FnOnce(*mut c_char, usize) -> *mut FrontierVocab) -> String {
        let mut err = [0u8; 128];
        let v = build(err.as_mut_ptr().cast(), err.len());
        assert!(v.is_null());
        let end = err.iter().position(|&b| b == 0).unwrap();
        String::from_utf8(err[..end].to_vec()).unwrap()
    }

    #[test]
    fn a_table_becomes_a_vocabulary() {
        let (lens, bytes) = ([1u32, 2, 5], b"abc<eos>");
        let init = init(&lens, bytes, &[2]);
        // SAFETY: `init` describes live arrays of the lengths it gives.
        let v = unsafe { frontier_vocab_new(&init, std::ptr::null_mut(), 0) };
        // SAFETY: `v` is a live handle from above, freed once.
        unsafe {
            assert_eq!(frontier_vocab_size(v), 3);
            assert_eq!((*v).vocab.bytes(1), b"bc");
            assert_eq!((*v).vocab.eos(), &[2]);
            frontier_vocab_free(v);
        }
    }

    #[test]
    fn a_short_struct_size_is_refused_and_a_longer_one_accepted() {
        let (lens, bytes) = ([1u32], b"a");
        let mut short = init(&lens, bytes, &[]);
        short.struct_size -= 8;
        // SAFETY: as above.
        let message = error_of(|e, n| unsafe { frontier_vocab_new(&short, e, n) });
        assert!(message.starts_with("init.struct_size is "), "{message}");
        let mut long = init(&lens, bytes, &[]);
        long.struct_size += 64;
        // SAFETY: the fields read are those of the current struct, all live.
        let v = unsafe { frontier_vocab_new(&long, std::ptr::null_mut(), 0) };
        assert!(!v.is_null());
        // SAFETY: a live handle.
        unsafe { frontier_vocab_free(v) };
    }

    #[test]
    fn a_tiktoken_rank_file_by_path_is_a_vocabulary() {
        let dir = std::env::temp_dir().join(format!("frontier-capi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tiny.tiktoken");
        // "a", "b", "ab" at ranks 0-2; <|endoftext|> becomes id 3.
        std::fs::write(&path, "YQ== 0\nYg== 1\nYWI= 2\n").unwrap();
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path; no error buffer.
        let v = unsafe { frontier_vocab_from_tiktoken(c_path.as_ptr(), std::ptr::null_mut(), 0) };
        assert!(!v.is_null());
        // SAFETY: `v` is a live handle from above, freed once.
        unsafe {
            assert_eq!(frontier_vocab_size(v), 4);
            assert_eq!((*v).vocab.bytes(2), b"ab");
            assert_eq!((*v).vocab.eos(), &[3]);
            frontier_vocab_free(v);
        }
        // A file name need not be UTF-8: the path is its bytes.
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let odd = dir.join(std::ffi::OsStr::from_bytes(b"r\xffnk.tiktoken"));
            std::fs::copy(&path, &odd).unwrap();
            let c_odd = std::ffi::CString::new(odd.as_os_str().as_bytes()).unwrap();
            // SAFETY: a NUL-terminated path; no error buffer.
            let v =
                unsafe { frontier_vocab_from_tiktoken(c_odd.as_ptr(), std::ptr::null_mut(), 0) };
            assert!(!v.is_null());
            // SAFETY: `v` is a live handle from above, freed once.
            unsafe {
                assert_eq!(frontier_vocab_size(v), 4);
                frontier_vocab_free(v);
            }
        }
        std::fs::write(&path, "YQ== 0\nYg== 0\n").unwrap();
        // SAFETY: as above, with a 128-byte error buffer.
        let message =
            error_of(|e, n| unsafe { frontier_vocab_from_tiktoken(c_path.as_ptr(), e, n) });
        assert!(message.starts_with("duplicate_id: line 2: "), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_arguments_write_the_reason() {
        // SAFETY: NULL arguments are allowed.
        let message = error_of(|e, n| unsafe { frontier_vocab_new(std::ptr::null(), e, n) });
        assert_eq!(message, "init is NULL");
        let (lens, bytes) = ([1u32], b"a");
        let init = init(&lens, bytes, &[7]);
        // SAFETY: live arrays.
        let message = error_of(|e, n| unsafe { frontier_vocab_new(&init, e, n) });
        assert!(message.contains("special id 7"), "{message}");
        // One absurd length, with a single byte behind it: refused before any byte is read.
        let (lens, bytes) = ([1u32, u32::MAX, 1], b"a");
        let init = self::init(&lens, bytes, &[]);
        // SAFETY: live arrays; `token_bytes` does not hold the lengths' sum, and must not be
        // read past its one byte.
        let message = error_of(|e, n| unsafe { frontier_vocab_new(&init, e, n) });
        assert_eq!(
            message,
            "token_too_long: token id 1 has 4294967295 bytes (the limit is 65535)"
        );
        // SAFETY: a NUL-terminated literal.
        let message =
            error_of(|e, n| unsafe { frontier_vocab_from_tiktoken(c"p50k".as_ptr(), e, n) });
        assert!(
            message.starts_with(
                "io: unknown tiktoken encoding \"p50k\" (built in: cl100k_base, o200k_base)"
            ),
            "{message}"
        );
        // SAFETY: as above.
        let message = error_of(|e, n| unsafe {
            frontier_vocab_from_tokenizer_json(c"/nonexistent/tokenizer.json".as_ptr(), e, n)
        });
        assert!(
            message.starts_with("/nonexistent/tokenizer.json: "),
            "{message}"
        );
        // SAFETY: NULL is allowed.
        unsafe {
            assert_eq!(frontier_vocab_size(std::ptr::null()), 0);
            frontier_vocab_free(std::ptr::null_mut());
        }
    }
}
