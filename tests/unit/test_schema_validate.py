"""pinery.schema.value_validation / prune / cel: the API server's semantics, table-driven."""

import pytest

from pinery.schema import cel
from pinery.schema.prune import apply_defaults, prune
from pinery.schema.value_validation import validate

OBJ = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1, "exclusiveMaximum": True},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "flag": {"type": "boolean"},
        "when": {"type": "string", "format": "date-time"},
        "tags": {"type": "object", "maxProperties": 2, "additionalProperties": {"type": "string"}},
        "list": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}},
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "map": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "integer", "default": 0}}},
        },
        "ios": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"known": {"type": "integer"}}},
        "maybe": {"type": "string", "nullable": True},
    },
}


@pytest.mark.parametrize(
    "value, path, fragment",
    [
        ({}, "name", "Required value"),
        ({"name": ""}, "name", "at least 1 chars long"),
        ({"name": "toolong"}, "name", "Too long: may not be more than 5"),
        ({"name": "AB"}, "name", "should match '^[a-z]+$'"),
        ({"name": 5}, "name", "must be of type string"),
        ({"name": "a", "count": 0}, "count", "greater than or equal to 1"),
        ({"name": "a", "count": 11}, "count", "less than or equal to 10"),
        ({"name": "a", "count": True}, "count", "must be of type integer"),
        ({"name": "a", "count": 1.5}, "count", "must be of type integer"),
        ({"name": "a", "ratio": 0}, "ratio", "should be greater than 0"),
        ({"name": "a", "ratio": 1}, "ratio", "should be less than 1"),
        ({"name": "a", "mode": "c"}, "mode", 'Unsupported value: "c": supported values: "a", "b"'),
        ({"name": "a", "flag": "true"}, "flag", "must be of type boolean"),
        ({"name": "a", "when": "yesterday"}, "when", "must be of type date-time"),
        ({"name": "a", "tags": {"x": "1", "y": "2", "z": "3"}}, "tags", "must have at most 2"),
        ({"name": "a", "tags": {"x": 1}}, "tags[x]", "must be of type string"),
        ({"name": "a", "list": []}, "list", "at least 1 items"),
        ({"name": "a", "list": [1, 2, 3]}, "list", "must have at most 2 items"),
        ({"name": "a", "list": [1, "2"]}, "list[1]", "must be of type integer"),
        ({"name": "a", "set": ["x", "x"]}, "set[1]", "Duplicate value"),
        ({"name": "a", "map": [{"k": "x"}, {"k": "x"}]}, "map[1]", "Duplicate value"),
        ({"name": "a", "map": [{"v": 1}]}, "map[0].k", "Required value"),
        ({"name": "a", "ios": 1.5}, "ios", "integer-or-string"),
        ({"name": "a", "free": {"known": "x"}}, "free.known", "must be of type integer"),
        ({"name": "a", "flag": None}, "flag", "must be of type boolean"),
    ],
)
def test_validation_errors(value, path, fragment):
    errors = validate(OBJ, value)
    assert any(e.path == path and fragment in e.message for e in errors), errors


@pytest.mark.parametrize(
    "value, message",
    [
        # kube-openapi validate/type.go: what was got is named by its JSON type, as the API
        # server names it, never by the decoder's type (str, int, float, bool, list, dict); the
        # shown value is that type too (apiextensions-apiserver kubeOpenAPIResultToFieldErrors)
        ({"name": 5}, 'Invalid value: "integer": name in body must be of type string: "integer"'),
        ({"name": 1.5}, 'Invalid value: "number": name in body must be of type string: "number"'),
        ({"name": True}, 'Invalid value: "boolean": name in body must be of type string: "boolean"'),
        ({"name": [1]}, 'Invalid value: "array": name in body must be of type string: "array"'),
        ({"name": {"a": 1}}, 'Invalid value: "object": name in body must be of type string: "object"'),
        ({"name": "a", "count": "3"}, 'Invalid value: "string": count in body must be of type integer: "string"'),
        ({"name": "a", "ratio": "x"}, 'Invalid value: "string": ratio in body must be of type number: "string"'),
        ({"name": "a", "flag": None}, 'Invalid value: "null": flag in body must be of type boolean: "null"'),
    ],
)
def test_type_errors_name_json_types(value, message):
    assert [e.message for e in validate(OBJ, value) if e.message.startswith("Invalid value")] == [message]


