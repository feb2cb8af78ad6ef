"""Bulk imports (`/bulk/imports`, API 2025-10) from files on the emulator's own machine.

Pinecone imports a directory of namespaces from object storage: `<uri>/<namespace>/*.parquet`,
`__default__` standing for the default namespace, other files ignored; the columns are `id`
(string), `values` (list of floats), `sparse_values` (struct of `indices` and `values` lists)
and `metadata` (a JSON string). Source: docs.pinecone.io/guides/index-data/import-data
("Prepare your data") and /guides/data/understanding-imports ("Directory structure", "Parquet
file format"). Wire shapes: ../shared/pinecone-api/2025-10/db_data_2025-10.oas.yaml
(StartImportRequest, ImportModel, ListImportsResponse) and docs/pinecone-api-versions.md.

Local mode reads a `file://` URI or a plain path instead of a bucket, Parquet with pyarrow (the
`import` extra) and newline-delimited JSON (`*.jsonl`, the same columns, one object a line)
without it. An import waits `import_delay` seconds in Pending, then reads its files in a worker
thread, 1000 records at a time, and upserts them on the server's loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
from aiohttp import web

from pinery.local.pinecone import context, render, versions
from pinery.local.pinecone import data as vectors_api
from pinery.local.pinecone.errors import ApiError, bad_request, not_found
from pinery.local.pinecone.state import ImportRecord, IndexRecord, Store
from pinery.local.pinecone.vectors import IndexData, Record

log = logging.getLogger(__name__)

CHUNK = 1000
MAX_NAMESPACES = 100  # per import (understanding-imports, "Limits")
MAX_URI = 1500
MAX_INTEGRATION_ID = 1000
DEFAULT_NAMESPACE = "__default__"
FINISHED = frozenset({"Completed", "Failed", "Cancelled"})
SUFFIXES = (".parquet", ".jsonl")
REMOTE = {"s3": "Amazon S3", "gs": "Google Cloud Storage", "az": "Azure Blob Storage",
          "abfs": "Azure Blob Storage", "abfss": "Azure Blob Storage", "wasb": "Azure Blob Storage",
          "wasbs": "Azure Blob Storage"}


class ImportFailed(Exception):
    """Stops an import: under errorMode abort any bad record, under either mode a setup error."""


# -- where the files are -----------------------------------------------------------------------
def local_dir(uri: str) -> Path:
    """The directory a start_import uri names, or a 400 saying why it cannot be read locally."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise bad_request(f"Invalid import uri {uri}: a file:// URI names a path on the emulator's machine "
                              "(file:///path/to/dir), not another host.")
        path = Path(unquote(parts.path))
    elif scheme == "" or (len(scheme) == 1 and uri[1:3] in (":\\", ":/")):  # a path (a Windows drive too)
        path = Path(uri).expanduser()
    else:
        where = REMOTE.get(scheme)
        if scheme in ("http", "https") and ".blob.core.windows.net" in parts.netloc:
            where = "Azure Blob Storage"
        what = f"{uri} is in {where}" if where else f"the {scheme}:// scheme is not a local file"
        raise bad_request(f"Invalid import uri: {what}. Local mode's Pinecone emulator reads local files only: "
                          "copy the import directory to the emulator's machine and pass a file:// URI or a "
                          "path (for example file:///data/import, holding <namespace>/*.parquet or *.jsonl).")
    path = path.absolute()
    if not path.is_dir():
        raise bad_request(f"Invalid import uri {uri}: {path} is not a directory on the emulator's machine.")
    return path


def scan(root: Path) -> dict[str, list[str]]:
    """Namespace -> its data files (sorted paths), from the subdirectories of root."""
    found: dict[str, list[str]] = {}
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(str(f) for f in sub.iterdir() if f.is_file() and f.suffix in SUFFIXES)
        if files:
            found["" if sub.name == DEFAULT_NAMESPACE else sub.name] = files
    return found


