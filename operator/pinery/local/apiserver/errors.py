"""API errors, answered as `Status` bodies shaped as the Kubernetes API server shapes them.

Kopf, kubectl and the Python client read `code`, `reason`, `message` and `details`; the
messages follow the API server's wording so that what users see matches a real cluster.
"""

from __future__ import annotations

from typing import Any

from pinery.local.apiserver.resources import ResourceType
from pinery.schema.errors import FieldError
from pinery.schema.field import dedup


class ApiError(Exception):
    """An error the API answers with a `Status` body."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        return status_body(self.code, self.reason, self.message, self.details)


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        body["details"] = details
    if not message:
        del body["message"]
    if not reason:
        del body["reason"]
    return body


def qualified(rtype: ResourceType) -> str:
    """`configmaps`, `fsdpjobs.pinery.dev`: how the API server names a resource in messages."""
    return f"{rtype.plural}.{rtype.group}" if rtype.group else rtype.plural


def _details(rtype: ResourceType, name: str, **more: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    details.update(more)
    return details


def not_found(rtype: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{qualified(rtype)} "{name}" not found', _details(rtype, name))


def already_exists(rtype: ResourceType, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{qualified(rtype)} "{name}" already exists', _details(rtype, name))


def conflict(rtype: ResourceType, name: str, why: str) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {qualified(rtype)} "{name}": {why}', _details(rtype, name))


def stale(rtype: ResourceType, name: str) -> ApiError:
    return conflict(rtype, name, "the object has been modified; please apply your changes to the latest version and try again")


_CAUSE_REASONS = (
    ("Required value", "FieldValueRequired"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
    ("Forbidden", "FieldValueForbidden"),
    ("Not found", "FieldValueNotFound"),
    ("Invalid value", "FieldValueInvalid"),
    ("Internal error", "InternalError"),
)


def cause_reason(message: str) -> str:
    for prefix, reason in _CAUSE_REASONS:
        if message.startswith(prefix):
            return reason
    return "FieldValueInvalid"


def invalid(rtype: ResourceType, name: str, problems: list[FieldError]) -> ApiError:
    """422 Invalid, one cause per field: `Kind.group "name" is invalid: [path: message, ...]`.

    As apimachinery's NewInvalid: every error is a cause, and the message is the list's
    ToAggregate, which names each distinct error once.
    """
    shown = [str(p) for p in dedup(problems)]
    listed = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
    kind = f"{rtype.kind}.{rtype.group}" if rtype.group else rtype.kind
    causes = [{"reason": cause_reason(p.message), "message": p.message, "field": p.path} for p in problems]
    details: dict[str, Any] = {"name": name}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.kind
    details["causes"] = causes
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {listed}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(message: str, rtype: ResourceType | None = None, name: str = "") -> ApiError:
    return ApiError(403, "Forbidden", message, _details(rtype, name) if rtype else None)


def method_not_allowed(message: str) -> ApiError:
    return ApiError(405, "MethodNotAllowed", message)


def unsupported_media_type(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", message)


def not_acceptable(message: str) -> ApiError:
    return ApiError(406, "NotAcceptable", message)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def unprocessable(message: str) -> ApiError:
    """422 with no field causes: what a JSON patch that does not apply gets."""
    return ApiError(422, "Invalid", message)


def timeout(message: str) -> ApiError:
    return ApiError(504, "Timeout", message)


def path_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})
