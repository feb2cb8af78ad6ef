"""YAML bodies read as the API server reads them (pinery.local.apiserver.yaml_body).

Cases come from sigs.k8s.io/yaml yaml_test.go (TestYAMLToJSON) and from goyaml v2's resolve.go
rules (go.yaml.in/yaml/v2, the fork sigs.k8s.io/yaml parses with); `expected` is what decoding
the JSON that YAMLToJSON produces gives.
"""

from __future__ import annotations

import re

import pytest

from pinery.local.apiserver.yaml_body import YamlBodyError, decode, is_json, json_numbers

# sigs.k8s.io/yaml yaml_test.go TestYAMLToJSON
SIGS_YAML = [
    ("t: a\n", {"t": "a"}),
    ("t: null\n", {"t": None}),
    ("t: True\n", {"t": True}),
    ("t: no\n", {"t": False}),
    ("t: 9007199254740993\n", {"t": 9007199254740993}),
    ("t: 1000000000000000000000000000000000000\n", {"t": 1e36}),
    ("t: ", {"t": None}),
    ("True: a", {"true": "a"}),
    ("no: a", {"false": "a"}),
    ("1: a", {"1": "a"}),
    ("1.2: a", {"1.2": "a"}),
    ("1000000000000000000000000000000000000: a", {"1e+36": "a"}),
    ("1e+36: a", {"1e+36": "a"}),
    ('"1e+36": a\n', {"1e+36": "a"}),
    ('"1.2": a\n', {"1.2": "a"}),
    ("- t: a\n", [{"t": "a"}]),
]

# goyaml v2 resolve.go: the resolve map (YAML 1.1 bools, nulls, special floats), then ints
# (ParseInt base 0, `_` removed), then yamlStyleFloat; decode.go keeps timestamps as text.
GOYAML_V2 = [
    ("v: 1e-08", 1e-08),  # the chart's optimizer eps; PyYAML's SafeLoader reads a string
    ("v: 1.0e-08", 1e-08),
    ("v: 6.8523e+5", 685230),  # integral floats print as ints in Go's JSON
    ("v: 1.0", 1),
    ("v: 0.1", 0.1),
    ("v: .5", 0.5),
    ("v: -.5", -0.5),
    ("v: 1e400", "1e400"),  # out of range for ParseFloat: stays a string
    ("v: 0x1F", 31),
    ("v: 0o17", 15),
    ("v: 02472256", 685230),
    ("v: 08", 8),  # not octal, but a float 8
    ("v: 0b1010", 10),
    ("v: -0b1000", -8),
    ("v: 1_000", 1000),
    ("v: +12", 12),
    ("v: -0", 0),
    ("v: 18446744073709551615", 18446744073709551615.0),  # uint64, beyond int64: a float in JSON
    ("v: y", True),
    ("v: Yes", True),
    ("v: ON", True),
    ("v: n", False),
    ("v: off", False),
    ("v: TRUE", True),
    ("v: tRUE", "tRUE"),
    ("v: ~", None),
    ("v: NULL", None),
    ("v: 2001-12-14", "2001-12-14"),
    ("v: 2001-12-14T21:59:43.10Z", "2001-12-14T21:59:43.10Z"),
    ("v: '1'", "1"),
    ('v: "true"', "true"),
    ("v: |\n  123\n", "123\n"),
    ("v: !!str 123", "123"),
    ("v: !!float 1", 1),
    ("v: !!binary aGVsbG8=", "hello"),
    ("v: !custom 12", "12"),
    ("v: 1.2.3", "1.2.3"),
]


@pytest.mark.parametrize(("text", "expected"), SIGS_YAML)
def test_sigs_yaml_yaml_to_json(text, expected):
    assert decode(text.encode()) == expected


@pytest.mark.parametrize(("text", "expected"), GOYAML_V2)
def test_goyaml_v2_scalars(text, expected):
    value = decode(text.encode())["v"]
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("v: .nan", "json: unsupported value: NaN"),  # json.Marshal cannot write NaN or Inf
        ("v: .inf", "json: unsupported value: +Inf"),
        ("v: -.Inf", "json: unsupported value: -Inf"),
        ("~: a", "unsupported map key of type: <nil>"),
        ("v: !!int abc", "cannot decode !!str `abc` as a !!int"),
        ("v: [a", "yaml: "),
    ],
)
def test_errors(text, message):
    with pytest.raises(YamlBodyError, match=re.escape(message)):
        decode(text.encode())


def test_merge_keys_follow_document_order():
    # decode.go mapping()/merge(): a merge writes where it stands; of a list, earlier maps win
    text = b"a: &a {p: 1, q: 1}\nb: &b {p: 2, r: 2}\nc:\n  p: 0\n  <<: [*a, *b]\n  q: 9\n"
    assert decode(text)["c"] == {"p": 1, "q": 9, "r": 2}


def test_anchor_containing_itself_is_an_error():
    with pytest.raises(YamlBodyError, match="contains itself"):
        decode(b"a: &a [*a]\n")


def test_first_document_only_and_duplicates():
    duplicates: list[str] = []
    assert decode(b"a: 1\na: 2\n---\nb: 3\n", duplicates) == {"a": 2}
    assert duplicates == ["a"]
    assert decode(b"") is None


def test_json_first_for_the_apply_patch():
    # apimachinery util/yaml ToJSON: a body starting with `{` is JSON; its numbers are then
    # read as YAMLToJSON leaves them
    assert is_json(b'  {"a": 1}') and not is_json(b"a: {b: 1}")
    assert json_numbers({"a": [1.0, 1e-08, 2**64]}) == {"a": [1, 1e-08, float(2**64)]}