# -- reading records ---------------------------------------------------------------------------
def _record(raw: Any, rec: IndexRecord, where: str) -> Record:
    """One row as a record, validated as an upsert's vector is (raises ApiError)."""
    if not isinstance(raw, dict):
        raise bad_request("a record must be an object with id, values, sparse_values and metadata.")
    record_id = vectors_api._check_id(raw.get("id"), where)
    values = raw.get("values")
    if rec.vector_type == "sparse" and values == []:
        values = None
    values = vectors_api._stored_dense(values, rec, where, record_id)
    sparse_raw = raw.get("sparse_values")
    if isinstance(sparse_raw, dict) and not sparse_raw.get("indices") and not sparse_raw.get("values"):
        sparse_raw = None  # an empty struct is no sparse vector
    sparse = vectors_api._sparse(sparse_raw, rec, where)
    metadata = raw.get("metadata")
    if isinstance(metadata, str):  # Pinecone's metadata column is a JSON string
        try:
            metadata = orjson.loads(metadata) if metadata.strip() else None
        except ValueError as exc:
            raise bad_request(f"{where}: metadata is not valid JSON ({exc}).") from exc
    if rec.vector_type == "dense" and values is None:
        raise bad_request(f"{where} ({record_id}): dense index {rec.name} needs values.")
    if rec.vector_type == "sparse" and sparse is None:
        raise bad_request(f"{where} ({record_id}): sparse index {rec.name} needs sparse_values.")
    return Record(record_id, values, sparse, vectors_api._metadata(metadata, f"{where} ({record_id})"))


# The good records of a chunk, the errors of its bad rows, how many good ones came before the
# first bad row, and the fraction of the file read so far.
Chunk = tuple[list[Record], list[str], int, float]


def _rows_jsonl(path: Path) -> Iterator[tuple[list[tuple[int, Any]], float]]:
    size = max(path.stat().st_size, 1)
    done, rows, number = 0, [], 0
    with path.open("rb") as handle:
        for line in handle:
            done += len(line)
            number += 1
            if not line.strip():
                continue
            try:
                rows.append((number, orjson.loads(line)))
            except ValueError as exc:
                rows.append((number, ValueError(f"line is not valid JSON ({exc})")))
            if len(rows) >= CHUNK:
                yield rows, done / size
                rows = []
    yield rows, 1.0


