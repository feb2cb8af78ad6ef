"""The application key under which handlers find their emulator."""

from __future__ import annotations

from typing import Any

from aiohttp import web

EMULATOR: web.AppKey[Any] = web.AppKey("pinecone_emulator")
