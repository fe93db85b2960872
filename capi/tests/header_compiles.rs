//! `include/frontier.h` compiles, warning-free (`-Wall -Wextra -Werror -pedantic`), as C99,
//! C11 and C++11/17, in a translation unit that calls each of the spec's functions with the
//! spec's types (so a prototype that drifted from the spec's types fails to compile here, as
//! a program written against the spec would).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Calls every prototype of embedding.md through a pointer of the spec's exact type: a
/// different parameter or return type is an error in C++ and, with -Werror, in C.
const PROGRAM: &str = r#"
#include "frontier.h"

typedef FrontierVocab *(*vocab_new_t)(const FrontierVocabInit *, char *, size_t);
typedef FrontierVocab *(*vocab_path_t)(const char *, char *, size_t);
typedef size_t (*vocab_size_t)(const FrontierVocab *);
typedef void (*vocab_free_t)(FrontierVocab *);
typedef FrontierMatcher *(*matcher_new_t)(const FrontierVocab *, const char *, const char *,
                                          char *, size_t);
typedef size_t (*mask_words_t)(const FrontierMatcher *);
typedef int32_t (*fill_mask_t)(FrontierMatcher *, uint32_t *, size_t);
typedef int32_t (*accept_t)(FrontierMatcher *, uint32_t);
typedef int32_t (*validate_t)(const FrontierMatcher *, const uint32_t *, size_t);
typedef int32_t (*rollback_t)(FrontierMatcher *, size_t);
typedef int32_t (*reset_t)(FrontierMatcher *);
typedef bool (*flag_t)(const FrontierMatcher *);
typedef size_t (*forced_t)(const FrontierMatcher *, uint8_t *, size_t);
typedef FrontierMatcher *(*clone_t)(const FrontierMatcher *);
typedef const char *(*matcher_error_t)(const FrontierMatcher *);
typedef void (*matcher_free_t)(FrontierMatcher *);
typedef FrontierParser *(*parser_new_t)(const char *, const char *, char *, size_t);
typedef int32_t (*push_t)(FrontierParser *, const uint8_t *, size_t, FrontierEventCallback,
                          void *);
typedef void (*allowed_t)(const FrontierParser *, uint8_t *);
typedef bool (*accepting_t)(const FrontierParser *);
typedef int32_t (*finish_t)(FrontierParser *, FrontierEventCallback, void *);
typedef const char *(*parser_error_t)(const FrontierParser *);
typedef void (*parser_free_t)(FrontierParser *);

static void on_event(void *user, const char *json, size_t json_len) {
  (void)user;
  (void)json;
  (void)json_len;
}

int main(void) {
  vocab_new_t vocab_new = frontier_vocab_new;
  vocab_path_t from_json = frontier_vocab_from_tokenizer_json;
  vocab_path_t from_tiktoken = frontier_vocab_from_tiktoken;
  vocab_size_t vocab_size = frontier_vocab_size;
  vocab_free_t vocab_free = frontier_vocab_free;
  matcher_new_t matcher_new = frontier_matcher_new;
  mask_words_t mask_words = frontier_matcher_mask_words;
  fill_mask_t fill_mask = frontier_matcher_fill_mask;
  accept_t accept = frontier_matcher_accept_token;
  validate_t validate = frontier_matcher_validate_tokens;
  rollback_t rollback = frontier_matcher_rollback;
  reset_t reset = frontier_matcher_reset;
  flag_t is_accepting = frontier_matcher_is_accepting;
  flag_t is_terminated = frontier_matcher_is_terminated;
  forced_t forced = frontier_matcher_forced_bytes;
  clone_t clone = frontier_matcher_clone;
  matcher_error_t matcher_error = frontier_matcher_last_error;
  matcher_free_t matcher_free = frontier_matcher_free;
  parser_new_t parser_new = frontier_parser_new;
  push_t push = frontier_parser_push;
  allowed_t allowed = frontier_parser_allowed;
  accepting_t accepting = frontier_parser_accepting;
  finish_t finish = frontier_parser_finish;
  parser_error_t parser_error = frontier_parser_last_error;
  parser_free_t parser_free = frontier_parser_free;
  FrontierEventCallback cb = on_event;
  FrontierVocabInit init;
  init.struct_size = sizeof(FrontierVocabInit);
  init.vocab_size = 0;
  init.token_lens = 0;
  init.token_bytes = 0;
  init.special_ids = 0;
  init.n_special_ids = 0;
  init.eos_ids = 0;
  init.n_eos_ids = 0;
  return (vocab_new && from_json && from_tiktoken && vocab_size && vocab_free && matcher_new &&
          mask_words && fill_mask && accept && validate && rollback && reset && is_accepting &&
          is_terminated && forced && clone && matcher_error && matcher_free && parser_new &&
          push && allowed && accepting && finish && parser_error && parser_free && cb &&
          init.struct_size)
             ? 0
             : 1;
}
"#;

fn check(compiler: &str, std: &str, file: &Path) {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = Command::new(compiler)
        .arg(format!("-std={std}"))
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            "-I",
        ])
        .arg(&include)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(
        out.status.success(),
        "{compiler} -std={std} failed on frontier.h:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi_header_compiles");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, PROGRAM).unwrap();
    path
}

#[test]
fn the_header_compiles_as_c99_and_c11() {
    let file = write("spec.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    for std in ["c99", "c11"] {
        check(&cc, std, &file);
    }
}

#[test]
fn the_header_compiles_as_cxx() {
    let file = write("spec.cpp");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    for std in ["c++11", "c++17"] {
        check(&cxx, std, &file);
    }
}
