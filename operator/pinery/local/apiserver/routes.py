"""HTTP routes: URL parsing, request bodies, content negotiation, and responses.

Paths follow the API server: `/api/v1/...` for the core group, `/apis/{group}/{version}/...`
otherwise, `namespaces/{ns}/` before namespaced resources, `{resource}/{name}/{subresource}`.
Bodies are JSON, YAML, or (for the kinds kubectl's generators send) protobuf; answers are JSON,
or a `meta.k8s.io` Table when `Accept` asks for one (`kubectl get`). Verbs are in `operations`,
watches in `watch_stream`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from aiohttp import web

from pinery.local.apiserver import discovery, errors, eviction, openapi, openapi_v2, podstreams, protobuf, scale, table, yaml_body
from pinery.local.apiserver.admission import check_field_validation
from pinery.local.apiserver.counters import RequestCounter, verb
from pinery.local.apiserver.logs import serve_log
from pinery.local.apiserver.operations import Api, DeleteOptions, WriteOptions
from pinery.local.apiserver.patch import PATCH_TYPES
from pinery.local.apiserver.resources import ResourceType, TypeRegistry
from pinery.local.apiserver.selectors import parse_field_selector, parse_label_selector
from pinery.local.apiserver.watch_stream import WatchSettings, serve_watch
from pinery.schema.errors import FieldError

PROTOBUF = "application/vnd.kubernetes.protobuf"
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def json_response(body: Any, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    response = web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(), status=status, content_type="application/json"
    )
    for warning in warnings or ():
        escaped = warning.replace("\\", "\\\\").replace('"', '\\"')
        response.headers.add("Warning", f'299 - "{escaped}"')
    return response


def table_version(accept: str) -> str | None:
    """The meta.k8s.io version of the Table an Accept header asks for, if it asks for one."""
    for part in accept.split(","):
        params = {}
        for param in part.split(";")[1:]:
            if "=" in param:
                key, _, value = param.strip().partition("=")
                params[key] = value
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return params["v"]
    return None


def _flag(query, name: str) -> bool:
    return query.get(name, "").lower() in ("true", "1")


def write_options(request: web.Request) -> WriteOptions:
    query = request.query
    dry_run = query.getall("dryRun", [])
    for value in dry_run:
        if value != "All":
            raise errors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return WriteOptions(
        dry_run=bool(dry_run),
        field_manager=query.get("fieldManager", ""),
        field_validation=check_field_validation(query.get("fieldValidation")),
        force=_flag(query, "force"),
        user_agent=request.headers.get("User-Agent", ""),
    )


def decode_body(raw: bytes, content_type: str, rtype: ResourceType, opts: WriteOptions) -> Any:
    """A request body as a JSON-shaped object; duplicate JSON fields follow fieldValidation."""
    if content_type == PROTOBUF:
        return _decode_protobuf(raw, rtype)
    if content_type in YAML_TYPES:
        return decode_yaml(raw, opts)
    if content_type not in ("application/json", "", "application/octet-stream", "text/plain"):
        raise errors.unsupported_media_type(
            f'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, {PROTOBUF}'
        )
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                duplicates.append(key)
            out[key] = value
        return out

    try:
        body = json.loads(raw or b"null", object_pairs_hook=pairs)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding JSON body: {exc}") from None
    _repeated_keys(duplicates, 'json: duplicate field "{}"', opts)
    return body


def _repeated_keys(duplicates: list[str], strict_form: str, opts: WriteOptions) -> None:
    """Repeated keys in a body: an error under fieldValidation=Strict, warnings under Warn."""
    if not duplicates:
        return
    if opts.field_validation == "Strict":
        raise errors.bad_request("strict decoding error: " + ", ".join(strict_form.format(d) for d in duplicates))
    if opts.field_validation == "Warn":
        opts.warnings.extend(f'duplicate field "{d}"' for d in duplicates)


def decode_yaml(raw: bytes, opts: WriteOptions) -> Any:
    """A YAML body as the API server's YAMLToJSON reads it (yaml_body); repeated keys follow
    fieldValidation, as for JSON."""
    duplicates: list[str] = []
    try:
        body = yaml_body.decode(raw, duplicates)
    except yaml_body.YamlBodyError as exc:
        raise errors.bad_request(str(exc)) from None
    _repeated_keys(duplicates, 'yaml: key "{}" already set in map', opts)
    return body


def _decode_protobuf(raw: bytes, rtype: ResourceType) -> dict[str, Any]:
    """kubectl's generator commands send protobuf; the few kinds they create are decoded."""
    try:
        return protobuf.decode(raw)
    except protobuf.ProtobufError as exc:
        raise errors.unsupported_media_type(f"{rtype.kind} in {PROTOBUF}: {exc}") from None


