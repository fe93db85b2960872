"""Bitmask arrays: making them, and reading which ids a row allows.

A row is ``ceil(V / 32)`` int32 words; bit ``t % 32`` of word ``t // 32`` is 1 when token
``t`` is allowed (``masks.md``). numpy is used when present, else torch, else (the standard
library only) a 2-D ``memoryview`` of C ints.
"""

from __future__ import annotations

import struct
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
    tensor, else (no dependency but the standard library) a 2-D ``memoryview`` of format
    ``"i"`` over a ``bytearray`` (``bitmask[row, word]``, ``bitmask.tolist()``); every bit
    starts at ``fill`` (-1: all allowed, as xgrammar's does, so a row no matcher fills masks
    nothing).
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
            return _memoryview_bitmask(shape, fill)
        return torch.full(shape, fill, dtype=torch.int32)
    return numpy.full(shape, fill, dtype=numpy.int32)


def _memoryview_bitmask(shape: tuple[int, int], fill: int) -> memoryview:
    """A C-contiguous ``(rows, words)`` memoryview of int32 words, each ``fill``."""
    rows, words = shape
    if struct.calcsize("i") != 4:
        raise ImportError("allocate_token_bitmask needs numpy or torch: a C int is not 32 bits")
    word = struct.pack("=i", fill)
    if words == 0:
        raise ValueError(
            "a bitmask of 0 words a row needs numpy or torch (a memoryview cannot have a 0 in "
            "its shape)"
        )
    if rows == 0:  # a memoryview cannot be cast to a shape with a 0: slice one row away
        return memoryview(bytearray(word * words)).cast("i", (1, words))[:0]
    return memoryview(bytearray(word * (rows * words))).cast("i", shape)


def allowed_ids(row: Any, width: int | None = None) -> Any:
    """The allowed ids of one bitmask row as a numpy bool array of ``width`` entries (default:
    32 per word). ``row`` is a 1-D int32 numpy array or torch tensor, or any sequence of ints
    (a row of a memoryview bitmask's ``tolist()``); without numpy, the answer is a list of
    bools."""
    try:
        import numpy
    except ImportError:
        words = row.tolist() if hasattr(row, "tolist") else list(row)
        bits = [(int(w) >> b) & 1 == 1 for w in words for b in range(32)]
        return bits if width is None else bits[:width]

    if hasattr(row, "numpy") and not isinstance(row, numpy.ndarray):
        row = row.detach().cpu().numpy()
    row = numpy.ascontiguousarray(row, dtype="<i4")
    bits = numpy.unpackbits(row.view(numpy.uint8), bitorder="little").astype(bool)
    return bits if width is None else bits[:width]
