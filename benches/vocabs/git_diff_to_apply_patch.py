#!/usr/bin/env python3
"""A `git diff` (unified, on standard input) rewritten as one apply_patch patch (standard
output) that strict mode accepts: the way `corpora/apply_patch/git_history.patch` was made
from this repository's own history, for the mask bench's large real patch.

Per file: a new file becomes `*** Add File:` with its `+` lines, a deleted one `*** Delete
File:`, a changed one `*** Update File:` (with `*** Move to:` for a rename) and one chunk per
hunk, whose `@@` line carries the hunk's section heading when git gave one (a bare `@@`
otherwise). `\\ No newline at end of file` lines are dropped (the grammar has no such line),
and binary files and mode-only changes are skipped (nothing to write).

Usage: git diff -U3 A B -- PATHS | python3 benches/vocabs/git_diff_to_apply_patch.py > OUT
"""

import re
import sys

HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")


def files(lines):
    """Each `diff --git` section's lines."""
    current = None
    for line in lines:
        if line.startswith(b"diff --git "):
            if current:
                yield current
            current = [line]
        elif current is not None:
            current.append(line)
    if current:
        yield current


def convert(section, out):
    old = new = None
    rename_from = rename_to = None
    body_at = None
    for i, line in enumerate(section):
        if line.startswith(b"--- "):
            old = line[4:]
        elif line.startswith(b"+++ "):
            new = line[4:]
            body_at = i + 1
            break
        elif line.startswith(b"rename from "):
            rename_from = line[len(b"rename from "):]
        elif line.startswith(b"rename to "):
            rename_to = line[len(b"rename to "):]
    if body_at is None:
        if rename_from and rename_to:  # a pure rename: an Update with a move and no chunk
            out += [b"*** Update File: " + rename_from, b"*** Move to: " + rename_to]
        return
    body = [l for l in section[body_at:] if not l.startswith(b"\\ ")]
    if old == b"/dev/null":
        out.append(b"*** Add File: " + new[2:])
        out += [l for l in body if l.startswith(b"+")]
        return
    if new == b"/dev/null":
        out.append(b"*** Delete File: " + old[2:])
        return
    out.append(b"*** Update File: " + old[2:])
    if old[2:] != new[2:]:
        out.append(b"*** Move to: " + new[2:])
    for line in body:
        hunk = HUNK.match(line)
        if hunk:
            heading = hunk.group(1).rstrip()
            out.append(b"@@ " + heading if heading else b"@@")
        elif line[:1] in (b" ", b"+", b"-"):
            out.append(line)
        elif line == b"":  # an empty context line some tools write without its space
            out.append(b" ")


def main():
    lines = sys.stdin.buffer.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = [b"*** Begin Patch"]
    for section in files(lines):
        convert(section, out)
    out.append(b"*** End Patch")
    sys.stdout.buffer.write(b"\n".join(out) + b"\n")


if __name__ == "__main__":
    main()
