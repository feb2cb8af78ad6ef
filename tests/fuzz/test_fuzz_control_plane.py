"""Generated manifests against the local control plane (the CRDs as an API server applies them):
never a 5xx, every invalid object refused naming its field, every valid one accepted, and the
same verdict as `pinery validate`.

Deliberate differences from `pinery validate`, each tested here:
- rules only the models know (the built-in trainer's cross-field rules) are not in the CRD: the
  API server accepts such objects and the operator reports them as InvalidSpec;
- unknown fields are a 400 "strict decoding error" under fieldValidation=Strict (kubectl's
  default), and are dropped with a warning otherwise, exactly as on a real API server;
- metadata of the wrong JSON type cannot be decoded: a 400 naming the field;
- the API server sees the old object, so only it refuses changes of immutable fields.
"""

from __future__ import annotations

import itertools
import re

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from pinery.api import API_VERSION, resource_for_kind
from pinery.api.immutability import changed_immutable_fields
from pinery.manifest_check import validate_object
from pinery.schema.prune import apply_defaults
from tests.fuzz.fieldpaths import dotted, names_something, related
from tests.support.budget import share
from tests.support.manifests import KINDS, NOT_MAPPINGS, SCHEMAS, SPEC_SCHEMAS, invalid_manifests, valid_manifests

pytestmark = pytest.mark.slow

NAMESPACE = "default"


class Api:
    """Raw HTTP to the control plane, over one kept-alive connection."""

    def __init__(self, plane):
        self.plane = plane
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {plane.token}"
        # Per request: a session's own `verify` loses to $REQUESTS_CA_BUNDLE.
        self.verify = str(plane.server.ca_cert)

    def collection(self, kind: str) -> str:
        res = resource_for_kind(kind)
        return f"{self.plane.url}/apis/{API_VERSION}/namespaces/{NAMESPACE}/{res.plural}"

    def send(self, method: str, url: str, body, **params) -> requests.Response:
        response = self.session.request(method, url, json=body, params=params, timeout=10, verify=self.verify)
        assert response.status_code < 500, f"{method} {url}: {response.status_code} {response.text}"
        return response

    def create(self, kind: str, body, **params) -> requests.Response:
        return self.send("POST", self.collection(kind), body, **params)


@pytest.fixture(scope="module")
def api(control_plane_module):
    control_plane_module.install_crds()
    client = Api(control_plane_module)
    yield client
    client.session.close()


def dry_run(api: Api, doc, field_validation: str = "Strict") -> requests.Response:
    kind = doc.get("kind") if isinstance(doc, dict) and resource_for_kind(str(doc.get("kind"))) else "FSDPJob"
    return api.create(kind, doc, dryRun="All", fieldValidation=field_validation)


def causes(response: requests.Response) -> list[dict]:
    return (response.json().get("details") or {}).get("causes") or []


@given(valid_manifests())
def test_valid_manifests_are_accepted(api, doc):
    response = dry_run(api, doc)
    assert response.status_code == 201, response.text
    assert "Warning" not in response.headers
    stored = response.json()
    assert stored["metadata"]["name"] == doc["metadata"]["name"]
    # What the server stores is what `pinery validate` reads: defaults filled in, nothing lost.
    assert stored["spec"] == apply_defaults(SPEC_SCHEMAS[doc["kind"]], doc["spec"])


