"""ServiceAccount tokens: issued by TokenRequest, checked on every request that carries one.

Tokens are JWTs with the claims upstream's kubernetes/kubernetes pkg/serviceaccount/claims.go
`Claims` writes (`iss`, `sub` = `system:serviceaccount:<ns>:<name>`, `aud`, `exp`, `iat`,
`nbf`, `jti`, and `kubernetes.io: {namespace, serviceaccount: {name, uid}}`), but signed with
HMAC-SHA256 (HS256) under a key kept in the state directory rather than RS256: nothing here
verifies them but this server, and they stay valid across its restarts. As upstream's
validator (pkg/serviceaccount/claims.go `Validate`) does, a token stops working when it
expires or when its ServiceAccount is deleted (or recreated with another uid).

The user a token authenticates as (pkg/serviceaccount/util.go `UserInfo`):
`system:serviceaccount:<ns>:<name>`, uid the ServiceAccount's, groups `system:serviceaccounts`,
`system:serviceaccounts:<ns>` and `system:authenticated`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from pinery.local.apiserver.rbac import AUTHENTICATED, User, service_account_username

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_AUDIENCES = (ISSUER,)
DEFAULT_EXPIRATION = 3600  # TokenRequestSpec.expirationSeconds default
MIN_EXPIRATION = 600  # pkg/apis/authentication/validation: "may not specify a duration less than 10 minutes"
MAX_EXPIRATION = 2**32  # "may not specify a duration larger than 2^32 seconds"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def service_account_user(namespace: str, name: str, uid: str = "") -> User:
    return User(
        name=service_account_username(namespace, name),
        groups=("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        uid=uid,
    )


class TokenSigner:
    def __init__(self, key_path: Path) -> None:
        key_path = Path(key_path)
        if not key_path.exists():
            key_path.parent.mkdir(parents=True, exist_ok=True)
            key_path.write_bytes(secrets.token_bytes(32))
            key_path.chmod(0o600)
        self._key = key_path.read_bytes()

    def _sign(self, signing_input: str) -> str:
        return _b64(hmac.new(self._key, signing_input.encode(), hashlib.sha256).digest())

    def issue(
        self, namespace: str, name: str, uid: str, expiration_seconds: int = DEFAULT_EXPIRATION,
        audiences: tuple[str, ...] = DEFAULT_AUDIENCES, now: float | None = None,
    ) -> tuple[str, int]:
        """(token, expiry as a Unix time)."""
        issued = int(time.time() if now is None else now)
        expires = issued + expiration_seconds
        claims = {
            "aud": list(audiences),
            "exp": expires,
            "iat": issued,
            "iss": ISSUER,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
            "nbf": issued,
            "sub": service_account_username(namespace, name),
        }
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"{header}.{payload}.{self._sign(f'{header}.{payload}')}", expires

    def verify(self, token: str, now: float | None = None) -> dict[str, Any] | None:
        """The claims of a token this signer issued and that has not expired, else None."""
        parts = token.split(".")
        if len(parts) != 3 or not hmac.compare_digest(parts[2], self._sign(f"{parts[0]}.{parts[1]}")):
            return None
        try:
            claims = json.loads(_unb64(parts[1]))
        except ValueError:
            return None
        moment = time.time() if now is None else now
        if not isinstance(claims, dict) or not isinstance(claims.get("exp"), int) or claims["exp"] <= moment:
            return None
        return claims

    def authenticate(self, token: str, lookup_account: Callable[[str, str], dict[str, Any] | None]) -> User | None:
        """The ServiceAccount user of a valid token whose account still exists with the same uid."""
        claims = self.verify(token)
        if claims is None:
            return None
        private = claims.get("kubernetes.io") or {}
        namespace = private.get("namespace", "")
        account = private.get("serviceaccount") or {}
        found = lookup_account(namespace, account.get("name", ""))
        if found is None or found["metadata"].get("uid") != account.get("uid"):
            return None
        return service_account_user(namespace, account["name"], account["uid"])
