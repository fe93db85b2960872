"""SGLang: a grammar backend registered through the ``sglang.srt.plugins`` entry point.

SGLang drives a grammar object per request (``BaseGrammarObject``): ``accept_token`` (raises
on a refused token), ``rollback(k)`` (tree verification of speculative tokens calls it once
per node, ``k = 1``, so it is a copy of a kept state here), ``is_terminated()``,
``allocate_vocab_mask``, ``fill_vocab_mask(mask, idx)``, ``move_vocab_mask``,
``apply_vocab_mask`` and ``copy()`` (a fresh state for a new request). :class:`FrontierGrammar`
has those methods and imports nothing from SGLang. A backend (``BaseGrammarBackend``) makes
them from a request's grammar: :class:`FrontierGrammarBackend` answers ``dispatch_ebnf`` and
``dispatch_regex`` with the language the text names (``"apply_patch"``, ``"udiff:git"``).

SGLang loads the ``sglang.srt.plugins`` entry points at start-up; this package's calls
:func:`register`, which registers the backend as ``"frontier"`` (``--grammar-backend
frontier``).
"""

from __future__ import annotations

from typing import Any

from ._native import Matcher, Vocab
from ._spec import parse_grammar_spec

BACKEND_NAME = "frontier"


class FrontierGrammar:
    """One request's grammar state (SGLang's ``BaseGrammarObject``)."""

    def __init__(self, matcher: Matcher, vocab_size: int) -> None:
        self.matcher = matcher
        self.vocab_size = vocab_size
        self.finished = False
        self.grammar_stats = None
        self.current_token: int | None = None

    def maybe_init_reasoning(self, reasoning: bool) -> None:
        """Reasoning sections are not part of frontier's languages: nothing to do."""

    def accept_token(self, token: int) -> None:
        """Takes ``token``; a refused one (an id past the vocabulary included) raises
        ``ValueError`` and changes nothing."""
        if not self.matcher.accept_token(token):
            raise ValueError(f"token {token} is refused by the {self.matcher!r} grammar")
        self.current_token = token

    def rollback(self, k: int) -> None:
        """Undoes the last ``k`` tokens."""
        self.matcher.rollback(k)

    def is_terminated(self) -> bool:
        """Whether EOS was taken."""
        return self.matcher.is_terminated()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
        """A ``(batch_size, ceil(vocab_size / 32))`` int32 torch tensor on the CPU, all ones
        (frontier fills CPU rows; :meth:`move_vocab_mask` moves them)."""
        import torch

        return torch.full((batch_size, (vocab_size + 31) // 32), -1, dtype=torch.int32)

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        """Writes the next token's mask into row ``idx`` (GIL released)."""
        self.matcher.fill_next_token_bitmask(vocab_mask, idx)

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        """The mask on ``device``."""
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        """Sets the logits of refused ids to ``-inf`` in place."""
        import torch

        rows, width = logits.shape
        shifts = torch.arange(32, device=vocab_mask.device, dtype=torch.int32)
        bits = (vocab_mask.unsqueeze(-1) >> shifts) & 1
        allowed = bits.reshape(vocab_mask.shape[0], -1)[:rows, :width].bool()
        logits.masked_fill_(~allowed.to(logits.device), float("-inf"))

    def copy(self) -> "FrontierGrammar":
        """A fresh grammar: the same language and vocabulary, at the start of the output.

        SGLang keeps a compiled grammar in its cache and gives each request ``copy()`` of
        it, so, as its own backends (xgrammar, llguidance) do, a copy starts over whatever
        this one has taken; this one does not move. (``Matcher.copy()`` is the fork in the
        same state.)
        """
        fresh = self.matcher.copy()
        fresh.reset()
        return type(self)(fresh, self.vocab_size)

    def try_jump_forward(self, tokenizer: Any) -> Any:
        """Jump-forward is not offered (``forced_bytes`` is, on the matcher): ``None``."""
        return None


class FrontierGrammarBackend:
    """SGLang's ``BaseGrammarBackend`` for frontier's languages, over one vocabulary.

    Built as SGLang builds a registered backend: ``(server_args, tokenizer, vocab_size,
    eos_token_ids)``; ``vocab`` may be given instead of a tokenizer. The EOS tokens are
    SGLang's ``eos_token_ids`` (the model's stop tokens, often several: Llama-3's
    ``<|eot_id|>`` and ``<|end_of_text|>``) with the tokenizer's ``eos_token_id``, as SGLang
    hands them to its own backends as stop tokens. SGLang's own base class
    (compilation thread pool, cache) is mixed in by :func:`register`.
    """

    grammar_class: type[FrontierGrammar] = FrontierGrammar

    def __init__(
        self,
        server_args: Any = None,
        tokenizer: Any = None,
        vocab_size: int | None = None,
        eos_token_ids: Any = None,
        *,
        vocab: Vocab | None = None,
    ) -> None:
        if vocab is None:
            if tokenizer is None:
                raise ValueError("FrontierGrammarBackend needs a tokenizer or a vocab")
            vocab = Vocab.from_huggingface(tokenizer, eos_ids=_eos_ids(tokenizer, eos_token_ids))
        self.vocab = vocab
        self.vocab_size = vocab.size if vocab_size is None else vocab_size

    def _grammar(self, text: str) -> FrontierGrammar:
        lang, mode = parse_grammar_spec(text)
        return self.grammar_class(Matcher(self.vocab, lang, mode), self.vocab_size)

    def dispatch_ebnf(self, key_string: str) -> FrontierGrammar:
        """The grammar of the language ``key_string`` names."""
        return self._grammar(key_string)

    def dispatch_regex(self, key_string: str) -> FrontierGrammar:
        """As :meth:`dispatch_ebnf`."""
        return self._grammar(key_string)

    def dispatch_json(self, key_string: str) -> FrontierGrammar:
        """JSON schemas are not frontier's: raises ``ValueError``."""
        raise ValueError("the frontier grammar backend has no JSON schemas")

    def dispatch_structural_tag(self, key_string: str) -> FrontierGrammar:
        """Structural tags are not frontier's: raises ``ValueError``."""
        raise ValueError("the frontier grammar backend has no structural tags")



def _eos_ids(tokenizer: Any, eos_token_ids: Any) -> list[int] | None:
    """SGLang's ``eos_token_ids`` with the tokenizer's ``eos_token_id``, or ``None`` (the
    tokenizer's own) when SGLang gives none."""
    if not eos_token_ids:
        return None
    ids = {int(t) for t in eos_token_ids}
    own = getattr(tokenizer, "eos_token_id", None)
    if own is not None:
        ids.add(int(own))
    return sorted(ids)


def register() -> None:
    """Registers the backend with SGLang as ``"frontier"``: what the ``sglang.srt.plugins``
    entry point calls. The classes registered are :class:`FrontierGrammarBackend` and
    :class:`FrontierGrammar` with SGLang's ``BaseGrammarBackend`` and ``BaseGrammarObject``
    mixed in, so that SGLang's own machinery (its compile cache and thread pool) is there.
    Raises ``ImportError`` without SGLang."""
    from sglang.srt.constrained.base_grammar_backend import (
        BaseGrammarBackend,
        BaseGrammarObject,
        register_grammar_backend,
    )

    class Grammar(FrontierGrammar, BaseGrammarObject):  # type: ignore[misc, valid-type]
        def __init__(self, matcher: Matcher, vocab_size: int) -> None:
            BaseGrammarObject.__init__(self)
            FrontierGrammar.__init__(self, matcher, vocab_size)

    class Backend(FrontierGrammarBackend, BaseGrammarBackend):  # type: ignore[misc, valid-type]
        grammar_class = Grammar

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            BaseGrammarBackend.__init__(self)
            FrontierGrammarBackend.__init__(self, *args, **kwargs)

    register_grammar_backend(BACKEND_NAME, Backend)
