"""Generated VectorIndex and FSDPJob manifests: valid ones, and invalid ones that say which field
is wrong.

Valid manifests come from the CRD schemas (`tests.support.schema_values`), shaped by the models'
cross-field rules, with catalogues of real Kubernetes objects where pinery passes objects
through. Invalid manifests are valid ones with one mutation: a wrong type, a value out of
range, a bad enum, an unknown field, a missing required field, a bad name, a broken
cross-field rule. Each `Invalid` carries the path of the field a rejection must name.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Iterator

from hypothesis import strategies as st

from pinery import kube_yaml
from pinery.api import API_VERSION, FSDP_JOB, VECTOR_INDEX, VECTOR_INDEX_BACKUP, VECTOR_INDEX_BACKUP_SCHEDULE
from pinery.api.fsdpjob import JOB_NAME_MAX, RESERVED_ENV, RESERVED_VOLUME_PREFIX, SHM_PATH, TRAINER_CONFIG_DIR
from pinery.api.vectorindex import (
    DEFAULT_DENSE_FIELD,
    DEFAULT_SPARSE_FIELD,
    INDEX_NAME_MAX,
    INDEX_NAME_PATTERN,
    RESERVED_TAG_PREFIX,
)
from pinery.generate.crds import object_schema
from pinery.local.pinecone.request_validation import POD_ENVIRONMENTS, SERVERLESS_REGIONS
from pinery.schema.errors import join_path
from pinery_trainer.config import TrainerConfig
from tests.support.schema_values import OMIT, Overrides, key_constraints, matches, printable_outside, strings, values

KINDS = {res.kind: res for res in (VECTOR_INDEX, FSDP_JOB, VECTOR_INDEX_BACKUP, VECTOR_INDEX_BACKUP_SCHEDULE)}
SCHEMAS = {kind: object_schema(res) for kind, res in KINDS.items()}
SPEC_SCHEMAS = {kind: schema["properties"]["spec"] for kind, schema in SCHEMAS.items()}

# The catalogues: Kubernetes objects an FSDPJob hands to its pods unchanged. The CRD keeps them
# opaque, so the generators pick from objects a real API server accepts.
ENV_SOURCES = [
    {"fieldRef": {"fieldPath": "metadata.name"}},
    {"secretKeyRef": {"name": "hf-token", "key": "token"}},
    {"configMapKeyRef": {"name": "settings", "key": "mode", "optional": True}},
    {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
]
TOLERATIONS = [
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "pool", "operator": "Equal", "value": "training", "effect": "NoExecute", "tolerationSeconds": 60},
]
AFFINITIES = [
    {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
    {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {
        "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "train"}}}}]}},
]
VOLUME_SOURCES = [
    {"emptyDir": {}},
    {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    {"configMap": {"name": "data-config"}},
    {"secret": {"secretName": "credentials", "defaultMode": 0o400}},
    {"persistentVolumeClaim": {"claimName": "datasets", "readOnly": True}},
]
POD_SECURITY = [{"runAsNonRoot": True, "runAsUser": 2000, "fsGroup": 2000}, {"runAsUser": 0}, {"fsGroup": 3000}]
CONTAINER_SECURITY = [
    {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False},
    {"capabilities": {"add": ["IPC_LOCK"]}},
    {"privileged": False},
]


@st.composite
def _volume(draw) -> dict:
    schema = SPEC_SCHEMAS["FSDPJob"]["properties"]["podTemplate"]["properties"]["volumes"]["items"]
    name = draw(values(schema["properties"]["name"]).filter(lambda n: not n.startswith(RESERVED_VOLUME_PREFIX)))
    return {"name": name, **draw(st.sampled_from(VOLUME_SOURCES))}


FSDPJOB_OVERRIDES: dict[str, st.SearchStrategy] = {
    "env[*].valueFrom": st.sampled_from(ENV_SOURCES),
    "podTemplate.tolerations[*]": st.sampled_from(TOLERATIONS),
    "podTemplate.affinity": st.sampled_from(AFFINITIES),
    "podTemplate.volumes[*]": _volume(),
    "podTemplate.securityContext": st.sampled_from(POD_SECURITY),
    "podTemplate.containerSecurityContext": st.sampled_from(CONTAINER_SECURITY),
}

# Where the operator test wants objects that can reach Ready in the emulator and pods it can
# create quickly.
KNOWN_REGIONS = [(cloud, region) for cloud, regions in SERVERLESS_REGIONS.items() for region in regions]


# The Secret the operator test puts beside its objects, for VectorIndexes that name their own.
OPERATOR_TEST_SECRET = {"name": "team-pinecone", "key": "api-key"}


def operator_overrides(kind: str) -> dict[str, st.SearchStrategy]:
    if kind == "FSDPJob":
        few = st.integers(1, 3)
        return {**FSDPJOB_OVERRIDES, "numNodes": few, "elastic.minNodes": few, "elastic.maxNodes": few}
    return {
        "serverless": st.sampled_from(KNOWN_REGIONS).map(lambda cr: {"cloud": cr[0], "region": cr[1]}),
        "pod.environment": st.sampled_from(POD_ENVIRONMENTS),
        "byoc.environment": st.sampled_from(["aws-us-east-1-b921", "gcp-us-central1-4a9f"]),
        # Collections are made from existing indexes, outside what one object declares.
        "pod.sourceCollection": OMIT,
        "apiKeySecretRef": st.just(OPERATOR_TEST_SECRET),
        # Models the emulator serves, with parameters they take (pinery.local.pinecone.inference).
        "embed": st.sampled_from([
            {"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}},
            {"model": "multilingual-e5-large", "fieldMap": {"text": "body"}, "readParameters": {"input_type": "query"},
             "writeParameters": {"input_type": "passage"}},
            {"model": "pinecone-sparse-english-v0", "fieldMap": {"text": "text"}},
        ]),
    }


# ---- names -------------------------------------------------------------------------------


def object_names(kind: str, needs_index_name: bool = False) -> st.SearchStrategy[str]:
    """metadata.name values the kind accepts (VectorIndex names double as index names)."""
    name_schema = SCHEMAS[kind]["properties"]["metadata"]["properties"]["name"]
    if kind == "FSDPJob":
        return strings(name_schema["pattern"], 1, JOB_NAME_MAX)
    if needs_index_name:
        return strings(INDEX_NAME_PATTERN, 1, INDEX_NAME_MAX)
    from pinery.api.base import DNS_SUBDOMAIN_PATTERN

    return strings(DNS_SUBDOMAIN_PATTERN, 1, name_schema["maxLength"])


def manifest(kind: str, name: str, spec: dict) -> dict:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec}


# ---- valid specs: the schema, shaped by the models' cross-field rules ---------------------


@st.composite
def vectorindex_specs(draw, overrides: Overrides | None = None) -> dict:
    schema = SPEC_SCHEMAS["VectorIndex"]
    spec = draw(values(schema, "", overrides))
    deployment = draw(st.sampled_from(["serverless", "pod", "byoc"]))
    for other in {"serverless", "pod", "byoc"} - {deployment}:
        spec.pop(other, None)
    if deployment not in spec:
        spec[deployment] = draw(values(schema["properties"][deployment], deployment, overrides))
    if deployment == "pod":
        spec["vectorType"] = "dense"
        spec.pop("readCapacity", None)  # serverless and BYOC only
        pod = spec["pod"]
        if "pods" in pod:
            pod["pods"] = pod.get("replicas", 1) * pod.get("shards", 1)
    capacity = spec.get("readCapacity")
    if capacity is not None:  # Dedicated names all three of nodeType/replicas/shards, OnDemand none
        dedicated = ("nodeType", "replicas", "shards")
        if capacity["mode"] == "OnDemand":
            spec["readCapacity"] = {"mode": "OnDemand"}
        else:
            rc_schema = schema["properties"]["readCapacity"]["properties"]
            for name in dedicated:
                if name not in capacity:
                    capacity[name] = draw(values(rc_schema[name], f"readCapacity.{name}", overrides))
    if spec.get("vectorType") == "hybrid" and "metric" in spec:
        spec["metric"] = "dotproduct"
    spec.pop("restoreFrom", None)  # a restore needs a backup that exists: its own tests make one
    _declared_fields(spec, deployment)
    if "embed" in spec and deployment != "serverless":
        del spec["embed"]  # integrated inference is serverless only
    if "embed" in spec:  # the model sets dimension and metric, and makes one kind of vector
        field_map = spec["embed"].get("fieldMap") or {}
        spec["embed"]["fieldMap"] = {"text": field_map.get("text", "chunk")}  # exactly the text entry
        spec.pop("dimension", None)
        spec.pop("metric", None)
        if spec.get("vectorType") == "hybrid":
            spec["vectorType"] = "dense"
        return _without_reserved_tags(spec)
    if spec.get("vectorType", "dense") == "sparse":
        spec.pop("dimension", None)
        if "metric" in spec:
            spec["metric"] = "dotproduct"
    elif "dimension" not in spec:
        spec["dimension"] = draw(values(schema["properties"]["dimension"], "dimension", overrides))
    return _without_reserved_tags(spec)


def _declared_fields(spec: dict, deployment: str) -> None:
    """textFields and fieldNames: serverless (not from a collection) and BYOC only, without embed;
    vector field names the vector type has; stop words with stemming; no text field named as a
    vector field."""
    legacy = deployment == "pod" or "sourceCollection" in spec.get("serverless", {})
    if legacy or "embed" in spec:
        spec.pop("textFields", None)
        spec.pop("fieldNames", None)
        return
    vector_type = spec.get("vectorType", "dense")
    names = spec.get("fieldNames")
    if names is not None:
        if vector_type == "sparse":
            names.pop("dense", None)
        if vector_type == "dense":
            names.pop("sparse", None)
    if "textFields" in spec:
        names = names or {}
        taken = {names.get("dense", DEFAULT_DENSE_FIELD) if vector_type != "sparse" else None,
                 names.get("sparse", DEFAULT_SPARSE_FIELD) if vector_type != "dense" else None}
        fields = [f for f in spec["textFields"] if f["name"] not in taken]
        for field in fields:
            if field.get("stopWords"):
                field["stemming"] = True
        if fields:
            spec["textFields"] = fields
        else:
            del spec["textFields"]


def _without_reserved_tags(spec: dict) -> dict:
    if "tags" in spec:
        spec["tags"] = {k: v for k, v in spec["tags"].items() if not k.startswith(RESERVED_TAG_PREFIX)}
    return spec


def _without_trainer_problems(trainer: dict) -> dict:
    """Drop the fields the trainer's own rules object to (batch sizes, warm-up, model shape)."""
    trainer = copy.deepcopy(trainer)
    config = TrainerConfig.model_validate(trainer, context={"problems": []})
    for path, _message in config.problems():
        if path.startswith("model."):  # a shape: the overrides decide it together
            for name in ("dim", "layers", "heads", "kvHeads", "vocabSize"):
                trainer.get("model", {}).pop(name, None)
        elif path == "globalBatchSize":
            trainer.pop("globalBatchSize")
        elif path == "optim.warmupSteps":
            trainer["optim"].pop("warmupSteps")
        elif path == "fsdp.shardGroupSize":  # set without strategy hybrid
            trainer["fsdp"].pop("shardGroupSize")
    assert not TrainerConfig.model_validate(trainer, context={"problems": []}).problems(), trainer
    return trainer


