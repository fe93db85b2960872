#!/usr/bin/env python3
"""Real tokenizer vocabularies for `cargo bench --bench mask`, from the PyPI wheels of
mistral-common 1.13.1 and llama-models 0.3.0 (nothing comes from a model hub).

mistral-common's wheel ships two kinds of tokenizer file:

- `tekken_240911.json`: Tekken, a byte-level BPE of 131,072 ids in tiktoken's style (ranks
  with base64 bytes in its own JSON; the first 1,000 ids are special tokens, ranks follow);
- `tokenizer.model.v1`: a SentencePiece BPE model of 32,000 ids with byte fallback (the
  Mistral-7B v0.1 tokenizer, the same shape as Llama-2's).

llama-models' wheel ships Meta's Llama-3 tokenizer, `llama_models/llama3/tokenizer.model`: a
tiktoken rank file of 128,000 ranks, whose 256 special tokens (ids 128,000-128,255) and split
pattern are defined in `llama_models/llama3/tokenizer.py` (copied below), 128,256 ids in all.

This script downloads each wheel with pip into the cache directory (default
`target/vocabs/`, beside the project's build output), checks its SHA-256, and writes files
the project loads:

- `tekken_240911.tiktoken`: one `base64 SP id` a line, id = rank + 1000, for the ranks
  below 131,072 - 1,000 (what mistral-common keeps); `tekken_240911.specials`: one `id SP
  name` a line for ids 0-999 (`</s>`, id 2, is EOS); `tekken_240911.pattern`: the split
  pattern of the file's config, so a BPE encoder can be built from the ranks;
- `llama3.tiktoken` (the rank file as shipped), `llama3.specials` (one `id SP name` a line,
  ids 128,000-128,255; the bench takes `<|eot_id|>`, 128,009, the end of an instruct turn, as
  EOS), `llama3.pattern`;
- `sp_v1/tokenizer.json`: the SentencePiece model as a Hugging Face `tokenizer.json`
  (model `BPE` with `byte_fallback`, its vocabulary by id, the `<unk>`, `<s>`, `</s>`
  control pieces as special added tokens, a `Replace`/`ByteFallback` decoder), and
  `sp_v1/tokenizer_config.json` naming `</s>` as EOS. The protobuf is parsed here (no
  `sentencepiece` package needed). The `merges` list is left empty: the file describes the
  vocabulary a mask needs, not a tokenizer to encode with.

Usage: python3 benches/vocabs/fetch.py [CACHE_DIR]. Idempotent: files already written are
kept. Standard library only, plus `pip` for the download.
"""

import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import zipfile

WHEEL = "mistral_common-1.13.1-py3-none-any.whl"
WHEEL_SHA256 = "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af"
TEKKEN = "mistral_common/data/tekken_240911.json"
LLAMA_WHEEL = "llama_models-0.3.0-py3-none-any.whl"
LLAMA_WHEEL_SHA256 = "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f"
LLAMA3_MODEL = "llama_models/llama3/tokenizer.model"
LLAMA3_RANKS = 128_000
# `llama_models/llama3/tokenizer.py`: its named special tokens in id order from 128,000, then
# `<|reserved_special_token_{2 + i}|>` up to 256 in all, and `Tokenizer.pat_str`.
LLAMA3_SPECIALS = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
    "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
    "<|image|>",
]
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SP_MODEL = "mistral_common/data/tokenizer.model.v1"

# mistral-common's defaults for a Tekken file without a `special_tokens` list (its
# `Tekkenizer.DEPRECATED_SPECIAL_TOKENS`); the other ids below 1,000 are `<SPECIAL_{id}>`.
TEKKEN_SPECIALS = [
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
]


def fetch_wheel(cache, wheel, requirement, sha256):
    path = os.path.join(cache, wheel)
    if not os.path.exists(path):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             requirement, "-d", cache],
            check=True,
        )
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != sha256:
        sys.exit(f"{path}: SHA-256 {digest}, expected {sha256}")
    return path


def write_tekken(wheel, cache):
    out = os.path.join(cache, "tekken_240911")
    if os.path.exists(out + ".tiktoken"):
        return
    with zipfile.ZipFile(wheel) as z:
        data = json.loads(z.read(TEKKEN))
    config = data["config"]
    if data.get("special_tokens"):
        specials = [(t["rank"], t["token_str"]) for t in data["special_tokens"]]
    else:
        specials = list(enumerate(TEKKEN_SPECIALS))
    num_special = config["default_num_special_tokens"]
    named = {rank for rank, _ in specials}
    specials += [(i, f"<SPECIAL_{i}>") for i in range(num_special) if i not in named]
    inner = config["default_vocab_size"] - num_special
    with open(out + ".tiktoken.tmp", "w") as f:
        for token in data["vocab"][:inner]:
            # Re-encoded so that the line is canonical whatever the file's padding.
            raw = base64.b64decode(token["token_bytes"])
            f.write(f"{base64.b64encode(raw).decode()} {token['rank'] + num_special}\n")
    with open(out + ".specials", "w") as f:
        for rank, name in sorted(specials):
            f.write(f"{rank} {name}\n")
    with open(out + ".pattern", "w") as f:
        f.write(config["pattern"])
    os.replace(out + ".tiktoken.tmp", out + ".tiktoken")


