"""`pinery validate` on generated manifests: valid ones pass, every invalid one is refused with
the field named, and nothing (broken YAML, lists, scalars) makes it crash."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pinery.manifest_check import validate_text
from tests.conftest import run_pinery
from tests.fuzz.fieldpaths import names_something, related
from tests.support.budget import share
from tests.support.manifests import (
    NOT_MAPPINGS,
    SCHEMAS,
    as_json,
    broken_yaml,
    invalid_manifests,
    to_yaml,
    valid_manifests,
)

# Mutations of a single field must be reported at exactly that field.
EXACT = ("wrong-type", "out-of-range", "unknown-field", "missing-required", "bad-name")


def assert_paths_exist(problems, doc) -> None:
    schema = SCHEMAS.get(doc.get("kind")) if isinstance(doc, dict) else None
    for p in problems:
        assert names_something(p.path, doc, schema or {}), f"{p} names no field of the document or the schema"


@given(valid_manifests())
def test_valid_manifests_pass(doc):
    for text in (to_yaml([doc]), as_json(doc)):
        problems, valid = validate_text(text)
        assert problems == []
        assert valid == [(doc["kind"], doc["metadata"]["name"])]


@given(invalid_manifests())
def test_invalid_manifests_are_refused_naming_the_field(bad):
    problems, valid = validate_text(to_yaml([bad.doc]))
    assert valid == [], f"{bad.mutation} at {bad.field} was accepted"
    assert problems, f"{bad.mutation} at {bad.field}: no problem reported"
    assert_paths_exist(problems, bad.doc)
    paths = [p.path for p in problems]
    if bad.mutation in EXACT:
        assert bad.field in paths, f"{bad.mutation} at {bad.field}, but the problems name {paths}"
    else:
        assert any(related(p, bad.field) for p in paths), f"{bad.mutation} at {bad.field}, but the problems name {paths}"
    for p in problems:
        assert p.kind == bad.doc["kind"] and p.message


documents = st.one_of(
    valid_manifests().map(lambda d: ("valid", d)),
    invalid_manifests().map(lambda b: ("invalid", b.doc)),
    NOT_MAPPINGS.map(lambda d: ("invalid", d)),
)


@given(st.lists(documents, min_size=1, max_size=4))
def test_streams_report_each_document(docs):
    problems, valid = validate_text(to_yaml([d for _, d in docs]))
    expected_valid = [(d["kind"], d["metadata"]["name"]) for what, d in docs if what == "valid"]
    assert valid == expected_valid
    assert bool(problems) == any(what == "invalid" for what, _ in docs)
    for p in problems:
        assert p.path in ("", "yaml", "kind", "apiVersion", "metadata", "metadata.name") or p.path.startswith("spec")
        assert p.message


@given(broken_yaml(), st.booleans())
def test_broken_yaml_is_a_problem_not_a_crash(text, with_valid_neighbour):
    valid_doc = "apiVersion: pinery.dev/v1alpha1\nkind: FSDPJob\nmetadata: {name: ok}\nspec: {numNodes: 1}\n"
    stream = text + ("\n---\n" + valid_doc if with_valid_neighbour else "")
    problems, valid = validate_text(stream)
    # Whatever the breakage, the neighbour is judged on its own.
    assert (("FSDPJob", "ok") in valid) is with_valid_neighbour
    for p in problems:
        assert p.path in ("", "yaml") or p.path.startswith(("spec", "metadata", "kind", "apiVersion"))
        if p.path == "yaml":
            assert "line" in p.message


@share(0.1)
@given(st.lists(documents, min_size=1, max_size=5), st.booleans())
def test_cli_agrees_with_the_library(tmp_path_factory, docs, broken):
    text = to_yaml([d for _, d in docs]) + ("---\nspec: {a: [\n" if broken else "")
    path = tmp_path_factory.mktemp("cli") / "manifests.yaml"
    path.write_text(text)
    problems, valid = validate_text(text)
    result = run_pinery("validate", "-f", str(path))
    assert "Traceback" not in result.stderr
    assert result.returncode == (1 if problems else 0), result.stderr
    assert result.stderr.splitlines() == [str(p) for p in problems]
    if not problems:
        assert result.stdout.startswith("valid: ")
