/* frontier's C ABI: vocabularies, token-mask matchers and push parsers.
 *
 * Build: cargo build --release -p frontier-capi (target/release/libfrontier_capi.a, .so).
 * Guide: docs/c.md. Status returns are 0 on success and -1 on error, the message then readable
 * through the handle's *_last_error (a buffer the handle owns, overwritten in place by each
 * error: valid until the handle is freed, always the latest message), except where noted. Constructors write a NUL-terminated message (truncated to err_len - 1 bytes) into err
 * and return NULL on failure. Free functions accept NULL; other functions given a NULL handle
 * return 0, false, -1 or NULL. No function lets a panic cross into C; there is no global state.
 * A vocabulary is shared read-only across threads; a matcher or parser is used by one thread at
 * a time. */
#ifndef FRONTIER_H
#define FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FrontierVocab FrontierVocab;
typedef struct FrontierMatcher FrontierMatcher;
typedef struct FrontierParser FrontierParser;
typedef struct FrontierVocabInit {
  size_t struct_size;          /* sizeof(FrontierVocabInit) */
  uint32_t vocab_size;         /* ids 0 .. vocab_size-1 */
  const uint32_t *token_lens;  /* vocab_size entries; 0 for a hole or a special token */
  const uint8_t *token_bytes;  /* every token's bytes, concatenated in id order */
  const uint32_t *special_ids; size_t n_special_ids;
  const uint32_t *eos_ids;     size_t n_eos_ids;   /* EOS ids are special too */
} FrontierVocabInit;
/* one event as JSON text, not NUL-terminated */
typedef void (*FrontierEventCallback)(void *user, const char *json, size_t json_len);

/* Vocabulary: built once, shared read-only (matchers keep it alive after the free). A
 * struct_size smaller than this header's sizeof(FrontierVocabInit) is an error; a larger one
 * is accepted and its tail ignored. from_tiktoken: "cl100k_base", "o200k_base", or the path of
 * a .tiktoken rank file (EOS <|endoftext|>: see docs/masks.md). */
FrontierVocab *frontier_vocab_new(const FrontierVocabInit *init, char *err, size_t err_len);
FrontierVocab *frontier_vocab_from_tokenizer_json(const char *path, char *err, size_t err_len);
FrontierVocab *frontier_vocab_from_tiktoken(const char *name, char *err, size_t err_len);
size_t frontier_vocab_size(const FrontierVocab *vocab);
void frontier_vocab_free(FrontierVocab *vocab);

/* Matcher: mask layout of masks.md (bit t % 32 of word t / 32, 1 = allowed). mode NULL: the
 * language's default. fill_mask writes mask_words words and zeros in the dst_words past them
 * (a row as wide as the logits: ids past vocab_size are never allowed); with fewer than
 * mask_words it is -1 and writes nothing. accept_token: 1 accepted, 0 refused (matcher unchanged, reason in
 * last_error), -1 error; an id >= vocab_size is refused. validate_tokens: the accepted prefix's
 * length, state unchanged. rollback keeps 32 tokens (EOS counts as one); rollback(0) does
 * nothing. forced_bytes returns the full length, writing at most cap bytes; it is empty when
 * the text so far is accepting. */
FrontierMatcher *frontier_matcher_new(const FrontierVocab *vocab, const char *lang,
                                      const char *mode, char *err, size_t err_len);
size_t frontier_matcher_mask_words(const FrontierMatcher *m);
int32_t frontier_matcher_fill_mask(FrontierMatcher *m, uint32_t *dst, size_t dst_words);
int32_t frontier_matcher_accept_token(FrontierMatcher *m, uint32_t token); /* 1, 0, -1 */
int32_t frontier_matcher_validate_tokens(const FrontierMatcher *m, const uint32_t *tokens,
                                         size_t n_tokens);   /* accepted prefix, or -1 */
/* All of tokens or none: 1, 0 (one refused: unchanged, the first refused in last_error), -1. */
int32_t frontier_matcher_accept_tokens(FrontierMatcher *m, const uint32_t *tokens,
                                       size_t n_tokens);
/* Stuck: not terminated and no token (EOS included) allowed. */
bool frontier_matcher_is_error(const FrontierMatcher *m);
int32_t frontier_matcher_rollback(FrontierMatcher *m, size_t n_tokens);
int32_t frontier_matcher_reset(FrontierMatcher *m);
bool frontier_matcher_is_accepting(const FrontierMatcher *m);
bool frontier_matcher_is_terminated(const FrontierMatcher *m);
size_t frontier_matcher_forced_bytes(const FrontierMatcher *m, uint8_t *dst, size_t cap);
FrontierMatcher *frontier_matcher_clone(const FrontierMatcher *m);
const char *frontier_matcher_last_error(const FrontierMatcher *m);
void frontier_matcher_free(FrontierMatcher *m);

/* A batch's masks on up to n_threads threads (0: the machine's cores), as llguidance's
 * llg_par_compute_mask: matchers[i]'s mask goes into row rows[i] (rows NULL: row i) of dst,
 * n_rows rows of row_words words each, zeros past the matcher's mask_words. 0, or -1 with the
 * reason in err (as a constructor writes it) and nothing written: a NULL array with a non-zero
 * length, a NULL matcher, a row past n_rows or given twice, row_words below a mask_words. No
 * thread may change the matchers during the call (one may appear twice). */
int32_t frontier_matcher_fill_masks(FrontierMatcher *const *matchers, size_t n_matchers,
                                    const size_t *rows, uint32_t *dst, size_t n_rows,
                                    size_t row_words, size_t n_threads, char *err,
                                    size_t err_len);

/* Parser: push bytes, cb (may be NULL) receives each confirmed event as the JSON object
 * `frontier events` prints, data events unmerged. push is -1 when the input leaves the
 * language (kind, offset and byte in last_error; the events before it were delivered).
 * allowed: bit b % 8 of out[b / 8] is byte b. finish: 0 complete, 1 incomplete, 2 error
 * (what was left open or the error in last_error), -1 for NULL or a second finish. */
FrontierParser *frontier_parser_new(const char *lang, const char *mode, char *err,
                                    size_t err_len);
int32_t frontier_parser_push(FrontierParser *p, const uint8_t *data, size_t len,
                             FrontierEventCallback cb, void *user);
void frontier_parser_allowed(const FrontierParser *p, uint8_t out[32]);
bool frontier_parser_accepting(const FrontierParser *p);
int32_t frontier_parser_finish(FrontierParser *p, FrontierEventCallback cb, void *user);
const char *frontier_parser_last_error(const FrontierParser *p);
void frontier_parser_free(FrontierParser *p);

#ifdef __cplusplus
}
#endif

#endif /* FRONTIER_H */
