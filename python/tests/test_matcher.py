"""Vocab and Matcher: every method, EOS, forced bytes, copies, and bad arguments."""

from __future__ import annotations

import array
import base64
import copy
import sys
import threading

import numpy as np
import pytest

import frontier_stream as fs

# A small vocabulary of apply_patch pieces; id 5 is EOS, id 6 a special token, id 7 a hole.
TOKENS = [
    b"*** Begin Patch\n",
    b"*** Add File: a\n",
    b"+x\n",
    b"*** End Patch",
    b"\n",
    b"<eos>",
    b"<pad>",
    None,
    b"*",
]
BEGIN, ADD, LINE, END, LF, EOS, PAD, HOLE, STAR = range(9)
PATCH = [BEGIN, ADD, LINE, END]


@pytest.fixture
def vocab() -> fs.Vocab:
    return fs.Vocab.from_token_bytes(TOKENS, special_ids=[PAD], eos_ids=[EOS])


def allowed(matcher: fs.Matcher) -> set[int]:
    bitmask = fs.allocate_token_bitmask(1, matcher.vocab)
    matcher.fill_next_token_bitmask(bitmask, 0)
    return set(np.flatnonzero(fs.allowed_ids(bitmask[0], matcher.vocab.size)).tolist())


def test_vocab_properties(vocab):
    assert vocab.size == 9
    assert vocab.mask_words == 1
    assert vocab.eos_ids == [EOS]
    assert vocab.token_bytes(LINE) == b"+x\n"
    assert vocab.token_bytes(PAD) == b""
    with pytest.raises(ValueError, match="past the vocabulary"):
        vocab.token_bytes(9)


