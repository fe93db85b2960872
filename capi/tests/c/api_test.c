/* The C ABI driven from C, compiled against include/frontier.h and libfrontier_capi.a by
 * tests/c_api.rs, which checks what this prints against the Rust side.
 *
 * usage: api_test IDS_FILE PATCH_FILE RANK_FILE
 *   IDS_FILE: the patch's o200k_base ids, whitespace-separated, EOS last.
 *   PATCH_FILE: the patch's bytes, pushed through an apply_patch parser.
 *   RANK_FILE: a .tiktoken file of the CTL pieces "call", " ", "c1", " read", "\n", "end"
 *   at ranks 0-5.
 * stdout: "mask STEP HASH" (FNV-1a 64 of the mask's words) before each token and after the
 * last, "event JSON" for each parser event, "verdict N"; a failed check prints
 * "FAIL line: what" and exits 1. */
#include "frontier.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      printf("FAIL %d: %s\n", __LINE__, #cond);                       \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static uint64_t fnv1a(const uint32_t *words, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    for (int b = 0; b < 4; b++) {
      h ^= (words[i] >> (8 * b)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

static int allowed(const uint32_t *mask, uint32_t t) { return (mask[t / 32] >> (t % 32)) & 1; }

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  buf[*len] = 0;
  fclose(f);
  return buf;
}

