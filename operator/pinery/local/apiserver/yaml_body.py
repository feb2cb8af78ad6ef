"""YAML request bodies, read as the API server reads them.

The API server turns a YAML body into JSON before decoding it: `application/yaml` through
apimachinery's runtime/serializer/json (Serializer.Decode with Yaml: yaml.YAMLToJSON), the apply
patch through apiserver's handlers/patch.go (validateAndTranscodePatch: util/yaml.ToJSON, which
passes a body that starts with `{` through as JSON, then util/yaml.Unmarshal). Both are
sigs.k8s.io/yaml, which parses with its go.yaml.in/yaml/v2 fork and then json.Marshal-s the
result. So the rules here are goyaml v2's (resolve.go `resolve`, decode.go) and Go's JSON:

- plain scalars resolve YAML 1.1 style: y/Y/yes/on/... are bools, `1e-08`, `.5`, `.inf` floats,
  `0x1F`, `0o17`, `017`, `0b101`, `1_000` ints, `~`/`null`/empty null; timestamps stay strings
  (decode.go keeps them as text for interface{} targets); quoted and block scalars are strings;
- explicit tags (`!!str 1`, `!!float 1`) resolve as goyaml does; other tags keep the text;
- merge keys (`<<`) merge mappings in document order, a list of maps earlier-first;
- non-string keys become strings (yaml.go convertToJSONableObject: ints in decimal, floats as
  Go's FormatFloat(f, 'g', -1, 32), bools as true/false; null and uint64 keys are errors);
- numbers come out as the JSON decoder would see Go's json.Marshal output: a float with an
  integral value in [1e-6, 1e21) prints without a fraction and decodes as an int, and ints that
  do not fit int64 decode as floats (apimachinery util/json ConvertMapNumbers); NaN and
  infinities cannot be marshalled (`json: unsupported value: NaN`);
- only the first document is read (yaml.Unmarshal).

PyYAML does the scanning and composing; its own resolver (YAML 1.1 with other rules) is
replaced so that each untagged plain scalar is resolved here.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from typing import Any

import yaml

_PLAIN = "!pinery/plain"  # the tag this loader gives untagged plain scalars
_TAG = "tag:yaml.org,2002:"

_BOOLS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
}
_NULLS = ("", "~", "null", "Null", "NULL")
_SPECIAL_FLOATS = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# goyaml's allowedTimestampFormats, as shapes: date, then an optional T/t/space time part.
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?")
_INT64 = (-(1 << 63), (1 << 63) - 1)


class YamlBodyError(ValueError):
    """A body the API server's YAML-to-JSON conversion rejects; the text is goyaml's/Go's."""


class _Loader(yaml.SafeLoader):
    """PyYAML's scanner and composer; every untagged plain scalar is left for `_resolve`."""

    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            return _PLAIN
        return super().resolve(kind, value, implicit)


def is_json(raw: bytes) -> bool:
    """util/yaml IsJSONBuffer: after leading white space, the body starts with `{`."""
    return raw.lstrip().startswith(b"{")


def decode(raw: bytes, duplicates: list[str] | None = None) -> Any:
    """The JSON-shaped value of a YAML body (first document); repeated keys go to `duplicates`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlBodyError(f"yaml: invalid leading UTF-8 octet: {exc}") from None
    loader = _Loader(text)
    try:
        node = _first_node(loader)
    except yaml.YAMLError as exc:
        raise YamlBodyError(f"yaml: {_one_line(exc)}") from None
    finally:
        loader.dispose()
    if node is None:
        return None
    return _Converter(duplicates).value(node)


def json_numbers(value: Any) -> Any:
    """A decoded JSON body with numbers as YAMLToJSON leaves them (the apply path re-reads JSON
    as YAML): integral floats become ints, ints beyond int64 floats."""
    if isinstance(value, dict):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_numbers(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
    return value


def _first_node(loader: _Loader) -> yaml.Node | None:
    """The first document's node, as yaml.Unmarshal reads only the first document."""
    loader.get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        return None
    return loader.compose_document()


def _one_line(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    return f"line {mark.line + 1}: {problem}" if mark else problem


class _Converter:
    def __init__(self, duplicates: list[str] | None) -> None:
        self.duplicates = duplicates if duplicates is not None else []
        self.active: set[int] = set()  # nodes being converted: an alias inside its own anchor

    def value(self, node: yaml.Node) -> Any:
        if id(node) in self.active:
            raise YamlBodyError(f"yaml: anchor value contains itself (line {node.start_mark.line + 1})")
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.ScalarNode):
                return _json_value(_scalar(node))
            if isinstance(node, yaml.SequenceNode):
                return [self.value(item) for item in node.value]
            out: dict[str, Any] = {}
            self._mapping(node, out)
            return out
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, out: dict[str, Any], merging: bool = False) -> None:
        # decode.go mapping(): in document order; a merge writes its keys where it stands.
        for key_node, value_node in node.value:
            if _is_merge(key_node):
                self._merge(value_node, out)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlBodyError(f"yaml: line {key_node.start_mark.line + 1}: invalid map key")
            key = _key_string(_scalar(key_node), value_node)
            if key in out and not merging:
                self.duplicates.append(key)
            out[key] = self.value(value_node)

    def _merge(self, node: yaml.Node, out: dict[str, Any]) -> None:
        # decode.go merge(): a map, or a list of maps stepped backwards (earlier ones win).
        maps = [node] if isinstance(node, yaml.MappingNode) else node.value if isinstance(node, yaml.SequenceNode) else None
        if maps is None or not all(isinstance(m, yaml.MappingNode) for m in maps):
            raise YamlBodyError("yaml: map merge requires map or sequence of maps as the value")
        for item in reversed(maps):
            if id(item) in self.active:
                raise YamlBodyError("yaml: anchor value contains itself")
            self.active.add(id(item))
            try:
                self._mapping(item, out, merging=True)
            finally:
                self.active.discard(id(item))


