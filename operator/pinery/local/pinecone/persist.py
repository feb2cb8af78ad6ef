"""Atomic files under the state directory: JSON documents and vector data as .npz."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from pinery.local.pinecone.vectors import IndexData, Namespace, Sparse


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, document: Any) -> None:
    data = json.dumps(document, indent=1, sort_keys=True).encode()
    _atomic_write(path, lambda handle: handle.write(data))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def _sparse_arrays(sparse: list[Sparse | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row's sparse values concatenated, and each row's count (-1: none). Arrays, not JSON:
    100k records of 60 values as JSON held the server's loop for seconds through the GIL."""
    lengths = np.fromiter((-1 if s is None else len(s[0]) for s in sparse), dtype=np.int64, count=len(sparse))
    present = [s for s in sparse if s is not None]
    if not present:
        return lengths, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    return lengths, np.concatenate([s[0] for s in present]), np.concatenate([s[1] for s in present])


def _sparse_rows(lengths: np.ndarray, indices: np.ndarray, values: np.ndarray) -> list[Sparse | None]:
    rows: list[Sparse | None] = []
    start = 0
    for length in lengths.tolist():
        if length < 0:
            rows.append(None)
            continue
        rows.append((indices[start:start + length].astype(np.int64), values[start:start + length].astype(np.float32)))
        start += length
    return rows


def write_index_data(path: Path, data: IndexData) -> None:
    """One .npz per index: per namespace a dense matrix and the sparse values as arrays, the
    rest (ids, metadata) as one JSON entry."""
    arrays: dict[str, np.ndarray] = {}
    namespaces = []
    for i, (name, ns) in enumerate(data.namespaces.items()):
        n = len(ns)
        arrays[f"dense_{i}"] = ns.dense[:n]
        arrays[f"sparse_lengths_{i}"], arrays[f"sparse_indices_{i}"], arrays[f"sparse_values_{i}"] = \
            _sparse_arrays(ns.sparse)
        namespaces.append({"name": name, "ids": ns.ids, "has_dense": ns.has_dense, "metadata": ns.metadata})
    header = json.dumps({"dimension": data.dimension, "namespaces": namespaces}).encode()
    arrays["header"] = np.frombuffer(header, dtype=np.uint8)
    # mypy matches **arrays against newer numpy's `allow_pickle: bool`; not passed by name, as numpy 1.26 has no such parameter.
    _atomic_write(path, lambda handle: np.savez(handle, **arrays))  # type: ignore[arg-type]


def read_index_data(path: Path) -> IndexData:
    with np.load(path, allow_pickle=False) as npz:
        header = json.loads(npz["header"].tobytes())
        data = IndexData(header["dimension"])
        for i, entry in enumerate(header["namespaces"]):
            ns = Namespace(data.dimension)
            ns.ids = entry["ids"]
            ns.rows = {rid: row for row, rid in enumerate(ns.ids)}
            ns.dense = np.array(npz[f"dense_{i}"], dtype=np.float32).reshape(len(ns.ids), data.dimension or 0)
            ns.has_dense = entry["has_dense"]
            ns.metadata = entry["metadata"]
            if "sparse" in entry:  # files written before sparse values moved to arrays
                ns.sparse = [None if s is None else (np.asarray(s[0], dtype=np.int64), np.asarray(s[1], dtype=np.float32))
                             for s in entry["sparse"]]
            else:
                ns.sparse = _sparse_rows(npz[f"sparse_lengths_{i}"], npz[f"sparse_indices_{i}"],
                                         npz[f"sparse_values_{i}"])
            data.namespaces[entry["name"]] = ns
    return data
