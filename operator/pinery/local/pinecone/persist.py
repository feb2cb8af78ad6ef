"""Atomic files under the state directory: JSON documents and vector data as .npz."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from pinery.local.pinecone.vectors import IndexData, Namespace


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


def write_index_data(path: Path, data: IndexData) -> None:
    """One .npz per index: a dense matrix per namespace, the rest as one JSON entry."""
    arrays: dict[str, np.ndarray] = {}
    namespaces = []
    for i, (name, ns) in enumerate(data.namespaces.items()):
        n = len(ns)
        arrays[f"dense_{i}"] = ns.dense[:n]
        namespaces.append({
            "name": name,
            "ids": ns.ids,
            "has_dense": ns.has_dense,
            "metadata": ns.metadata,
            "sparse": [None if s is None else [s[0].tolist(), s[1].tolist()] for s in ns.sparse],
        })
    header = json.dumps({"dimension": data.dimension, "namespaces": namespaces}).encode()
    arrays["header"] = np.frombuffer(header, dtype=np.uint8)
    _atomic_write(path, lambda handle: np.savez(handle, **arrays))


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
            ns.sparse = [None if s is None else (np.asarray(s[0], dtype=np.int64), np.asarray(s[1], dtype=np.float32))
                         for s in entry["sparse"]]
            data.namespaces[entry["name"]] = ns
    return data
