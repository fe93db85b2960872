//! The compiled grammar and the matcher: token masks for one sequence.
//!
//! A [`CompiledGrammar`] is one (vocabulary, language configuration) pair: the vocabulary and
//! its trie, the recogniser's initial state, the mask cache, and a pool of walk stacks. It is
//! shared (`Arc`) by every [`Matcher`] made from it, on any thread. A matcher is one sequence:
//! the recogniser state, whether EOS ended it, and the history that `rollback` undoes.
//!
//! The loop an engine runs: `fill_mask` into its buffer, sample a token from the allowed ones,
//! `consume` it; on speculative tokens, `validate_tokens` or `consume` then `rollback`. The
//! names `embedding.md` gives every host (`fill_next_token_bitmask`, `accept_token`,
//! `accept_tokens`, `is_accepting`) are here too, over the same methods.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::byteset::ByteSet;
use crate::recognizer::{InText, KeptRun, LineText, Recognizer};

use super::cache::{CacheStats, MaskCache};
use super::line_text::{LineTextTable, KEPT_ROOM_MIN};
use super::vocab::{TokenKind, Vocabulary};
use super::MaskError;

/// The rollback depth a matcher keeps unless told otherwise: the last 32 tokens.
pub const DEFAULT_HISTORY: usize = 32;

/// The most rollback entries a new matcher reserves room for up front.
pub const RESERVED_HISTORY: usize = 256;

/// The memory a grammar's mask cache may use unless told otherwise: 64 MiB, which is 2,683
/// masks of a 200,019-id vocabulary and 5,353 of a 100,277-id one.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// The most keys [`CompiledGrammar`] remembers the byte-blindness of (4,096; past that, a
/// key is checked again each time it is met). Only a state that allows all 256 bytes and
/// whose recogniser does not say whether it is blind is checked and kept, which few are.
pub const MAX_BLIND_KEYS: usize = 1 << 12;

/// The most walk stacks a grammar makes when it is compiled: one per core, up to this many.
const MAX_POOLED_STACKS: usize = 64;

/// The most bytes the state after a first byte may allow for a walk to go to their subtrees
/// directly ([`CompiledGrammar`]'s `walk_first_narrow`).
const NARROW: u32 = 8;

/// A vocabulary and a language configuration, compiled once and shared by matchers.
pub struct CompiledGrammar<R: Recognizer> {
    vocab: Arc<Vocabulary>,
    initial: R,
    horizon: u32,
    cache: MaskCache<R::Key>,
    /// For each key of a state that allows every byte met on a walk: whether a state with it
    /// is byte-blind, and if so the state after one byte (the same, by key, whatever the
    /// byte). See [`CompiledGrammar::walk`]. Reserved for [`MAX_BLIND_KEYS`] keys when the
    /// grammar is compiled, so it never grows.
    blind: RwLock<HashMap<R::Key, Option<R>>>,
    /// Walk stacks for cache misses, reused: one per core made when the grammar is compiled
    /// (see [`Matcher::fill_mask`] for more threads than that).
    stacks: Mutex<Vec<Vec<R>>>,
    /// The mask after EOS: the EOS tokens only.
    eos_mask: Box<[u32]>,
}

impl<R: Recognizer> std::fmt::Debug for CompiledGrammar<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledGrammar")
            .field("vocab", &self.vocab)
            .field("initial", &self.initial)
            .field("cache", &self.cache.stats())
            .finish()
    }
}

impl<R: Recognizer> CompiledGrammar<R> {
    /// A grammar over `vocab` starting at `initial`, with a cache of
    /// [`DEFAULT_CACHE_BYTES`]. Builds the vocabulary's trie and the
    /// [`line_text`](super::line_text) tables of the recogniser's kinds if they were not built
    /// yet.
    pub fn new(vocab: Arc<Vocabulary>, initial: R) -> Arc<CompiledGrammar<R>> {
        let masks = DEFAULT_CACHE_BYTES / (vocab.mask_words().max(1) * 4);
        CompiledGrammar::with_cache_capacity(vocab, initial, masks)
    }

