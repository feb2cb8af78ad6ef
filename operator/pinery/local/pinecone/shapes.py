"""2025-10 answers reshaped as an older API version gives them (pure).

The handlers build 2025-10 bodies. Versions 2024-07 to 2025-04 answer the same operations with
fewer fields; each rule below removes what that version's models do not have, so a client sees
what Pinecone would send it. The field history, with its sources, is in
docs/pinecone-api-versions.md ("`IndexModel`", "Vector operations, field by field"):

- `IndexModel.vector_type`, `tags`, `embed`: added in 2025-01 (pinecone-python-client 6.0.2
  `core/openapi/db_control/model/index_model.py`; absent from 5.4.2 `control/model/index_model.py`).
- `IndexModel.private_host`, `spec.serverless.read_capacity`, `spec.serverless.schema`,
  `spec.serverless.source_collection`, `spec.byoc.read_capacity`, `spec.byoc.schema`: 2025-10
  (8.1.2 `index_model.py`, `serverless_spec_response.py`; the 2025-10 OAS).
- Stats `metric`, `vectorType`: 2025-01 (6.0.2 `index_description.py`); `memoryFullness`,
  `storageFullness`: 2025-10 (OAS `IndexDescription`).
- `UpdateResponse.matchedRecords`: 2025-10; before it update answers an empty object (7.3.0
  `db_data/api/vector_operations_api.py` `update_vector`: a free `{str: ...}` response type).
- Backups, restore jobs and namespace descriptions lose their `schema` before 2025-10 (7.3.0
  `backup_model.py`, `namespace_description.py`).

2026-07 is not a subset of 2025-10 and is translated by `v2026_07`, not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pinery.local.pinecone.versions import at_least

Body = dict[str, Any]

SERVERLESS_2025_10 = ("read_capacity", "schema", "source_collection")
BYOC_2025_10 = ("read_capacity", "schema")


def _index_model(body: Body, version: str) -> Body:
    out = dict(body)
    if not at_least(version, "2025-01"):
        for key in ("vector_type", "tags", "embed"):
            out.pop(key, None)
    if not at_least(version, "2025-10"):
        out.pop("private_host", None)
        spec = dict(out.get("spec") or {})
        for kind, dropped in (("serverless", SERVERLESS_2025_10), ("byoc", BYOC_2025_10)):
            if isinstance(spec.get(kind), dict):
                spec[kind] = {k: v for k, v in spec[kind].items() if k not in dropped}
        if spec:
            out["spec"] = spec
    return out


def _index_list(body: Body, version: str) -> Body:
    return {**body, "indexes": [_index_model(i, version) for i in body.get("indexes", [])]}


def _stats(body: Body, version: str) -> Body:
    out = dict(body)
    if not at_least(version, "2025-01"):
        out.pop("metric", None)
        out.pop("vectorType", None)
    if not at_least(version, "2025-10"):
        out.pop("memoryFullness", None)
        out.pop("storageFullness", None)
    return out


def _update(body: Body, version: str) -> Body:
    return body if at_least(version, "2025-10") else {}


def _without_schema(body: Body, version: str) -> Body:
    return body if at_least(version, "2025-10") else {k: v for k, v in body.items() if k != "schema"}


def _listed(item: Callable[[Body, str], Body], key: str) -> Callable[[Body, str], Body]:
    def shape(body: Body, version: str) -> Body:
        return {**body, key: [item(i, version) for i in body.get(key, [])]}
    return shape


# Operation name (the route names of control.py / data.py) -> reshaping of its 2xx JSON body.
RULES: dict[str, Callable[[Body, str], Body]] = {
    "create_index": _index_model,
    "create_index_for_model": _index_model,
    "describe_index": _index_model,
    "configure_index": _index_model,
    "list_indexes": _index_list,
    "describeIndexStats": _stats,
    "updateVector": _update,
    "create_backup": _without_schema,
    "describe_backup": _without_schema,
    "list_index_backups": _listed(_without_schema, "data"),
    "list_project_backups": _listed(_without_schema, "data"),
    "describeNamespace": _without_schema,
    "createNamespace": _without_schema,
    "listNamespacesOperation": _listed(_without_schema, "namespaces"),
}


def reshape(operation: str, body: Any, version: str) -> Any:
    """The body `operation` answers in `version`, from its 2025-10 body."""
    rule = RULES.get(operation)
    if rule is None or not isinstance(body, dict) or at_least(version, "2025-10"):
        return body
    return rule(body, version)


# The data plane's default namespace may be named only from 2025-04 on; before it Pinecone
# answers with this 400 (quoted in neuron-core/neuron-ai pull request #162, a client that sent
# 2025-01).
DEFAULT_NAMESPACE = "__default__"
DEFAULT_NAMESPACE_REFUSED = "Use of namespace='__default__' is not allowed in API versions prior to 2025-04"


def names_default_namespace_refused(version: str, namespace: Any) -> bool:
    return namespace == DEFAULT_NAMESPACE and not at_least(version, "2025-04")