@pytest.mark.parametrize(
    "value",
    [
        {"name": "a"},
        {"name": "abcde", "count": 10, "ratio": 0.5, "mode": "b", "flag": False},
        {"name": "a", "when": "2026-11-30T10:00:00Z", "tags": {"x": "1"}, "list": [1, 2]},
        {"name": "a", "set": ["x", "y"], "map": [{"k": "x"}, {"k": "y", "v": 2}]},
        {"name": "a", "ios": 3}, {"name": "a", "ios": "50%"},
        {"name": "a", "free": {"known": 1, "anything": {"goes": [1]}}},
        {"name": "a", "maybe": None},
    ],
)
def test_valid_values(value):
    assert validate(OBJ, value) == []


def test_prune_drops_unknown_fields_and_reports_them():
    value = {"name": "a", "extra": 1, "free": {"anything": 1}, "map": [{"k": "x", "junk": 2}], "tags": {"any": "x"}}
    pruned, unknown = prune(OBJ, value)
    assert unknown == ["extra", "map[0].junk"]
    assert pruned == {"name": "a", "free": {"anything": 1}, "map": [{"k": "x"}], "tags": {"any": "x"}}
    assert value["extra"] == 1  # input untouched


def test_prune_drops_nulls_of_non_nullable_fields_only():
    pruned, unknown = prune(OBJ, {"name": "a", "count": None, "maybe": None})
    assert pruned == {"name": "a", "maybe": None} and unknown == []


def test_prune_keeps_root_metadata_untouched():
    schema = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": {"type": "object", "properties": {}}}}
    obj = {"apiVersion": "v", "kind": "K", "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"gone": 1}}
    pruned, unknown = prune(schema, obj, root=True)
    assert pruned["metadata"] == obj["metadata"] and pruned["apiVersion"] == "v"
    assert unknown == ["spec.gone"]


def test_defaults_fill_absent_fields_recursively():
    value = apply_defaults(OBJ, {"name": "a", "map": [{"k": "x"}, {"k": "y", "v": 5}]})
    assert value["count"] == 1
    assert value["map"] == [{"k": "x", "v": 0}, {"k": "y", "v": 5}]


def test_defaults_do_not_override_given_values():
    assert apply_defaults(OBJ, {"name": "a", "count": 7})["count"] == 7


RULES = {
    "type": "object",
    "properties": {
        "a": {"type": "integer"},
        "b": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    },
    "x-kubernetes-validations": [
        {"rule": "!has(self.a) || !has(self.b) || self.a < self.b", "message": "a must be below b", "fieldPath": ".a"},
        {"rule": "!has(oldSelf.a) || self.a == oldSelf.a", "message": "a is immutable"},
    ],
}


def test_cel_rules_are_evaluated_with_field_path():
    errors = validate(RULES, {"a": 3, "b": 2})
    assert [(e.path, e.message.split(": ")[-1]) for e in errors] == [("a", "a must be below b")]


def test_transition_rules_run_only_on_update():
    assert validate(RULES, {"a": 1}) == []
    assert validate(RULES, {"a": 1}, old={"a": 1}) == []
    errors = validate(RULES, {"a": 2}, old={"a": 1})
    assert [e.message.split(": ")[-1] for e in errors] == ["a is immutable"]


def test_rules_can_be_switched_off():
    assert validate(RULES, {"a": 3, "b": 2}, rules=False) == []


def test_cel_helpers():
    assert cel.is_transition_rule("self == oldSelf")
    assert not cel.is_transition_rule("self.oldSelfish == 1")
    assert cel.evaluate("self.x > 1", {"x": 2})
    assert not cel.evaluate("self.missing > 1", {"x": 2})  # evaluation error = failure
    with pytest.raises(cel.CelCompileError):
        cel.compile_rule("self.x >")


def test_updates_ratchet_unchanged_values():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}, "m": {"type": "integer", "maximum": 5}}}
    assert validate(schema, {"n": 9, "m": 1}, old={"n": 9, "m": 0}) == []  # n was already invalid and did not change
    assert [e.path for e in validate(schema, {"n": 9, "m": 7}, old={"n": 9, "m": 0})] == ["m"]
    assert [e.path for e in validate(schema, {"n": 9}, old={"n": 8})] == ["n"]


@pytest.mark.parametrize("value, text", [
    # Go's %v of a float64: %g with the shortest digits, the exponent form below 1e-4 and from 1e+06
    (1.0, "1"), (0.5, "0.5"), (1e-08, "1e-08"), (0.0001, "0.0001"), (123456.0, "123456"),
    (1e6, "1e+06"), (123456789.0, "1.23456789e+08"), (-2.5e-05, "-2.5e-05"), (0.0, "0"),
])
def test_floats_are_printed_as_go_prints_them(value, text):
    from pinery.schema.field import go_float, invalid

    assert go_float(value) == text
    assert str(invalid("spec.x", value, "d")) == f"spec.x: Invalid value: {text}: d"