@st.composite
def fsdpjob_specs(draw, overrides: Overrides | None = None) -> dict:
    overrides = {**FSDPJOB_OVERRIDES, **(overrides or {})}
    spec = draw(values(SPEC_SCHEMAS["FSDPJob"], "", overrides))
    if "command" in spec and "trainer" in spec:
        spec.pop(draw(st.sampled_from(["command", "trainer"])))
    if "trainer" in spec:
        spec["trainer"] = _without_trainer_problems(spec["trainer"])
    if "env" in spec:
        spec["env"] = [
            {k: v for k, v in e.items() if not (k == "value" and "valueFrom" in e)}
            for e in spec["env"] if not _reserved_env(e["name"])
        ]
    if "elastic" in spec:
        elastic = spec["elastic"]
        if "maxNodes" in elastic and elastic["minNodes"] > elastic["maxNodes"]:
            elastic["minNodes"], elastic["maxNodes"] = elastic["maxNodes"], elastic["minNodes"]
        top = elastic.get("maxNodes", spec["numNodes"])
        spec["numNodes"] = min(max(spec["numNodes"], elastic["minNodes"]), top)
        elastic["minNodes"] = min(elastic["minNodes"], spec["numNodes"])
    _fit_shard_group(spec)
    gang = spec.get("gang")
    if gang is not None:  # each scheduler's own setting only
        if gang["scheduler"] != "coscheduling":
            gang.pop("scheduleTimeoutSeconds", None)
        if gang["scheduler"] != "volcano":
            gang.pop("queue", None)
    template = spec.get("podTemplate")
    if template is not None and "volumeMounts" in template:
        names = [v["name"] for v in template.get("volumes", [])]
        taken = _reserved_mount_paths(spec)
        mounts = []
        for mount in template["volumeMounts"]:
            if names and mount["mountPath"] not in taken:
                mounts.append({**mount, "name": draw(st.sampled_from(names))})
        template["volumeMounts"] = mounts
    return spec


