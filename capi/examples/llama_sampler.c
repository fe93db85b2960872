/* A llama.cpp sampler over a frontier matcher: tokens the language does not allow next get a
 * logit of -INFINITY, so whatever samplers follow in the chain pick only allowed tokens.
 *
 * It needs llama.h, so the tests do not compile it; CMakeLists.txt in this directory builds it
 * against a llama.cpp checkout (see docs/c.md). Use:
 *
 *   struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
 *   FrontierVocab *fv;
 *   llama_sampler_chain_add(chain, frontier_llama_sampler_init(vocab, "apply_patch", NULL, &fv));
 *   llama_sampler_chain_add(chain, llama_sampler_init_dist(seed));
 *
 * The chain calls apply before each sample and accept with the token chosen. */
#include "frontier.h"
#include "llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct frontier_sampler {
  FrontierVocab *vocab;   /* shared by every clone: read-only */
  FrontierMatcher *matcher;
  uint32_t *mask;         /* mask_words words, reused by every apply */
  size_t mask_words;
};

/* The model's tokens as frontier sees them: each token's bytes, special tokens marked special
 * with no bytes (as the header asks: 0 for a hole or a special token), end-of-generation
 * tokens as EOS. */
static FrontierVocab *frontier_vocab_from_llama(const struct llama_vocab *lv) {
  int32_t n = llama_vocab_n_tokens(lv);
  uint32_t *lens = calloc((size_t)n, sizeof *lens);
  uint32_t *special = malloc((size_t)n * sizeof *special);
  uint32_t *eos = malloc((size_t)n * sizeof *eos);
  size_t cap = 1 << 20, used = 0, n_special = 0, n_eos = 0;
  uint8_t *bytes = malloc(cap);
  for (int32_t t = 0; t < n; t++) {
    char piece[256];
    bool is_special = (llama_vocab_get_attr(lv, t) &
                       (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN)) != 0;
    bool is_eog = llama_vocab_is_eog(lv, t);
    int32_t len = (is_special || is_eog)
                      ? 0
                      : llama_token_to_piece(lv, t, piece, sizeof piece, 0, false);
    if (len < 0) len = 0; /* longer than 256 bytes: left a hole, never allowed */
    if (used + (size_t)len > cap) bytes = realloc(bytes, cap *= 2);
    memcpy(bytes + used, piece, (size_t)len);
    used += (size_t)len;
    lens[t] = (uint32_t)len;
    if (is_eog) eos[n_eos++] = (uint32_t)t;
    else if (is_special) special[n_special++] = (uint32_t)t;
  }
  FrontierVocabInit init = {
      .struct_size = sizeof init,
      .vocab_size = (uint32_t)n,
      .token_lens = lens,
      .token_bytes = bytes,
      .special_ids = special,
      .n_special_ids = n_special,
      .eos_ids = eos,
      .n_eos_ids = n_eos,
  };
  char err[256];
  FrontierVocab *v = frontier_vocab_new(&init, err, sizeof err);
  if (!v) fprintf(stderr, "frontier: %s\n", err);
  free(lens);
  free(special);
  free(eos);
  free(bytes);
  return v;
}

static const char *fs_name(const struct llama_sampler *smpl) {
  (void)smpl;
  return "frontier";
}

static void fs_apply(struct llama_sampler *smpl, llama_token_data_array *cur_p) {
  struct frontier_sampler *s = smpl->ctx;
  if (frontier_matcher_fill_mask(s->matcher, s->mask, s->mask_words) != 0) {
    fprintf(stderr, "frontier: %s\n", frontier_matcher_last_error(s->matcher));
    return;
  }
  for (size_t i = 0; i < cur_p->size; i++) {
    uint32_t t = (uint32_t)cur_p->data[i].id;
    /* ids past the tokenizer (a wider logits row) are never allowed */
    bool allowed = t / 32 < s->mask_words && ((s->mask[t / 32] >> (t % 32)) & 1);
    if (!allowed) cur_p->data[i].logit = -INFINITY;
  }
}

static void fs_accept(struct llama_sampler *smpl, llama_token token) {
  struct frontier_sampler *s = smpl->ctx;
  /* apply allowed only accepted tokens, so a refusal means the chain picked one another way
   * (a forced token): report it; the matcher stays where it was. */
  if (frontier_matcher_accept_token(s->matcher, (uint32_t)token) != 1)
    fprintf(stderr, "frontier: %s\n", frontier_matcher_last_error(s->matcher));
}

static void fs_reset(struct llama_sampler *smpl) {
  struct frontier_sampler *s = smpl->ctx;
  frontier_matcher_reset(s->matcher);
}

static struct llama_sampler *fs_wrap(FrontierVocab *vocab, FrontierMatcher *m);

static struct llama_sampler *fs_clone(const struct llama_sampler *smpl) {
  const struct frontier_sampler *s = smpl->ctx;
  FrontierMatcher *m = frontier_matcher_clone(s->matcher);
  return m ? fs_wrap(s->vocab, m) : NULL;
}

static void fs_free(struct llama_sampler *smpl) {
  struct frontier_sampler *s = smpl->ctx;
  frontier_matcher_free(s->matcher);
  free(s->mask);
  free(s);
}

static const struct llama_sampler_i frontier_sampler_i = {
    .name = fs_name,
    .accept = fs_accept,
    .apply = fs_apply,
    .reset = fs_reset,
    .clone = fs_clone,
    .free = fs_free,
};

static struct llama_sampler *fs_wrap(FrontierVocab *vocab, FrontierMatcher *m) {
  struct frontier_sampler *s = malloc(sizeof *s);
  s->vocab = vocab;
  s->matcher = m;
  s->mask_words = frontier_matcher_mask_words(m);
  s->mask = malloc(s->mask_words * sizeof *s->mask);
  return llama_sampler_init(&frontier_sampler_i, s);
}

/* A sampler for `lang` in `mode` (NULL: the default) over the model's vocabulary, or NULL with
 * the reason on stderr. The FrontierVocab is built here and owned by the program (one per
 * model, shared by every sampler of it: free it with frontier_vocab_free after them). */
struct llama_sampler *frontier_llama_sampler_init(const struct llama_vocab *lv, const char *lang,
                                                  const char *mode, FrontierVocab **vocab_out) {
  FrontierVocab *vocab = frontier_vocab_from_llama(lv);
  if (!vocab) return NULL;
  char err[256];
  FrontierMatcher *m = frontier_matcher_new(vocab, lang, mode, err, sizeof err);
  if (!m) {
    fprintf(stderr, "frontier: %s\n", err);
    frontier_vocab_free(vocab);
    return NULL;
  }
  *vocab_out = vocab;
  return fs_wrap(vocab, m);
}
