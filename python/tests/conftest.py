"""Shared fixtures: the o200k vocabulary, the `frontier` binary, the corpora."""

from __future__ import annotations

import base64
import json
import os
import pathlib
import subprocess

import pytest

import frontier_stream as fs

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPORA = REPO / "corpora"


def corpus_files() -> list[tuple[str, str | None, pathlib.Path]]:
    """Every corpus file with the language and mode its README gives it."""
    files: list[tuple[str, str | None, pathlib.Path]] = []
    for path in sorted((CORPORA / "apply_patch").glob("*.patch")):
        files.append(("apply_patch", "codex" if path.name.startswith("codex_") else None, path))
    for kind in ("valid", "truncated", "invalid"):
        for path in sorted((CORPORA / "ctl" / kind).glob("*.ctl")):
            files.append(("ctl", None, path))
    for path in sorted((CORPORA / "udiff").glob("*.diff")):
        files.append(("udiff", None, path))
    assert len(files) > 40, f"the corpora were not found under {CORPORA}"
    return files


def corpus_id(case: tuple[str, str | None, pathlib.Path]) -> str:
    lang, mode, path = case
    return f"{lang}{':' + mode if mode else ''}:{path.name}"


@pytest.fixture(scope="session")
def frontier_bin() -> pathlib.Path:
    """The `frontier` binary: `FRONTIER_BIN`, else the debug build of this checkout."""
    path = pathlib.Path(os.environ.get("FRONTIER_BIN", REPO / "target" / "debug" / "frontier"))
    if not path.is_file():
        pytest.fail(f"{path} is not built: run `cargo build --bin frontier` (or set FRONTIER_BIN)")
    return path


@pytest.fixture(scope="session")
def o200k() -> fs.Vocab:
    return fs.Vocab.from_tiktoken("o200k_base")


def run_frontier(binary: pathlib.Path, *args: str) -> tuple[int, list[dict]]:
    """Runs `frontier ARGS` and returns its exit status and its JSON lines."""
    done = subprocess.run([str(binary), *args], capture_output=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines


def data_bytes(value) -> bytes:
    """An event's `data` as bytes (a string, or `{"base64": ...}` for bytes that are not UTF-8)."""
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    return value.encode()


def merged(events: list[dict]) -> list[dict]:
    """Adjacent data events with the same name and fields merged, their data as bytes: the
    form in which the parser's pieces and `frontier events`' records compare."""
    out: list[dict] = []
    for event in events:
        event = dict(event)
        if "data" in event:
            event["data"] = data_bytes(event["data"])
            if out and "data" in out[-1]:
                last = out[-1]
                if {k: v for k, v in last.items() if k != "data"} == {
                    k: v for k, v in event.items() if k != "data"
                }:
                    last["data"] += event["data"]
                    continue
        out.append(event)
    return out
