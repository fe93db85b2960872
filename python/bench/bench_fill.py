"""Per-row mask fills through Python: frontier's binding against its Rust matcher called
directly, side by side with llguidance's Python matcher; and 64 rows filled in parallel.

    python python/bench/bench_fill.py [--tokens N] [--calls K] [--no-llguidance]

Vocabulary o200k_base; the token sequence is `corpora/apply_patch/git_history.patch`
(strict mode, as `benches/mask.rs`), its first N tokens. Every state is filled once before the
timed pass (the masks are cached: the steady state of a long generation), then at each step
the same row is filled K times in a row, five times, and the fastest mean kept, for:

- rust: the Rust matcher's `fill_mask` in a loop inside the extension (`_rust_fill_ns`), no
  Python between calls;
- frontier: `Matcher.fill_next_token_bitmask(bitmask, 0)` called from Python;
- llguidance: `llguidance.numpy.fill_next_token_bitmask(matcher, bitmask, 0)` over the same
  vocabulary (special tokens as 0xFF and a name) and Codex's Lark grammar.

The first fill of each step is timed too, once, from an empty cache (frontier: a fresh
vocabulary; llguidance: before it has computed that step's mask), the cost of a cold run.

Then a batch filled by `fill_next_token_bitmasks` on 1 and on 2 threads: up to 64 matchers
over the UTF-8 files of the CTL corpus `corpora/ctl/valid` (strict), each at a prefix whose mask no other row has
(an apply_patch stream has about a dozen distinct masks, too few to share out), cold (a fresh
vocabulary: many rows are trie walks) and warm (the masks cached: each row is a copy).
llguidance is needed only for its column (`pip install llguidance`).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import time

import numpy as np

import frontier_stream as fs
from frontier_stream import _native

REPO = pathlib.Path(__file__).resolve().parents[2]
PATCH = REPO / "corpora" / "apply_patch" / "git_history.patch"
# The CTL corpus's UTF-8 files back to back (the encoder takes text): their header states are
# walks of the trie when cold (a unified diff's are mostly table masks now: too cheap to share
# out).
def _ctl_text() -> str:
    texts = []
    for path in sorted((REPO / "corpora" / "ctl" / "valid").glob("*.ctl")):
        try:
            texts.append(path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return "".join(texts)


CTL_TEXT = _ctl_text()
GRAMMAR = REPO / "grammars" / "apply_patch.lark"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def per_call(fill, calls: int, passes: int = 5) -> float:
    """The fastest of `passes` runs of `calls` calls, per call: a run the machine preempted
    (other processes share the cores) is filtered out, as `benches/mask.rs` does."""
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fill()
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


def once(fill) -> float:
    start = time.perf_counter_ns()
    fill()
    return time.perf_counter_ns() - start


def frontier_first(vocab, tokens):
    """The first fill at each step, from an empty cache (`vocab` is fresh): a cold run."""
    m = fs.Matcher(vocab, "apply_patch")
    bitmask = fs.allocate_token_bitmask(1, vocab)
    times = []
    for t in tokens:
        times.append(once(lambda: m.fill_next_token_bitmask(bitmask, 0)))
        assert m.accept_token(t)
    return times


def frontier_steps(vocab, tokens, calls):
    m = fs.Matcher(vocab, "apply_patch")
    bitmask = fs.allocate_token_bitmask(1, vocab)
    warm = m.copy()
    for t in tokens:  # every state's mask into the cache
        warm.fill_next_token_bitmask(bitmask, 0)
        assert warm.accept_token(t)
    rust, python = [], []
    fill = m.fill_next_token_bitmask
    for t in tokens:
        rust.append(min(_native._rust_fill_ns(m, bitmask, 0, calls) for _ in range(5)))
        python.append(per_call(lambda: fill(bitmask, 0), calls))
        assert m.accept_token(t)
    return rust, python


def llguidance_steps(vocab, tokens, calls):
    import llguidance
    import llguidance.numpy as lln

    class Tokens:
        eos_token_id = vocab.eos_ids[0]
        bos_token_id = None
        tokens = [vocab.token_bytes(i) or b"\xff<special_%d>" % i for i in range(vocab.size)]
        special_token_ids = [i for i in range(vocab.size) if not vocab.token_bytes(i)]

        def __call__(self, text):
            return vocab.encode(text)

    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(Tokens()))
    lark = '%llguidance {"no_forcing": true}\n' + GRAMMAR.read_text()
    m = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_lark(lark), log_level=0)
    assert not m.is_error(), m.get_error()
    bitmask = lln.allocate_token_bitmask(1, vocab.size)
    first, again = [], []
    for t in tokens:
        fill = lambda: lln.fill_next_token_bitmask(m, bitmask, 0)  # noqa: E731
        first.append(once(fill))
        again.append(per_call(fill, calls))
        assert m.consume_token(t), m.get_error()
    return first, again


def distinct_states(vocab, lang, tokens, rows):
    """Prefixes of `tokens` whose masks all differ (the first prefix of each mask), at most
    `rows` of them: rows whose cold fills are each a trie walk of their own."""
    m = fs.Matcher(vocab, lang)
    bitmask = fs.allocate_token_bitmask(1, vocab)
    first = {}
    for i, t in enumerate(tokens):
        m.fill_next_token_bitmask(bitmask, 0)
        first.setdefault(bitmask.tobytes(), i)
        assert m.accept_token(t)
    return sorted(first.values())[:rows]


def parallel(lang, tokens, rows=64):
    """Milliseconds to fill the rows of `distinct_states`, on 1 and 2 threads: cold (a fresh
    vocabulary each time, so every row walks the trie; best of 3) and warm (the masks cached;
    best of 20)."""
    prefixes = distinct_states(fs.Vocab.from_tiktoken("o200k_base"), lang, tokens, rows)

    def batch(vocab):
        matchers = []
        for p in prefixes:
            m = fs.Matcher(vocab, lang)
            assert m.accept_tokens(tokens[:p])
            matchers.append(m)
        return matchers, fs.allocate_token_bitmask(len(matchers), vocab)

    def timed(matchers, bitmask, threads):
        """(wall, CPU) milliseconds; CPU over wall is how many cores the call had."""
        start, cpu = time.perf_counter(), time.process_time()
        fs.fill_next_token_bitmasks(matchers, bitmask, threads=threads)
        return (time.perf_counter() - start) * 1e3, (time.process_time() - cpu) * 1e3

    out = {}
    for threads in (1, 2):
        out[("cold", threads)] = min(
            timed(*batch(fs.Vocab.from_tiktoken("o200k_base")), threads) for _ in range(3)
        )
    matchers, bitmask = batch(fs.Vocab.from_tiktoken("o200k_base"))
    timed(matchers, bitmask, 1)
    for threads in (1, 2):
        out[("warm", threads)] = min(timed(matchers, bitmask, threads) for _ in range(20))
    return len(prefixes), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--no-llguidance", action="store_true")
    args = ap.parse_args()
    vocab = fs.Vocab.from_tiktoken("o200k_base")
    tokens = vocab.encode(PATCH.read_text())[: args.tokens]
    print(f"o200k_base, {len(tokens)} tokens of {PATCH.name}, {args.calls} calls a step, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    first = frontier_first(fs.Vocab.from_tiktoken("o200k_base"), tokens)
    rust, python = frontier_steps(vocab, tokens, args.calls)
    overhead = [p - r for p, r in zip(python, rust)]
    rows = [("frontier, first fill of each step (cold cache)", first),
            ("rust, again at the same step (no Python)", rust),
            ("frontier via Python, again at the same step", python),
            ("overhead (frontier via Python - rust)", overhead)]
    if not args.no_llguidance:
        ll_first, ll_again = llguidance_steps(vocab, tokens, args.calls)
        rows.append(("llguidance via Python, first fill of each step", ll_first))
        rows.append(("llguidance via Python, again at the same step", ll_again))
    print("| per call, µs | median | p99 | max |\n|---|---|---|---|")
    for name, values in rows:
        us = [v / 1000 for v in values]
        print(f"| {name} | {statistics.median(us):.3f} | {pct(us, 0.99):.3f} | {max(us):.3f} |")
    ctl = vocab.encode(CTL_TEXT)[: args.tokens]
    rows, times = parallel("ctl", ctl)
    print(f"| {rows} rows of the CTL corpus at distinct masks, wall ms (CPU ms) | 1 thread | "
          f"2 threads | speed-up |\n|---|---|---|---|")
    for label in ("cold", "warm"):
        (one, one_cpu), (two, two_cpu) = times[(label, 1)], times[(label, 2)]
        print(f"| {label} | {one:.3f} ({one_cpu:.3f}) | {two:.3f} ({two_cpu:.3f}) | "
              f"{one / two:.2f}× |")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
