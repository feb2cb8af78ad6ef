"""Errors the emulator answers with, in the two shapes the 2025-10 specs define.

The control plane answers `ErrorResponse`: `{"status": N, "error": {"code": "...", "message": "..."}}`.
The data plane answers `rpcStatus`: `{"code": <gRPC code>, "message": "...", "details": []}`.
"""

from __future__ import annotations

# HTTP status -> ErrorResponse.error.code (the spec's x-enum) when a caller gives none.
DEFAULT_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    402: "PAYMENT_REQUIRED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    412: "FAILED_PRECONDITION",
    422: "UNPROCESSABLE_ENTITY",
    429: "RESOURCE_EXHAUSTED",
    500: "UNKNOWN",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

# ErrorResponse code -> gRPC status code, for the data plane's rpcStatus.
GRPC_CODES = {
    "OK": 0,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "FORBIDDEN": 7,
    "RESOURCE_EXHAUSTED": 8,
    "QUOTA_EXCEEDED": 8,
    "FAILED_PRECONDITION": 9,
    "PAYMENT_REQUIRED": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
    "UNPROCESSABLE_ENTITY": 3,
}

DEFAULT_MESSAGES = {
    401: "Invalid API key.",
    402: "Request failed. Pay all past due invoices to lift restrictions on your account.",
    429: "Too many requests. Please retry shortly.",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable. Please retry shortly.",
    504: "Gateway timeout",
}


class ApiError(Exception):
    """An error answer: raised anywhere in a handler, rendered by the server's middleware."""

    def __init__(self, status: int, message: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.code = code or DEFAULT_CODES.get(status, "UNKNOWN")
        self.message = message or DEFAULT_MESSAGES.get(status, self.code.replace("_", " ").capitalize())
        self.headers = headers or {}
        super().__init__(f"{status} {self.code}: {self.message}")

    def control_body(self) -> dict:
        return {"status": self.status, "error": {"code": self.code, "message": self.message}}

    def data_body(self) -> dict:
        return {"code": GRPC_CODES.get(self.code, 2), "message": self.message, "details": []}


def bad_request(message: str) -> ApiError:
    return ApiError(400, message, "INVALID_ARGUMENT")


def unprocessable(message: str) -> ApiError:
    return ApiError(422, f"Failed to deserialize the JSON body into the target type: {message}",
                    "UNPROCESSABLE_ENTITY")


def not_found(message: str) -> ApiError:
    return ApiError(404, message, "NOT_FOUND")


def already_exists(message: str = "Resource already exists.") -> ApiError:
    return ApiError(409, message, "ALREADY_EXISTS")


def failed_precondition(message: str) -> ApiError:
    return ApiError(412, message, "FAILED_PRECONDITION")