    /// A grammar whose cache holds at most `masks` masks (0: no cache).
    pub fn with_cache_capacity(
        vocab: Arc<Vocabulary>,
        initial: R,
        masks: usize,
    ) -> Arc<CompiledGrammar<R>> {
        let mut eos_mask = vec![0u32; vocab.mask_words()].into_boxed_slice();
        for &id in vocab.eos() {
            eos_mask[id as usize >> 5] |= 1 << (id & 31);
        }
        let depth = vocab.trie().max_depth();
        for &kind in initial.line_text_kinds() {
            vocab.line_text(kind);
        }
        // What a fill needs is made here, so that a fill allocates nothing but a new cache
        // slot's buffer: a walk stack per core (each as deep as the longest token), the
        // blind-key table at its bound, the cache's keys and index (`MaskCache::new`).
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_POOLED_STACKS);
        let mut stacks = Vec::with_capacity(threads);
        stacks.resize_with(threads, || vec![initial; depth + 1]);
        Arc::new(CompiledGrammar {
            horizon: vocab.max_token_len(),
            cache: MaskCache::new(masks, vocab.mask_words()),
            vocab,
            initial,
            blind: RwLock::new(HashMap::with_capacity(MAX_BLIND_KEYS)),
            stacks: Mutex::new(stacks),
            eos_mask,
        })
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Arc<Vocabulary> {
        &self.vocab
    }

    /// The state every matcher starts in.
    pub fn initial(&self) -> R {
        self.initial
    }

    /// A matcher at the start, keeping [`DEFAULT_HISTORY`] tokens of rollback.
    pub fn matcher(self: &Arc<Self>) -> Matcher<R> {
        self.matcher_with_history(DEFAULT_HISTORY)
    }

    /// A matcher at the start, keeping `depth` tokens of rollback. Room for up to
    /// [`RESERVED_HISTORY`] of them is taken at once (a matcher that keeps the default never
    /// allocates again); a deeper history grows as tokens arrive, so any `depth`, even
    /// `usize::MAX`, is a bound and not an allocation.
    pub fn matcher_with_history(self: &Arc<Self>, depth: usize) -> Matcher<R> {
        Matcher {
            grammar: Arc::clone(self),
            state: self.initial,
            terminated: false,
            history: VecDeque::with_capacity(depth.min(RESERVED_HISTORY)),
            depth,
        }
    }

    /// The cache's hits, misses and size.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// Empties the cache.
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    fn check_len(&self, words: &[u32]) -> Result<(), MaskError> {
        let expected = self.vocab.mask_words();
        if words.len() != expected {
            return Err(MaskError::MaskLength {
                expected,
                got: words.len(),
            });
        }
        Ok(())
    }

    /// Writes the mask of `state` into `words` by walking the trie, bypassing the cache.
    /// Allocates nothing, as [`Matcher::fill_mask`].
    pub fn fill_uncached(&self, state: &R, words: &mut [u32]) -> Result<(), MaskError> {
        self.check_len(words)?;
        self.walk(state, words);
        Ok(())
    }

