"""frontier for Python: token masks and streaming push parsers for model output.

The languages are CTL tool calls (``"ctl"``), Codex's patch language (``"apply_patch"``,
modes ``"strict"``, ``"codex"`` and ``"environment"``) and unified diff (``"udiff"``, modes ``"strict"``,
``"git"``, ``"recount"``).

- :class:`Vocab`: a model's vocabulary, shared read-only by every matcher over it;
- :class:`Matcher`: one sequence's token-mask matcher (``fill_next_token_bitmask``,
  ``accept_token``, ``rollback``, ...); :func:`fill_next_token_bitmasks` fills many rows on
  several threads; :func:`allocate_token_bitmask` makes the array they fill;
- :class:`Parser`: a push parser whose events are the dicts ``frontier events`` prints;
  :class:`ParseError` is what a push outside the language raises.

Adapters, each importing its engine only when used: :mod:`frontier_stream.hf`
(transformers' ``generate()``), :mod:`frontier_stream.vllm` and :mod:`frontier_stream.sglang`.
"""

from __future__ import annotations

from ._native import (
    DEFAULT_MAX_ROLLBACK,
    MAX_ROLLBACK,
    Matcher,
    ParseError,
    Parser,
    Vocab,
    fill_next_token_bitmasks,
)
from ._bitmask import allocate_token_bitmask, allowed_ids

__all__ = [
    "DEFAULT_MAX_ROLLBACK",
    "MAX_ROLLBACK",
    "Matcher",
    "ParseError",
    "Parser",
    "Vocab",
    "allocate_token_bitmask",
    "allowed_ids",
    "fill_next_token_bitmasks",
]
