"""What kube-apiserver refuses in a CustomResourceDefinition, rule by rule.

A port of apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`
(ValidateCustomResourceDefinition for a create, ValidateCustomResourceDefinitionUpdate for an
update), applied to a v1 CRD in JSON form after the v1 defaulting and the conversion to the
internal form (pinery.schema.crd_internal), so that paths and messages are the API server's.
The per-node schema rules are in pinery.schema.crd_openapi, defaults in crd_defaults, names in
crd_names; the structural rules (NewStructural + ValidateStructural) are
pinery.schema.structural.validate_structural.

Not checked: the conversion webhook's caBundle (webhook.ValidateCABundle: PEM parsing; a create
allows an invalid one anyway), CEL cost estimates and type-checking (see crd_openapi), the
schema-validator build step that follows a clean validation (NewSchemaValidator), the generic
ObjectMeta rules other than the name (labels, annotations, finalizers: the local control plane
checks those for every kind), and `status.acceptedNames` (set by the server, not by clients).
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import urlsplit

from pinery.schema import field, gorepr
from pinery.schema.crd_defaults import validate_defaults
from pinery.schema.crd_internal import established, internal_spec, stored_versions
from pinery.schema.crd_names import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_valid_port_num,
    validate_crd_object_name,
    validate_names,
)
from pinery.schema.crd_openapi import NodeContext, Options, map_list_keys_map_set, valid_field_path, validate_node
from pinery.schema.errors import FieldError
from pinery.schema.field import GoRepr
from pinery.schema.structural import validate_structural

PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]
ACCEPTED_CONVERSION_REVIEW_VERSIONS = ["v1", "v1beta1"]
MAX_SELECTABLE_FIELDS = 8
API_APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
# validation.go allowedFieldsAtRootSchema, and the JSONSchemaProps fields in struct order.
_ROOT_ALLOWED = [
    "Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum", "ExclusiveMinimum",
    "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required",
    "Items", "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations",
]
_GO_FIELDS = [
    ("id", "ID"), ("$schema", "Schema"), ("$ref", "Ref"), ("description", "Description"), ("type", "Type"),
    ("nullable", "Nullable"), ("format", "Format"), ("title", "Title"), ("default", "Default"),
    ("maximum", "Maximum"), ("exclusiveMaximum", "ExclusiveMaximum"), ("minimum", "Minimum"),
    ("exclusiveMinimum", "ExclusiveMinimum"), ("maxLength", "MaxLength"), ("minLength", "MinLength"),
    ("pattern", "Pattern"), ("maxItems", "MaxItems"), ("minItems", "MinItems"), ("uniqueItems", "UniqueItems"),
    ("multipleOf", "MultipleOf"), ("enum", "Enum"), ("maxProperties", "MaxProperties"),
    ("minProperties", "MinProperties"), ("required", "Required"), ("items", "Items"), ("allOf", "AllOf"),
    ("oneOf", "OneOf"), ("anyOf", "AnyOf"), ("not", "Not"), ("properties", "Properties"),
    ("additionalProperties", "AdditionalProperties"), ("patternProperties", "PatternProperties"),
    ("dependencies", "Dependencies"), ("additionalItems", "AdditionalItems"), ("definitions", "Definitions"),
    ("externalDocs", "ExternalDocs"), ("example", "Example"),
    ("x-kubernetes-preserve-unknown-fields", "XPreserveUnknownFields"),
    ("x-kubernetes-embedded-resource", "XEmbeddedResource"), ("x-kubernetes-int-or-string", "XIntOrString"),
    ("x-kubernetes-list-map-keys", "XListMapKeys"), ("x-kubernetes-list-type", "XListType"),
    ("x-kubernetes-map-type", "XMapType"), ("x-kubernetes-validations", "XValidations"),
]
_POINTER_KEYS = {"$ref", "default", "maximum", "minimum", "maxLength", "minLength", "maxItems", "minItems",
                 "multipleOf", "maxProperties", "minProperties", "items", "not", "additionalProperties",
                 "additionalItems", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields",
                 "x-kubernetes-list-type", "x-kubernetes-map-type"}


def _structural(schema: dict[str, Any], path: str) -> list[FieldError]:
    """NewStructural + ValidateStructural (pinery.schema.structural)."""
    return validate_structural(schema, path)


class _Opts:
    """validation.go validationOptions (the parts that change what is reported)."""

    def __init__(self) -> None:
        self.allow_defaults = True
        self.require_recognized_conversion_review_version = True
        self.require_immutable_names = False
        self.require_open_api_schema = True
        self.require_valid_property_type = True
        self.require_structural_schema = True
        self.require_pruned_defaults = True
        self.require_atomic_set_type = True
        self.require_map_list_keys_map_set_validation = True

    def copy(self) -> "_Opts":
        clone = _Opts()
        clone.__dict__.update(self.__dict__)
        return clone


def validate_crd(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """Everything kube-apiserver reports for a create (old None) or an update of a v1 CRD."""
    spec = internal_spec(crd)
    old_spec = internal_spec(old) if old is not None else None
    meta = crd.get("metadata") or {}
    opts = _Opts()
    out: list[FieldError] = []
    if old is None or old_spec is None:
        # ValidateCustomResourceDefinition: ObjectMeta with the CRD's name function.
        out += validate_crd_object_name(meta, spec["names"], spec.get("group") or "")
        out += _spec(spec, opts, "spec")
        status: dict[str, Any] = {}
    else:
        # ValidateCustomResourceDefinitionUpdate: the options ratchet on what the stored CRD has.
        conv = old_spec.get("conversion") or {}
        opts.require_recognized_conversion_review_version = _valid_review_version_or_empty(conv.get("conversionReviewVersions"))
        opts.require_immutable_names = established(old)
        opts.require_open_api_schema = _all_versions_have_schema(old_spec)
        opts.require_valid_property_type = not _has_schema_with(old_spec, _invalid_type)
        opts.require_structural_schema = not _has_non_structural(old_spec)
        opts.require_pruned_defaults = not _has_unpruned_defaults(old_spec)
        opts.require_atomic_set_type = not _has_schema_with(old_spec, _non_atomic_set)
        opts.require_map_list_keys_map_set_validation = not _has_schema_with(old_spec, lambda s: bool(map_list_keys_map_set(s, "")))
        out += _spec_update(spec, old_spec, opts, "spec")
        status = old.get("status") or {}
    out += _stored_versions(stored_versions(spec, status if old_spec is not None else None), spec["versions"], "status.storedVersions")
    out += _api_approval(crd, old, spec.get("group") or "")
    out += _preserve_unknown_fields(spec, old_spec)
    return out


def check_crd(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """The one entry point for every checker of CRDs (the local control plane, the CRD tests)."""
    return validate_crd(crd, old)


# validation.go validateCustomResourceDefinitionSpec
def _spec(spec: dict[str, Any], opts: _Opts, path: str) -> list[FieldError]:
    out: list[FieldError] = []
    opts = opts.copy()
    group = spec.get("group") or ""
    if not group:
        out.append(field.required(f"{path}.group"))
    elif errs := is_dns1123_subdomain(group):
        out.append(field.invalid(f"{path}.group", group, ",".join(errs)))
    elif len(group.split(".")) < 2:
        out.append(field.invalid(f"{path}.group", group, "should be a domain with at least one dot"))
    out += _enum(f"{path}.scope", spec.get("scope") or "", ["Cluster", "Namespaced"])

    preserve = spec.get("preserveUnknownFields") is True
    if not preserve:
        opts.require_structural_schema = True
    versions = spec["versions"]
    top_schema = (spec.get("validation") or {}).get("openAPIV3Schema") if spec.get("validation") else None
    if opts.require_open_api_schema:
        if top_schema is None:
            for i, v in enumerate(versions):
                if not (v.get("schema") or {}).get("openAPIV3Schema"):
                    out.append(field.required(f"{path}.versions[{i}].schema.openAPIV3Schema", ""))
    elif not preserve and top_schema is None:
        for i, v in enumerate(versions):
            if v.get("served") and not (v.get("schema") or {}).get("openAPIV3Schema"):
                out.append(field.required(f"{path}.versions[{i}].schema.openAPIV3Schema", "because otherwise all fields are pruned"))
    if opts.allow_defaults and _has_schema_with(spec, lambda s: "default" in s):
        opts.require_structural_schema = True
        if preserve:
            out.append(field.invalid(f"{path}.preserveUnknownFields", True, "must be false in order to use defaults in the schema"))
    if _has_schema_with(spec, _has_kubernetes_extension):
        opts.require_structural_schema = True

    storage_count, seen, unique = 0, set(), True
    per_version_subresources = any(v.get("subresources") is not None for v in versions)
    for i, v in enumerate(versions):
        name = v.get("name") or ""
        storage_count += 1 if v.get("storage") else 0
        if name in seen:
            unique = False
        seen.add(name)
        if errs := is_dns1035_label(name):
            out.append(field.invalid(f"{path}.versions[{i}].name", name, ",".join(errs)))
        subresources = v.get("subresources") if per_version_subresources else spec.get("subresources")
        out += _version(v, f"{path}.versions[{i}]", _status_enabled(subresources), opts)

    if spec.get("validation") is not None and any(v.get("schema") is not None for v in versions):
        out.append(field.forbidden(f"{path}.validation", "top-level and per-version schemas are mutually exclusive"))
    if spec.get("subresources") is not None and per_version_subresources:
        out.append(field.forbidden(f"{path}.subresources", "top-level and per-version subresources are mutually exclusive"))
    if spec.get("additionalPrinterColumns") and any(v.get("additionalPrinterColumns") for v in versions):
        out.append(field.forbidden(f"{path}.additionalPrinterColumns", "top-level and per-version additionalPrinterColumns are mutually exclusive"))
    shown = gorepr.versions(versions)
    # (per-version fields that are all identical were moved up by the conversion, so the
    # hasIdenticalPerVersion* rules never fire for a v1 object)
    if not unique:
        out.append(field.invalid(f"{path}.versions", shown, "must contain unique version names"))
    if storage_count != 1:
        out.append(field.invalid(f"{path}.versions", shown, "must have exactly one version marked as storage version"))
    version = spec.get("version") or ""
    if version:
        if errs := is_dns1035_label(version):
            out.append(field.invalid(f"{path}.version", version, ",".join(errs)))
        if versions and versions[0].get("name") != version:
            out.append(field.invalid(f"{path}.version", version, "must match the first version in spec.versions"))

    names = spec["names"]
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            out.append(field.required(f"{path}.names.{key}"))
    out += validate_names(names, f"{path}.names")
    any_status = _status_enabled(spec.get("subresources")) or any(_status_enabled(v.get("subresources")) for v in versions)
    out += _validation(spec.get("validation"), any_status, opts, f"{path}.validation")
    out += _subresources(spec.get("subresources"), f"{path}.subresources")
    for i, col in enumerate(spec.get("additionalPrinterColumns") or []):
        out += _column(col, f"{path}.additionalPrinterColumns[{i}]")
    if spec.get("selectableFields"):
        if spec.get("validation") is None:
            out.append(field.invalid(f"{path}.selectableFields", "", "may only be set when validations.schema is included"))
        elif top_schema is not None:
            out += _selectable_fields(spec["selectableFields"], top_schema, path, f"{path}.selectableFields")

    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "None" and preserve:
        out.append(field.invalid(f"{path}.conversion.strategy", conversion.get("strategy") or "", "must be None if spec.preserveUnknownFields is true"))
    out += _conversion(conversion, opts.require_recognized_conversion_review_version, f"{path}.conversion")
    return out


# validation.go validateCustomResourceDefinitionSpecUpdate
def _spec_update(spec: dict[str, Any], old: dict[str, Any], opts: _Opts, path: str) -> list[FieldError]:
    out = _spec(spec, opts, path)
    if opts.require_immutable_names:
        out += _immutable(spec.get("scope"), old.get("scope"), f"{path}.scope")
        out += _immutable(spec["names"].get("kind"), old["names"].get("kind"), f"{path}.names.kind")
    out += _immutable(spec.get("group"), old.get("group"), f"{path}.group")
    out += _immutable(spec["names"].get("plural"), old["names"].get("plural"), f"{path}.names.plural")
    return out


def _immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    """apimachinery ValidateImmutableField."""
    if new == old:
        return []
    return [field.invalid(path, new or "", "field is immutable")]


def _enum(path: str, value: str, accepted: list[str]) -> list[FieldError]:
    """validation.go validateEnumStrings (required)."""
    if not value:
        return [field.required(path)]
    return [] if value in accepted else [field.not_supported(path, value, accepted)]


def _status_enabled(subresources: Any) -> bool:
    return isinstance(subresources, dict) and subresources.get("status") is not None


# validation.go validateCustomResourceDefinitionVersion
def _version(v: dict[str, Any], path: str, status_enabled: bool, opts: _Opts) -> list[FieldError]:
    out = [field.invalid(f"{path}.deprecationWarning", v.get("deprecationWarning"), m)
           for m in _deprecation_warning(bool(v.get("deprecated")), v.get("deprecationWarning"))]
    out += _validation(v.get("schema"), status_enabled, opts, f"{path}.schema")
    out += _subresources(v.get("subresources"), f"{path}.subresources")
    for i, col in enumerate(v.get("additionalPrinterColumns") or []):
        out += _column(col, f"{path}.additionalPrinterColumns[{i}]")
    if v.get("selectableFields"):
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            out.append(field.invalid(f"{path}.selectableFields", "", "may only be set when `version.schema.openAPIV3Schema` is not included"))
        else:
            out += _selectable_fields(v["selectableFields"], schema, path, f"{path}.selectableFields")
    return out


def _deprecation_warning(deprecated: bool, warning: str | None) -> list[str]:
    """validation.go validateDeprecationWarning."""
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if warning is None:
        return []
    errs = []
    if len(warning.encode()) > 256:
        errs.append("must be <= 256 characters long")
    if not warning:
        errs.append("must not be an empty string")
    offset = 0
    for ch in warning:
        if not ch.isprintable():  # unicode.IsPrint fails first, also for control characters
            errs.append(f"must only contain printable UTF-8 characters; non-printable character found at index {offset}")
            break
        offset += len(ch.encode())
    return errs


# validation.go ValidateCustomResourceSelectableFields
def _selectable_fields(fields: list[Any], schema: dict[str, Any], _: str, path: str) -> list[FieldError]:
    out: list[FieldError] = []
    unique: set[str] = set()
    for i, sf in enumerate(fields):
        where = f"{path}[{i}].jsonPath"
        json_path = (sf or {}).get("jsonPath") or ""
        if not json_path:
            out.append(field.required(where))
            continue
        found = _selectable_target(schema, json_path)
        if found is None:
            out.append(field.invalid(where, json_path, "is an invalid path: does not refer to a valid field"))
            continue
        names, target = found
        if names and names[0] == "metadata":
            out.append(field.invalid(where, json_path, "must not point to fields in metadata"))
        if (target or {}).get("type") not in ("string", "boolean", "integer"):
            out.append(field.invalid(
                where,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
        key = ".".join(names)
        if key in unique:
            out.append(field.duplicate(where, json_path))
        unique.add(key)
    if len(unique) > MAX_SELECTABLE_FIELDS:
        out.append(field.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return out


def _selectable_target(schema: dict[str, Any], json_path: str) -> tuple[list[str], Any] | None:
    if "[" in json_path or not valid_field_path(schema, json_path):
        return None
    names = json_path[1:].split(".")
    node: Any = schema
    for name in names:
        node = (node.get("properties") or {}).get(name) if node.get("properties") else node.get("additionalProperties")
    return names, node


# validation.go validateCustomResourceDefinitionValidation
def _validation(validation: Any, status_enabled: bool, opts: _Opts, path: str) -> list[FieldError]:
    if not isinstance(validation, dict):
        return []
    schema = validation.get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return []
    out: list[FieldError] = []
    base = f"{path}.openAPIV3Schema"
    if status_enabled:
        out += _status_root(schema, path)
    if schema.get("nullable") is True:
        out.append(field.forbidden(f"{base}.nullable", "nullable cannot be true at the root"))
    cel_ok = False
    init_errs: list[FieldError] = []
    if opts.require_structural_schema:
        structural = _structural(schema, base)
        # NewStructural's errors (Invalid at the schema itself, value "") are shown only when
        # nothing else is wrong; ValidateStructural's are shown at once.
        init_errs = [e for e in structural if e.path == base and e.message.startswith('Invalid value: ""')]
        later = [e for e in structural if e not in init_errs]
        if not init_errs:
            if later:
                out += later
            else:
                defaults = validate_defaults(schema, base, opts.require_pruned_defaults)
                if defaults:
                    out += defaults
                else:
                    cel_ok = True
    ctx = NodeContext(require_valid_property_type=opts.require_valid_property_type)
    node_opts = Options(opts.require_atomic_set_type, opts.require_map_list_keys_map_set_validation)
    out += validate_node(schema, base, ctx, True, node_opts, cel_ok).all()
    if not out and init_errs:
        out += init_errs
    return out


def _status_root(schema: dict[str, Any], path: str) -> list[FieldError]:
    """With the status subresource, only some fields may be set at the root (reflect over the
    struct, zero values skipped, the first offender reported)."""
    for key, go_name in _GO_FIELDS:
        value = schema.get(key)
        if value is None or (key not in _POINTER_KEYS and value in (False, "", [], {})):
            continue
        if go_name == "Type":
            if value != "object":
                return [field.invalid(
                    f"{path}.openAPIV3Schema.type",
                    value,
                    'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')]
            continue
        if go_name not in _ROOT_ALLOWED:
            allowed = "[" + " ".join(_ROOT_ALLOWED) + "]"
            return [field.invalid(
                f"{path}.openAPIV3Schema",
                gorepr.schema_props(schema),
                f"only {allowed} fields are allowed at the root of the schema if the status subresource is enabled")]
    return []


# validation.go ValidateCustomResourceDefinitionSubresources
def _subresources(subresources: Any, path: str) -> list[FieldError]:
    if not isinstance(subresources, dict) or subresources.get("scale") is None:
        return []
    scale = subresources["scale"] or {}
    out: list[FieldError] = []
    for key, prefix, under in (("specReplicasPath", ".spec.", ".spec"), ("statusReplicasPath", ".status.", ".status")):
        where = f"{path}.scale.{key}"
        value = scale.get(key) or ""
        if not value:
            out.append(field.required(where))
        elif errs := _simple_json_path(value, where):
            out += errs
        elif not value.startswith(prefix):
            out.append(field.invalid(where, value, f"should be a json path under {under}"))
    selector = scale.get("labelSelectorPath")
    if selector:
        where = f"{path}.scale.labelSelectorPath"
        if errs := _simple_json_path(selector, where):
            out += errs
        elif not selector.startswith(".spec.") and not selector.startswith(".status."):
            out.append(field.invalid(where, selector, "should be a json path under either .spec or .status"))
    return out


def _simple_json_path(value: str, path: str) -> list[FieldError]:
    """validation.go validateSimpleJSONPath."""
    if not value:
        return [field.invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [field.invalid(path, value, "must be a simple json path starting with .")]
    return []


# validation.go ValidateCustomResourceColumnDefinition
def _column(col: dict[str, Any], path: str) -> list[FieldError]:
    out: list[FieldError] = []
    if not col.get("name"):
        out.append(field.required(f"{path}.name"))
    kinds = "must be one of " + ",".join(PRINTER_COLUMN_TYPES)
    if not col.get("type"):
        out.append(field.required(f"{path}.type", kinds))
    elif col["type"] not in PRINTER_COLUMN_TYPES:
        out.append(field.invalid(f"{path}.type", col["type"], kinds))
    if col.get("format") and col["format"] not in PRINTER_COLUMN_FORMATS:
        out.append(field.invalid(f"{path}.format", col["format"], "must be one of " + ",".join(PRINTER_COLUMN_FORMATS)))
    json_path = col.get("jsonPath") or ""
    if not json_path:
        out.append(field.required(f"{path}.JSONPath"))
    else:
        out += _simple_json_path(json_path, f"{path}.JSONPath")
    return out


# validation.go validateCustomResourceConversion
def _conversion(conversion: dict[str, Any], require_recognized: bool, path: str) -> list[FieldError]:
    out = _enum(f"{path}.strategy", conversion.get("strategy") or "", ["None", "Webhook"])
    client = conversion.get("webhookClientConfig")
    reviews = conversion.get("conversionReviewVersions")
    if conversion.get("strategy") == "Webhook":
        if client is None:
            out.append(field.required(f"{path}.webhookClientConfig", "required when strategy is set to Webhook"))
        else:
            url, service = client.get("url"), client.get("service")
            if (url is None) == (service is None):
                out.append(field.required(f"{path}.webhookClientConfig", "exactly one of url or service is required"))
            elif url is not None:
                out += _webhook_url(f"{path}.webhookClientConfig.url", url)
            else:
                # upstream passes (name, namespace) where the function takes (namespace, name)
                out += _webhook_service(f"{path}.webhookClientConfig.service", service.get("name") or "",
                                        service.get("namespace") or "", service.get("path"), service.get("port", 443))
        out += _review_versions(reviews, require_recognized, f"{path}.conversionReviewVersions")
    else:
        if client is not None:
            out.append(field.forbidden(f"{path}.webhookClientConfig", "should not be set when strategy is not set to Webhook"))
        if reviews:
            out.append(field.forbidden(f"{path}.conversionReviewVersions", "should not be set when strategy is not set to Webhook"))
    return out


def _review_versions(versions: Any, require_recognized: bool, path: str) -> list[FieldError]:
    """validation.go validateConversionReviewVersions."""
    if not versions:
        return [field.required(path)]
    out: list[FieldError] = []
    seen: set[str] = set()
    accepted = False
    for i, v in enumerate(versions):
        if v in seen:
            out.append(field.invalid(f"{path}[{i}]", v, "duplicate version"))
            continue
        seen.add(v)
        out += [field.invalid(f"{path}[{i}]", v, e) for e in is_dns1035_label(v)]
        accepted = accepted or v in ACCEPTED_CONVERSION_REVIEW_VERSIONS
    if require_recognized and not accepted:
        out.append(field.invalid(path, GoRepr(gorepr.string_slice(versions)), "must include at least one of " + ", ".join(ACCEPTED_CONVERSION_REVIEW_VERSIONS)))
    return out


def _valid_review_version_or_empty(versions: Any) -> bool:
    return not versions or any(v in ACCEPTED_CONVERSION_REVIEW_VERSIONS for v in versions)


def _webhook_url(path: str, url: str) -> list[FieldError]:
    """apiserver `pkg/util/webhook/validation.go` ValidateWebhookURL (https forced)."""
    form = "; desired format: https://host[/path]"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [field.required(path, f"url must be a valid URL: {exc}{form}")]
    out: list[FieldError] = []
    if parts.scheme != "https":
        out.append(field.invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + form))
    host = parts.netloc.rsplit("@", 1)[-1]
    if not host:
        out.append(field.invalid(path, host, "host must be provided" + form))
    if "@" in parts.netloc:
        out.append(field.invalid(path, parts.netloc.rsplit("@", 1)[0], "user information is not permitted in the URL"))
    if parts.fragment:
        out.append(field.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        out.append(field.invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return out


def _webhook_service(path: str, namespace: str, name: str, url_path: str | None, port: Any) -> list[FieldError]:
    """apiserver `pkg/util/webhook/validation.go` ValidateWebhookService."""
    out: list[FieldError] = []
    if not name:
        out.append(field.required(f"{path}.name", "service name is required"))
    if not namespace:
        out.append(field.required(f"{path}.namespace", "service namespace is required"))
    port = int(port if port is not None else 443)
    if errs := is_valid_port_num(port):
        out.append(field.invalid(f"{path}.port", port, "port is not valid: " + ", ".join(errs)))
    if url_path is None or url_path in ("", "/"):
        return out
    if url_path == "//":
        return out + [field.invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        out.append(field.invalid(f"{path}.path", url_path, "must start with a '/'"))
    check = url_path[1:]
    if check.endswith("/"):
        check = check[:-1]
    for i, step in enumerate(check.split("/")):
        if not step:
            out.append(field.invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        out += [field.invalid(f"{path}.path", url_path, f"segment[{i}]: {e}") for e in is_dns1123_subdomain(step)]
    return out


# validation.go ValidateCustomResourceDefinitionStoredVersions
def _stored_versions(stored: list[str], versions: list[dict[str, Any]], path: str) -> list[FieldError]:
    if not stored:
        return [field.invalid(path, GoRepr(gorepr.string_slice(None)), "must have at least one stored version")]
    out: list[FieldError] = []
    index = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name")
        if version.get("storage") and name not in index:
            out.append(field.invalid(path, GoRepr(gorepr.string_slice(stored)), "must have the storage version " + str(name)))
        if name is not None:
            index.pop(name, None)
    for v, i in sorted(index.items(), key=lambda kv: kv[1]):
        out.append(field.invalid(
            f"{path}[{i}]", v,
            f"missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions "
            f"until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"))
    return out


# validation.go validateAPIApproval (with apihelpers.GetAPIApprovalState)
def _api_approval(crd: dict[str, Any], old: dict[str, Any] | None, group: str) -> list[FieldError]:
    if not (group in ("k8s.io", "kubernetes.io") or group.endswith(".k8s.io") or group.endswith(".kubernetes.io")):
        return []
    new_state, reason = _approval_state(crd)
    if old is not None and _approval_state(old)[0] == new_state:
        return []
    value = ((crd.get("metadata") or {}).get("annotations") or {}).get(API_APPROVAL_ANNOTATION, "")
    where = f"metadata.annotations[{API_APPROVAL_ANNOTATION}]"
    if new_state == "missing":
        return [field.required(where, reason)]
    if new_state == "invalid":
        return [field.invalid(where, value, reason)]
    return []


def _approval_state(crd: dict[str, Any]) -> tuple[str, str]:
    value = ((crd.get("metadata") or {}).get("annotations") or {}).get(API_APPROVAL_ANNOTATION, "")
    if not value:
        return "missing", f'protected groups must have approval annotation "{API_APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111'
    if value.startswith("unapproved"):
        return "bypassed", ""
    parts = urlsplit(value) if value.startswith("/") or "://" in value else None
    if parts is not None and parts.scheme and parts.netloc:
        return "approved", ""
    return "invalid", (f'protected groups must have approval annotation "{API_APPROVAL_ANNOTATION}" with either a URL or a '
                       'reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111')


# validation.go validatePreserveUnknownFields
def _preserve_unknown_fields(spec: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    if old is not None and old.get("preserveUnknownFields") is True:
        return []
    if spec.get("preserveUnknownFields") is True:
        return [field.invalid(
            "spec.preserveUnknownFields",
            True,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead")]
    return []


# The predicates the update options ratchet on (validation.go SchemaHas and its users).
def _schemas(spec: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for holder in [spec.get("validation")] + [v.get("schema") for v in spec.get("versions") or []]:
        schema = (holder or {}).get("openAPIV3Schema") if isinstance(holder, dict) else None
        if isinstance(schema, dict):
            out.append(schema)
    return out


def _schema_has(node: Any, pred: Callable[[dict[str, Any]], bool]) -> bool:
    if not isinstance(node, dict):
        return False
    if pred(node):
        return True
    children: list[Any] = []
    items = node.get("items")
    children += items if isinstance(items, list) else [items]
    for key in ("allOf", "anyOf", "oneOf"):
        children += node.get(key) or []
    children.append(node.get("not"))
    for key in ("properties", "patternProperties", "definitions", "dependencies"):
        children += list((node.get(key) or {}).values())
    children += [node.get("additionalProperties"), node.get("additionalItems")]
    return any(_schema_has(c, pred) for c in children)


def _has_schema_with(spec: dict[str, Any], pred: Callable[[dict[str, Any]], bool]) -> bool:
    return any(_schema_has(s, pred) for s in _schemas(spec))


def _invalid_type(s: dict[str, Any]) -> bool:
    return bool(s.get("type")) and s["type"] not in ("string", "number", "integer", "boolean", "array", "object")


def _has_kubernetes_extension(s: dict[str, Any]) -> bool:
    return bool(s.get("x-kubernetes-embedded-resource") or "x-kubernetes-preserve-unknown-fields" in s
                or s.get("x-kubernetes-int-or-string") or s.get("x-kubernetes-list-map-keys")
                or "x-kubernetes-list-type" in s or s.get("x-kubernetes-validations"))


def _non_atomic_set(s: dict[str, Any]) -> bool:
    items = s.get("items")
    if s.get("x-kubernetes-list-type") != "set" or not isinstance(items, dict):
        return False
    if items.get("type") == "array":
        return items.get("x-kubernetes-list-type") not in (None, "atomic")
    if items.get("type") == "object":
        return items.get("x-kubernetes-map-type") != "atomic"
    return False


def _all_versions_have_schema(spec: dict[str, Any]) -> bool:
    if (spec.get("validation") or {}).get("openAPIV3Schema") is not None:
        return True
    return all((v.get("schema") or {}).get("openAPIV3Schema") is not None for v in spec.get("versions") or [])


def _has_non_structural(spec: dict[str, Any]) -> bool:
    return any(_structural(s, "") for s in _schemas(spec))


def _has_unpruned_defaults(spec: dict[str, Any]) -> bool:
    for schema in _schemas(spec):
        if not _schema_has(schema, lambda s: "default" in s) or _structural(schema, ""):
            continue
        if any(e.message.endswith("must not have unknown fields") for e in validate_defaults(schema, "", True)):
            return True
    return False