def _fit_shard_group(spec: dict) -> None:
    """A hybrid shard group must divide every world size (FSDPJobSpec._shard_group_problems): one
    that does not is dropped, leaving the default (one node's processes), which always does."""
    fsdp = spec.get("trainer", {}).get("fsdp", {})
    nproc = spec.get("nprocPerNode", "auto")
    if "shardGroupSize" not in fsdp or not isinstance(nproc, int):
        return
    elastic = spec.get("elastic")
    nodes = [spec["numNodes"]] if elastic is None else range(elastic["minNodes"], elastic.get("maxNodes", spec["numNodes"]) + 1)
    if any((n * nproc) % fsdp["shardGroupSize"] for n in nodes):
        del fsdp["shardGroupSize"]


def _reserved_env(name: str) -> bool:
    return name in RESERVED_ENV or name.startswith(("PET_", "PINERY_"))


def _reserved_mount_paths(spec: dict) -> set[str]:
    paths = set()
    if "shmSize" in spec:
        paths.add(SHM_PATH)
    if "command" not in spec:
        paths.add(TRAINER_CONFIG_DIR)
    if "checkpoint" in spec:
        paths.add(spec["checkpoint"].get("path", "/checkpoints"))
    return paths


# Schedules, zones and ages the models accept (the schema cannot say which strings parse as cron).
SCHEDULES = ("0 3 * * *", "*/15 * * * *", "@daily", "30 2 * * MON-FRI", "0 0 1 */2 *", "@every 6h", "5 4 * jan,jul sun")
TIME_ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe")
MAX_AGES = ("30d", "36h", "1d12h", "90m")
SCHEDULE_OVERRIDES = {"schedule": st.sampled_from(SCHEDULES), "timeZone": st.sampled_from(TIME_ZONES),
                      "retention.maxAge": st.sampled_from(MAX_AGES)}


