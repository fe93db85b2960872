"""Parser: events, allowed bytes, the verdict, ParseError and misuse."""

from __future__ import annotations

import pytest

import frontier_stream as fs


def byte_set(allowed: bytes) -> set[int]:
    return {b for b in range(256) if allowed[b // 8] >> (b % 8) & 1}


def test_events_allowed_and_a_complete_verdict():
    p = fs.Parser("ctl")
    assert byte_set(p.allowed()) == {ord("c")}
    assert p.accepting(), "the empty stream is a sentence of CTL"
    events = p.push(b"call c1 read_file\narg path 3\nab")
    assert events[0] == {"event": "call_start", "id": "c1", "name": "read_file"}
    assert byte_set(p.allowed()) == set(range(256)), "one body byte left: any byte"
    assert not p.accepting()
    events += p.push("c")  # str is UTF-8
    events += p.push(b"end\n")
    end = p.finish()
    assert end["verdict"] == "complete"
    assert end["error"] is None and end["unclosed"] is None
    assert end["consumed"] == end["confirmed"] == 36
    names = [e["event"] for e in events + end["events"]]
    assert names[-1] == "call_end", names


def test_an_error_raises_parse_error_with_its_position_and_events():
    p = fs.Parser("apply_patch")
    p.push(b"*** Begin Patch\n")
    with pytest.raises(fs.ParseError) as caught:
        p.push(b"*** Add File: a\n+x\nzz")
    e = caught.value
    assert isinstance(e, ValueError)
    assert (e.offset, e.byte, e.kind) == (35, ord("z"), "expected_add_line")
    assert str(e).startswith("expected_add_line at byte 35 (0x7a 'z')")
    assert [ev["event"] for ev in e.events][:2] == ["file_start", "path"]
    assert p.allowed() == bytes(32), "nothing is allowed after an error"
    with pytest.raises(fs.ParseError) as again:
        p.push(b"+y\n")
    assert again.value.offset == 35 and again.value.events == [], "the error is sticky"
    end = p.finish()
    assert end["verdict"] == "error"
    assert end["error"] == {"offset": 35, "byte": ord("z"), "kind": "expected_add_line"}


def test_an_incomplete_stream_says_what_it_left_open():
    p = fs.Parser("ctl")
    p.push(b"call c1 read\narg path 10\nsrc")
    end = p.finish()
    assert end["verdict"] == "incomplete"
    assert end["unclosed"] == {"construct": "arg_body", "began_at": 25, "owed": {"bytes": 7}}


def test_misuse_raises():
    with pytest.raises(ValueError, match="unknown language"):
        fs.Parser("json")
    with pytest.raises(ValueError, match="mode"):
        fs.Parser("udiff", "fuzzy")
    p = fs.Parser("udiff", "recount")
    with pytest.raises(TypeError, match="bytes or str"):
        p.push(3)
    p.finish()
    with pytest.raises(RuntimeError, match="finished"):
        p.push(b"x")
    with pytest.raises(RuntimeError, match="finished"):
        p.finish()
    assert p.allowed() == bytes(32) and not p.accepting()


def test_push_takes_any_bytes_like_object():
    # bytearray, memoryview (a slice of one too) and array('B') are bytes; the events and the
    # verdict are those of the same bytes pushed as `bytes`.
    import array

    text = b"call c1 read_file\narg path 3\nabcend\n"
    expected = fs.Parser("ctl")
    want = expected.push(text)
    want_end = expected.finish()
    for chunks in (
        [bytearray(text)],
        [memoryview(text)],
        [memoryview(b"xx" + text)[2:]],
        [array.array("B", text[:10]), bytearray(text[10:20]), memoryview(text[20:]), b""],
    ):
        p = fs.Parser("ctl")
        got = []
        for chunk in chunks:
            got += p.push(chunk)
        assert got == want, chunks
        assert p.finish() == want_end
    p = fs.Parser("ctl")
    with pytest.raises(fs.ParseError) as caught:
        p.push(bytearray(b"x"))
    assert (caught.value.offset, caught.value.byte) == (0, ord("x"))
    for bad in (3, None, [99], array.array("i", [1, 2])):
        with pytest.raises(TypeError, match="bytes or str"):
            fs.Parser("ctl").push(bad)


def test_the_environment_mode_takes_an_environment_id_line():
    patch = b"*** Begin Patch\n*** Environment ID: prod\n*** Add File: a\n+x\n*** End Patch\n"
    p = fs.Parser("apply_patch", mode="environment")
    events = p.push(patch)
    end = p.finish()
    assert end["verdict"] == "complete", end
    names = [e["event"] for e in events + end["events"]]
    assert names[:3] == ["begin_patch", "environment", "path"], names
    strict = fs.Parser("apply_patch")
    with pytest.raises(fs.ParseError) as raised:
        strict.push(patch)
    assert (raised.value.offset, raised.value.kind) == (20, "bad_marker")