def write_llama3(wheel, cache):
    out = os.path.join(cache, "llama3")
    if os.path.exists(out + ".tiktoken"):
        return
    with zipfile.ZipFile(wheel) as z:
        ranks = z.read(LLAMA3_MODEL)
    count = len(ranks.splitlines())
    if count != LLAMA3_RANKS:
        sys.exit(f"{LLAMA3_MODEL}: {count} ranks, expected {LLAMA3_RANKS}")
    names = LLAMA3_SPECIALS + [
        f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(LLAMA3_SPECIALS))
    ]
    with open(out + ".specials", "w") as f:
        for i, name in enumerate(names):
            f.write(f"{LLAMA3_RANKS + i} {name}\n")
    with open(out + ".pattern", "w") as f:
        f.write(LLAMA3_PATTERN)
    with open(out + ".tiktoken.tmp", "wb") as f:
        f.write(ranks)
    os.replace(out + ".tiktoken.tmp", out + ".tiktoken")


def varint(buf, at):
    value, shift = 0, 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(buf):
    """(field number, wire type, value) of one protobuf message; a length-delimited value
    is its bytes, a fixed32 its 4 bytes."""
    at = 0
    while at < len(buf):
        tag, at = varint(buf, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = varint(buf, at)
        elif wire == 1:
            value, at = buf[at:at + 8], at + 8
        elif wire == 2:
            length, at = varint(buf, at)
            value, at = buf[at:at + length], at + length
        elif wire == 5:
            value, at = buf[at:at + 4], at + 4
        else:
            sys.exit(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


# SentencePiece's `ModelProto.SentencePiece.Type`.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def write_sentencepiece(wheel, cache):
    out_dir = os.path.join(cache, "sp_v1")
    out = os.path.join(out_dir, "tokenizer.json")
    if os.path.exists(out):
        return
    with zipfile.ZipFile(wheel) as z:
        model = z.read(SP_MODEL)
    pieces, model_type, byte_fallback = [], None, False
    for number, _, value in fields(model):
        if number == 1:  # pieces
            piece, score, kind = "", 0.0, NORMAL
            for n, _, v in fields(value):
                if n == 1:
                    piece = v.decode("utf-8")
                elif n == 2:
                    score = struct.unpack("<f", v)[0]
                elif n == 3:
                    kind = v
            pieces.append((piece, score, kind))
        elif number == 2:  # trainer_spec
            for n, _, v in fields(value):
                if n == 3:
                    model_type = v
                elif n == 35:
                    byte_fallback = bool(v)
    if model_type != 2 or not byte_fallback:
        sys.exit(f"{SP_MODEL}: model type {model_type}, byte fallback {byte_fallback}; "
                 "expected BPE (2) with byte fallback")
    unk = next(p for p, _, kind in pieces if kind == UNKNOWN)
    tokenizer = {
        "version": "1.0",
        "added_tokens": [
            {"id": i, "content": p, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for i, (p, _, kind) in enumerate(pieces) if kind in (UNKNOWN, CONTROL)
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        ]},
        "pre_tokenizer": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ]},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": unk,
            "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": True, "byte_fallback": True,
            "vocab": {p: i for i, (p, _, _) in enumerate(pieces)},
            "merges": [],
        },
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"eos_token": "</s>", "bos_token": "<s>", "unk_token": unk}, f)
    with open(out + ".tmp", "w") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    os.replace(out + ".tmp", out)


def main():
    cache = sys.argv[1] if len(sys.argv) > 1 else os.path.join("target", "vocabs")
    os.makedirs(cache, exist_ok=True)
    wheel = fetch_wheel(cache, WHEEL, "mistral-common==1.13.1", WHEEL_SHA256)
    write_tekken(wheel, cache)
    write_sentencepiece(wheel, cache)
    llama = fetch_wheel(cache, LLAMA_WHEEL, "llama-models==0.3.0", LLAMA_WHEEL_SHA256)
    write_llama3(llama, cache)
    print(f"vocabularies in {cache}: tekken_240911.tiktoken, llama3.tiktoken (each with "
          ".specials, .pattern), sp_v1/tokenizer.json")


if __name__ == "__main__":
    main()
