"""transformers: a ``LogitsProcessor`` that keeps ``generate()`` inside a language.

``LogitsProcessor(vocab, lang, mode=None)`` is called as transformers calls every logits
processor, ``processor(input_ids, scores) -> scores``, once per step with the whole batch.
The first call's ``input_ids`` are the prompts: what follows them is masked, one
:class:`~frontier_stream.Matcher` per row. Each later call brings one token per row, which
that row's matcher takes; when beam search has reordered the rows, a row continues the
matcher of the row whose tokens it extends (copied when two beams share it). A row whose
matcher accepted EOS is finished: transformers keeps calling with pad tokens there, which are
ignored, and its scores are left as they are.

``input_ids`` and ``scores`` may be torch tensors (what ``generate()`` passes), numpy arrays
or lists (lists work with the standard library alone); torch is never imported here. Scores
of refused ids become ``-inf`` in place, and ids past the vocabulary's size (a model's logits
are often wider) are refused.
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
        self._generated: list[list[int]] = []
        self._bitmask: Any = None

    def reset(self) -> None:
        """Forgets the batch: the next call's ``input_ids`` are new prompts."""
        self.matchers = None

    def _start(self, rows: list[list[int]]) -> None:
        self.matchers = [Matcher(self.vocab, self.lang, self.mode) for _ in rows]
        self._prompt_len = len(rows[0]) if rows else 0
        self._generated = [[] for _ in rows]
        self._bitmask = allocate_token_bitmask(len(rows), self.vocab)

    def _advance(self, rows: list[list[int]]) -> None:
        """Each row's matcher after its new tokens. A row continues the row of the last call
        whose generated tokens it extends: the same row, or another one when beam search has
        reordered the beams (that row's matcher is copied, once per extra use)."""
        assert self.matchers is not None
        if len(rows) != len(self.matchers):
            raise ValueError(
                f"the batch had {len(self.matchers)} rows and now has {len(rows)}: "
                "call reset() between generations"
            )
        old, old_generated = self.matchers, self._generated
        by_text: dict[tuple[int, ...], int] = {}
        for j, generated in enumerate(old_generated):
            by_text.setdefault(tuple(generated), j)
        generated_now = [list(ids[self._prompt_len :]) for ids in rows]
        sources = []
        for row, generated in enumerate(generated_now):
            source = self._source(row, generated, old_generated, by_text)
            if source is None:
                raise ValueError(
                    f"row {row} continues no row of the last call (its first "
                    f"{self._prompt_len} ids are taken as the prompt): call reset() between "
                    "generations"
                )
            sources.append(source)
        # Copies first, of the matchers as the last call left them; then the new tokens.
        used = [False] * len(old)
        matchers: list[Matcher] = []
        for j, _ in sources:
            matchers.append(old[j] if not used[j] else old[j].copy())
            used[j] = True
        for row, (matcher, (_, known)) in enumerate(zip(matchers, sources)):
            for token in generated_now[row][known:]:
                if matcher.is_terminated():
                    continue  # a finished row's pad tokens
                if not matcher.accept_token(token):
                    raise ValueError(
                        f"row {row}: token {token} is outside the language: "
                        "were the scores this processor masked used?"
                    )
        self.matchers, self._generated = matchers, generated_now

    @staticmethod
    def _source(
        row: int,
        generated: list[int],
        old_generated: list[list[int]],
        by_text: dict[tuple[int, ...], int],
    ) -> tuple[int, int] | None:
        """The row of the last call that ``generated`` extends and how many of its tokens that
        row had, or ``None``."""
        if row < len(old_generated):
            known = len(old_generated[row])
            if generated[:known] == old_generated[row]:
                return row, known
        for cut in range(len(generated), -1, -1):
            j = by_text.get(tuple(generated[:cut]))
            if j is not None:
                return j, cut
        return None

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