@st.composite
def backup_specs(draw, overrides: Overrides | None = None) -> dict:
    """VectorIndexBackup: exactly one of vectorIndexName and indexName; a key only with indexName."""
    spec = draw(values(SPEC_SCHEMAS["VectorIndexBackup"], "", overrides))
    if draw(st.booleans()):
        spec.pop("indexName", None)
        spec.pop("apiKeySecretRef", None)
        spec.setdefault("vectorIndexName", "docs")
    else:
        spec.pop("vectorIndexName", None)
        spec.setdefault("indexName", draw(strings(INDEX_NAME_PATTERN, 1, INDEX_NAME_MAX)))
    return spec


@st.composite
def backup_schedule_specs(draw, overrides: Overrides | None = None) -> dict:
    spec = draw(values(SPEC_SCHEMAS["VectorIndexBackupSchedule"], "", {**SCHEDULE_OVERRIDES, **(overrides or {})}))
    retention = spec.get("retention")
    if retention is not None and not retention:
        retention["keepLast"] = 7
    return spec


SPECS = {"VectorIndex": vectorindex_specs, "FSDPJob": fsdpjob_specs, "VectorIndexBackup": backup_specs,
         "VectorIndexBackupSchedule": backup_schedule_specs}


@st.composite
def valid_manifests(draw, kind: str | None = None, overrides: Overrides | None = None) -> dict:
    kind = kind or draw(st.sampled_from(sorted(KINDS)))
    spec = draw(SPECS[kind](overrides))
    name = draw(object_names(kind, needs_index_name=kind == "VectorIndex" and "indexName" not in spec))
    return manifest(kind, name, spec)


# ---- invalid manifests: one mutation each -------------------------------------------------


@dataclass(frozen=True)
class Invalid:
    """A manifest with one known defect: the field a rejection must name, and what was done."""

    doc: Any
    field: str
    mutation: str
    # Only the models' rules can see it: the CRD (and so the API server) accepts it.
    model_only: bool = False


def walk(value: Any, schema: dict, path: str) -> Iterator[tuple[str, Any, dict]]:
    """(path, value, schema) of every node of a document that the schema describes."""
    yield path, value, schema
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                yield from walk(item, props[key], join_path(path, key))
            elif isinstance(extra, dict):
                yield from walk(item, extra, join_path(path, f"[{key}]"))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from walk(item, schema["items"], join_path(path, i))


def _nodes(doc: dict) -> list[tuple[str, Any, dict]]:
    schema = SCHEMAS[doc["kind"]]
    return [n for n in walk(doc, schema, "") if n[0].startswith(("spec", "metadata.name"))]


def _set(doc: dict, path: str, value: Any) -> None:
    """Replace the node at `path` (found again by walking, so map keys may hold anything)."""
    parent, key = _locate(doc, path)
    parent[key] = value


def _delete(doc: dict, path: str) -> None:
    parent, key = _locate(doc, path)
    del parent[key]


def _locate(doc: dict, path: str) -> tuple[Any, Any]:
    schema = SCHEMAS[doc["kind"]]
    for node_path, node, node_schema in walk(doc, schema, ""):
        if not isinstance(node, (dict, list)):
            continue
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for key in keys:
            child = join_path(node_path, key if isinstance(node, list) or key in (node_schema.get("properties") or {}) else f"[{key}]")
            if child == path:
                return node, key
    raise KeyError(path)


WRONG_TYPES = {
    "string": [12345, True, ["a"], {"a": "b"}],
    "integer": ["seven", 1.5, True, [1]],
    "number": ["seven", True, [1.0]],
    "boolean": ["yes", 1, [True]],
    "object": ["text", 7, ["a"]],
    "array": ["text", 7, {"a": "b"}],
    "int-or-string": [True, 1.5, ["a"], {"a": "b"}],
}