static uint32_t *read_ids(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t cap = 1024;
  uint32_t *ids = malloc(cap * sizeof *ids);
  unsigned long v;
  *n = 0;
  while (fscanf(f, "%lu", &v) == 1) {
    if (*n == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
    ids[(*n)++] = (uint32_t)v;
  }
  fclose(f);
  return ids;
}

/* A vocabulary from raw tokens: "a", "b", "ab", a hole, "<eos>" (EOS). */
static void raw_vocab(void) {
  const uint32_t lens[] = {1, 1, 2, 0, 5};
  const uint8_t bytes[] = "abab<eos>";
  const uint32_t eos[] = {4};
  FrontierVocabInit init = {sizeof init, 5, lens, bytes, NULL, 0, eos, 1};
  char err[128] = "";
  FrontierVocab *v = frontier_vocab_new(&init, err, sizeof err);
  CHECK(v != NULL);
  CHECK(frontier_vocab_size(v) == 5);
  frontier_vocab_free(v);

  /* bad struct_size: refused, message written */
  FrontierVocabInit small = init;
  small.struct_size = sizeof init - 1;
  CHECK(frontier_vocab_new(&small, err, sizeof err) == NULL);
  CHECK(strstr(err, "struct_size") != NULL);
  /* a larger struct (a newer header) is accepted */
  struct {
    FrontierVocabInit init;
    uint64_t tail;
  } big = {init, 0xffffffffffffffffull};
  big.init.struct_size = sizeof big;
  v = frontier_vocab_new(&big.init, err, sizeof err);
  CHECK(v != NULL);
  frontier_vocab_free(v);
  /* an EOS id past the vocabulary */
  const uint32_t bad_eos[] = {9};
  FrontierVocabInit bad = init;
  bad.eos_ids = bad_eos;
  CHECK(frontier_vocab_new(&bad, err, sizeof err) == NULL);
  CHECK(strstr(err, "9") != NULL);
  /* a short error buffer is truncated and terminated, never overrun */
  char tiny[6];
  memset(tiny, 'x', sizeof tiny);
  CHECK(frontier_vocab_new(NULL, tiny, 4) == NULL);
  CHECK(tiny[3] == 0 && strcmp(tiny, "ini") == 0 && tiny[4] == 'x');
  /* NULL handles */
  CHECK(frontier_vocab_size(NULL) == 0);
  frontier_vocab_free(NULL);
}

/* A .tiktoken rank file by path: <|endoftext|> is the id past the ranks, 6. */
static void rank_file(const char *path) {
  char err[256] = "";
  FrontierVocab *v = frontier_vocab_from_tiktoken(path, err, sizeof err);
  CHECK(v != NULL);
  if (!v) {
    printf("rank file: %s\n", err);
    return;
  }
  CHECK(frontier_vocab_size(v) == 7);
  FrontierMatcher *m = frontier_matcher_new(v, "ctl", NULL, err, sizeof err);
  CHECK(m != NULL);
  uint32_t mask = 0;
  CHECK(frontier_matcher_fill_mask(m, &mask, 1) == 0);
  CHECK(mask == (1u << 0 | 1u << 6)); /* `call`, or EOS: the empty text is a sentence */
  const uint32_t call[] = {0, 1, 2, 3, 4, 5, 4, 6}; /* "call c1 read\nend\n", EOS */
  CHECK(frontier_matcher_validate_tokens(m, call, 8) == 8);
  for (size_t i = 0; i < 8; i++) CHECK(frontier_matcher_accept_token(m, call[i]) == 1);
  CHECK(frontier_matcher_is_terminated(m));
  frontier_matcher_free(m);
  frontier_vocab_free(v);
  /* a path that is no file: the message names the built-in encodings */
  CHECK(frontier_vocab_from_tiktoken("/nonexistent/x.tiktoken", err, sizeof err) == NULL);
  CHECK(strstr(err, "cl100k_base") != NULL && strstr(err, "/nonexistent/x.tiktoken") != NULL);
}

static void bad_arguments(FrontierVocab *v) {
  char err[128] = "";
  CHECK(frontier_matcher_new(v, "yaml", NULL, err, sizeof err) == NULL);
  CHECK(strstr(err, "yaml") != NULL);
  CHECK(frontier_matcher_new(v, "udiff", "fuzzy", err, sizeof err) == NULL);
  CHECK(strstr(err, "fuzzy") != NULL);
  CHECK(frontier_matcher_new(NULL, "apply_patch", NULL, err, sizeof err) == NULL);
  CHECK(strcmp(err, "vocab is NULL") == 0);
  CHECK(frontier_parser_new("yaml", NULL, err, sizeof err) == NULL);
  CHECK(strstr(err, "yaml") != NULL);
  CHECK(frontier_vocab_from_tiktoken("p50k_base", err, sizeof err) == NULL);
  CHECK(strstr(err, "p50k_base") != NULL);

  uint32_t word = 0;
  uint8_t set[32];
  CHECK(frontier_matcher_mask_words(NULL) == 0);
  CHECK(frontier_matcher_fill_mask(NULL, &word, 1) == -1);
  CHECK(frontier_matcher_accept_token(NULL, 0) == -1);
  CHECK(frontier_matcher_validate_tokens(NULL, &word, 1) == -1);
  CHECK(frontier_matcher_rollback(NULL, 1) == -1);
  CHECK(frontier_matcher_reset(NULL) == -1);
  CHECK(!frontier_matcher_is_accepting(NULL));
  CHECK(!frontier_matcher_is_terminated(NULL));
  CHECK(frontier_matcher_forced_bytes(NULL, NULL, 0) == 0);
  CHECK(frontier_matcher_clone(NULL) == NULL);
  CHECK(frontier_matcher_last_error(NULL) == NULL);
  frontier_matcher_free(NULL);
  CHECK(frontier_parser_push(NULL, (const uint8_t *)"x", 1, NULL, NULL) == -1);
  memset(set, 0xff, sizeof set);
  frontier_parser_allowed(NULL, set);
  CHECK(set[0] == 0 && set[31] == 0);
  CHECK(!frontier_parser_accepting(NULL));
  CHECK(frontier_parser_finish(NULL, NULL, NULL) == -1);
  CHECK(frontier_parser_last_error(NULL) == NULL);
  frontier_parser_free(NULL);
}

/* Feeds the patch's ids, printing each mask's hash, and exercises every operation. */
static void matcher(FrontierVocab *v, const uint32_t *ids, size_t n) {
  char err[128] = "";
  FrontierMatcher *m = frontier_matcher_new(v, "apply_patch", NULL, err, sizeof err);
  CHECK(m != NULL);
  if (!m) return;
  size_t words = frontier_matcher_mask_words(m);
  size_t vocab_size = frontier_vocab_size(v);
  CHECK(words == (vocab_size + 31) / 32);
  uint32_t *mask = calloc(words + 1, sizeof *mask);
  /* the last error lives in one buffer of the handle, overwritten in place: a pointer taken
   * before any error stays valid and reads each later message */
  const char *last = frontier_matcher_last_error(m);
  CHECK(strcmp(last, "") == 0);

  /* a short buffer: -1, nothing written */
  mask[0] = 0x12345678;
  CHECK(frontier_matcher_fill_mask(m, mask, words - 1) == -1);
  CHECK(mask[0] == 0x12345678);
  CHECK(strstr(frontier_matcher_last_error(m), "words") != NULL);
  CHECK(last == frontier_matcher_last_error(m));
  CHECK(strstr(last, "words") != NULL);
  /* a row as wide as logits of vocab_size + 100 ids: the mask, then zeros to its end */
  size_t wide_words = (vocab_size + 100 + 31) / 32;
  uint32_t *wide = malloc(wide_words * sizeof *wide);
  uint32_t *exact = calloc(words, sizeof *exact);
  memset(wide, 0xab, wide_words * sizeof *wide);
  CHECK(frontier_matcher_fill_mask(m, exact, words) == 0);
  CHECK(frontier_matcher_fill_mask(m, wide, wide_words) == 0);
  CHECK(memcmp(wide, exact, words * 4) == 0);
  for (size_t w = words; w < wide_words; w++) CHECK(wide[w] == 0);
  free(exact);
  free(wide);
  /* ids past the vocabulary and refused tokens leave the matcher as it was */
  CHECK(frontier_matcher_accept_token(m, (uint32_t)vocab_size) == 0);
  CHECK(strcmp(last, "token_out_of_range: token 200019 is past the vocabulary's 200019 ids") == 0);
  CHECK(frontier_matcher_accept_token(m, 0xffffffffu) == 0);
  CHECK(frontier_matcher_rollback(m, 0) == 0);
  CHECK(frontier_matcher_rollback(m, 1) == -1); /* nothing to undo yet */
  /* validate changes nothing; the whole patch is accepted, EOS included */
  CHECK(frontier_matcher_validate_tokens(m, ids, n) == (int32_t)n);
  CHECK(frontier_matcher_validate_tokens(m, NULL, 0) == 0);
  CHECK(frontier_matcher_validate_tokens(m, NULL, 3) == -1);
  /* forced bytes at the start: a patch begins with "*** Begin Patch" */
  uint8_t forced[64];
  size_t full = frontier_matcher_forced_bytes(m, forced, 3);
  CHECK(full >= 15 && memcmp(forced, "***", 3) == 0);
  CHECK(frontier_matcher_forced_bytes(m, NULL, 0) == full);

  for (size_t i = 0; i < n; i++) {
    mask[words] = 0xababababu; /* a row wider than the vocabulary: the word past it is 0 */
    CHECK(frontier_matcher_fill_mask(m, mask, words + 1) == 0);
    CHECK(mask[words] == 0);
    printf("mask %zu %016" PRIx64 "\n", i, fnv1a(mask, words));
    CHECK(allowed(mask, ids[i]));
    for (size_t t = vocab_size; t < words * 32; t++) CHECK(!allowed(mask, (uint32_t)t));
    if (i == n / 2) {
      /* a refused token here (the first id the mask disallows) leaves it usable */
      uint32_t refused = 0;
      while (refused < vocab_size && allowed(mask, refused)) refused++;
      CHECK(frontier_matcher_accept_token(m, refused) == 0);
      CHECK(frontier_matcher_validate_tokens(m, &ids[i], n - i) == (int32_t)(n - i));
      /* a clone is independent: advance it, the original stays */
      FrontierMatcher *c = frontier_matcher_clone(m);
      CHECK(c != NULL);
      CHECK(frontier_matcher_accept_token(c, ids[i]) == 1);
      uint32_t *other = calloc(words, sizeof *other);
      CHECK(frontier_matcher_fill_mask(m, other, words) == 0);
      CHECK(memcmp(other, mask, words * 4) == 0);
      /* a batch: the clone into row 0, the original into row 1, rows a word wider, two
       * threads: each row is its matcher's own mask, then a zero */
      uint32_t *ahead = calloc(words, sizeof *ahead);
      CHECK(frontier_matcher_fill_mask(c, ahead, words) == 0);
      FrontierMatcher *const batch[2] = {m, c};
      const size_t rows[2] = {1, 0};
      uint32_t *two = malloc(2 * (words + 1) * sizeof *two);
      memset(two, 0xab, 2 * (words + 1) * sizeof *two);
      char batch_err[128] = "";
      CHECK(frontier_matcher_fill_masks(batch, 2, rows, two, 2, words + 1, 2, batch_err,
                                        sizeof batch_err) == 0);
      CHECK(memcmp(two, ahead, words * 4) == 0 && two[words] == 0);
      CHECK(memcmp(two + words + 1, mask, words * 4) == 0 && two[2 * words + 1] == 0);
      /* one row too few words: -1, the reason in err, nothing written */
      memset(two, 0xab, 2 * (words + 1) * sizeof *two);
      CHECK(frontier_matcher_fill_masks(batch, 2, NULL, two, 2, words - 1, 0, batch_err,
                                        sizeof batch_err) == -1);
      CHECK(strstr(batch_err, "words") != NULL && two[0] == 0xababababu);
      free(two);
      free(ahead);
      free(other);
      frontier_matcher_free(c);
      /* accept two, roll them back: the mask is the same again */
      if (i + 2 < n) {
        CHECK(frontier_matcher_accept_token(m, ids[i]) == 1);
        CHECK(frontier_matcher_accept_token(m, ids[i + 1]) == 1);
        CHECK(frontier_matcher_rollback(m, 2) == 0);
        uint32_t *again = calloc(words, sizeof *again);
        CHECK(frontier_matcher_fill_mask(m, again, words) == 0);
        CHECK(memcmp(again, mask, words * 4) == 0);
        free(again);
      }
    }
    if (i + 1 == n) {
      /* before EOS: the patch is a sentence, nothing is forced */
      CHECK(frontier_matcher_is_accepting(m));
      CHECK(frontier_matcher_forced_bytes(m, forced, sizeof forced) == 0);
    }
    CHECK(frontier_matcher_accept_token(m, ids[i]) == 1);
  }
  CHECK(frontier_matcher_fill_mask(m, mask, words) == 0);
  printf("mask %zu %016" PRIx64 "\n", n, fnv1a(mask, words));
  CHECK(frontier_matcher_is_terminated(m));
  CHECK(frontier_matcher_accept_token(m, ids[0]) == 0); /* nothing after EOS but EOS */
  CHECK(strstr(frontier_matcher_last_error(m), "terminated: ") == frontier_matcher_last_error(m));
  /* EOS again: taken (the mask allows it), still terminated, the same EOS-only mask */
  uint32_t *after = calloc(words, sizeof *after);
  memcpy(after, mask, words * 4);
  CHECK(allowed(mask, ids[n - 1]));
  CHECK(frontier_matcher_accept_token(m, ids[n - 1]) == 1);
  CHECK(frontier_matcher_is_terminated(m));
  CHECK(frontier_matcher_validate_tokens(m, &ids[n - 1], 1) == 1);
  CHECK(frontier_matcher_validate_tokens(m, ids, 1) == 0);
  CHECK(frontier_matcher_fill_mask(m, mask, words) == 0);
  CHECK(memcmp(after, mask, words * 4) == 0);
  free(after);
  /* the second EOS is one token for rollback: undoing it leaves the first */
  CHECK(frontier_matcher_rollback(m, 1) == 0);
  CHECK(frontier_matcher_is_terminated(m));
  /* EOS counts as one token for rollback */
  CHECK(frontier_matcher_rollback(m, 1) == 0);
  CHECK(!frontier_matcher_is_terminated(m));
  CHECK(frontier_matcher_is_accepting(m));
  /* 32 tokens are kept (the second EOS pushed out the oldest), two of them just undone:
   * one more than the rest is refused */
  size_t kept = (n + 1 < 32 ? n + 1 : 32) - 2;
  CHECK(frontier_matcher_rollback(m, kept + 1) == -1);
  CHECK(strstr(frontier_matcher_last_error(m), "rollback_past_history") != NULL);
  CHECK(frontier_matcher_rollback(m, kept) == 0);
  CHECK(frontier_matcher_reset(m) == 0);
  CHECK(!frontier_matcher_is_accepting(m));
  CHECK(frontier_matcher_validate_tokens(m, ids, n) == (int32_t)n);
  free(mask);
  frontier_matcher_free(m);
}

static void print_event(void *user, const char *json, size_t len) {
  (*(size_t *)user)++;
  printf("event %.*s\n", (int)len, json);
}

static void parser(const uint8_t *patch, size_t len) {
  char err[128] = "";
  FrontierParser *p = frontier_parser_new("apply_patch", NULL, err, sizeof err);
  CHECK(p != NULL);
  if (!p) return;
  uint8_t set[32];
  frontier_parser_allowed(p, set);
  CHECK(set['*' / 8] == 1 << ('*' % 8));
  CHECK(!frontier_parser_accepting(p));
  size_t events = 0;
  /* pushed in two pieces, the split inside a line */
  CHECK(frontier_parser_push(p, patch, len / 2, print_event, &events) == 0);
  CHECK(frontier_parser_push(p, patch + len / 2, len - len / 2, print_event, &events) == 0);
  CHECK(frontier_parser_push(p, NULL, 0, NULL, NULL) == 0);
  int32_t verdict = frontier_parser_finish(p, print_event, &events);
  printf("verdict %d\n", verdict);
  CHECK(events > 0);
  CHECK(frontier_parser_finish(p, NULL, NULL) == -1); /* a second finish */
  CHECK(strstr(frontier_parser_last_error(p), "finished") != NULL);
  frontier_parser_free(p);

  /* a byte outside the language: -1, the reason with its offset, then verdict 2 */
  p = frontier_parser_new("apply_patch", "strict", err, sizeof err);
  const char *last = frontier_parser_last_error(p); /* valid until the free, always the latest */
  CHECK(frontier_parser_push(p, (const uint8_t *)"*** Begin Patch\nx", 17, NULL, NULL) == -1);
  CHECK(strcmp(last, "expected_hunk_header at byte 16 (0x78 'x')") == 0);
  CHECK(frontier_parser_last_error(p) == last);
  frontier_parser_allowed(p, set);
  int empty = 1;
  for (int i = 0; i < 32; i++) empty &= set[i] == 0;
  CHECK(empty);
  CHECK(frontier_parser_finish(p, NULL, NULL) == 2);
  frontier_parser_free(p);

  /* a cut-off patch is incomplete */
  p = frontier_parser_new("apply_patch", NULL, err, sizeof err);
  CHECK(frontier_parser_push(p, (const uint8_t *)"*** Begin Patch\n", 16, NULL, NULL) == 0);
  CHECK(frontier_parser_finish(p, NULL, NULL) == 1);
  CHECK(strcmp(frontier_parser_last_error(p), "incomplete: unclosed patch begun at byte 0") == 0);
  frontier_parser_free(p);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s IDS_FILE PATCH_FILE RANK_FILE\n", argv[0]);
    return 2;
  }
  size_t n = 0, len = 0;
  uint32_t *ids = read_ids(argv[1], &n);
  uint8_t *patch = read_file(argv[2], &len);
  if (!ids || !patch || n == 0) {
    fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
    return 2;
  }
  raw_vocab();
  rank_file(argv[3]);
  char err[256] = "";
  FrontierVocab *v = frontier_vocab_from_tiktoken("o200k_base", err, sizeof err);
  CHECK(v != NULL);
  if (v) {
    CHECK(frontier_vocab_size(v) == 200019);
    bad_arguments(v);
    matcher(v, ids, n);
    frontier_vocab_free(v);
  }
  parser(patch, len);
  free(ids);
  free(patch);
  printf("failures %d\n", failures);
  return failures ? 1 : 0;
}
