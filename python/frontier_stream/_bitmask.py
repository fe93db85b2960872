"""Bitmask arrays: making them, and reading which ids a row allows.

A row is ``ceil(V / 32)`` int32 words; bit ``t % 32`` of word ``t // 32`` is 1 when token
``t`` is allowed (``masks.md``). numpy is used when present, else torch.
"""

from __future__ import annotations

from typing import Any


def _words(vocab: Any) -> int:
    """Words in a row for ``vocab``: a :class:`Vocab` or a logits width (an int)."""
    size = vocab if isinstance(vocab, int) else vocab.size
    if size < 0:
        raise ValueError(f"a vocabulary size of {size}")
    return (size + 31) // 32


def allocate_token_bitmask(rows: int, vocab: Any, *, fill: int = -1) -> Any:
    """A ``(rows, ceil(V / 32))`` int32 array for ``fill_next_token_bitmask``.

    ``vocab`` is a :class:`Vocab` or the model's logits width (which may exceed the
    vocabulary's size). The array is a numpy array when numpy is installed, else a torch CPU
    tensor; every bit starts at ``fill`` (-1: all allowed, as xgrammar's does, so a row no
    matcher fills masks nothing).
    """
    if rows < 0:
        raise ValueError(f"{rows} rows")
    shape = (rows, _words(vocab))
    try:
        import numpy
    except ImportError:
        try:
            import torch
        except ImportError:
            raise ImportError(
                "allocate_token_bitmask needs numpy or torch; either can be filled"
            ) from None
        return torch.full(shape, fill, dtype=torch.int32)
    return numpy.full(shape, fill, dtype=numpy.int32)


def allowed_ids(row: Any, width: int | None = None) -> Any:
    """The allowed ids of one bitmask row as a numpy bool array of ``width`` entries (default:
    32 per word). ``row`` is a 1-D int32 numpy array or torch tensor."""
    import numpy

    if hasattr(row, "numpy") and not isinstance(row, numpy.ndarray):
        row = row.detach().cpu().numpy()
    row = numpy.ascontiguousarray(row, dtype="<i4")
    bits = numpy.unpackbits(row.view(numpy.uint8), bitorder="little").astype(bool)
    return bits if width is None else bits[:width]
