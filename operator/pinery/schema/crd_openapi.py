"""The per-node rules of a CRD's openAPIV3Schema, as kube-apiserver checks them.

Ported from apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`:
ValidateCustomResourceDefinitionOpenAPISchema (the recursion, and the rules for uniqueItems,
additionalProperties, x-kubernetes-preserve-unknown-fields, map/list types, list-map keys,
x-kubernetes-validations), specStandardValidatorV3.validate (keys v1 does not support, types,
defaults where they are forbidden), validateMapListKeysMapSet, pathValid and
`pkg/apiserver/schema/cel` ValidFieldPath (fieldPath of a rule).

The structural rules (`ValidateStructural`, `NewStructural`) are pinery.schema.structural's.

CEL: a rule is compiled with pinery.schema.cel, which knows CEL's grammar and functions but not
the schema's types, so a rule that compiles on its own but does not type-check against the
schema (a field that does not exist, `self.x + 1` on a string) is accepted here; CEL cost
estimates (per rule, per messageExpression, per CRD) are not computed, and messageExpression
is not compiled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from pinery.schema import cel, field, gorepr
from pinery.schema.errors import FieldError

OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]  # sets.List(): sorted
SUPPORTED_RULE_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
META_FIELDS = ("metadata", "kind", "apiVersion")
_NEWLINES = re.compile(r"[\n\r]+")


@dataclass(frozen=True)
class NodeContext:
    """specStandardValidatorV3's state on the way down."""

    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    inside_resource_meta: bool = False
    require_valid_property_type: bool = True
    uncorrelatable_path: str | None = None  # first ancestor under which oldSelf cannot be correlated

    def forbidden_defaults(self, reason: str) -> "NodeContext":
        return replace(self, allow_defaults=False, disallow_defaults_reason=reason)

    def forbid_old_self(self, path: str) -> "NodeContext":
        return self if self.uncorrelatable_path is not None else replace(self, uncorrelatable_path=path)


@dataclass(frozen=True)
class Options:
    """The parts of validationOptions that the per-node rules read."""

    require_atomic_set_type: bool = True
    require_map_list_keys_map_set_validation: bool = True


@dataclass
class Errors:
    """OpenAPISchemaErrorList: CEL errors are kept apart and listed after the schema errors."""

    schema: list[FieldError]
    cel: list[FieldError]

    def extend(self, other: "Errors") -> None:
        self.schema += other.schema
        self.cel += other.cel

    def all(self) -> list[FieldError]:
        return self.schema + self.cel


def _items_schema(node: dict[str, Any]) -> dict[str, Any] | None:
    items = node.get("items")
    return items if isinstance(items, dict) else None


