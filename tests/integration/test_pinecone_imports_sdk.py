"""Bulk imports from local files, driven by the real `pinecone` SDK (9.1): start_import,
describe_import, list_imports, cancel_import, against Parquet and newline-delimited JSON files
laid out as Pinecone lays out an import directory (`<dir>/<namespace>/*.parquet`)."""

from __future__ import annotations

import json
import os
import time

import pytest
from pinecone import Pinecone, ServerlessSpec
from pinecone.errors.exceptions import ApiError, NotFoundError

from tests.support.emulator import TEST_API_KEY

# The 9.x SDK against API 2025-10: `make test` runs this with the 9.1.0 overlay (compat/overlay.py).
pytestmark = pytest.mark.sdk9

SERVERLESS = ServerlessSpec(cloud="aws", region="us-east-1")


def make_index(pc, name, **kwargs):
    kwargs.setdefault("dimension", 3)
    model = pc.create_index(name=name, spec=SERVERLESS, timeout=5, **kwargs)
    return pc.Index(host=model.host)


def wait_finished(idx, import_id, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        model = idx.describe_import(import_id)
        if model.status in ("Completed", "Failed", "Cancelled"):
            return model
        assert time.monotonic() < deadline, f"import {import_id} still {model.status}"
        time.sleep(0.05)


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def pyarrow_or_skip():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("pyarrow is not installed (the `import` extra)")
    import pyarrow as pa
    return pa


def test_jsonl_import_into_namespaces(pinecone_client, tmp_path):
    idx = make_index(pinecone_client, "imp-jsonl", metric="dotproduct")
    root = tmp_path / "import"
    write_jsonl(root / "__default__" / "0.jsonl", [
        {"id": "a", "values": [1, 0, 0], "metadata": {"genre": "drama", "year": 2001}},
        {"id": "b", "values": [0, 1, 0], "metadata": '{"genre": "comedy"}'},  # a JSON string, as Parquet holds it
    ])
    write_jsonl(root / "films" / "1.jsonl", [
        {"id": "f1", "values": [0, 0, 1], "sparse_values": {"indices": [3, 7], "values": [0.5, 0.25]}},
    ])
    write_jsonl(root / "films" / "2.jsonl", [{"id": "f2", "values": [1, 1, 0]}])
    (root / "films" / ".log").write_text("ignored")
    (root / "films" / "notes.txt").write_text("ignored")

    started = idx.start_import(uri=root.as_uri(), error_mode="abort")
    assert started.id
    done = wait_finished(idx, started.id)
    assert done.status == "Completed", done.error
    assert done.records_imported == 4 and done.percent_complete == 100.0
    assert done.uri == root.as_uri() and done.created_at and done.finished_at and done.error is None

    stats = idx.describe_index_stats()
    assert stats.total_vector_count == 4
    assert {name: ns.vector_count for name, ns in stats.namespaces.items()} == {"": 2, "films": 2}
    fetched = idx.fetch(ids=["a", "b"])
    assert fetched.vectors["a"].metadata == {"genre": "drama", "year": 2001.0}
    assert fetched.vectors["b"].metadata == {"genre": "comedy"}
    f1 = idx.fetch(ids=["f1"], namespace="films").vectors["f1"]
    assert f1.sparse_values.indices == [3, 7] and f1.sparse_values.values == [0.5, 0.25]
    assert idx.query(vector=[1, 0, 0], top_k=1).matches[0].id == "a"

    listed = list(idx.list_imports())
    assert [(m.id, m.status) for m in listed] == [(started.id, "Completed")]


def test_parquet_import(pinecone_client, tmp_path):
    pa = pyarrow_or_skip()
    import pyarrow.parquet as pq

    idx = make_index(pinecone_client, "imp-parquet", metric="dotproduct")
    root = tmp_path / "parquet-import"
    (root / "docs").mkdir(parents=True)
    schema = pa.schema([
        ("id", pa.string()),
        ("values", pa.list_(pa.float32())),
        ("sparse_values", pa.struct([("indices", pa.list_(pa.uint32())), ("values", pa.list_(pa.float32()))])),
        ("metadata", pa.string()),
    ])
    table = pa.table({
        "id": [f"d{i}" for i in range(2500)],
        "values": [[float(i + 1), 0.0, 1.0] for i in range(2500)],
        "sparse_values": [{"indices": [i], "values": [1.0]} if i % 2 else None for i in range(2500)],
        "metadata": [json.dumps({"n": i}) if i % 3 else None for i in range(2500)],
    }, schema=schema)
    pq.write_table(table.slice(0, 1500), root / "docs" / "part-0.parquet")
    pq.write_table(table.slice(1500), root / "docs" / "part-1.parquet")

    started = idx.start_import(uri=str(root))  # a plain path works as well as file://
    done = wait_finished(idx, started.id)
    assert done.status == "Completed", done.error
    assert done.records_imported == 2500
    assert idx.describe_index_stats().namespaces["docs"].vector_count == 2500
    got = idx.fetch(ids=["d1", "d2", "d3"], namespace="docs").vectors
    assert got["d1"].values == [2.0, 0.0, 1.0] and got["d1"].metadata == {"n": 1.0}
    assert got["d1"].sparse_values.indices == [1] and got["d2"].sparse_values is None
    assert not got["d3"].metadata


def test_error_mode_abort_and_continue(pinecone_client, tmp_path):
    idx = make_index(pinecone_client, "imp-errors")
    rows = [{"id": "ok-1", "values": [1, 0, 0]}, {"id": "bad", "values": [1, 0]}, {"id": "ok-2", "values": [0, 1, 0]}]
    for mode in ("abort", "continue"):
        root = tmp_path / mode
        write_jsonl(root / f"ns-{mode}" / "0.jsonl", rows)
        (root / f"ns-{mode}" / "1.jsonl").write_text('{"id": "ok-3", "values": [0, 0, 1]}\nnot json\n')
        done = wait_finished(idx, idx.start_import(uri=root.as_uri(), error_mode=mode).id)
        if mode == "abort":
            assert done.status == "Failed" and done.records_imported == 1
            assert "ns-abort/0.jsonl line 2" in done.error and "dimension" in done.error
        else:
            assert done.status == "Completed" and done.records_imported == 3 and done.error is None
    stats = idx.describe_index_stats().namespaces
    assert stats["ns-abort"].vector_count == 1 and stats["ns-continue"].vector_count == 3


def test_refused_uris_and_missing_directories(pinecone_client, tmp_path):
    idx = make_index(pinecone_client, "imp-uris")
    for uri in ("s3://bucket/path", "gs://bucket/path", "https://acct.blob.core.windows.net/container/dir"):
        with pytest.raises(ApiError) as err:
            idx.start_import(uri=uri)
        assert err.value.status_code == 400
        assert "local files only" in str(err.value) and "file://" in str(err.value)
    with pytest.raises(ApiError) as err:
        idx.start_import(uri=(tmp_path / "missing").as_uri())
    assert err.value.status_code == 400 and "is not a directory" in str(err.value)
    with pytest.raises(NotFoundError):
        idx.describe_import("999")
    with pytest.raises(NotFoundError):
        idx.cancel_import("999")

    (tmp_path / "empty" / "ns").mkdir(parents=True)
    done = wait_finished(idx, idx.start_import(uri=str(tmp_path / "empty")).id)
    assert done.status == "Failed" and "No .parquet or .jsonl files" in done.error


def test_existing_namespace_is_refused(pinecone_client, tmp_path):
    idx = make_index(pinecone_client, "imp-existing")
    idx.upsert(vectors=[("x", [1, 0, 0])], namespace="taken")
    write_jsonl(tmp_path / "d" / "taken" / "0.jsonl", [{"id": "y", "values": [0, 1, 0]}])
    done = wait_finished(idx, idx.start_import(uri=str(tmp_path / "d"), error_mode="abort").id)
    assert done.status == "Failed" and "Namespace taken already exists" in done.error
    assert idx.describe_index_stats().namespaces["taken"].vector_count == 1


def test_cancel_pending_and_list_pages(make_pinecone_emulator, tmp_path):
    emu = make_pinecone_emulator(import_delay=60)
    pc = Pinecone(api_key=TEST_API_KEY, host=emu.url)
    idx = make_index(pc, "imp-cancel")
    write_jsonl(tmp_path / "d" / "ns" / "0.jsonl", [{"id": "y", "values": [0, 1, 0]}])
    first = idx.start_import(uri=str(tmp_path / "d")).id
    second = idx.start_import(uri=str(tmp_path / "d")).id
    model = idx.describe_import(first)
    assert model.status == "Pending" and model.percent_complete == 0.0 and model.records_imported == 0

    page = idx.list_imports_paginated(limit=1)
    assert [m.id for m in page] == [first] and page.pagination.next
    rest = idx.list_imports_paginated(limit=1, pagination_token=page.pagination.next)
    assert [m.id for m in rest] == [second] and rest.pagination is None

    idx.cancel_import(first)
    cancelled = idx.describe_import(first)
    assert cancelled.status == "Cancelled" and cancelled.finished_at
    idx.cancel_import(first)  # a finished import is left as it is
    assert idx.describe_import(first).status == "Cancelled"
    assert idx.describe_import(second).status == "Pending"
    pc.close()


def test_imports_survive_a_restart(make_pinecone_emulator, tmp_path):
    state = tmp_path / "state"
    write_jsonl(tmp_path / "d" / "ns" / "0.jsonl", [{"id": f"v{i}", "values": [1, i, 0]} for i in range(10)])
    write_jsonl(tmp_path / "e" / "other" / "0.jsonl", [{"id": "w", "values": [0, 0, 1]}])
    emu = make_pinecone_emulator(state_dir=state, import_delay=0)
    pc = Pinecone(api_key=TEST_API_KEY, host=emu.url)
    idx = make_index(pc, "imp-restart")
    done_id = idx.start_import(uri=str(tmp_path / "d")).id
    assert wait_finished(idx, done_id).status == "Completed"
    emu.settings.import_delay = 1.0
    pending_id = idx.start_import(uri=str(tmp_path / "e")).id
    pc.close()
    emu.stop_thread()

    emu = make_pinecone_emulator(state_dir=state, import_delay=0)
    pc = Pinecone(api_key=TEST_API_KEY, host=emu.url)
    idx = pc.Index(host=emu.index_host("imp-restart"))
    finished = idx.describe_import(done_id)
    assert finished.status == "Completed" and finished.records_imported == 10
    resumed = wait_finished(idx, pending_id)
    assert resumed.status == "Completed" and resumed.records_imported == 1
    assert idx.describe_index_stats().total_vector_count == 11
    pc.close()
