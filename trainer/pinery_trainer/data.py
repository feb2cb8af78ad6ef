"""Training data: seeded synthetic sequences, or text/JSONL files cut into token windows.

Every dataset maps a global sample index to one sequence of seqLen+1 tokens (inputs and
shifted targets), so what a rank reads depends only on the index (see sampling.py). Torch-free:
batches are numpy arrays.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Optional, Protocol

import numpy as np

from pinery_trainer.config import DataConfig
from pinery_trainer.configfile import ConfigError
from pinery_trainer.sampling import EpochOrder

TEXT_SUFFIXES = (".txt", ".text", ".md")
JSONL_SUFFIXES = (".jsonl",)


class Tokenizer(Protocol):
    # Read-only here, so that a tokenizer whose eos_id is always an int fits too.
    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_id(self) -> Optional[int]: ...

    def encode(self, text: str) -> list[int]: ...


class ByteTokenizer:
    """UTF-8 bytes as tokens 0..255, and 256 as end of document."""

    vocab_size = 257
    eos_id = 256

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


class HFTokenizer:
    """A Hugging Face tokenizer from a local directory."""

    def __init__(self, path: str):
        try:
            from transformers import AutoTokenizer
        except ImportError:  # pragma: no cover - transformers is in the trainer extra
            raise ConfigError([("data.tokenizer", "a tokenizer directory needs the transformers package")]) from None
        if not Path(path).is_dir():
            raise ConfigError([("data.tokenizer", f"{path} is not a directory (use 'byte' or a local tokenizer directory)")])
        try:
            self._tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as e:
            raise ConfigError([("data.tokenizer", f"cannot load a tokenizer from {path}: {e}")]) from None
        self.vocab_size = len(self._tok)
        self.eos_id = self._tok.eos_token_id

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False)


def load_tokenizer(spec: str) -> Tokenizer:
    return ByteTokenizer() if spec == "byte" else HFTokenizer(spec)


class Dataset(Protocol):
    seq_len: int

    def sample(self, index: int) -> np.ndarray: ...


class SyntheticData:
    """Seeded sequences that a model can learn: a short motif of Zipf-distributed tokens,
    repeated, with a little noise. The loss falls fast (token frequencies), then further
    (copying the motif), so a few steps show whether training works."""

    def __init__(self, vocab_size: int, seq_len: int, seed: int, noise: float = 0.05):
        self.vocab_size = vocab_size
        self.seq_len = seq_len
        self.seed = seed
        self.noise = noise
        weights = 1.0 / np.arange(1, vocab_size + 1) ** 1.1
        self.frequencies = weights / weights.sum()

    def sample(self, index: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, index])
        motif = rng.choice(self.vocab_size, size=int(rng.integers(4, 17)), p=self.frequencies)
        tokens = np.resize(motif, self.seq_len + 1)
        noisy = rng.random(self.seq_len + 1) < self.noise
        tokens[noisy] = rng.integers(self.vocab_size, size=int(noisy.sum()))
        return tokens.astype(np.int64)


class TokenWindows:
    """A token stream cut into windows of seqLen+1, read in a seeded order per epoch."""

    def __init__(self, tokens: np.ndarray, seq_len: int, seed: int):
        self.tokens = tokens
        self.seq_len = seq_len
        self.windows = (len(tokens) - 1) // seq_len
        self.order = EpochOrder(self.windows, seed) if self.windows else None

    def sample(self, index: int) -> np.ndarray:
        if self.order is None:
            raise ValueError(f"{len(self.tokens)} tokens make no window of seqLen + 1 ({self.seq_len + 1})")
        start = self.order(index) * self.seq_len
        return self.tokens[start : start + self.seq_len + 1].astype(np.int64)


def source_files(source: str) -> list[Path]:
    """The file itself, or the text and JSONL files under a directory, in a stable order."""
    path = Path(source)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES + JSONL_SUFFIXES)
        if files:
            return files
        raise ConfigError([("data.source", f"{source} holds no {', '.join(TEXT_SUFFIXES + JSONL_SUFFIXES)} files")])
    raise ConfigError([("data.source", f"{source} does not exist (use 'synthetic' or a file or directory path)")])


def read_documents(files: Sequence[Path], fmt: str, text_field: str) -> Iterator[str]:
    for path in files:
        is_jsonl = fmt == "jsonl" or (fmt == "auto" and path.suffix in JSONL_SUFFIXES)
        if not is_jsonl:
            yield path.read_text(encoding="utf-8", errors="replace")
            continue
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ConfigError([("data.source", f"{path}:{number} is not JSON: {e.msg}")]) from None
                text = record.get(text_field) if isinstance(record, dict) else None
                if not isinstance(text, str):
                    raise ConfigError([("data.textField", f"{path}:{number} has no string field {text_field!r}")])
                yield text


def tokenize(documents: Iterator[str], tokenizer: Tokenizer) -> np.ndarray:
    pieces = []
    for text in documents:
        ids = tokenizer.encode(text)
        if tokenizer.eos_id is not None:
            ids.append(tokenizer.eos_id)
        pieces.append(np.asarray(ids, dtype=np.int32))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)


def build_dataset(config: DataConfig, tokenizer: Optional[Tokenizer], vocab_size: int, seq_len: int, seed: int) -> Dataset:
    if config.source == "synthetic":
        return SyntheticData(vocab_size, seq_len, seed)
    assert tokenizer is not None
    tokens = tokenize(read_documents(source_files(config.source), config.format, config.text_field), tokenizer)
    data = TokenWindows(tokens, seq_len, seed)
    if data.windows == 0:
        raise ConfigError(
            [("data.source", f"{config.source} has {len(tokens)} tokens, fewer than seqLen + 1 ({seq_len + 1})")]
        )
    return data


def batch(dataset: Dataset, indices: range) -> np.ndarray:
    return np.stack([dataset.sample(i) for i in indices])