def standard_v3(node: dict[str, Any], path: str, ctx: NodeContext) -> list[FieldError]:
    """specStandardValidatorV3.validate."""
    out: list[FieldError] = []
    kind = node.get("type") or ""
    if ctx.require_valid_property_type and kind and kind not in OPENAPI_V3_TYPES:
        out.append(field.not_supported(f"{path}.type", kind, OPENAPI_V3_TYPES))
    if "default" in node and not ctx.allow_defaults:
        detail = "must not be set"
        if ctx.disallow_defaults_reason:
            detail += " " + ctx.disallow_defaults_reason
        out.append(field.forbidden(f"{path}.default", detail))
    if node.get("id"):
        out.append(field.forbidden(f"{path}.id", "id is not supported"))
    if node.get("additionalItems") is not None:
        out.append(field.forbidden(f"{path}.additionalItems", "additionalItems is not supported"))
    if node.get("patternProperties"):
        out.append(field.forbidden(f"{path}.patternProperties", "patternProperties is not supported"))
    if node.get("definitions"):
        out.append(field.forbidden(f"{path}.definitions", "definitions is not supported"))
    if node.get("dependencies") is not None:
        out.append(field.forbidden(f"{path}.dependencies", "dependencies is not supported"))
    if node.get("$ref") is not None:
        out.append(field.forbidden(f"{path}.$ref", "$ref is not supported"))
    if kind == "null":
        out.append(field.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(node.get("items"), list) and node["items"]:
        out.append(field.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if ctx.inside_resource_meta and node.get("x-kubernetes-embedded-resource"):
        out.append(field.forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
    return out


def validate_node(
    node: Any, path: str, ctx: NodeContext, is_root: bool, opts: Options, cel_ok: bool
) -> Errors:
    """ValidateCustomResourceDefinitionOpenAPISchema. `cel_ok` stands for a non-nil CELSchemaContext:
    rules are compiled only when the whole schema is structural with valid defaults."""
    errs = Errors([], [])
    if not isinstance(node, dict):
        return errs
    errs.schema += standard_v3(node, path, ctx)
    if node.get("uniqueItems") is True:
        errs.schema.append(field.forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))

    props = node.get("properties") or {}
    additional = node.get("additionalProperties")
    if additional is not None:
        if props and (additional is False or isinstance(additional, dict)):
            errs.schema.append(field.forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
        sub = ctx.forbidden_defaults("inside additionalProperties applying to object metadata") if ctx.inside_resource_meta else ctx
        if isinstance(additional, dict):
            errs.extend(validate_node(additional, f"{path}.additionalProperties", sub, False, opts, cel_ok))

    for name in sorted(props):
        sub = ctx
        if node.get("x-kubernetes-map-type") == "atomic":  # cel.MapIsCorrelatable
            sub = sub.forbid_old_self(path)
        if (is_root or node.get("x-kubernetes-embedded-resource")) and name in META_FIELDS:
            sub = replace(sub, inside_resource_meta=True)
            if is_root:
                sub = sub.forbidden_defaults(f"in top-level {name}")
        errs.extend(validate_node(props[name], f"{path}.properties[{name}]", sub, False, opts, cel_ok))

    errs.extend(validate_node(node.get("not"), f"{path}.not", ctx, False, opts, False))
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, branch in enumerate(node.get(junctor) or []):
            errs.extend(validate_node(branch, f"{path}.{junctor}[{i}]", ctx, False, opts, False))
    for name in sorted(node.get("definitions") or {}):
        errs.extend(validate_node(node["definitions"][name], f"{path}.definitions[{name}]", ctx, False, opts, False))

    items = node.get("items")
    if items is not None:
        sub = ctx if node.get("x-kubernetes-list-type") == "map" else ctx.forbid_old_self(path)
        if isinstance(items, dict):
            errs.extend(validate_node(items, f"{path}.items", sub, False, opts, cel_ok))
        elif isinstance(items, list):
            for i, item in enumerate(items):
                errs.extend(validate_node(item, f"{path}.items[{i}]", sub, False, opts, cel_ok))

    for name in sorted(node.get("dependencies") or {}):
        dep = node["dependencies"][name]
        if isinstance(dep, dict):
            errs.extend(validate_node(dep, f"{path}.dependencies[{name}]", ctx, False, opts, False))

    errs.schema += _extension_rules(node, path, opts)
    if node.get("x-kubernetes-validations"):
        errs.schema += _rule_fields(node, path)
        # CEL is looked at only when nothing is wrong with the schema here or below.
        if not errs.schema and cel_ok:
            errs.cel += _compile_rules(node, path, ctx)
    return errs


def _extension_rules(node: dict[str, Any], path: str, opts: Options) -> list[FieldError]:
    out: list[FieldError] = []
    kind = node.get("type") or ""
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and preserve is False:
        out.append(field.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))

    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None and kind != "object":
        if not kind:
            out.append(field.required(f"{path}.type", "must be object if x-kubernetes-map-type is specified"))
        else:
            out.append(field.invalid(f"{path}.type", kind, "must be object if x-kubernetes-map-type is specified"))
    if map_type is not None and map_type not in ("atomic", "granular"):
        out.append(field.not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))

    list_type = node.get("x-kubernetes-list-type")
    items = _items_schema(node)
    if list_type is not None and kind != "array":
        if not kind:
            out.append(field.required(f"{path}.type", "must be array if x-kubernetes-list-type is specified"))
        else:
            out.append(field.invalid(f"{path}.type", kind, "must be array if x-kubernetes-list-type is specified"))
    elif opts.require_atomic_set_type and list_type == "set" and items is not None:
        item_type = items.get("type")
        if item_type == "array":
            inner = items.get("x-kubernetes-list-type")
            if inner is not None and inner != "atomic":
                out.append(field.invalid(f"{path}.items.x-kubernetes-list-type", inner, "must be atomic as item of a list with x-kubernetes-list-type=set"))
        elif item_type == "object":
            if items.get("x-kubernetes-map-type") != "atomic":
                # upstream passes the items' list type here, not the map type
                out.append(field.invalid(
                    f"{path}.items.x-kubernetes-map-type",
                    items.get("x-kubernetes-list-type"),
                    "must be atomic as item of a list with x-kubernetes-list-type=set"))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        out.append(field.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))

    keys = node.get("x-kubernetes-list-map-keys") or []
    if keys:
        if list_type is None:
            out.append(field.required(f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            out.append(field.invalid(f"{path}.x-kubernetes-list-type", list_type, "must be map if x-kubernetes-list-map-keys is non-empty"))

    if list_type == "map":
        if not keys:
            out.append(field.required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
        raw_items = node.get("items")
        if raw_items is None:
            out.append(field.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif items is None:
            out.append(field.invalid(
                f"{path}.items",
                field.GoRepr(
                    "apiextensions.JSONSchemaPropsOrArray{Schema:(*apiextensions.JSONSchemaProps)(nil), "
                    "JSONSchemas:[]apiextensions.JSONSchemaProps{...}}"
                ),
                "must only have a single schema if x-kubernetes-list-type is map"))
        elif items.get("type") != "object":
            out.append(field.invalid(f"{path}.items.type", items.get("type") or "", "must be object if parent array's x-kubernetes-list-type is map"))
        else:
            item_props = items.get("properties") or {}
            seen: set[str] = set()
            for key in keys:
                if key in item_props:
                    if (item_props[key] or {}).get("type") in ("array", "object"):
                        # upstream shows the items' type as the bad value
                        out.append(field.invalid(
                            f"{path}.items.properties[{key}].type",
                            items.get("type") or "",
                            "must be a scalar type if parent array's x-kubernetes-list-type is map"))
                else:
                    out.append(field.invalid(
                        f"{path}.x-kubernetes-list-map-keys",
                        field.GoRepr(gorepr.string_slice(keys)),
                        "entries must all be names of item properties"))
                if key in seen:
                    out.append(field.invalid(
                        f"{path}.x-kubernetes-list-map-keys",
                        field.GoRepr(gorepr.string_slice(keys)),
                        "must not contain duplicate entries"))
                seen.add(key)

    if opts.require_map_list_keys_map_set_validation:
        out += map_list_keys_map_set(node, path)
    return out


def map_list_keys_map_set(node: dict[str, Any], path: str) -> list[FieldError]:
    """validateMapListKeysMapSet."""
    items = _items_schema(node)
    list_type = node.get("x-kubernetes-list-type")
    if items is None or list_type not in ("set", "map"):
        return []
    out: list[FieldError] = []
    if items.get("nullable"):
        out.append(field.forbidden(f"{path}.items.nullable", "cannot be nullable when x-kubernetes-list-type is " + list_type))
    if list_type == "map":
        required = set(items.get("required") or [])
        props = items.get("properties") or {}
        for key in node.get("x-kubernetes-list-map-keys") or []:
            if key not in props:
                continue
            prop = props[key] or {}
            if key not in required and "default" not in prop:
                out.append(field.required(
                    f"{path}.items.properties[{key}].default",
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
            if prop.get("nullable"):
                out.append(field.forbidden(
                    f"{path}.items.properties[{key}].nullable",
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
    return out


def _rule_fields(node: dict[str, Any], path: str) -> list[FieldError]:
    """The checks of each x-kubernetes-validations entry that need no CEL."""
    out: list[FieldError] = []
    for i, rule in enumerate(node.get("x-kubernetes-validations") or []):
        rule = rule if isinstance(rule, dict) else {}
        where = f"{path}.x-kubernetes-validations[{i}]"
        text, message = rule.get("rule") or "", rule.get("message") or ""
        expr = rule.get("messageExpression") or ""
        if not text.strip():
            out.append(field.required(f"{where}.rule", "rule is not specified"))
        elif message and not message.strip():
            out.append(field.invalid(f"{where}.message", message, "must be non-empty if specified"))
        elif _NEWLINES.search(message.strip()):
            out.append(field.invalid(f"{where}.message", message, "must not contain line breaks"))
        elif _NEWLINES.search(text.strip()) and not message.strip():
            out.append(field.required(f"{where}.message", "message must be specified if rule contains line breaks"))
        if expr and not expr.strip():
            out.append(field.required(f"{where}.messageExpression", "messageExpression must be non-empty if specified"))
        if rule.get("reason") is not None and rule["reason"] not in SUPPORTED_RULE_REASONS:
            out.append(field.not_supported(f"{where}.reason", rule["reason"], SUPPORTED_RULE_REASONS))
        field_path = rule.get("fieldPath") or ""
        if field_path and not field_path.strip():
            out.append(field.invalid(f"{where}.fieldPath", field_path, "must be non-empty if specified"))
        if _NEWLINES.search(field_path):
            out.append(field.invalid(f"{where}.fieldPath", field_path, "must not contain line breaks"))
        if field_path and not valid_field_path(node, field_path):
            out.append(field.invalid(f"{where}.fieldPath", field_path, "must be a valid path"))
    return out


def _compile_rules(node: dict[str, Any], path: str, ctx: NodeContext) -> list[FieldError]:
    out: list[FieldError] = []
    for i, rule in enumerate(node.get("x-kubernetes-validations") or []):
        where = f"{path}.x-kubernetes-validations[{i}]"
        text = rule.get("rule") or ""
        try:
            cel.compile_rule(text)
        except cel.CelCompileError as exc:
            out.append(field.invalid(f"{where}.rule", gorepr.validation_rule(rule), "compilation failed: " + str(exc).split(" does not compile: ", 1)[-1]))
            continue
        if cel.is_transition_rule(text):
            if ctx.uncorrelatable_path is not None:
                out.append(field.invalid(
                    f"{where}.rule",
                    text,
                    f"oldSelf cannot be used on the uncorrelatable portion of the schema within {ctx.uncorrelatable_path}"))
        elif rule.get("optionalOldSelf") is not None:
            out.append(field.invalid(f"{where}.optionalOldSelf", bool(rule["optionalOldSelf"]), "may not be set if oldSelf is not used in rule"))
    return out


def valid_field_path(node: dict[str, Any], json_path: str) -> bool:
    """cel.ValidFieldPath over the node: `.a.b`, `['a.b']`, through properties or a map's values."""
    tokens = _tokens(json_path)
    if tokens is None:
        return False
    current: Any = node
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "[":
            if i + 2 >= len(tokens) or tokens[i + 2] != "]":
                return False
            name = tokens[i + 1]
            if len(name) < 2 or name[0] != "'" or name[-1] != "'":
                return False
            name = name[1:-1].replace("\\'", "'").replace("\\\\", "\\")
            i += 3
        elif tok == ".":
            if i + 1 >= len(tokens):
                return False
            name = tokens[i + 1]
            i += 2
        else:
            return False
        if not isinstance(current, dict):
            return False
        if current.get("properties"):
            if name not in current["properties"]:
                return False
            current = current["properties"][name]
        elif isinstance(current.get("additionalProperties"), dict):
            current = current["additionalProperties"]
        else:
            return False
    return True


def _tokens(text: str) -> list[str] | None:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "'":
            j = i + 1
            while j < len(text) and not (text[j] == "'" and text[j - 1] != "\\"):
                j += 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch in ".[]":
            out.append(ch)
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in ".[]":
                j += 1
            out.append(text[i:j])
            i = j
    return out
