"""transformers: a ``LogitsProcessor`` that keeps ``generate()`` inside a language.

``LogitsProcessor(vocab, lang, mode=None)`` is called as transformers calls every logits
processor, ``processor(input_ids, scores) -> scores``, once per step with the whole batch.
The first call's ``input_ids`` are the prompts: what follows them is masked, one
:class:`~frontier_stream.Matcher` per row. Each later call brings one token per row, which
that row's matcher takes. A row whose matcher accepted EOS is finished: transformers keeps
calling with pad tokens there, which are ignored, and its scores are left as they are.

``input_ids`` and ``scores`` may be torch tensors (what ``generate()`` passes), numpy arrays
or lists (lists work with the standard library alone); torch is never imported here. Scores of refused ids become ``-inf`` in place, and
ids past the vocabulary's size (a model's logits are often wider) are refused.
"""

from __future__ import annotations

from typing import Any

from ._bitmask import allocate_token_bitmask, allowed_ids
from ._native import Matcher, Vocab, fill_next_token_bitmasks


def _rows(ids: Any) -> list[list[int]]:
    """``ids`` (tensor, array or lists) as lists of ints."""
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    return [list(row) for row in ids]


class LogitsProcessor:
    """Masks ``scores`` so that each row's continuation stays a viable prefix of ``lang``."""

    def __init__(self, vocab: Vocab, lang: str, mode: str | None = None) -> None:
        Matcher(vocab, lang, mode)  # an unknown language or mode raises here, not mid-run
        self.vocab = vocab
        self.lang = lang
        self.mode = mode
        self.matchers: list[Matcher] | None = None
        self._prompt_len = 0
        self._taken: list[int] = []
        self._bitmask: Any = None

    def reset(self) -> None:
        """Forgets the batch: the next call's ``input_ids`` are new prompts."""
        self.matchers = None

    def _start(self, rows: list[list[int]]) -> None:
        self.matchers = [Matcher(self.vocab, self.lang, self.mode) for _ in rows]
        self._prompt_len = len(rows[0]) if rows else 0
        self._taken = [0] * len(rows)
        self._bitmask = allocate_token_bitmask(len(rows), self.vocab)

    def _advance(self, rows: list[list[int]]) -> None:
        assert self.matchers is not None
        if len(rows) != len(self.matchers):
            raise ValueError(
                f"the batch had {len(self.matchers)} rows and now has {len(rows)}: "
                "call reset() between generations"
            )
        for row, (ids, matcher) in enumerate(zip(rows, self.matchers)):
            new = ids[self._prompt_len + self._taken[row] :]
            for token in new:
                self._taken[row] += 1
                if matcher.is_terminated():
                    continue  # a finished row's pad tokens
                if not matcher.accept_token(token):
                    raise ValueError(
                        f"row {row}: token {token} is outside the language: "
                        "were the scores this processor masked used?"
                    )

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        rows = _rows(input_ids)
        if self.matchers is None:
            self._start(rows)
        else:
            self._advance(rows)
        assert self.matchers is not None
        live = [i for i, m in enumerate(self.matchers) if not m.is_terminated()]
        fill_next_token_bitmasks(
            [self.matchers[i] for i in live], self._bitmask, live
        )
        width = scores.shape[-1] if hasattr(scores, "shape") else len(scores[0])
        bitmask = self._bitmask
        if isinstance(bitmask, memoryview):  # no numpy nor torch: rows through tolist()
            bitmask = bitmask.tolist()
        for i in live:
            allowed = allowed_ids(bitmask[i])
            _mask_row(scores, i, allowed, width)
        return scores


def _mask_row(scores: Any, row: int, allowed: Any, width: int) -> None:
    """Sets ``scores[row][t] = -inf`` for every ``t < width`` that ``allowed`` refuses (an id
    past ``allowed`` is refused)."""
    try:
        import numpy
    except ImportError:  # no numpy, so scores are lists (a tensor would have brought numpy)
        line = scores[row]
        for t in range(width):
            if t >= len(allowed) or not allowed[t]:
                line[t] = float("-inf")
        return

    refused = numpy.ones(width, dtype=bool)
    n = min(width, len(allowed))
    refused[:n] = ~allowed[:n]
    if isinstance(scores, numpy.ndarray):
        scores[row, refused] = -numpy.inf
    elif hasattr(scores, "masked_fill_"):
        import torch  # scores is a tensor, so torch is there

        scores[row].masked_fill_(torch.from_numpy(refused).to(scores.device), float("-inf"))
    else:
        line = scores[row]
        for t in numpy.flatnonzero(refused).tolist():
            line[t] = float("-inf")