def test_the_loop_of_a_decoder(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    assert m.mask_words == 1
    assert allowed(m) == {BEGIN, STAR}
    for token in PATCH:
        assert token in allowed(m)
        assert m.accept_token(token)
    assert m.is_accepting() and not m.is_terminated()
    assert allowed(m) == {LF, EOS}
    assert m.accept_token(EOS)
    assert m.is_terminated()
    assert allowed(m) == {EOS}, "after EOS, only EOS"
    assert not m.accept_token(LINE), "nothing after EOS but EOS"


def test_eos_after_eos_is_taken_and_counts_for_rollback(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    assert m.accept_tokens(PATCH + [EOS])
    assert m.accept_token(EOS), "the mask after EOS allows EOS, so EOS is taken"
    assert m.is_terminated() and allowed(m) == {EOS}
    for token in (LINE, LF, PAD, HOLE):
        assert not m.accept_token(token)
    assert m.validate_tokens([EOS, EOS, LF, EOS]) == 2
    assert m.accept_tokens([EOS, EOS])
    assert not m.accept_tokens([EOS, LF]), "all or nothing"
    m.rollback(3)  # the three later EOS tokens
    assert m.is_terminated(), "the first EOS is still taken"
    m.rollback(1)
    assert not m.is_terminated() and allowed(m) == {LF, EOS}
    fresh = fs.Matcher(vocab, "apply_patch")
    assert fresh.validate_tokens(PATCH + [EOS, EOS, EOS]) == 7


def test_refusals_change_nothing(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    assert not m.accept_token(LINE)
    assert not m.accept_token(EOS), "EOS before the text is complete"
    assert not m.accept_token(PAD), "a special token"
    assert not m.accept_token(HOLE), "a hole"
    assert allowed(m) == {BEGIN, STAR}
    assert m.accept_token(BEGIN)


# Ids no vocabulary of 9 has: past it, negative, past u32 and past i64.
OUT_OF_RANGE = [9, 10, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 40, (1 << 64) + 1, 1 << 200,
                -1, -(1 << 32), -(1 << 70)]


def test_ids_outside_the_vocabulary_are_refused_like_any_token(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    assert m.accept_token(BEGIN)
    for token in OUT_OF_RANGE:
        assert m.accept_token(token) is False, token
        assert m.validate_tokens([token]) == 0, token
        assert m.validate_tokens([ADD, LINE, token, END]) == 2, token
        assert m.accept_tokens([ADD, token]) is False, token
        assert m.accept_tokens([token]) is False, token
    assert allowed(m) == {ADD, STAR}, "nothing was taken"
    assert m.accept_token(np.int64(ADD)), "a numpy integer is an integer"
    assert not m.accept_token(np.int64(-1)) and not m.accept_token(np.uint64(1 << 63))
    assert m.validate_tokens(np.array([LINE, 99, END])) == 1
    assert m.accept_tokens([LINE, END])
    m.accept_token(EOS)
    assert not m.accept_token(1 << 64), "after EOS too"
    assert m.validate_tokens([EOS, -5]) == 1
    assert m.is_terminated()


def test_accept_tokens_is_all_or_nothing(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    assert not m.accept_tokens([BEGIN, ADD, END])  # END before a line is refused
    assert allowed(m) == {BEGIN, STAR}, "nothing was taken"
    assert m.accept_tokens(PATCH)
    assert m.is_accepting()


def test_validate_tokens_does_not_advance(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    assert m.validate_tokens(PATCH + [EOS]) == 5
    assert m.validate_tokens([BEGIN, ADD, END]) == 2
    assert m.validate_tokens([]) == 0
    assert allowed(m) == {BEGIN, STAR}


def test_rollback_and_reset(vocab):
    m = fs.Matcher(vocab, "apply_patch", max_rollback=3)
    assert m.max_rollback == 3
    m.accept_tokens(PATCH + [EOS])
    m.rollback(0)
    assert m.is_terminated()
    m.rollback(1)  # EOS counts as one token
    assert not m.is_terminated() and m.is_accepting()
    m.rollback(2)
    assert allowed(m) == {LINE}
    with pytest.raises(ValueError, match="rollback_past_history"):
        m.rollback(1)  # three tokens were kept, all undone
    assert allowed(m) == {LINE}, "a refused rollback changes nothing"
    m.reset()
    assert allowed(m) == {BEGIN, STAR}
    with pytest.raises(ValueError):
        m.rollback(1)


def test_forced_bytes(vocab, o200k):
    m = fs.Matcher(vocab, "apply_patch")
    assert m.forced_bytes() == b"*** Begin Patch\n*** ", "every file operation starts so"
    m.accept_tokens(PATCH)
    assert m.forced_bytes() == b"", "accepting: nothing is forced"
    ctl = fs.Matcher(o200k, "ctl")
    assert ctl.accept_tokens(o200k.encode("call c1 read\narg path 3\nabcen"))
    assert ctl.forced_bytes() == b"d\n", "only `end` LF starts with `en` there"


def test_copies_are_independent(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    m.accept_token(BEGIN)
    for fork in (m.copy(), copy.copy(m), copy.deepcopy(m)):
        assert fork.accept_token(ADD)
        assert allowed(fork) == {LINE}
        fork.rollback(2)  # the history came along
        assert allowed(fork) == {BEGIN, STAR}
    assert allowed(m) == {ADD, STAR}, "the original did not move"


NATIVE = "<" if sys.byteorder == "little" else ">"


def test_a_non_native_byte_order_is_refused_and_native_ones_are_taken(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    foreign = np.full((2, 1), 7, dtype=">i4" if NATIVE == "<" else "<i4")
    with pytest.raises(TypeError, match="byte order"):
        m.fill_next_token_bitmask(foreign, 0)
    with pytest.raises(TypeError, match="byte order"):
        fs.fill_next_token_bitmasks([m], foreign)
    assert (foreign == 7).all(), "nothing was written"
    expected = (1 << BEGIN) | (1 << STAR)
    for dtype in (np.int32, "=i4", NATIVE + "i4"):
        row = np.zeros((1, 1), dtype=dtype)
        m.fill_next_token_bitmask(row, 0)
        assert row[0, 0] == expected, dtype
    # The same words through another exporter: array.array of C ints.
    words = array.array("i", [7])
    m.fill_next_token_bitmask(memoryview(words).cast("B").cast("i", (1, 1)), 0)
    assert words[0] == expected


def test_mask_words_past_the_vocabulary_are_zero(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    bitmask = fs.allocate_token_bitmask(2, 100)  # a model whose logits are 100 wide
    assert bitmask.shape == (2, 4)
    m.fill_next_token_bitmask(bitmask, 1)
    assert bitmask[1].tolist() == [(1 << BEGIN) | (1 << STAR), 0, 0, 0]
    assert (bitmask[0] == -1).all(), "other rows untouched"


def test_bad_bitmasks_raise_and_write_nothing(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    good = np.full((2, 1), 7, dtype=np.int32)
    bad = [
        (np.zeros((2, 1), dtype=np.int64), TypeError, "int32"),
        (np.zeros((2, 1), dtype=np.float32), TypeError, "int32"),
        (np.zeros((2, 1), dtype=">i4" if NATIVE == "<" else "<i4"), TypeError, "byte order"),
        (np.zeros((2, 1), dtype=np.uint32), TypeError, "int32"),
        (np.zeros(1, dtype=np.int32), ValueError, "2 dimensions"),
        (np.zeros((2, 1, 1), dtype=np.int32), ValueError, "2 dimensions"),
        (np.zeros((2, 0), dtype=np.int32), ValueError, "needs 1"),
        (np.zeros((1, 4), dtype=np.int32)[:, ::2], ValueError, "contiguous"),
        ([[0]], TypeError, "int32"),
        (b"\0\0\0\0", TypeError, "int32"),
    ]
    for array, kind, message in bad:
        with pytest.raises(kind, match=message):
            m.fill_next_token_bitmask(array, 0)
    readonly = good.copy()
    readonly.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        m.fill_next_token_bitmask(readonly, 0)
    for index in (2, -1, 1 << 40):
        with pytest.raises(IndexError, match="out of range"):
            m.fill_next_token_bitmask(good, index)
    assert (good == 7).all() and (readonly == 7).all(), "nothing was written"


def test_bad_arguments(vocab):
    with pytest.raises(ValueError, match="unknown language"):
        fs.Matcher(vocab, "json")
    with pytest.raises(ValueError, match="mode"):
        fs.Matcher(vocab, "apply_patch", "loose")
    m = fs.Matcher(vocab, "apply_patch")
    with pytest.raises(TypeError):
        m.accept_token("1")
    with pytest.raises(TypeError):
        m.accept_token(1.0)
    for tokens in ([BEGIN, "1"], [BEGIN, -1, None], "ab"):
        with pytest.raises(TypeError):
            m.validate_tokens(tokens)
        with pytest.raises(TypeError):
            m.accept_tokens(tokens)
    assert allowed(m) == {BEGIN, STAR}, "nothing was taken"
    with pytest.raises(ValueError, match="special id 12"):
        fs.Vocab.from_token_bytes(TOKENS, special_ids=[12])
    with pytest.raises(TypeError, match=r"tokens\[1\] is a str"):
        fs.Vocab.from_token_bytes([b"a", "b"])
    with pytest.raises(TypeError, match=r"tokens\[1\] is a int"):
        fs.Vocab.from_token_bytes([b"a", 3])
    with pytest.raises(ValueError, match="unknown tiktoken encoding"):
        fs.Vocab.from_tiktoken("p50k_base")
    with pytest.raises(ValueError, match="/nonexistent/tokenizer.json"):
        fs.Vocab.from_tokenizer_json("/nonexistent/tokenizer.json")
    with pytest.raises(TypeError, match="fast tokenizer"):
        fs.Vocab.from_huggingface(object())
    with pytest.raises(ValueError, match="no encoder|tokenizer"):
        vocab.encode("x")
    with pytest.raises(ValueError, match="at least 1"):
        fs.fill_next_token_bitmasks([m], fs.allocate_token_bitmask(1, vocab), threads=0)


def test_a_tokenizer_json(tmp_path):
    # A byte-level BPE tokenizer.json written here: "a", "b", "ab" and two special tokens.
    (tmp_path / "tokenizer.json").write_text(
        '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": []},'
        ' "decoder": {"type": "ByteLevel"},'
        ' "added_tokens": [{"id": 3, "content": "</s>", "special": true},'
        ' {"id": 4, "content": "<|im_end|>", "special": true}]}'
    )
    (tmp_path / "tokenizer_config.json").write_text('{"eos_token": "</s>"}')
    vocab = fs.Vocab.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert (vocab.size, vocab.eos_ids) == (5, [3]), "EOS from tokenizer_config.json"
    assert vocab.token_bytes(2) == b"ab"
    given = fs.Vocab.from_tokenizer_json(str(tmp_path / "tokenizer.json"), eos_ids=[4])
    assert given.eos_ids == [4]
    with pytest.raises(ValueError, match="unknown_eos"):
        fs.Vocab.from_tokenizer_json(tmp_path / "tokenizer.json", eos_ids=[1])


def test_a_tiktoken_rank_file_by_path(tmp_path):
    # A .tiktoken file written here: apply_patch pieces at ranks 0-4, base64 SP rank a line.
    pieces = [b"*** Begin Patch\n", b"*** Add File: a\n", b"+x\n", b"*** End Patch", b"\n"]
    path = tmp_path / "patch.tiktoken"
    path.write_text("".join(f"{base64.b64encode(p).decode()} {i}\n" for i, p in enumerate(pieces)))
    for given in (path, str(path)):
        vocab = fs.Vocab.from_tiktoken(given)
        assert (vocab.size, vocab.eos_ids) == (6, [5]), "<|endoftext|> past the ranks"
        assert vocab.token_bytes(2) == b"+x\n" and vocab.token_bytes(5) == b""
    m = fs.Matcher(vocab, "apply_patch")
    assert m.accept_tokens([0, 1, 2, 3])
    assert allowed(m) == {4, 5}
    assert m.accept_token(5) and m.is_terminated()
    with pytest.raises(ValueError, match="no_encoder"):
        vocab.encode("*** Begin Patch\n")
    given = fs.Vocab.from_tiktoken(path, eos_ids=[9])
    assert (given.size, given.eos_ids) == (10, [9])
    with pytest.raises(ValueError, match="unknown_eos"):
        fs.Vocab.from_tiktoken(path, eos_ids=[1])
    (tmp_path / "bad.tiktoken").write_text("SGVsbG8= 0\nnot-a-line\n")
    with pytest.raises(ValueError, match="bad_rank_file: line 2"):
        fs.Vocab.from_tiktoken(tmp_path / "bad.tiktoken")
    with pytest.raises(ValueError, match="unknown tiktoken encoding .*cl100k_base"):
        fs.Vocab.from_tiktoken(str(tmp_path / "missing.tiktoken"))
    with pytest.raises(TypeError, match="name or a path"):
        fs.Vocab.from_tiktoken(5)
    o200k = fs.Vocab.from_tiktoken("o200k_base", eos_ids=[200018])
    assert o200k.eos_ids == [200018]


def test_from_huggingface_reads_the_backend_tokenizer(tmp_path):
    class Backend:
        def to_str(self):
            return (
                '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},'
                ' "decoder": {"type": "ByteLevel"},'
                ' "added_tokens": [{"id": 2, "content": "<|end|>", "special": true}]}'
            )

    class Tokenizer:  # the two attributes a transformers fast tokenizer has
        backend_tokenizer = Backend()
        eos_token_id = 2

    vocab = fs.Vocab.from_huggingface(Tokenizer())
    assert (vocab.size, vocab.eos_ids) == (3, [2])


def test_many_rows_in_parallel_equal_one_at_a_time(o200k):
    texts = [
        "*** Begin Patch\n*** Add File: a.txt\n+hello\n",
        "*** Begin Patch\n*** Update File: b.py\n@@ def f():\n-    x\n+    y\n",
        "*** Begin Patch\n*** Delete File: c\n*** End Patch",
        "",
    ]
    matchers = []
    for i in range(64):
        m = fs.Matcher(o200k, "apply_patch")
        assert m.accept_tokens(o200k.encode(texts[i % len(texts)]))
        matchers.append(m)
    rows = list(range(63, -1, -1))  # row i gets matcher 63 - i
    expected = fs.allocate_token_bitmask(64, o200k)
    for m, row in zip(matchers, rows):
        m.fill_next_token_bitmask(expected, row)
    for threads in (None, 1, 2, 5, 100):
        got = fs.allocate_token_bitmask(64, o200k, fill=0)
        fs.fill_next_token_bitmasks(matchers, got, rows, threads=threads)
        assert (got == expected).all(), f"threads={threads}"
    untouched = fs.allocate_token_bitmask(64, o200k, fill=0)
    with pytest.raises(ValueError, match="given twice"):
        fs.fill_next_token_bitmasks(matchers[:2], untouched, [3, 3])
    with pytest.raises(IndexError, match="out of range"):
        fs.fill_next_token_bitmasks(matchers[:2], untouched, [0, 64])
    with pytest.raises(ValueError, match="one row for each matcher"):
        fs.fill_next_token_bitmasks(matchers[:2], untouched, [0])
    assert (untouched == 0).all()


def test_python_threads_fill_rows_of_one_bitmask(o200k):
    # vLLM fills the rows of one bitmask from a thread pool.
    matchers = [fs.Matcher(o200k, "udiff") for _ in range(8)]
    for i, m in enumerate(matchers):
        m.accept_tokens(o200k.encode(f"--- a/f{i}\n+++ b/f{i}\n@@ -1 +1 @@\n"))
    expected = fs.allocate_token_bitmask(8, o200k)
    for i, m in enumerate(matchers):
        m.fill_next_token_bitmask(expected, i)
    got = fs.allocate_token_bitmask(8, o200k, fill=0)
    threads = [
        threading.Thread(target=m.fill_next_token_bitmask, args=(got, i))
        for i, m in enumerate(matchers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (got == expected).all()


class FakeTensor:
    """What the matcher reads of a torch tensor, over a numpy array (no torch here)."""

    __module__ = "torch"

    class _Device:
        def __init__(self, kind):
            self.type = kind

    def __init__(self, array, device="cpu", dtype="torch.int32", contiguous=True):
        self.array, self.device, self.dtype = array, self._Device(device), dtype
        self.shape, self._contiguous = array.shape, contiguous

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self.array.ctypes.data


def test_torch_tensors_are_read_through_data_ptr(vocab):
    m = fs.Matcher(vocab, "apply_patch")
    array = np.zeros((3, 2), dtype=np.int32)
    m.fill_next_token_bitmask(FakeTensor(array), 2)
    assert array[2].tolist() == [(1 << BEGIN) | (1 << STAR), 0]
    for tensor, kind, message in [
        (FakeTensor(array, device="cuda"), ValueError, "cuda"),
        (FakeTensor(array, dtype="torch.int64"), TypeError, "torch.int32"),
        (FakeTensor(array, contiguous=False), ValueError, "contiguous"),
        (FakeTensor(np.zeros(2, dtype=np.int32)), ValueError, "2 dimensions"),
    ]:
        with pytest.raises(kind, match=message):
            m.fill_next_token_bitmask(tensor, 0)
    with pytest.raises(IndexError):
        m.fill_next_token_bitmask(FakeTensor(array), 3)


def test_an_empty_vocabulary_has_empty_rows():
    try:
        vocab = fs.Vocab.from_token_bytes([])
    except ValueError:
        pytest.skip("an empty vocabulary is refused")
    m = fs.Matcher(vocab, "ctl")
    assert m.mask_words == 0
    m.fill_next_token_bitmask(np.zeros((1, 0), dtype=np.int32), 0)
    m.fill_next_token_bitmask(FakeTensor(np.zeros((1, 0), dtype=np.int32)), 0)
    fs.fill_next_token_bitmasks([m], np.zeros((1, 0), dtype=np.int32))


def test_token_bytes_may_be_any_bytes_like_object(vocab):
    # bytearray and memoryview tokens are their bytes: the same vocabulary as with bytes.
    like = [t if t is None else bytearray(t) if i % 2 else memoryview(t) for i, t in enumerate(TOKENS)]
    other = fs.Vocab.from_token_bytes(like, special_ids=[PAD], eos_ids=[EOS])
    assert other.size == vocab.size
    assert [other.token_bytes(i) for i in range(other.size)] == [
        vocab.token_bytes(i) for i in range(vocab.size)
    ]
    m = fs.Matcher(other, "apply_patch")
    assert m.accept_tokens(PATCH + [EOS]) and m.is_terminated()


def test_counts_and_rows_outside_their_range_raise_the_documented_exception(vocab):
    # A depth the core would reserve up front (terabytes for 10**10) is a ValueError, never
    # an aborted process; so is a negative one.
    for depth in (fs.MAX_ROLLBACK + 1, 10**10, 2**70, -1):
        with pytest.raises(ValueError, match="max_rollback"):
            fs.Matcher(vocab, "apply_patch", max_rollback=depth)
    assert fs.Matcher(vocab, "apply_patch", max_rollback=fs.MAX_ROLLBACK).max_rollback == (
        fs.MAX_ROLLBACK
    )
    assert fs.Matcher(vocab, "apply_patch", max_rollback=None).max_rollback == 32
    m = fs.Matcher(vocab, "apply_patch")
    assert m.accept_tokens([BEGIN, ADD])
    for n in (-1, -(2**70)):
        with pytest.raises(ValueError, match="0 or more"):
            m.rollback(n)
    with pytest.raises(ValueError, match="rollback_past_history"):
        m.rollback(2**70)
    with pytest.raises(TypeError):
        m.rollback(1.0)
    assert allowed(m) == {LINE}, "nothing was undone"
    bitmask = fs.allocate_token_bitmask(2, vocab)
    for index in (2**70, -(2**70)):
        with pytest.raises(IndexError):
            m.fill_next_token_bitmask(bitmask, index)
        with pytest.raises(IndexError):
            fs.fill_next_token_bitmasks([m], bitmask, [index])
    assert (bitmask == -1).all(), "nothing written"
    for ids in ([-1], [2**32], [2**70]):
        with pytest.raises(ValueError, match="id_out_of_range"):
            fs.Vocab.from_token_bytes(TOKENS, eos_ids=ids)
        with pytest.raises(ValueError, match="id_out_of_range"):
            fs.Vocab.from_token_bytes(TOKENS, special_ids=ids)


def test_the_standard_library_alone_allocates_and_reads_bitmasks(vocab, monkeypatch):
    # No numpy and no torch: the bitmask is a 2-D memoryview of C ints, which
    # fill_next_token_bitmask takes through the buffer protocol.
    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.setitem(sys.modules, "torch", None)
    bitmask = fs.allocate_token_bitmask(2, 70)
    assert isinstance(bitmask, memoryview)
    assert (bitmask.shape, bitmask.format) == ((2, 3), "i")
    assert bitmask.tolist() == [[-1] * 3] * 2
    m = fs.Matcher(vocab, "apply_patch")
    m.fill_next_token_bitmask(bitmask, 1)
    assert bitmask.tolist() == [[-1] * 3, [1 << BEGIN | 1 << STAR, 0, 0]]
    bits = fs.allowed_ids(bitmask.tolist()[1], vocab.size)
    assert bits == [t in (BEGIN, STAR) for t in range(vocab.size)]
    assert fs.allocate_token_bitmask(0, vocab, fill=0).shape == (0, 1)
    # transformers' processor on lists of scores.
    from frontier_stream import hf

    processor = hf.LogitsProcessor(vocab, "apply_patch")
    scores = [[0.0] * (vocab.size + 1)]
    assert processor([[LF]], scores) is scores
    inf = float("-inf")
    assert scores == [[0.0 if t in (BEGIN, STAR) else inf for t in range(vocab.size + 1)]]


def test_a_vocabulary_pickles_for_the_workers_of_a_distributed_engine(vocab, o200k, tmp_path):
    # Ray, Spark and multiprocessing send arguments to their workers pickled.
    import pickle

    back = pickle.loads(pickle.dumps(vocab))
    assert (back.size, back.eos_ids) == (vocab.size, vocab.eos_ids)
    assert [back.token_bytes(t) for t in range(vocab.size)] == [
        vocab.token_bytes(t) for t in range(vocab.size)
    ]
    for m, n in ((fs.Matcher(vocab, "apply_patch"), fs.Matcher(back, "apply_patch")),):
        for token in PATCH + [EOS]:
            assert allowed(m) == allowed(n)
            assert m.accept_token(token) and n.accept_token(token)
        assert n.is_terminated()
    assert not fs.Matcher(back, "apply_patch").accept_token(PAD), "PAD is still special"
    # A built-in encoding goes by name and keeps its tokenizer (and the EOS ids given).
    text = "*** Begin Patch\n"
    assert pickle.loads(pickle.dumps(o200k)).encode(text) == o200k.encode(text)
    given = fs.Vocab.from_tiktoken("o200k_base", eos_ids=[200018])
    assert pickle.loads(pickle.dumps(given)).eos_ids == [200018]
