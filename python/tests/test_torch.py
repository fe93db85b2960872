"""The torch paths with real tensors; skipped where torch is not installed (CI has none: run
them in a virtual environment with torch, as docs/hosts/transformers.md says)."""

from __future__ import annotations

import numpy as np
import pytest

import frontier_stream as fs
from frontier_stream import hf, sglang, vllm

torch = pytest.importorskip("torch")


def test_a_tensor_row_equals_a_numpy_row(o200k):
    m = fs.Matcher(o200k, "apply_patch")
    tensor = torch.zeros((2, o200k.mask_words), dtype=torch.int32)
    array = np.zeros((2, o200k.mask_words), dtype=np.int32)
    m.fill_next_token_bitmask(tensor, 1)
    m.fill_next_token_bitmask(array, 1)
    assert (tensor.numpy() == array).all() and array[1].any()
    for bad, kind in [
        (torch.zeros((2, o200k.mask_words), dtype=torch.int64), TypeError),
        (torch.zeros((o200k.mask_words, 2), dtype=torch.int32).T, ValueError),
        (torch.zeros(3, dtype=torch.int32), ValueError),
    ]:
        with pytest.raises(kind):
            m.fill_next_token_bitmask(bad, 0)


def test_engine_masks_applied_with_torch(o200k):
    width = 200064
    backend = vllm.FrontierBackend(vocab=o200k, vocab_size=width)
    bitmask = backend.allocate_token_bitmask(3)
    assert isinstance(bitmask, torch.Tensor) and bitmask.shape == (3, width // 32)
    grammar = sglang.FrontierGrammarBackend(vocab=o200k, vocab_size=width).dispatch_ebnf(
        "apply_patch"
    )
    mask = grammar.allocate_vocab_mask(width, 2, "cpu")
    grammar.fill_vocab_mask(mask, 0)
    logits = torch.randn(2, width)
    grammar.apply_vocab_mask(logits, grammar.move_vocab_mask(mask, "cpu"))
    allowed = torch.isfinite(logits[0]).nonzero().flatten().tolist()
    assert [o200k.token_bytes(t) for t in allowed] == [b"*", b"**", b"***"]
    assert torch.isfinite(logits[1]).all(), "an unfilled row allows everything"


def test_the_logits_processor_with_tensors(o200k):
    processor = hf.LogitsProcessor(o200k, "apply_patch")
    scores = torch.zeros((2, o200k.size + 45))
    out = processor(torch.tensor([[1, 2], [3, 4]]), scores)
    assert out is scores
    allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
    assert [o200k.token_bytes(t) for t in allowed] == [b"*", b"**", b"***"]