def _is_merge(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == "<<" and node.tag in (_PLAIN, _TAG + "merge")


def _scalar(node: yaml.ScalarNode) -> Any:
    tag = node.tag
    if tag == _PLAIN:
        return _resolve("", node.value)
    if tag.startswith(_TAG):
        short = "!!" + tag[len(_TAG):]
        if short == "!!binary":
            try:
                return base64.b64decode("".join(node.value.split()), validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                raise YamlBodyError("yaml: !!binary value contains invalid base64 data") from None
        if short in ("!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp"):
            return _resolve(short, node.value)
    return node.value  # other tags: goyaml keeps the text


def _resolve(tag: str, text: str) -> Any:
    """goyaml v2 resolve(): the value of a plain scalar (tag "") or of one with an explicit tag."""
    rtag, out = _resolve_plain(text) if tag != "!!str" else ("!!str", text)
    if tag in ("", rtag, "!!str"):
        return text if rtag == "!!timestamp" else out
    if tag == "!!float" and rtag == "!!int":
        return float(out)
    if tag == "!!timestamp" and rtag == "!!timestamp":
        return text
    raise YamlBodyError(f"yaml: cannot decode {rtag} `{text}` as a {tag}")


def _resolve_plain(text: str) -> tuple[str, Any]:
    if text in _BOOLS:
        return "!!bool", _BOOLS[text]
    if text in _NULLS:
        return "!!null", None
    if text in _SPECIAL_FLOATS:
        return "!!float", _SPECIAL_FLOATS[text]
    hint = text[0]
    if hint == ".":
        value = _go_parse_float(text)
        if value is not None:
            return "!!float", value
    elif hint in "0123456789+-":
        if _TIMESTAMP.fullmatch(text):
            return "!!timestamp", text
        plain = text.replace("_", "")
        number = _go_parse_int(plain)
        if number is not None:
            return "!!int", number
        if _YAML_STYLE_FLOAT.fullmatch(plain):
            value = _go_parse_float(plain)
            if value is not None:
                return "!!float", value
    return "!!str", text


_DIGITS = {16: set("0123456789abcdefABCDEF"), 10: set("0123456789"), 8: set("01234567"), 2: set("01")}


def _go_parse_int(text: str) -> int | None:
    """strconv.ParseInt(s, 0, 64), else ParseUint(s, 0, 64) (which takes no sign):
    an optional sign, then 0x/0o/0b, a leading 0 (octal), or decimal digits."""
    signed = text[:1] in ("+", "-")
    body = text[1:] if signed else text
    base, digits = 10, body
    if body[:2].lower() in ("0x", "0o", "0b"):
        base, digits = {"x": 16, "o": 8, "b": 2}[body[1].lower()], body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, digits = 8, body[1:]
    if not digits or not set(digits) <= _DIGITS[base]:
        return None
    value = -int(digits, base) if text[:1] == "-" else int(digits, base)
    if _INT64[0] <= value <= _INT64[1] or (not signed and value <= (1 << 64) - 1):
        return value
    return None


def _go_parse_float(text: str) -> float | None:
    """strconv.ParseFloat(s, 64) on text the callers have shaped as a decimal float: out of
    range is an error in Go (so the scalar stays a string), and `_` is not allowed there."""
    if "_" in text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isinf(value) else value


def _key_string(key: Any, value_node: yaml.Node) -> str:
    """yaml.go convertToJSONableObject: the JSON key of a YAML map key."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int) and _INT64[0] <= key <= _INT64[1]:
        return str(key)
    if isinstance(key, float):
        return _format_float32(key)
    kind = "<nil>" if key is None else "uint64"
    raise YamlBodyError(f"unsupported map key of type: {kind}, key: {key!r}, value: {value_node.value!r}")


def _format_float32(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 32), with goyaml's .inf/-.inf/.nan spellings."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return ".inf" if value > 0 else "-.inf"
    if math.isinf(single):
        return ".inf" if value > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for digits in range(1, 10):  # the shortest decimal that reads back as the same float32
        mantissa = f"{single:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(mantissa)))[0] == single:
            break
    head, _, exp_text = mantissa.partition("e")
    exponent = int(exp_text)
    figures = head.replace("-", "").replace(".", "").rstrip("0") or "0"
    sign = "-" if head.startswith("-") else ""
    if exponent < -4 or exponent >= 6:  # ftoa.go: %e form; shortest 'g' decides with precision 6
        rest = f".{figures[1:]}" if len(figures) > 1 else ""
        return f"{sign}{figures[0]}{rest}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent >= 0:
        whole = figures[: exponent + 1].ljust(exponent + 1, "0")
        frac = figures[exponent + 1:]
    else:
        whole, frac = "0", "0" * (-exponent - 1) + figures
    return f"{sign}{whole}{'.' + frac if frac else ''}"


def _json_value(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
    return value


def _number(value: int | float) -> int | float:
    """What decoding Go's json.Marshal of the number gives (encode.go floatEncoder, then
    util/json ConvertMapNumbers: Int64 first, else Float64)."""
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else float(value)
    if math.isnan(value) or math.isinf(value):
        word = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise YamlBodyError(f"json: unsupported value: {word}")
    if value.is_integer() and (value == 0 or 1e-6 <= abs(value) < 1e21) and _INT64[0] <= value <= _INT64[1]:
        return int(value)
    return value