    /// The successor of `state` if `state` is byte-blind: every byte is allowed and every
    /// successor has the same key (so, by the recogniser's laws, the same future up to the
    /// horizon); a CTL body with bytes left is. Asked of the recogniser
    /// ([`Recognizer::byte_blind`]); if it does not say, checked and remembered by key.
    fn blind_successor(&self, state: &R) -> Option<R> {
        match state.byte_blind() {
            Some(true) => {
                let mut next = *state;
                return next.try_byte(0).then_some(next);
            }
            Some(false) => return None,
            None => {}
        }
        // A state that refuses a byte is not blind: no need to look it up or keep it.
        if state.allowed().len() != 256 {
            return None;
        }
        let key = state.mask_key(self.horizon);
        if let Some(known) = self
            .blind
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return *known;
        }
        let successor = (|| {
            let mut first = *state;
            if !first.try_byte(0) {
                return None;
            }
            let first_key = first.mask_key(self.horizon);
            for byte in 1..=255u8 {
                let mut next = *state;
                if !next.try_byte(byte) || next.mask_key(self.horizon) != first_key {
                    return None;
                }
            }
            Some(first)
        })();
        let mut blind = self.blind.write().unwrap_or_else(PoisonError::into_inner);
        if blind.len() < MAX_BLIND_KEYS {
            blind.insert(key, successor);
        }
        successor
    }

    /// The mask of `state` by walking the trie. A walk first follows the byte-blind states
    /// from `state`: if the first `k` states are blind, every token of at most `k` bytes is
    /// allowed (a precomputed row, [`TokenTrie::short_mask`](super::TokenTrie::short_mask)),
    /// and a longer token is allowed exactly when its bytes from `k` on are taken by the
    /// state after `k` blind steps; so only the trie below depth `k` is walked, from the
    /// nodes of depth `k + 1` whose byte that state allows. Sound by the recogniser laws: a
    /// state with a blind state's key accepts what the blind one does, up to the horizon.
    /// For a CTL body with `k` bytes left, this replaces a walk of every node of depth up to
    /// `k` (the whole trie when `k` is near the longest token) by `k` steps, a copy and a
    /// walk of the few tokens that run on into a header.
    ///
    /// With no blind step, a state inside a run it forgets, and each first byte that leads
    /// into one, take their tokens from the vocabulary's [`line_text`](super::line_text)
    /// tables: a copy or an OR of a mask, and a walk of the few tokens that leave the run. A
    /// state reading a run it keeps ([`Recognizer::kept_run`]) takes the run's tokens from the
    /// same tables and walks those that leave it as they are.
    fn walk(&self, state: &R, words: &mut [u32]) {
        let trie = self.vocab.trie();
        let mut below = *state;
        let mut depth = 0;
        while depth < trie.short_rows() {
            match self.blind_successor(&below) {
                Some(next) => {
                    below = next;
                    depth += 1;
                }
                None => break,
            }
        }
        // A pooled stack; past the pool (more threads walking at once than cores), a new one,
        // which joins the pool after the walk.
        let mut stack = self
            .stacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        if depth > 0 {
            words.copy_from_slice(trie.short_mask(depth));
            trie.walk_below(below, depth, &mut stack, words);
        } else if let Some(run) = state.kept_run().filter(|r| r.room >= KEPT_ROOM_MIN) {
            self.fill_kept_run(state, run, &mut stack, words);
        } else {
            match state.line_text(self.horizon) {
                Some(text) if text.forgets => self.fill_run(state, text, &mut stack, words),
                Some(_) => trie.walk(*state, &mut stack, words),
                None => self.add_first_bytes(state, state.allowed(), None, &mut stack, words),
            }
        }
        self.stacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(stack);
        if state.accepting() {
            for &id in self.vocab.eos() {
                words[id as usize >> 5] |= 1 << (id & 31);
            }
        }
    }

    /// The mask of `state`, inside a run it forgets (EOS aside): the tokens that start inside
    /// the run from the tables, and those that end it at once or start with an excepted byte
    /// first byte by first byte (the byte may open another run).
    fn fill_run(&self, state: &R, text: InText, stack: &mut Vec<R>, words: &mut [u32]) {
        let table = self.vocab.line_text(text.kind);
        table.fill_inside(*state, stack, words);
        for byte in text.except.iter() {
            let mut next = *state;
            let keep_row = next.try_byte(byte)
                && next
                    .line_text(self.horizon)
                    .is_some_and(|t| t.forgets && t.kind == text.kind);
            // A row answers for the tokens of an ASCII first byte; a lead byte's tokens are
            // cleared in the trie.
            table.except_first(byte, keep_row || !byte.is_ascii(), words);
            if !keep_row && !byte.is_ascii() {
                self.vocab.trie().clear_path(&[byte], words);
            }
        }
        let first = state
            .allowed()
            .difference(text.kind.class())
            .union(text.except);
        self.add_first_bytes(state, first, Some(text.kind), stack, words);
    }

    /// The mask of `state`, reading a run it keeps (EOS aside): the tokens of the run's class
    /// from the tables ([`LineTextTable::fill_kept`]), those that start outside it first
    /// byte by first byte.
    fn fill_kept_run(&self, state: &R, run: KeptRun, stack: &mut Vec<R>, words: &mut [u32]) {
        self.vocab
            .line_text(run.kind)
            .fill_kept(*state, run.room, stack, words);
        let first = state.allowed().difference(run.kind.class());
        self.add_first_bytes(state, first, Some(run.kind), stack, words);
    }

    /// Adds to `words` the tokens `state` takes whose first byte is in `bytes`, first byte by
    /// first byte: a byte that leads into a run takes its tokens from the
    /// [`line_text`](super::line_text) tables, any other walks its subtree of the trie. With
    /// `inside` `None`, writes them (`words` holds nothing yet); with `Some(kind)`, `state` is
    /// inside a run of `kind`, and `words` holds its tokens from the tables (see `walk`).
    fn add_first_bytes(
        &self,
        state: &R,
        bytes: ByteSet,
        inside: Option<LineText>,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        let fresh = inside.is_none();
        // Each byte's run, if it leads into one; the union of rows is of one kind (the run's
        // own inside a run, else the first met).
        let mut texts: [Option<InText>; 256] = [None; 256];
        let mut union_kind = inside;
        let mut into_union = ByteSet::EMPTY;
        for byte in bytes.iter() {
            let mut next = *state;
            if !next.try_byte(byte) {
                continue;
            }
            if let Some(text) = next.line_text(self.horizon).filter(|t| t.forgets) {
                texts[byte as usize] = Some(text);
                if *union_kind.get_or_insert(text.kind) == text.kind {
                    into_union = into_union.with(byte);
                }
            }
        }
        // Past half the bytes, clearing the others' rows from the union costs less.
        let from_union = fresh && into_union.len() > 128;
        match union_kind {
            Some(kind) if from_union => {
                self.vocab
                    .line_text(kind)
                    .fill_after_all(into_union.complement(), words);
            }
            _ if fresh => words.fill(0),
            _ => {}
        }
        let trie = self.vocab.trie();
        for byte in bytes.iter() {
            let Some(text) = texts[byte as usize] else {
                self.walk_first_narrow(state, byte, stack, words);
                continue;
            };
            let table = self.vocab.line_text(text.kind);
            // The row is in `words` already when the union gave it, or when `state`'s own run
            // of the same kind did (an ASCII byte of its class: an excepted byte whose row
            // `walk` kept).
            let given = (from_union && into_union.contains(byte))
                || (inside == Some(text.kind)
                    && text.kind.class().contains(byte)
                    && byte.is_ascii());
            let row = !given;
            table.add_after(*state, byte, row, stack, words);
            let mut next = *state;
            next.try_byte(byte);
            // The tokens `byte e …` that leave the run at once, for a kind the tables keep no
            // entries of them for.
            if !text.kind.one_exit() {
                for exit in next.allowed().difference(text.kind.class()).iter() {
                    trie.walk_path(&[byte, exit], next, stack, words);
                }
            }
            // The tokens `byte c …` of an excepted `c`, which the tables set as if `c`
            // continued the run, are walked instead.
            for c in text.except.iter() {
                self.rewalk_prefix(next, [byte, c], table, stack, words);
            }
        }
    }

    /// Sets in `words` the tokens starting with `byte` that `state` takes, by a walk of
    /// `byte`'s subtree; when the state after `byte` allows at most [`NARROW`] bytes, only
    /// under those (found by the level index, not by trying each of `byte`'s children: a
    /// space has some 200 of them).
    fn walk_first_narrow(&self, state: &R, byte: u8, stack: &mut Vec<R>, words: &mut [u32]) {
        let trie = self.vocab.trie();
        let mut next = *state;
        if !next.try_byte(byte) {
            return;
        }
        let follows = next.allowed();
        if follows.len() > NARROW {
            trie.walk_first(*state, byte, stack, words);
            return;
        }
        trie.set_exact(&[byte], words);
        for second in follows.iter() {
            trie.walk_path(&[byte, second], next, stack, words);
        }
    }

    /// Recomputes the tokens under `prefix` = `b c` from `state`, the state after `b`: from
    /// the prefix's row when it has one and the state after `c` is in a run (then only the
    /// tokens under its excepted bytes are walked), else by a walk of the subtree.
    fn rewalk_prefix(
        &self,
        state: R,
        prefix: [u8; 2],
        table: &LineTextTable,
        stack: &mut Vec<R>,
        words: &mut [u32],
    ) {
        let trie = self.vocab.trie();
        trie.clear_path(&prefix, words);
        let mut after = state;
        if after.try_byte(prefix[1]) {
            if let Some(text) = after.line_text(self.horizon) {
                if text.forgets
                    && text.kind == table.kind()
                    && table.add_prefix(state, prefix, stack, words)
                {
                    for third in text.except.iter() {
                        trie.rewalk(&[prefix[0], prefix[1], third], after, stack, words);
                    }
                    return;
                }
            }
        }
        trie.walk_path(&prefix, state, stack, words);
    }

    /// Writes the mask of `state` into `words`: from the cache if its key is there, else by a
    /// walk whose result the cache keeps.
    pub fn fill(&self, state: &R, words: &mut [u32]) -> Result<(), MaskError> {
        self.check_len(words)?;
        let key = state.mask_key(self.horizon);
        if !self.cache.get(&key, words) {
            self.walk(state, words);
            self.cache.insert(key, words);
        }
        Ok(())
    }

    /// Fills the cache with the masks of every state a recogniser passes through reading
    /// `sample` from the start (a refused byte ends the sample), and returns how many states
    /// that was. An explicit warm-up: later matchers find those keys already computed.
    pub fn warm_up(&self, sample: &[u8]) -> usize {
        let mut words = vec![0u32; self.vocab.mask_words()];
        let mut state = self.initial;
        let mut bytes = sample.iter();
        let mut states = 0;
        loop {
            let _ = self.fill(&state, &mut words);
            states += 1;
            match bytes.next() {
                Some(&byte) if state.try_byte(byte) => {}
                _ => break,
            }
        }
        states
    }
}