def _rows_parquet(path: Path) -> Iterator[tuple[list[tuple[int, Any]], float]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportFailed(f"{path.name}: reading Parquet needs pyarrow; install pinery with the import extra "
                           "(pip install 'pinery[import]') or write the records as .jsonl files.") from exc
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid and OSError kinds
        raise ValueError(f"not a readable Parquet file ({exc})") from exc
    if "id" not in parquet.schema_arrow.names:
        raise ValueError(f"no id column (columns: {', '.join(parquet.schema_arrow.names)})")
    total, number = max(parquet.metadata.num_rows, 1), 0
    for batch in parquet.iter_batches(batch_size=CHUNK):
        rows = []
        for raw in batch.to_pylist():
            number += 1
            rows.append((number, raw))
        yield rows, number / total
    yield [], 1.0


def read_file(path: Path, rec: IndexRecord) -> Iterator[Chunk]:
    """A file's records in chunks; bad rows become errors; an unreadable file raises ValueError."""
    label = f"{path.parent.name}/{path.name}"
    rows_of = _rows_parquet if path.suffix == ".parquet" else _rows_jsonl
    for rows, fraction in rows_of(path):
        records: list[Record] = []
        errors: list[str] = []
        good_before_error: int | None = None
        for number, raw in rows:
            if errors and good_before_error is None:
                good_before_error = len(records)
            where = f"{label} {'line' if path.suffix == '.jsonl' else 'row'} {number}"
            if isinstance(raw, Exception):
                errors.append(f"{where}: {raw}")
                continue
            try:
                records.append(_record(raw, rec, where))
            except ApiError as exc:
                message = exc.message if exc.message.startswith(label) else f"{where}: {exc.message}"
                errors.append(message)
        yield records, errors, len(records) if good_before_error is None else good_before_error, fraction


# -- running imports ---------------------------------------------------------------------------
class Importer:
    """The running imports of one emulator: one asyncio task each, on the server's loop."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.tasks: dict[str, asyncio.Task] = {}

    def launch(self, imp: ImportRecord) -> None:
        task = asyncio.get_running_loop().create_task(self._run(imp), name=f"pinecone-import-{imp.id}")
        self.tasks[imp.id] = task
        task.add_done_callback(lambda _: self.tasks.pop(imp.id, None))

    def resume(self) -> None:
        """After a restart: imports that were Pending or InProgress go on (InProgress ones after
        the last file they finished)."""
        for imp in self.store.imports.values():
            if imp.status not in FINISHED and imp.id not in self.tasks:
                self.launch(imp)

    async def stop(self) -> None:
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def finish(self, imp: ImportRecord, status: str, error: str | None = None) -> None:
        imp.status, imp.finished_at = status, render.iso(time.time())
        if status == "Completed":
            imp.percent_complete = 100.0
        if error is not None:
            imp.error = error[:1000]
        self.store.save()
        log.info("import %s into index %s: %s (%d records)%s", imp.id, imp.index_name, status,
                 imp.records_imported, f": {error}" if error else "")

    def _index(self, imp: ImportRecord) -> IndexRecord:
        rec = self.store.indexes.get((imp.project, imp.index_name))
        if rec is None or rec.id != imp.index_id:
            raise ImportFailed(f"Index {imp.index_name} was deleted during the import.")
        return rec

    async def _run(self, imp: ImportRecord) -> None:
        try:
            await asyncio.sleep(max(0.0, imp.starts - time.time()))
            if imp.status == "Pending":
                self._begin(imp)
            await self._import(imp)
        except asyncio.CancelledError:
            raise
        except ImportFailed as exc:
            if imp.status not in FINISHED:
                self.finish(imp, "Failed", str(exc))
        except Exception as exc:
            log.exception("import %s failed", imp.id)
            if imp.status not in FINISHED:
                self.finish(imp, "Failed", f"Internal error: {exc}")

    def _begin(self, imp: ImportRecord) -> None:
        """Pending -> InProgress: fix the namespaces and files, refuse namespaces that exist."""
        rec = self._index(imp)
        try:
            found = scan(Path(imp.path))
        except OSError as exc:
            raise ImportFailed(f"Cannot read the import directory {imp.path}: {exc}") from exc
        if not found:
            raise ImportFailed(f"No .parquet or .jsonl files found in the namespace directories under {imp.uri} "
                               f"(expected <namespace>/*.parquet, {DEFAULT_NAMESPACE}/ for the default namespace).")
        if len(found) > MAX_NAMESPACES:
            raise ImportFailed(f"An import can write at most {MAX_NAMESPACES} namespaces; {imp.uri} has {len(found)}.")
        data = self.store.data.get(rec.id)
        for name in list(found):
            existing = data.namespace(name) if data is not None else None
            if existing is None or (name == "" and len(existing) == 0):
                continue
            shown = name or DEFAULT_NAMESPACE
            problem = (f"Namespace {shown} already exists in index {rec.name}; imports write new namespaces only"
                       + (" (the default namespace must be empty)." if name == "" else "."))
            if imp.error_mode == "abort":
                raise ImportFailed(problem)
            log.warning("import %s: %s Its files are skipped.", imp.id, problem)
            del found[name]
        imp.namespaces, imp.status = found, "InProgress"
        self.store.save()

    async def _import(self, imp: ImportRecord) -> None:
        loop = asyncio.get_running_loop()
        sizes = {f: _size(f) for files in imp.namespaces.values() for f in files}
        total = max(sum(sizes.values()), 1)
        skipped, first_error = 0, None
        for name, files in imp.namespaces.items():
            for file in files:
                if file in imp.done_files:
                    continue
                done_before = sum(sizes[f] for f in imp.done_files if f in sizes)
                chunks = read_file(Path(file), self._index(imp))
                while True:
                    try:
                        chunk = await loop.run_in_executor(None, next, chunks, None)
                    except ValueError as exc:  # the file as a whole
                        message = f"{Path(file).parent.name}/{Path(file).name}: {exc}"
                        if imp.error_mode == "abort":
                            raise ImportFailed(message) from exc
                        skipped, first_error = skipped + 1, first_error or message
                        break
                    except OSError as exc:
                        raise ImportFailed(f"Cannot read {file}: {exc}") from exc
                    if chunk is None:
                        break
                    records, errors, good_before_error, fraction = chunk
                    if imp.status in FINISHED:  # cancelled meanwhile
                        return
                    rec = self._index(imp)
                    if errors and imp.error_mode == "abort":
                        # The rows before the first bad one are imported, as a reader stopping there would.
                        self._write(imp, rec, name, records[:good_before_error])
                        raise ImportFailed(errors[0])
                    if errors:
                        skipped, first_error = skipped + len(errors), first_error or errors[0]
                    self._write(imp, rec, name, records)
                    imp.percent_complete = round(min(99.9, 100.0 * (done_before + fraction * sizes[file]) / total), 1)
                    await asyncio.sleep(0)
                imp.done_files.append(file)
                self.store.save()
        if skipped:
            log.warning("import %s into index %s skipped %d bad records or files (errorMode continue); first: %s",
                        imp.id, imp.index_name, skipped, first_error)
        self.finish(imp, "Completed")

    def _write(self, imp: ImportRecord, rec: IndexRecord, name: str, records: list[Record]) -> None:
        if not records:
            return
        data = self.store.data.setdefault(rec.id, IndexData(rec.dimension))
        data.namespace(name, create=True).upsert(records)
        imp.records_imported += len(records)
        self.store.mark(rec.id)


def _size(path: str) -> int:
    try:
        return max(Path(path).stat().st_size, 1)
    except OSError:
        return 1


# The application key of the emulator's Importer (server.py puts it there).
IMPORTER: web.AppKey[Importer] = web.AppKey("pinecone_importer", Importer)


# -- handlers ----------------------------------------------------------------------------------
def _importer(request: web.Request) -> Importer:
    return request.app[IMPORTER]


def _serverless_target(request: web.Request, operation: str) -> IndexRecord:
    rec, _ = vectors_api._target(request)
    vectors_api._serverless_only(rec, operation)
    return rec


def _model(imp: ImportRecord) -> dict[str, Any]:
    body: dict[str, Any] = {"id": imp.id, "uri": imp.uri, "status": imp.status, "createdAt": imp.created_at,
                            "percentComplete": imp.percent_complete, "recordsImported": imp.records_imported}
    if imp.finished_at is not None:
        body["finishedAt"] = imp.finished_at
    if imp.error is not None:
        body["error"] = imp.error
    return body


def _error_mode(body: dict[str, Any], request: web.Request) -> str:
    raw = body.get("errorMode")
    # 2026-07 documents abort as the server's default; before it the SDKs' documented default is
    # continue (docs/pinecone-api-versions.md, "Bulk import").
    default = "abort" if versions.at_least(versions.of(request), "2026-07") else "continue"
    if raw is None:
        return default
    if not isinstance(raw, dict):
        raise bad_request("errorMode must be an object such as {\"onError\": \"abort\"}.")
    on_error = raw.get("onError")
    if on_error is None:
        return default
    if not isinstance(on_error, str) or on_error.lower() not in ("abort", "continue"):
        raise bad_request(f"errorMode.onError must be 'abort' or 'continue' (got {on_error!r}).")
    return on_error.lower()


def _next_id(store: Store) -> str:
    numbers = [int(i) for i in store.imports if i.isdigit()]
    return str(max(numbers, default=100) + 1)  # ids count up from 101, like the spec's example


async def start_import(request: web.Request) -> web.Response:
    rec = _serverless_target(request, "start_import")
    body = await vectors_api._body(request)
    uri = body.get("uri")
    if not isinstance(uri, str) or not 1 <= len(uri) <= MAX_URI:
        raise bad_request(f"uri must be a string of 1 to {MAX_URI} characters.")
    integration = body.get("integrationId")
    if integration is not None and (not isinstance(integration, str) or len(integration) > MAX_INTEGRATION_ID):
        raise bad_request(f"integrationId must be a string of at most {MAX_INTEGRATION_ID} characters.")
    error_mode = _error_mode(body, request)
    if rec.embed is not None:
        raise bad_request(f"Import does not support integrated embedding; index {rec.name} embeds its records.")
    path = local_dir(uri)
    store, now = context.store(request), time.time()
    imp = ImportRecord(id=_next_id(store), project=rec.project, index_id=rec.id, index_name=rec.name, uri=uri,
                       path=str(path), error_mode=error_mode, created_at=render.iso(now),
                       starts=now + context.settings(request).import_delay)
    store.imports[imp.id] = imp
    store.save()
    _importer(request).launch(imp)
    return web.json_response({"id": imp.id})


def _of_index(request: web.Request, rec: IndexRecord) -> ImportRecord:
    imp = context.store(request).imports.get(request.match_info["id"])
    if imp is None or imp.index_id != rec.id:
        raise not_found(f"Import {request.match_info['id']} not found.")
    return imp


async def list_imports(request: web.Request) -> web.Response:
    rec = _serverless_target(request, "list_imports")
    found = sorted((i for i in context.store(request).imports.values() if i.index_id == rec.id),
                   key=lambda i: (i.created_at, int(i.id) if i.id.isdigit() else 0))
    limit = vectors_api._limit(request)
    return web.json_response(render.page([_model(i) for i in found], limit, request.query.get("paginationToken")))


async def describe_import(request: web.Request) -> web.Response:
    rec = _serverless_target(request, "describe_import")
    return web.json_response(_model(_of_index(request, rec)))


async def cancel_import(request: web.Request) -> web.Response:
    """Cancels an unfinished import (what it wrote stays); a finished one is left as it is."""
    rec = _serverless_target(request, "cancel_import")
    imp = _of_index(request, rec)
    if imp.status not in FINISHED:
        importer = _importer(request)
        task = importer.tasks.get(imp.id)
        importer.finish(imp, "Cancelled")
        if task is not None:
            task.cancel()
    return web.json_response({})


ROUTES = [
    ("GET", "/bulk/imports", list_imports, "listBulkImports"),
    ("POST", "/bulk/imports", start_import, "startBulkImport"),
    ("GET", "/bulk/imports/{id}", describe_import, "describeBulkImport"),
    ("DELETE", "/bulk/imports/{id}", cancel_import, "cancelBulkImport"),
]
