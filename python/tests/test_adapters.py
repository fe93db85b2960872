"""The engines' call sequences replayed against the adapters (no engine installed): vLLM's
speculative decoding, SGLang's tree walk, transformers' batch rows finishing at different
steps."""

from __future__ import annotations

import numpy as np
import pytest

import frontier_stream as fs
from frontier_stream import hf, sglang, vllm
from frontier_stream._spec import parse_grammar_spec

PATCHES = [
    "*** Begin Patch\n*** Add File: hello.txt\n+Hello, world!\n*** End Patch",
    "*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    print('hi')\n"
    "+    print('hello')\n*** End Patch",
    "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch",
]


def mask_of(matcher: fs.Matcher, width_words: int) -> np.ndarray:
    bitmask = np.zeros((1, width_words), dtype=np.int32)
    matcher.fill_next_token_bitmask(bitmask, 0)
    return bitmask[0]


def reference(vocab, tokens) -> fs.Matcher:
    m = fs.Matcher(vocab, "apply_patch")
    assert m.accept_tokens(tokens)
    return m


def test_grammar_specs():
    assert parse_grammar_spec("apply_patch") == ("apply_patch", None)
    assert parse_grammar_spec(" udiff:git ") == ("udiff", "git")
    assert parse_grammar_spec('{"lang": "ctl", "mode": "strict"}') == ("ctl", "strict")
    for bad in ("", ":git", "udiff:", "{", '{"mode": "git"}', '{"lang": "ctl", "mode": 1}'):
        with pytest.raises(ValueError):
            parse_grammar_spec(bad)


