"""Naming a frontier language in an engine's grammar string."""

from __future__ import annotations

import json


def parse_grammar_spec(spec: str) -> tuple[str, str | None]:
    """``"lang"``, ``"lang:mode"`` or ``{"lang": ..., "mode": ...}`` as ``(lang, mode)``.

    An engine hands a backend the text of a request's grammar; frontier's grammars are its
    languages, named this way (``"apply_patch"``, ``"udiff:git"``). Whether the language and
    mode exist is checked when the matcher is made.
    """
    text = spec.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"grammar spec {spec!r} is not JSON: {e}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("lang"), str):
            raise ValueError(f'grammar spec {spec!r}: expected {{"lang": ..., "mode": ...}}')
        mode = obj.get("mode")
        if mode is not None and not isinstance(mode, str):
            raise ValueError(f"grammar spec {spec!r}: mode must be a string")
        return obj["lang"], mode
    lang, sep, mode = text.partition(":")
    if not lang or (sep and not mode):
        raise ValueError(f"grammar spec {spec!r}: expected LANG or LANG:MODE")
    return lang, (mode if sep else None)