/// One sequence's matcher (see the module docs). `Clone` forks the sequence.
#[derive(Clone, Debug)]
pub struct Matcher<R: Recognizer> {
    grammar: Arc<CompiledGrammar<R>>,
    state: R,
    terminated: bool,
    /// Before each kept token: the state and whether EOS had ended the sequence.
    history: VecDeque<(R, bool)>,
    depth: usize,
}

impl<R: Recognizer> Matcher<R> {
    /// The grammar this matcher was made from.
    pub fn grammar(&self) -> &Arc<CompiledGrammar<R>> {
        &self.grammar
    }

    /// The recogniser state.
    pub fn state(&self) -> R {
        self.state
    }

    /// Writes the mask into `words` (`ceil(V/32)` words, bit `t % 32` of word `t / 32` for
    /// token `t`). A buffer of another length is an error and nothing is written.
    ///
    /// Allocates at most one buffer: a hit is a copy; a miss walks with a stack from the
    /// grammar's pool (made when the grammar was compiled) and keeps its mask in a cache
    /// slot, whose buffer is allocated the first time the slot is filled. So a fill
    /// allocates once when it fills a new slot (at most the cache's capacity over the
    /// grammar's life: 2,683 for o200k by default) and never once the cache is full, nor on
    /// a hit, an eviction or [`fill_mask_uncached`](Matcher::fill_mask_uncached). The one
    /// other allocation: a walk stack when more threads miss on one grammar at once than
    /// the machine has cores (up to 64), once per such thread over the grammar's life, since
    /// the stacks go back to the pool. `docs/masks.md` says why the slots are not reserved
    /// up front.
    pub fn fill_mask(&self, words: &mut [u32]) -> Result<(), MaskError> {
        if self.terminated {
            self.grammar.check_len(words)?;
            words.copy_from_slice(&self.grammar.eos_mask);
            return Ok(());
        }
        self.grammar.fill(&self.state, words)
    }