@given(invalid_manifests())
def test_invalid_manifests_are_refused_naming_the_field(api, bad):
    response = dry_run(api, bad.doc)
    assert validate_object(bad.doc), f"pinery validate accepts {bad.mutation} at {bad.field}"
    if bad.model_only:
        assert response.status_code == 201, response.text
        return
    if bad.mutation == "unknown-field":
        assert response.status_code == 400, response.text
        assert f'unknown field "{bad.field}"' in response.json()["message"]
        lenient = dry_run(api, bad.doc, field_validation="Warn")
        assert lenient.status_code == 201 and f'unknown field \\"{bad.field}\\"' in lenient.headers["Warning"]
        return
    if response.status_code == 400:
        # Decoding errors: metadata of the wrong JSON type, or an object where the schema has
        # none, whose fields are unknown (as pruning sees them on a real API server).
        message = response.json()["message"]
        named = re.findall(r'unknown field "([^"]+)"|Go struct field ObjectMeta\.([\w.]+) ', message)
        assert named and all(related(dotted(a or b), dotted(bad.field)) for a, b in named), f"{bad.mutation} at {bad.field}: {message}"
        return
    assert response.status_code == 422, f"{bad.mutation} at {bad.field}: {response.status_code} {response.text}"
    body = response.json()
    assert body["reason"] == "Invalid" and body["details"]["kind"] == bad.doc["kind"]
    found = causes(response)
    assert found, body
    for cause in found:
        assert cause["message"] and cause["reason"].startswith("Field")
        assert names_something(cause["field"], bad.doc, SCHEMAS[bad.doc["kind"]]), cause
    fields = [c["field"] for c in found]
    assert any(related(f, bad.field) for f in fields), f"{bad.mutation} at {bad.field}, but the causes name {fields}"


weird_bodies = st.one_of(
    NOT_MAPPINGS,
    valid_manifests().map(lambda d: {**d, "metadata": "not-a-mapping"}),
    valid_manifests().map(lambda d: {**d, "spec": ["not", "a", "mapping"]}),
    valid_manifests().map(lambda d: {**d, "kind": "ConfigMap"}),
    valid_manifests().map(lambda d: {**d, "apiVersion": "pinery.dev/v1"}),
    valid_manifests().map(lambda d: {k: v for k, v in d.items() if k != "spec"}),
)


@given(weird_bodies)
def test_malformed_bodies_are_client_errors(api, body):
    response = dry_run(api, body)
    assert response.status_code in (400, 422), response.text
    assert response.json()["kind"] == "Status" and response.json()["message"]


_names = itertools.count()


@share(0.5)
@given(st.sampled_from(sorted(KINDS)).flatmap(lambda k: st.tuples(valid_manifests(k), valid_manifests(k), st.data())))
def test_updates_follow_the_immutability_rules(api, docs):
    first, second, data = docs
    name = f"update-{next(_names)}"
    first = {**first, "metadata": {"name": name}, "spec": _with_index_name(first)}
    # The update keeps some of the old spec and takes some of the new one.
    keep = data.draw(st.sets(st.sampled_from(sorted(second["spec"]) or ["-"])))
    spec = {**first["spec"], **{k: v for k, v in second["spec"].items() if k not in keep}}
    spec = {k: v for k, v in spec.items() if k in second["spec"] or k in keep}
    update = {**first, "spec": spec}
    created = api.create(first["kind"], first)
    assert created.status_code == 201, created.text
    try:
        update["metadata"] = {**update["metadata"], "resourceVersion": created.json()["metadata"]["resourceVersion"]}
        response = api.send("PUT", f"{api.collection(first['kind'])}/{name}", update)
        model = resource_for_kind(first["kind"]).spec_model
        changed = changed_immutable_fields(model, first["spec"], spec)
        invalid = [p for p in validate_object(update) if not p.path.startswith("spec.trainer")]
        if not changed and not invalid:
            assert response.status_code == 200, f"nothing immutable changed, yet: {response.text}"
            return
        assert response.status_code == 422, f"changed {changed}, invalid {invalid}, yet: {response.text}"
        fields = [c["field"] for c in causes(response)]
        expected = [f"spec.{c}" for c in changed] + [p.path for p in invalid]
        assert any(related(f, e) for f in fields for e in expected), (fields, expected)
    finally:
        api.send("DELETE", f"{api.collection(first['kind'])}/{name}", None)


def _with_index_name(doc: dict) -> dict:
    """A VectorIndex renamed for the test keeps its index name valid."""
    if doc["kind"] != "VectorIndex":
        return doc["spec"]
    return {"indexName": doc["metadata"]["name"][:45].strip(".-") or "index", **doc["spec"]}
