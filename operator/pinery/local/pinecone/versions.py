"""Which Pinecone API version a request speaks (pure).

Pinecone picks the version from the `X-Pinecone-Api-Version` header (docs.pinecone.io
reference/api/versioning). HTTP header names are case-insensitive; SDK 5.x-8.x spell it
`X-Pinecone-API-Version`, 9.x and later `X-Pinecone-Api-Version` (docs/pinecone-api-versions.md).

The handlers build 2025-10's shapes; `pinery.local.pinecone.shapes` turns them into an older
version's, and `pinery.local.pinecone.v2026_07` translates to and from 2026-07's index model.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from pinery.local.pinecone.errors import ApiError

HEADER = "X-Pinecone-Api-Version"

# The stable versions an SDK in use sends (docs/pinecone-api-versions.md, "Versions and the SDKs
# that send them"): 5.x 2024-07 (2024-10 for bulk import), 6.x 2025-01, 7.x 2025-04, 8.x and 9.x
# 2025-10, 10.x 2026-07; and 2026-04, which pinery's gateway sends for what 2026-07 no longer
# allows (pod-based indexes). 2026-04 answers exactly as 2025-10: in pinecone-io/pinecone-api,
# `2026-04/db_control_2026-04.oas.yaml` and `inference_2026-04.oas.yaml` equal their 2025-10 files
# once the version strings are normalised, and `db_data_2026-04.oas.yaml` differs from
# `db_data_2025-10.oas.yaml` only in descriptions ("vectors" -> "records") and an
# `x-component-name` annotation. Every branch on the version here treats it so: the handlers test
# `== v2026_07.VERSION` or `at_least(version, <a floor up to 2025-10, or 2026-07>)`.
SERVED = ("2024-07", "2024-10", "2025-01", "2025-04", "2025-10", "2026-04", "2026-07")
# The version whose shapes the handlers build.
NATIVE = "2025-10"

VERSION = web.RequestKey("pinecone_api_version", str)


def negotiate(header: str | None) -> str:
    """The version a request is answered in.

    The versioning page: a request without the header gets the oldest supported stable version.
    A version that is not served is refused; Pinecone's own wording for that is not published
    (docs/pinecone-api-versions.md, open question 1), so the message names what is served.
    """
    if header is None or header.strip() == "":
        return SERVED[0]
    version = header.strip()
    if version in SERVED:
        return version
    raise ApiError(400, f"Unsupported API version '{version}' in the {HEADER} header. "
                        f"Supported versions: {', '.join(SERVED)}.", "INVALID_ARGUMENT")


def of(request: Any) -> str:
    """The negotiated version of a request (the middleware stores it); NATIVE outside one."""
    try:
        return request[VERSION]
    except (KeyError, TypeError):
        return NATIVE


def at_least(version: str, floor: str) -> bool:
    """`YYYY-MM` strings order as their dates do."""
    return version >= floor