def test_vllm_speculative_decoding(o200k):
    width = 200064  # the model's logits are wider than o200k's 200,019 ids
    backend = vllm.FrontierBackend(None, vocab=o200k, vocab_size=width)
    with pytest.raises(ValueError, match="unknown language"):
        backend.compile_grammar("GRAMMAR", "json")
    grammars = [backend.compile_grammar("GRAMMAR", "apply_patch") for _ in PATCHES]
    plans = [o200k.encode(p) + o200k.eos_ids for p in PATCHES]
    done = [0] * len(PATCHES)
    num_spec = 3
    bitmask = backend.allocate_token_bitmask(len(PATCHES) * (1 + num_spec))
    assert bitmask.shape == (12, width // 32)
    words = width // 32
    while not all(g.is_terminated() for g in grammars):
        # The scheduler: the drafts (proposals for the next positions) are validated, state
        # unchanged, and their valid prefix scheduled.
        drafts = []
        for k, (g, plan, at) in enumerate(zip(grammars, plans, done)):
            draft = plan[at : at + num_spec] if not g.is_terminated() else []
            if k == 1 and len(draft) > 1:
                draft = draft[:1] + [width - 1] + draft[1:]  # an id past the vocabulary
            valid = g.validate_tokens(draft)
            assert valid == (draft[:1] if k == 1 and len(draft) > 1 else draft)
            drafts.append(valid)
        # grammar_bitmask: for each request, fill a row, accept a draft token, fill the next
        # row, ..., then roll back what was accepted.
        row = 0
        for g, draft, plan, at in zip(grammars, drafts, plans, done):
            if g.is_terminated():
                row += 1 + num_spec
                continue
            advanced = 0
            for i, token in enumerate(draft + [None]):
                g.fill_bitmask(bitmask, row + i)
                expected = mask_of(reference(o200k, plan[:at] + draft[:i]), words)
                assert (bitmask[row + i] == expected).all(), f"row {row + i}"
                if token is not None and not g.is_terminated():
                    assert g.accept_tokens("req", [token])
                    advanced += 1
            g.rollback(advanced)
            assert (mask_of(g.matcher, words) == mask_of(reference(o200k, plan[:at]), words)).all()
            row += 1 + num_spec
        # The target model keeps the first draft token and samples one more (the bonus): two
        # tokens accepted per step.
        for k, (g, draft, plan) in enumerate(zip(grammars, drafts, plans)):
            if g.is_terminated():
                continue
            taken = plan[done[k] : done[k] + 2]
            assert taken[:1] == draft[:1]
            assert g.accept_tokens("req", taken)
            done[k] += len(taken)
    for g, plan, at in zip(grammars, plans, done):
        assert at == len(plan)
        assert not g.accept_tokens("req", [0]), "nothing after EOS"
        assert g.validate_tokens([0]) == []
    grammars[0].reset()
    assert not grammars[0].is_terminated()
    backend.destroy()


def test_vllm_accept_tokens_refuses_whole_and_rolls_back_eos(o200k):
    backend = vllm.FrontierBackend(vocab=o200k)
    g = backend.compile_grammar(None, "apply_patch")
    tokens = o200k.encode(PATCHES[2])
    assert not g.accept_tokens("r", tokens[:2] + [o200k.size + 5])
    for bad in (-1, 1 << 32, 1 << 70):
        assert not g.accept_tokens("r", tokens[:2] + [bad])
        assert g.validate_tokens(tokens[:2] + [bad] + tokens[2:]) == tokens[:2]
    assert g.validate_tokens([]) == []
    assert not g.accept_tokens("r", tokens[:2] + o200k.eos_ids)
    assert g.validate_tokens(tokens + o200k.eos_ids) == tokens + o200k.eos_ids
    assert g.accept_tokens("r", tokens + o200k.eos_ids)
    assert g.is_terminated()
    g.rollback(1)
    assert not g.is_terminated() and g.matcher.is_accepting()


def test_vllm_register_needs_vllm():
    try:
        import vllm as _  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs vLLM"):
            vllm.register()
    else:
        pytest.skip("vLLM is installed")


def test_sglang_tree_walk(o200k):
    backend = sglang.FrontierGrammarBackend(None, vocab=o200k, vocab_size=o200k.size)
    root = backend.dispatch_ebnf("apply_patch")
    words = o200k.mask_words
    tokens = o200k.encode(PATCHES[0])
    prefix = tokens[:4]
    for t in prefix:
        root.accept_token(t)
    # A tree of candidate continuations: the true next tokens and some wrong ones.
    good = tokens[4:8]
    tree = {good[0]: {good[1]: {good[2]: {good[3]: {}}}, 13: {}}, o200k.encode("zzz")[0]: {}}

    def walk(grammar, node, path):
        mask = np.zeros((1, words), dtype=np.int32)
        grammar.fill_vocab_mask(mask, 0)
        assert (mask[0] == mask_of(reference(o200k, prefix + path), words)).all()
        for token, children in node.items():
            try:
                grammar.accept_token(token)
            except ValueError:
                assert not reference(o200k, prefix + path).accept_token(token)
                continue  # refused: the state did not move
            walk(grammar, children, path + [token])
            grammar.rollback(1)

    walk(root, tree, [])
    # SGLang's copy() is a fresh grammar at the start (its cache hands one to each request),
    # and taking tokens in it leaves the original where it was.
    fresh = root.copy()
    assert (mask_of(fresh.matcher, words) == mask_of(reference(o200k, []), words)).all()
    fresh.accept_token(tokens[0])
    assert (mask_of(fresh.matcher, words) == mask_of(reference(o200k, tokens[:1]), words)).all()
    assert (mask_of(root.matcher, words) == mask_of(reference(o200k, prefix), words)).all()
    with pytest.raises(ValueError, match="JSON"):
        backend.dispatch_json("{}")
    for bad in (o200k.size, -1, 1 << 32, 1 << 70):
        with pytest.raises(ValueError, match="refused"):
            root.accept_token(bad)
    assert (mask_of(root.matcher, words) == mask_of(reference(o200k, prefix), words)).all()


class Model:
    """A scripted model: each row means to write its plan, then pads after EOS."""

    def __init__(self, plans, width, pad):
        self.plans, self.width, self.pad = plans, width, pad

    def scores(self, step, finished):
        rng = np.random.default_rng(step)
        scores = rng.standard_normal((len(self.plans), self.width)).astype(np.float32)
        for row, plan in enumerate(self.plans):
            if not finished[row]:
                scores[row, plan[step]] = 10.0  # the planned token wins when allowed
        return scores


@pytest.mark.parametrize("as_lists", [False, True])
def test_transformers_batch_rows_finish_at_different_steps(o200k, as_lists):
    eos = o200k.eos_ids[0]
    texts = PATCHES if not as_lists else PATCHES[2:]
    plans = [o200k.encode(t) + [eos] for t in texts]
    width, pad = o200k.size + 45, eos
    model = Model(plans, width, pad)
    prompt = [o200k.encode("Write a patch:\n")] * len(plans)
    processor = hf.LogitsProcessor(o200k, "apply_patch")
    input_ids = [list(p) for p in prompt]
    finished = [False] * len(plans)
    step = 0
    while not all(finished):
        raw = model.scores(step, finished)
        scores = [list(r) for r in raw] if as_lists else raw.copy()
        out = processor(np.array(input_ids) if not as_lists else input_ids, scores)
        assert out is scores, "masked in place"
        for row in range(len(plans)):
            line = np.asarray(out[row])
            if finished[row]:
                assert (line == raw[row]).all(), "a finished row's scores are left alone"
                input_ids[row].append(pad)
                continue
            assert np.isneginf(line[o200k.size :]).all(), "ids past the vocabulary"
            ref = fs.allowed_ids(mask_of(reference(o200k, plans[row][:step]), o200k.mask_words))
            assert (np.isfinite(line[: o200k.size]) == ref[: o200k.size]).all()
            token = int(np.argmax(line))
            assert token == plans[row][step], f"row {row} step {step}: the plan is viable"
            input_ids[row].append(token)
            finished[row] = token == eos
        step += 1
    assert step == max(len(p) for p in plans)
    for row, text in enumerate(texts):
        # A row that ended before the last step saw its EOS taken; the last step's EOS is
        # never shown to the processor (generate() stops).
        assert processor.matchers[row].is_terminated() == (len(plans[row]) < step)
        generated = input_ids[row][len(prompt[row]) : len(prompt[row]) + len(plans[row]) - 1]
        parser = fs.Parser("apply_patch")
        parser.push(b"".join(o200k.token_bytes(t) for t in generated))
        assert parser.finish()["verdict"] == "complete", "an EOS-stopped output is complete"


def test_transformers_refuses_a_token_it_did_not_allow(o200k):
    processor = hf.LogitsProcessor(o200k, "apply_patch")
    scores = np.zeros((1, o200k.size), dtype=np.float32)
    processor(np.array([[1, 2]]), scores)
    with pytest.raises(ValueError, match="outside the language"):
        processor(np.array([[1, 2, o200k.encode("x")[0]]]), scores)
    with pytest.raises(ValueError, match="unknown language"):
        hf.LogitsProcessor(o200k, "yaml")


def test_sglang_backend_takes_the_engines_eos_token_ids():
    # SGLang builds a backend with the model's stop tokens (a generation config often has
    # several); each of them, with the tokenizer's own, ends the output.
    class Backend:
        def to_str(self):
            return (
                '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},'
                ' "decoder": {"type": "ByteLevel"},'
                ' "added_tokens": [{"id": 2, "content": "<|eot|>", "special": true},'
                ' {"id": 3, "content": "<|end|>", "special": true},'
                ' {"id": 4, "content": "<|pad|>", "special": true}]}'
            )

    class Tokenizer:
        backend_tokenizer = Backend()
        eos_token_id = 2

    assert fs.Vocab.from_huggingface(Tokenizer()).eos_ids == [2]
    assert fs.Vocab.from_huggingface(Tokenizer(), eos_ids=[3]).eos_ids == [3]
    backend = sglang.FrontierGrammarBackend(None, Tokenizer(), 5, {3})
    assert backend.vocab.eos_ids == [2, 3]
    for eos in (2, 3):
        grammar = backend.dispatch_ebnf("ctl")
        grammar.accept_token(eos)  # an empty CTL stream is complete
        assert grammar.is_terminated()
    with pytest.raises(ValueError, match="refused"):
        backend.dispatch_ebnf("ctl").accept_token(4)
    assert sglang.FrontierGrammarBackend(None, Tokenizer(), 5, None).vocab.eos_ids == [2]


def test_transformers_follows_beams_that_beam_search_reorders():
    # Beam search hands each row the best beams of the last step, in any order: a row may
    # continue another row's tokens, and two rows the same one.
    tokens = [b"*** Begin Patch\n", b"*** Add File: a\n", b"+x\n", b"*** End Patch", b"\n"]
    tokens.append(b"<e>")
    begin, add, line, end, lf, eos = range(6)
    vocab = fs.Vocab.from_token_bytes(tokens, eos_ids=[eos])
    processor = hf.LogitsProcessor(vocab, "apply_patch")

    def step(rows):
        scores = np.zeros((len(rows), vocab.size), dtype=np.float32)
        processor(np.array(rows), scores)
        for row, ids in zip(scores, rows):
            ref = reference(vocab, ids[1:])
            if ref.is_terminated():
                assert (row == 0).all(), "a finished row's scores are left alone"
                continue
            allowed = fs.allowed_ids(mask_of(ref, vocab.mask_words), vocab.size)
            assert (np.isfinite(row) == allowed).all(), ids

    p = [lf]  # the prompt
    step([p, p])
    step([p + [begin], p + [begin]])
    step([p + [begin, add], p + [begin, add]])
    step([p + [begin, add, line], p + [begin, add, line]])
    step([p + [begin, add, line, end], p + [begin, add, line, line]])
    # Both beams now continue the second row (the first row's "*** End Patch" is dropped).
    step([p + [begin, add, line, line, end], p + [begin, add, line, line, line]])
    # The rows swap.
    step([p + [begin, add, line, line, line, end], p + [begin, add, line, line, end, eos]])
    assert processor.matchers[1].is_terminated() and not processor.matchers[0].is_terminated()
    with pytest.raises(ValueError, match="continues no row"):
        stray = np.array([p + [begin] * 7] * 2)
        processor(stray, np.zeros((2, vocab.size), dtype=np.float32))
