"""The package against the `frontier` binary on the corpora: masks (sha256 per step, over
o200k) identical to `frontier mask`'s, which is the Rust matcher's; events and the verdict
identical to `frontier events`'."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import frontier_stream as fs
from conftest import corpus_files, corpus_id, merged, run_frontier

# Each step of `frontier mask` in the debug build walks the trie when the state is new; the
# first tokens of every file already meet each kind of state, so a file's first 120 tokens are
# compared (all of most files).
MAX_TOKENS = 120

CASES = corpus_files()


def lang_args(lang: str, mode: str | None) -> list[str]:
    return ["--lang", lang] + (["--mode", mode] if mode else [])


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
def test_masks_match_frontier_mask(case, o200k, frontier_bin, tmp_path):
    lang, mode, path = case
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: no text to tokenize")
    tokens = o200k.encode(text)[:MAX_TOKENS] + o200k.eos_ids
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(tokens))
    status, lines = run_frontier(
        frontier_bin, "mask", *lang_args(lang, mode), "--vocab", "tiktoken:o200k_base",
        "--token-ids", str(ids),
    )
    steps = [line for line in lines if "step" in line]
    matcher = fs.Matcher(o200k, lang, mode)
    bitmask = fs.allocate_token_bitmask(1, o200k)
    for step in steps:
        i = step["step"]
        matcher.fill_next_token_bitmask(bitmask, 0)
        row = bitmask[0].astype("<i4").tobytes()
        assert hashlib.sha256(row).hexdigest() == step["sha256"], f"step {i}"
        assert int(np.unpackbits(bitmask[0].view(np.uint8)).sum()) == step["allowed"], f"step {i}"
        assert matcher.is_accepting() == step["accepting"], f"step {i}"
        if i < len(tokens):
            taken = matcher.accept_token(tokens[i])
            refused_here = status == 1 and i == len(steps) - 1
            assert taken != refused_here, f"step {i}: token {tokens[i]}"
    if status == 0:
        assert len(steps) == len(tokens) + 1
        assert matcher.is_terminated()


def python_events(lang, mode, data: bytes, chunk: int):
    """Events and the finish dict from pushing `data` in pieces of `chunk` bytes."""
    parser = fs.Parser(lang, mode)
    events: list[dict] = []
    for at in range(0, len(data), chunk):
        try:
            events += parser.push(data[at : at + chunk])
        except fs.ParseError as e:
            events += e.events
            assert e.byte == data[e.offset], "the error's byte is the input's at its offset"
            break
    end = parser.finish()
    return events + end["events"], end


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
@pytest.mark.parametrize("chunk", [1 << 20, 7, 1])
def test_events_match_frontier_events(case, chunk, frontier_bin):
    lang, mode, path = case
    status, lines = run_frontier(frontier_bin, "events", *lang_args(lang, mode), str(path))
    *cli_events, cli_end = lines
    assert cli_end["event"] == "end"
    events, end = python_events(lang, mode, path.read_bytes(), chunk)
    assert merged(events) == merged(cli_events)
    assert end["verdict"] == cli_end["verdict"]
    assert (end["consumed"], end["confirmed"]) == (cli_end["consumed"], cli_end["confirmed"])
    assert end["error"] == cli_end["error"]
    assert end["unclosed"] == cli_end.get("unclosed")
    assert status == (0 if end["verdict"] == "complete" else 1)
