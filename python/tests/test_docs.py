"""The Python blocks of `docs/hosts/*.md` run: each page's blocks tagged `python`, in order,
in one namespace, from the repository's root (blocks tagged `python engine` need an engine
and are skipped)."""

from __future__ import annotations

import re

import pytest

from conftest import REPO

PAGES = sorted((REPO / "docs" / "hosts").glob("*.md"))
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", re.S | re.M)


def python_blocks(page):
    return [(m.start(), m.group(2)) for m in FENCE.finditer(page.read_text())
            if m.group(1).strip() == "python"]


def test_pages_have_examples():
    assert sum(len(python_blocks(p)) for p in PAGES) >= 4


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_blocks_run(page, monkeypatch):
    monkeypatch.chdir(REPO)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    text = page.read_text()
    for start, code in python_blocks(page):
        line = text.count("\n", 0, start) + 2
        exec(compile(code, f"{page}:{line}", "exec"), namespace)