    /// [`fill_mask`](Matcher::fill_mask) by a fresh trie walk, bypassing the cache.
    pub fn fill_mask_uncached(&self, words: &mut [u32]) -> Result<(), MaskError> {
        if self.terminated {
            return self.fill_mask(words);
        }
        self.grammar.fill_uncached(&self.state, words)
    }

    /// The state after `token` from `(state, terminated)`, or why it is refused.
    fn step(&self, state: R, terminated: bool, token: u32) -> Result<(R, bool), MaskError> {
        let vocab = &self.grammar.vocab;
        let Some(kind) = vocab.kind(token) else {
            return Err(MaskError::TokenOutOfRange {
                token,
                vocab_size: vocab.size(),
            });
        };
        if terminated {
            // The mask after EOS holds the EOS tokens only, and what a mask allows is taken:
            // another EOS keeps the sequence ended (one more token for `rollback`).
            return match kind {
                TokenKind::Eos => Ok((state, true)),
                _ => Err(MaskError::Terminated { token }),
            };
        }
        match kind {
            TokenKind::Normal => {
                let bytes = vocab.bytes(token);
                let mut next = state;
                let taken = next.try_bytes(bytes);
                match bytes.get(taken) {
                    None => Ok((next, false)),
                    Some(&byte) => Err(MaskError::TokenRefused {
                        token,
                        offset: taken as u32,
                        byte,
                    }),
                }
            }
            TokenKind::Eos if state.accepting() => Ok((state, true)),
            TokenKind::Eos => Err(MaskError::EosTooEarly { token }),
            TokenKind::Special | TokenKind::Hole => Err(MaskError::SpecialToken { token }),
        }
    }