class Routes:
    def __init__(
        self,
        api: Api,
        logs_dir: Path,
        server_address: Callable[[], str],
        watch_settings: WatchSettings,
        counter: RequestCounter | None = None,
    ) -> None:
        self.api = api
        self.counter = counter or RequestCounter()
        self.registry: TypeRegistry = api.registry
        self.store = api.store
        self.logs_dir = logs_dir
        self.server_address = server_address
        self.watch_settings = watch_settings

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        method = request.method
        if not parts:
            return json_response({"paths": self._paths()})
        head = parts[0]
        if head in ("healthz", "livez", "readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if len(parts) <= (2 if head == "api" else 3) and head in ("api", "apis") or head in ("version", "openapi"):
            self.counter.count(verb(method, True), "discovery")
        if parts == ["version"]:
            return json_response(discovery.version_info())
        if parts == ["openapi", "v2"]:
            content_type = openapi_v2.negotiate(request.headers.get("Accept", ""))
            if content_type is None:
                return web.Response(status=406)
            return web.Response(body=openapi_v2.body(content_type, openapi.SERVER_VERSION), content_type=content_type)
        if head == "openapi":
            return self._openapi(parts[1:])
        if method == "GET" and parts == ["api"]:
            return json_response(discovery.api_versions(self.server_address()))
        if method == "GET" and parts == ["apis"]:
            return json_response(discovery.api_group_list(self.registry))
        if head == "api" and len(parts) >= 2:
            return await self._resource(request, "", parts[1], parts[2:])
        if head == "apis" and len(parts) == 2 and method == "GET":
            group = discovery.api_group(self.registry, parts[1])
            if group is None:
                raise errors.path_not_found()
            return json_response(group)
        if head == "apis" and len(parts) >= 3:
            return await self._resource(request, parts[1], parts[2], parts[3:])
        raise errors.path_not_found()

    def _paths(self) -> list[str]:
        paths = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version"]
        for group, versions in self.registry.group_versions().items():
            if group:
                paths.append(f"/apis/{group}")
                paths.extend(f"/apis/{group}/{v}" for v in versions)
        return sorted(paths)

    def _openapi(self, rest: list[str]) -> web.Response:
        # v3 documents; /openapi/v2 is answered in dispatch (openapi_v2.py).
        if not rest or rest[0] != "v3":
            raise errors.path_not_found()
        types = self.registry.types
        if len(rest) == 1:
            return json_response(openapi.v3_index(types))
        if rest[1] == "api" and len(rest) == 3:
            group, version = "", rest[2]
        elif rest[1] == "apis" and len(rest) == 4:
            group, version = rest[2], rest[3]
        else:
            raise errors.path_not_found()
        if not self.registry.in_group_version(group, version):
            raise errors.path_not_found()
        return json_response(openapi.v3_document(group, version, types))

    async def _resource(self, request: web.Request, group: str, version: str, rest: list[str]) -> web.StreamResponse:
        if not rest:
            if request.method != "GET":
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            listing = discovery.api_resource_list(self.registry, group, version)
            if listing is None:
                raise errors.path_not_found()
            return json_response(listing)
        watch_path = rest[0] == "watch"
        if watch_path:
            rest = rest[1:]
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in _NAMESPACE_SUBRESOURCES:
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise errors.path_not_found()
        rtype = self.registry.lookup(group, version, rest[0])
        if rtype is None or (namespace is not None and not rtype.namespaced):
            raise errors.path_not_found()
        name = rest[1] if len(rest) >= 2 else None
        subresource = rest[2] if len(rest) == 3 else None
        if name is not None and rtype.namespaced and namespace is None:
            raise errors.path_not_found()
        if rtype.kind == "Pod" and subresource in podstreams.SUBRESOURCES:  # refused with a reason
            assert name is not None  # a subresource path names its object (len(rest) == 3)
            return await podstreams.refuse(request, self.store, rtype, namespace or "", name, subresource)
        if subresource is not None and subresource not in rtype.subresources:
            raise errors.path_not_found()
        watch = watch_path or _flag(request.query, "watch")
        self.counter.count(verb(request.method, name is not None, watch), f"{rtype.plural}/{subresource}" if subresource else rtype.plural)
        if name is None:
            return await self._collection(request, rtype, namespace, watch_path)
        return await self._object(request, rtype, namespace or "", name, subresource)

    # Collections

    async def _collection(self, request: web.Request, rtype: ResourceType, namespace: str | None, watch_path: bool) -> web.StreamResponse:
        query = request.query
        method = request.method
        if method == "GET":
            labels = parse_label_selector(query.get("labelSelector"))
            fields = parse_field_selector(query.get("fieldSelector"))
            if watch_path or _flag(query, "watch"):
                return await serve_watch(request, self.api, rtype, namespace, labels, fields, self.watch_settings, self._table_maker(request, rtype))
            if "sendInitialEvents" in query:
                raise errors.invalid(rtype, "", [FieldError("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")])
            limit = query.get("limit", "")
            body = self.api.list(
                rtype, namespace, labels, fields,
                limit=int(limit) if limit.isdigit() else 0,
                continue_token=query.get("continue", ""),
                resource_version=query.get("resourceVersion", ""),
                resource_version_match=query.get("resourceVersionMatch", ""),
            )
            return self._respond_list(request, rtype, body)
        if method == "POST":
            if rtype.namespaced and namespace is None:
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            opts = write_options(request)
            body = decode_body(await request.read(), request.content_type, rtype, opts)
            created = self.api.create(rtype, namespace or "", body, opts)
            return json_response(created, 201, opts.warnings)
        if method == "DELETE":
            labels = parse_label_selector(query.get("labelSelector"))
            fields = parse_field_selector(query.get("fieldSelector"))
            options = DeleteOptions.from_body(await self._options_body(request), dict(query))
            return json_response(self.api.delete_collection(rtype, namespace, labels, fields, options))
        raise errors.method_not_allowed("the server does not allow this method on the requested resource")

    # Objects

    async def _object(self, request: web.Request, rtype: ResourceType, namespace: str, name: str, subresource: str | None) -> web.StreamResponse:
        method = request.method
        if subresource == "log":
            if method != "GET":
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            return await serve_log(request, self.store, rtype, namespace, name, self.logs_dir)
        if subresource == "binding":
            if method != "POST":
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            opts = write_options(request)
            return json_response(self.api.bind_pod(namespace, name, await self._json_body(request), opts), 201)
        if subresource == "eviction":
            if method != "POST":
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            opts = write_options(request)
            body = decode_body(await request.read(), request.content_type, rtype, opts)
            return json_response(eviction.evict_pod(self.api, namespace, name, body, request.query.getall("dryRun", [])), 201)
        if subresource == "finalize":
            if method != "PUT":
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            opts = write_options(request)
            return json_response(self.api.finalize_namespace(name, await self._json_body(request), opts))
        if subresource == "scale":
            return await self._scale(request, rtype, namespace, name)
        if method == "GET":
            obj = self.api.get(rtype, namespace, name)
            return self._respond_object(request, rtype, obj)
        if method == "PUT":
            opts = write_options(request)
            body = decode_body(await request.read(), request.content_type, rtype, opts)
            result = self.api.replace(rtype, namespace, name, body, opts, subresource)
            return json_response(result, 200, opts.warnings)
        if method == "PATCH":
            opts = write_options(request)
            content_type = request.content_type
            if content_type not in PATCH_TYPES:
                raise errors.unsupported_media_type(
                    f"the body of the request was in an unknown format - accepted media types include: {', '.join(PATCH_TYPES)}"
                )
            result, created = self.api.patch(rtype, namespace, name, content_type, await request.read(), opts, subresource)
            return json_response(result, 201 if created else 200, opts.warnings)
        if method == "DELETE":
            if subresource:
                raise errors.method_not_allowed("the server does not allow this method on the requested resource")
            options = DeleteOptions.from_body(await self._options_body(request), dict(request.query))
            return json_response(self.api.delete(rtype, namespace, name, options))
        raise errors.method_not_allowed("the server does not allow this method on the requested resource")

    @staticmethod
    async def _options_body(request: web.Request) -> dict[str, Any] | None:
        """A DELETE's DeleteOptions in JSON, YAML or protobuf, as apiserver handlers/delete.go
        negotiates it (Go clients send protobuf: Helm's release Secrets)."""
        raw = await request.read()
        if not raw.strip():
            return None
        if request.content_type == PROTOBUF:
            try:
                body = protobuf.decode(raw)
            except protobuf.ProtobufError as exc:
                raise errors.bad_request(str(exc)) from None
        elif request.content_type in YAML_TYPES:
            body = decode_yaml(raw, WriteOptions())
        elif request.content_type in ("application/json", "", "application/octet-stream", "text/plain"):
            return await Routes._json_body(request)
        else:
            raise errors.unsupported_media_type(
                f"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, {PROTOBUF}"
            )
        if not isinstance(body, dict) or body.get("kind") not in (None, "DeleteOptions"):
            raise errors.bad_request("decoded object cannot be converted to DeleteOptions")
        return body

    async def _scale(self, request: web.Request, rtype: ResourceType, namespace: str, name: str) -> web.Response:
        """`{deployments,replicasets}/{name}/scale` (scale.py)."""
        obj = self.api.get(rtype, namespace, name)
        if request.method == "GET":
            return json_response(scale.scale_of(obj))
        if request.method not in ("PUT", "PATCH"):
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        raw = await request.read()
        wanted = scale.patched_scale(obj, request.content_type, raw) if request.method == "PATCH" else await self._json_body(request)
        stored = self.api.write_update(rtype, obj, scale.scaled(rtype, obj, wanted), write_options(request))
        return json_response(scale.scale_of(stored))

    @staticmethod
    async def _json_body(request: web.Request) -> dict[str, Any] | None:
        raw = await request.read()
        if not raw.strip():
            return None
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise errors.bad_request(f"error decoding JSON body: {exc}") from None
        if body is not None and not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON object")
        return body

    # Representations

    def _table_maker(self, request: web.Request, rtype: ResourceType) -> Callable[..., dict[str, Any]] | None:
        version = table_version(request.headers.get("Accept", ""))
        if version is None:
            return None
        include = request.query.get("includeObject", "Metadata")
        if include not in table.INCLUDE_OBJECT:
            raise errors.bad_request(f"includeObject: Unsupported value: \"{include}\": supported values: {', '.join(table.INCLUDE_OBJECT)}")

        def make(objects: list[dict[str, Any]], resource_version: str = "", continue_token: str = "") -> dict[str, Any]:
            out = table.to_table(rtype, objects, resource_version=resource_version, continue_token=continue_token, include_object=include)
            if version == "v1beta1":
                out = {**out, "apiVersion": "meta.k8s.io/v1beta1"}
            return out

        return make

    def _respond_list(self, request: web.Request, rtype: ResourceType, body: dict[str, Any]) -> web.Response:
        make = self._table_maker(request, rtype)
        if make is None:
            return json_response(body)
        meta = body["metadata"]
        items = [{"apiVersion": rtype.api_version, "kind": rtype.kind, **item} for item in body["items"]]
        return json_response(make(items, meta.get("resourceVersion", ""), meta.get("continue", "")))

    def _respond_object(self, request: web.Request, rtype: ResourceType, obj: dict[str, Any]) -> web.Response:
        make = self._table_maker(request, rtype)
        if make is None:
            return json_response(obj)
        return json_response(make([obj], obj["metadata"].get("resourceVersion", "")))
