"""vLLM: a structured-output backend and grammar with vLLM's interfaces.

vLLM (v1 engine) drives a backend through two classes: a ``StructuredOutputBackend``
(``compile_grammar(request_type, grammar_spec)``, ``allocate_token_bitmask(max_num_seqs)``,
``destroy()``) and, per request, a ``StructuredOutputGrammar`` (``accept_tokens``,
``validate_tokens``, ``rollback``, ``fill_bitmask``, ``is_terminated``, ``reset``).
:class:`FrontierBackend` and :class:`FrontierGrammar` have those methods with those
semantics, and import nothing from vLLM: they can be driven, as the tests do, by the call
sequence vLLM makes (with speculative decoding: fill a row, accept a draft token, fill the
next row, ..., then roll back what the target model refused).

vLLM has no plugin hook for backends; :func:`register` is the opt-in one: it wraps vLLM's
``StructuredOutputManager.grammar_init`` so that a request whose backend is ``"frontier"``
gets this backend. The grammar spec names a language: ``"apply_patch"``, ``"udiff:git"``
or ``{"lang": "ctl"}``.
"""

from __future__ import annotations

from typing import Any

from ._bitmask import allocate_token_bitmask
from ._native import Matcher, Vocab
from ._spec import parse_grammar_spec

BACKEND_NAME = "frontier"


class FrontierGrammar:
    """One request's grammar state (vLLM's ``StructuredOutputGrammar``)."""

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Takes ``tokens`` in order: ``True``, or ``False`` with nothing taken when one is
        refused (an id past the vocabulary, or a token other than EOS after EOS, included)."""
        return self.matcher.accept_tokens(tokens)

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest prefix of ``tokens`` the grammar would take (an id past the vocabulary
        ends it); the state is unchanged."""
        return tokens[: self.matcher.validate_tokens(tokens)]

    def rollback(self, num_tokens: int) -> None:
        """Undoes the last ``num_tokens`` taken tokens (EOS counts as one)."""
        self.matcher.rollback(num_tokens)

    def fill_bitmask(self, bitmask: Any, idx: int) -> None:
        """Writes the next token's mask into row ``idx`` of ``bitmask`` (GIL released)."""
        self.matcher.fill_next_token_bitmask(bitmask, idx)

    def is_terminated(self) -> bool:
        """Whether EOS was taken."""
        return self.matcher.is_terminated()

    def reset(self) -> None:
        """Back to the start."""
        self.matcher.reset()


class FrontierBackend:
    """The engine-level backend (vLLM's ``StructuredOutputBackend``): one vocabulary, its
    grammars compiled once and shared by every request's matcher.

    Built as vLLM builds its backends, ``FrontierBackend(vllm_config, tokenizer=...,
    vocab_size=...)``; ``vocab`` may be given instead of a tokenizer. ``vocab_size`` is the
    model's logits width (at least the tokenizer's size), which sets the bitmask's width.
    """

    def __init__(
        self,
        vllm_config: Any = None,
        tokenizer: Any = None,
        vocab_size: int | None = None,
        *,
        vocab: Vocab | None = None,
        max_rollback: int | None = None,
    ) -> None:
        if vocab is None:
            if tokenizer is None:
                raise ValueError("FrontierBackend needs a tokenizer or a vocab")
            vocab = Vocab.from_huggingface(tokenizer)
        self.vllm_config = vllm_config
        self.tokenizer = tokenizer
        self.vocab = vocab
        self.vocab_size = vocab.size if vocab_size is None else vocab_size
        if self.vocab_size < vocab.size:
            raise ValueError(
                f"vocab_size {self.vocab_size} is smaller than the vocabulary's {vocab.size} ids"
            )
        if max_rollback is None:
            max_rollback = _speculative_tokens(vllm_config) + 1
            max_rollback = max(max_rollback, 32)
        self.max_rollback = max_rollback

    def compile_grammar(self, request_type: Any, grammar_spec: str) -> FrontierGrammar:
        """The grammar for ``grammar_spec`` (a language name, see the module docs); the
        request type (``GRAMMAR``, ``REGEX``, ...) is not used: the spec says it all."""
        lang, mode = parse_grammar_spec(grammar_spec)
        return FrontierGrammar(Matcher(self.vocab, lang, mode, max_rollback=self.max_rollback))

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        """A ``(max_num_seqs, ceil(vocab_size / 32))`` int32 array, all ones: a torch CPU
        tensor when torch is installed (what vLLM applies), else a numpy array."""
        try:
            import torch
        except ImportError:
            return allocate_token_bitmask(max_num_seqs, self.vocab_size)
        return torch.full((max_num_seqs, (self.vocab_size + 31) // 32), -1, dtype=torch.int32)

    def destroy(self) -> None:
        """Nothing to release: matchers and grammars are freed with their last reference."""


def _speculative_tokens(vllm_config: Any) -> int:
    spec = getattr(vllm_config, "speculative_config", None)
    return int(getattr(spec, "num_speculative_tokens", 0) or 0)


def register() -> None:
    """Makes ``"frontier"`` a structured-output backend of the installed vLLM.

    vLLM picks its backend by name inside ``StructuredOutputManager.grammar_init``; this
    wraps that method so that, when no backend was built yet and the request names
    ``"frontier"``, a :class:`FrontierBackend` is built from the manager's config and
    tokenizer. Calling it twice is harmless. Raises ``ImportError`` without vLLM, and
    ``RuntimeError`` when the vLLM found does not have the manager this was written against.
    """
    try:
        from vllm.v1 import structured_output
    except ImportError as e:
        raise ImportError(f"frontier_stream.vllm.register needs vLLM: {e}") from None
    manager = getattr(structured_output, "StructuredOutputManager", None)
    original = getattr(manager, "grammar_init", None)
    if original is None:
        raise RuntimeError("this vLLM has no StructuredOutputManager.grammar_init to extend")
    if getattr(original, "_frontier", False):
        return

    def grammar_init(self: Any, request: Any) -> None:
        params = getattr(request, "sampling_params", None)
        options = getattr(params, "structured_outputs", None)
        if self.backend is None and getattr(options, "_backend", None) == BACKEND_NAME:
            self.backend = FrontierBackend(
                self.vllm_config,
                tokenizer=self.tokenizer,
                vocab_size=self.vllm_config.model_config.get_vocab_size(),
            )
        return original(self, request)

    grammar_init._frontier = True  # type: ignore[attr-defined]
    manager.grammar_init = grammar_init