    /// Takes `token`. A refused token is an error that changes nothing: the matcher stays
    /// usable. EOS is taken only when the text is a sentence, and ends the sequence; once
    /// ended, an EOS token is still taken (the sequence stays ended, and the token counts for
    /// `rollback`), any other is refused ([`MaskError::Terminated`]).
    pub fn consume(&mut self, token: u32) -> Result<(), MaskError> {
        let (state, terminated) = self.step(self.state, self.terminated, token)?;
        if self.depth > 0 {
            if self.history.len() == self.depth {
                self.history.pop_front();
            }
            self.history.push_back((self.state, self.terminated));
        }
        self.state = state;
        self.terminated = terminated;
        Ok(())
    }

    /// Undoes the last `n` tokens (EOS counts as one). Past the kept history it is an error
    /// and nothing changes.
    pub fn rollback(&mut self, n: usize) -> Result<(), MaskError> {
        if n > self.history.len() {
            return Err(MaskError::RollbackPastHistory {
                requested: n,
                kept: self.history.len(),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let keep = self.history.len() - n;
        if let Some(&(state, terminated)) = self.history.get(keep) {
            self.state = state;
            self.terminated = terminated;
        }
        self.history.truncate(keep);
        Ok(())
    }

    /// How many of `tokens`, from the first, would be taken in turn; the matcher is unchanged.
    pub fn validate_tokens(&self, tokens: &[u32]) -> usize {
        let (mut state, mut terminated) = (self.state, self.terminated);
        for (i, &token) in tokens.iter().enumerate() {
            match self.step(state, terminated, token) {
                Ok(next) => (state, terminated) = next,
                Err(_) => return i,
            }
        }
        tokens.len()
    }

    /// Appends the bytes every viable continuation starts with (none once terminated).
    pub fn forced_bytes(&self, out: &mut Vec<u8>) {
        if !self.terminated {
            self.state.forced_bytes(out);
        }
    }

    /// Whether an EOS token is allowed now: the text is a sentence (and stays one after EOS).
    pub fn accepting(&self) -> bool {
        self.terminated || self.state.accepting()
    }

    /// Whether EOS ended the sequence.
    pub fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// [`fill_mask`](Matcher::fill_mask) under the name `embedding.md` gives it in every host
    /// (llguidance's and XGrammar's name for it).
    pub fn fill_next_token_bitmask(&self, words: &mut [u32]) -> Result<(), MaskError> {
        self.fill_mask(words)
    }

    /// [`consume`](Matcher::consume) as a yes or no: `false` and nothing changed when the
    /// token is refused.
    pub fn accept_token(&mut self, token: u32) -> bool {
        self.consume(token).is_ok()
    }

    /// Takes all of `tokens` in order, or none: `false` and nothing changed when one of them
    /// is refused.
    pub fn accept_tokens(&mut self, tokens: &[u32]) -> bool {
        if self.validate_tokens(tokens) < tokens.len() {
            return false;
        }
        tokens.iter().all(|&token| self.accept_token(token))
    }

    /// [`accepting`](Matcher::accepting) under the name `embedding.md` gives it.
    pub fn is_accepting(&self) -> bool {
        self.accepting()
    }

    /// Whether the sequence is stuck: not ended, and no token of the vocabulary (EOS
    /// included) is allowed. Answered from the mask, so it costs a cache lookup or a walk.
    pub fn is_error(&self) -> bool {
        if self.terminated {
            return false;
        }
        let mut words = vec![0u32; self.grammar.vocab.mask_words()];
        self.fill_mask(&mut words).is_ok() && words.iter().all(|&w| w == 0)
    }

    /// Back to the start: the initial state, not terminated, no history.
    pub fn reset(&mut self) {
        self.state = self.grammar.initial;
        self.terminated = false;
        self.history.clear();
    }

    /// How many tokens `rollback` can undo now.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }
}