def _type_of(schema: dict) -> str | None:
    return "int-or-string" if schema.get("x-kubernetes-int-or-string") else schema.get("type")


@st.composite
def wrong_type(draw, doc: dict) -> Invalid:
    nodes = [n for n in _nodes(doc) if n[0] != "spec" and _type_of(n[2]) in WRONG_TYPES]
    path, _, schema = draw(st.sampled_from(nodes))
    _set(doc, path, draw(st.sampled_from(WRONG_TYPES[_type_of(schema)])))
    return Invalid(doc, path, "wrong-type")


def _range_breakers(value: Any, schema: dict) -> list[Any]:
    out: list[Any] = []
    if "enum" in schema:
        out.append("not-" + str(schema["enum"][0]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        step = 1 if isinstance(value, int) else 0.5
        if "minimum" in schema:
            out.append(schema["minimum"] if schema.get("exclusiveMinimum") else schema["minimum"] - step)
        if "maximum" in schema:
            out.append(schema["maximum"] if schema.get("exclusiveMaximum") else schema["maximum"] + step)
    if isinstance(value, str):
        pattern = schema.get("pattern")
        out += printable_outside(pattern, schema.get("minLength", 0), schema.get("maxLength"))
        if pattern and pattern.endswith("$") and matches(pattern, value):
            out.append(value + "\n")
    if isinstance(value, list) and schema.get("items") is not None:
        if schema.get("minItems"):
            out.append([])
        if "maxItems" in schema and value:
            out.append([copy.deepcopy(value[0]) for _ in range(schema["maxItems"] + 1)])
    if isinstance(value, dict) and "maxProperties" in schema:
        out.append({f"k{i}": "v" for i in range(schema["maxProperties"] + 1)})
    return out


@st.composite
def out_of_range(draw, doc: dict) -> Invalid:
    nodes = [(p, v, s) for p, v, s in _nodes(doc) if p and _range_breakers(v, s)]
    path, value, schema = draw(st.sampled_from(nodes))
    _set(doc, path, draw(st.sampled_from(_range_breakers(value, schema))))
    return Invalid(doc, path, "out-of-range")


@st.composite
def unknown_field(draw, doc: dict) -> Invalid:
    closed = [
        (p, v, s) for p, v, s in _nodes(doc)
        if isinstance(v, dict) and s.get("properties") and not s.get("x-kubernetes-preserve-unknown-fields")
    ]
    path, value, schema = draw(st.sampled_from(closed))
    name = draw(st.sampled_from(["unknownField", "replica", "Dimension", "spec", "x-extra"]).filter(lambda n: n not in schema["properties"]))
    value[name] = draw(st.sampled_from([1, "x", {"a": 1}]))
    return Invalid(doc, join_path(path, name), "unknown-field")


@st.composite
def bad_key(draw, doc: dict) -> Invalid:
    """A map key its key rule refuses (tag keys, label keys, resource names)."""
    maps = [(p, v, s) for p, v, s in _nodes(doc) if isinstance(v, dict) and key_constraints(s)[0]]
    if not maps:
        return draw(bad_name(doc))
    path, value, schema = draw(st.sampled_from(maps))
    pattern, low, high = key_constraints(schema)
    key = draw(st.sampled_from(printable_outside(pattern, max(low, 1), high)))
    value[key] = draw(values(schema["additionalProperties"]))
    return Invalid(doc, join_path(path, f"[{key}]"), "bad-key")


@st.composite
def missing_required(draw, doc: dict) -> Invalid:
    options = [
        (p, key) for p, v, s in _nodes(doc) if isinstance(v, dict) for key in s.get("required", []) if key in v
    ]
    if not options:
        del doc["spec"]
        return Invalid(doc, "spec", "missing-required")
    path, key = draw(st.sampled_from(options))
    _delete(doc, join_path(path, key))
    return Invalid(doc, join_path(path, key), "missing-required")


@st.composite
def bad_name(draw, doc: dict) -> Invalid:
    limit = SCHEMAS[doc["kind"]]["properties"]["metadata"]["properties"]["name"]["maxLength"]
    bad = ["", "Upper", "under_score", "has space", "-lead", "trail-", "dots..dots", "x" * (limit + 1)]
    if doc["kind"] == "FSDPJob":
        bad.append("1starts-with-digit")
        bad.append("dotted.name")
    elif doc["kind"] == "VectorIndex" and "indexName" not in doc["spec"]:
        bad.append("dotted.name")  # a valid object name, but not a valid index name
        bad.append("y" * (INDEX_NAME_MAX + 1))
    doc["metadata"]["name"] = draw(st.sampled_from(bad))
    return Invalid(doc, "metadata.name", "bad-name")


@st.composite
def vectorindex_rule(draw, doc: dict) -> Invalid:
    spec = doc["spec"]
    rule = draw(st.sampled_from(["two-types", "no-type", "sparse-dimension", "sparse-metric", "sparse-pod", "dense-no-dimension",
                                 "reserved-tag", "pods-product", "hybrid-metric", "hybrid-pod", "capacity-pod",
                                 "capacity-incomplete", "capacity-on-demand-sized", "embed-dimension", "embed-byoc",
                                 "text-embed", "text-pod", "text-stop-words", "text-vector-name", "names-sparse",
                                 "restore-two-sources", "restore-pod"]))
    for kind in ("serverless", "pod", "byoc", "embed", "textFields", "fieldNames", "restoreFrom"):
        spec.pop(kind, None)
    serverless = {"cloud": "aws", "region": "us-east-1"}
    spec["serverless"] = serverless
    if rule.startswith(("text", "names")):
        return _declared_fields_rule(doc, rule)
    if rule == "restore-two-sources":
        spec["restoreFrom"] = {"backupName": "monday", "backupId": "b-1"}
        return Invalid(doc, "spec.restoreFrom", rule)
    if rule == "restore-pod":
        spec.update(vectorType="dense", dimension=8, restoreFrom={"backupName": "monday"})
        spec.pop("metric", None)
        spec.pop("readCapacity", None)
        del spec["serverless"]
        spec["pod"] = {"environment": "us-east1-gcp"}
        return Invalid(doc, "spec.restoreFrom", rule)
    if rule.startswith("embed"):
        spec.update(vectorType="dense", embed={"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}})
        spec.pop("metric", None)
        spec.pop("readCapacity", None)
        if rule == "embed-dimension":
            spec["dimension"] = 8
        else:
            spec.pop("dimension", None)
            del spec["serverless"]
            spec["byoc"] = {"environment": "aws-us-east-1-b921"}
        return Invalid(doc, "spec.embed", rule)
    if rule == "two-types":
        spec["byoc"] = {"environment": "aws-us-east-1-b921"}
        return Invalid(doc, "spec", rule)
    if rule == "no-type":
        del spec["serverless"]
        return Invalid(doc, "spec", rule)
    if rule.startswith("sparse"):
        spec["vectorType"] = "sparse"
        spec.pop("dimension", None)
        spec.pop("metric", None)
        if rule == "sparse-dimension":
            spec["dimension"] = 8
            return Invalid(doc, "spec.dimension", rule)
        if rule == "sparse-metric":
            spec["metric"] = draw(st.sampled_from(["cosine", "euclidean"]))
            return Invalid(doc, "spec.metric", rule)
        del spec["serverless"]
        spec["pod"] = {"environment": "us-east1-gcp"}
        return Invalid(doc, "spec.pod", rule)
    spec.pop("readCapacity", None)
    if rule.startswith("hybrid"):
        spec.update(vectorType="hybrid", dimension=8)
        spec.pop("metric", None)
        if rule == "hybrid-metric":
            spec["metric"] = draw(st.sampled_from(["cosine", "euclidean"]))
            return Invalid(doc, "spec.metric", rule)
        del spec["serverless"]
        spec["pod"] = {"environment": "us-east1-gcp"}
        return Invalid(doc, "spec.vectorType", rule)
    spec["vectorType"] = "dense"
    spec.setdefault("dimension", 8)
    if rule.startswith("capacity"):
        if rule == "capacity-pod":
            del spec["serverless"]
            spec["pod"] = {"environment": "us-east1-gcp"}
            spec["readCapacity"] = {"mode": "OnDemand"}
        elif rule == "capacity-incomplete":
            full = {"mode": "Dedicated", "nodeType": "b1", "replicas": 1, "shards": 1}
            del full[draw(st.sampled_from(["nodeType", "replicas", "shards"]))]
            spec["readCapacity"] = full
        else:
            spec["readCapacity"] = {"mode": "OnDemand", draw(st.sampled_from(["nodeType", "replicas", "shards"])): 1}
            if "nodeType" in spec["readCapacity"]:
                spec["readCapacity"]["nodeType"] = "t1"
        return Invalid(doc, "spec.readCapacity", rule)
    if rule == "dense-no-dimension":
        del spec["dimension"]
        return Invalid(doc, "spec.dimension", rule)
    if rule == "reserved-tag":
        spec.setdefault("tags", {})["pinery-owner"] = "someone"
        return Invalid(doc, "spec.tags[pinery-owner]", rule)
    del spec["serverless"]
    spec["pod"] = {"environment": "us-east1-gcp", "replicas": 2, "shards": 2, "pods": draw(st.sampled_from([1, 3, 5]))}
    return Invalid(doc, "spec.pod.pods", rule)


def _declared_fields_rule(doc: dict, rule: str) -> Invalid:
    spec = doc["spec"]
    spec.pop("readCapacity", None)
    spec.update(vectorType="dense", dimension=8, textFields=[{"name": "body"}])
    spec.pop("metric", None)
    if rule == "text-embed":
        spec.pop("dimension")
        spec["embed"] = {"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}}
        return Invalid(doc, "spec.textFields", rule)
    if rule == "text-pod":
        del spec["serverless"]
        spec["pod"] = {"environment": "us-east1-gcp"}
        return Invalid(doc, "spec.textFields", rule)
    if rule == "text-stop-words":
        spec["textFields"] = [{"name": "body", "stopWords": True}]
        return Invalid(doc, "spec.textFields[0].stopWords", rule)
    if rule == "text-vector-name":
        spec["textFields"] = [{"name": DEFAULT_DENSE_FIELD}]
        return Invalid(doc, "spec.textFields[0].name", rule)
    spec["fieldNames"] = {"sparse": DEFAULT_SPARSE_FIELD + "2"}
    return Invalid(doc, "spec.fieldNames.sparse", rule)


# Rules of the built-in trainer's configuration, which only the models check.
MODEL_ONLY_RULES = ("trainer-warmup", "trainer-batch", "trainer-shape")
FSDPJOB_RULES = (
    "reserved-env", "env-value-and-source", "command-and-trainer", "elastic-min-max", "elastic-num-nodes",
    "reserved-volume", "reserved-mount", "unknown-volume", "gang-timeout", "gang-queue", *MODEL_ONLY_RULES,
)


@st.composite
def fsdpjob_rule(draw, doc: dict, rules: tuple[str, ...] = FSDPJOB_RULES) -> Invalid:
    spec = doc["spec"]
    rule = draw(st.sampled_from(rules))
    if rule == "reserved-env":
        env = spec.setdefault("env", [])
        env.append({"name": draw(st.sampled_from(sorted(RESERVED_ENV) + ["PET_NNODES", "PINERY_CHECKPOINT_DIR"])), "value": "1"})
        return Invalid(doc, f"spec.env[{len(env) - 1}].name", rule)
    if rule == "env-value-and-source":
        env = spec.setdefault("env", [])
        env.append({"name": "TOKEN", "value": "inline", "valueFrom": draw(st.sampled_from(ENV_SOURCES))})
        return Invalid(doc, f"spec.env[{len(env) - 1}].valueFrom", rule)
    if rule == "command-and-trainer":
        spec["command"] = ["python", "train.py"]
        spec["trainer"] = {"steps": 10}
        return Invalid(doc, "spec.trainer", rule)
    if rule == "elastic-min-max":
        spec["numNodes"] = 2
        spec["elastic"] = {"minNodes": 3, "maxNodes": 2}
        return Invalid(doc, "spec.elastic.minNodes", rule)
    if rule == "elastic-num-nodes":
        spec["numNodes"] = draw(st.sampled_from([1, 5]))
        spec["elastic"] = {"minNodes": 2, "maxNodes": 4}
        return Invalid(doc, "spec.numNodes", rule)
    if rule == "gang-timeout":
        spec["gang"] = {"scheduler": "volcano", "scheduleTimeoutSeconds": 60}
        return Invalid(doc, "spec.gang.scheduleTimeoutSeconds", rule)
    if rule == "gang-queue":
        spec["gang"] = {"scheduler": "coscheduling", "queue": "research"}
        return Invalid(doc, "spec.gang.queue", rule)
    template = spec.setdefault("podTemplate", {})
    if rule in ("reserved-volume", "reserved-mount", "unknown-volume"):
        volumes = template.setdefault("volumes", [])
        mounts = template.setdefault("volumeMounts", [])
        if rule == "reserved-volume":
            volumes.append({"name": "pinery-extra", "emptyDir": {}})
            return Invalid(doc, f"spec.podTemplate.volumes[{len(volumes) - 1}].name", rule)
        if rule == "reserved-mount":
            volumes.append({"name": "scratch-shm", "emptyDir": {}})
            spec["shmSize"] = "1Gi"
            mounts.append({"name": "scratch-shm", "mountPath": SHM_PATH})
            return Invalid(doc, f"spec.podTemplate.volumeMounts[{len(mounts) - 1}].mountPath", rule)
        mounts.append({"name": "no-such-volume", "mountPath": "/data/missing"})
        return Invalid(doc, f"spec.podTemplate.volumeMounts[{len(mounts) - 1}].name", rule)
    spec.pop("command", None)
    trainer = spec.setdefault("trainer", {})
    if rule == "trainer-warmup":
        trainer.update(steps=10, optim={"warmupSteps": 11})
        return Invalid(doc, "spec.trainer.optim.warmupSteps", rule, model_only=True)
    if rule == "trainer-batch":
        trainer.update(microBatchSize=4, globalBatchSize=10)
        return Invalid(doc, "spec.trainer.globalBatchSize", rule, model_only=True)
    trainer["model"] = {"preset": "tiny", "heads": 3}
    return Invalid(doc, "spec.trainer.model.heads", rule, model_only=True)


@st.composite
def backup_rule(draw, doc: dict) -> Invalid:
    spec = doc["spec"]
    rule = draw(st.sampled_from(["two-sources", "no-source", "key-without-index"]))
    for key in ("vectorIndexName", "indexName", "apiKeySecretRef"):
        spec.pop(key, None)
    if rule == "two-sources":
        spec.update(vectorIndexName="docs", indexName="docs")
    elif rule == "key-without-index":
        spec.update(vectorIndexName="docs", apiKeySecretRef={"name": "key"})
        return Invalid(doc, "spec.apiKeySecretRef", rule)
    return Invalid(doc, "spec", rule)


@st.composite
def backup_schedule_rule(draw, doc: dict) -> Invalid:
    spec = doc["spec"]
    rule = draw(st.sampled_from(["retention-empty", "tz-prefix", "bad-cron", "bad-zone", "zero-age"]))
    spec["schedule"], spec["timeZone"] = "0 3 * * *", "UTC"
    spec.pop("retention", None)
    if rule == "retention-empty":
        spec["retention"] = {}
        return Invalid(doc, "spec.retention", rule)
    if rule == "tz-prefix":
        spec["schedule"] = "CRON_TZ=Europe/Berlin 0 3 * * *"
        return Invalid(doc, "spec.schedule", rule)
    # Only the models parse cron, zones and durations: the API server accepts these.
    if rule == "bad-cron":
        spec["schedule"] = draw(st.sampled_from(["0 25 * * *", "* * * *", "0 0 31 13 *", "@fortnightly", "0 0 * * 7"]))
        return Invalid(doc, "spec.schedule", rule, model_only=True)
    if rule == "bad-zone":
        spec["timeZone"] = draw(st.sampled_from(["Mars/Olympus", "Local", "Europe/Berlin "]))
        return Invalid(doc, "spec.timeZone", rule, model_only=True)
    spec["retention"] = {"maxAge": "0d"}
    return Invalid(doc, "spec.retention.maxAge", rule, model_only=True)


RULES = {"VectorIndex": vectorindex_rule, "FSDPJob": fsdpjob_rule, "VectorIndexBackup": backup_rule,
         "VectorIndexBackupSchedule": backup_schedule_rule}
MUTATIONS = ("wrong-type", "out-of-range", "bad-key", "unknown-field", "missing-required", "bad-name", "rule")


@st.composite
def invalid_manifests(draw, kind: str | None = None) -> Invalid:
    doc = copy.deepcopy(draw(valid_manifests(kind)))
    mutation = draw(st.sampled_from(MUTATIONS))
    make = {
        "wrong-type": wrong_type,
        "out-of-range": out_of_range,
        "bad-key": bad_key,
        "unknown-field": unknown_field,
        "missing-required": missing_required,
        "bad-name": bad_name,
        "rule": RULES[doc["kind"]],
    }[mutation]
    return draw(make(doc))


# ---- text: YAML and JSON streams, broken ones included ------------------------------------


def to_yaml(docs: list[Any]) -> str:
    """YAML as a user writes it for kubectl (strings kubectl would read as numbers are quoted)."""
    return kube_yaml.dump_all(docs, allow_unicode=True)


NOT_MAPPINGS = st.one_of(
    st.sampled_from([[1, 2], "just text", 42, 3.5, True, [{"kind": "VectorIndex"}]]),
    st.just({"kind": "List", "items": ["not an object", 7]}),
)

BREAKERS = [
    ("unclosed flow mapping", lambda text: "spec: {numNodes: 1\n" + text),
    ("tab indentation", lambda text: text.replace("\n  ", "\n\t", 1)),
    ("duplicate document start", lambda text: "--- --- \n" + text),
    ("stray colon", lambda text: text.replace(":", ": :", 1)),
    ("unterminated quote", lambda text: text + '\nextra: "never closed\n'),
    ("bad indentation", lambda text: text.replace("\nspec:", "\n   spec:\n bad: [", 1)),
]


@st.composite
def broken_yaml(draw) -> str:
    text = to_yaml([draw(valid_manifests())])
    _, breaker = draw(st.sampled_from(BREAKERS))
    return breaker(text)


def as_json(doc: Any) -> str:
    return json.dumps(doc)
