"""Authentication: ``Authorization: Bearer <JWT>`` checked against configured keys. PyJWT (and
the cryptography it loads) is imported when a key is configured, not with the module."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph.errors import EdgewiseError
from graph.keys import validate_id
from server.errors import Unauthenticated
from server.http.jwks import TIMEOUT, RemoteJwks, is_url

if TYPE_CHECKING:
    import jwt

__all__ = ["ADMIN", "Authenticator", "Principal", "Unauthenticated", "expires_at"]

LEEWAY = 60  # seconds of clock skew allowed on exp / nbf / iat
KEY_TYPES = {"RS256": "RSA", "ES256": "EC"}  # asymmetric algorithms and their JWK key type


@dataclass(frozen=True)
class Principal:
    """Who is asking: the token's subject (the bare id of a node of the model's ``access``
    principal type) and whether they hold the ``admin`` role."""

    subject: str | None
    admin: bool


ADMIN = Principal(None, True)


class Authenticator:
    """Verifies tokens with HS256 and a shared secret, or RS256/ES256 and a JWKS (a file, or an
    https URL fetched without blocking and cached: :class:`server.http.jwks.RemoteJwks`). ``exp`` is
    required; ``iss``/``aud`` are checked when configured."""

    def __init__(
        self,
        secret: str | None = None,
        jwks: str | None = None,
        issuer: str | None = None,
        audience: str | None = None,
        jwks_timeout: float = TIMEOUT,
    ) -> None:
        self.secret = secret
        self.issuer = issuer
        self.audience = audience
        self.jwks_client: RemoteJwks | None = None
        self.jwks_file: jwt.PyJWKSet | None = None
        if jwks and is_url(jwks):
            self.jwks_client = RemoteJwks(jwks, timeout=jwks_timeout)
        elif jwks:
            import jwt

            self.jwks_file = jwt.PyJWKSet.from_dict(json.loads(Path(jwks).read_text()))

    @property
    def configured(self) -> bool:
        return bool(self.secret or self.jwks_client or self.jwks_file)

    async def _key(self, token: str) -> tuple[Any, list[str]]:
        import jwt

        header = jwt.get_unverified_header(token)
        algorithm = header.get("alg")
        if self.secret and algorithm == "HS256":
            return self.secret, ["HS256"]
        if algorithm in KEY_TYPES:
            kid = header.get("kid")
            keys: list[jwt.PyJWK] = []
            if self.jwks_client is not None:
                keys = await self.jwks_client.keys(kid if isinstance(kid, str) else None)
            elif self.jwks_file is not None:
                keys = [key for key in self.jwks_file.keys if kid in (None, key.key_id)]
            for key in keys:
                if key.key_type == KEY_TYPES[algorithm]:
                    return key.key, [algorithm]
            if self.jwks_client is not None or self.jwks_file is not None:
                raise jwt.InvalidKeyError(f"the JWKS has no {algorithm} key with kid {kid!r}")
        raise jwt.InvalidAlgorithmError(f"tokens signed with {algorithm!r} are not accepted")

    async def principal(self, authorization: str | None) -> Principal:
        """The principal of an ``Authorization`` header, or :class:`Unauthenticated`
        (:class:`graph.errors.Unavailable` when the JWKS cannot be fetched)."""
        if not self.configured:
            return ADMIN
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("send a token: Authorization: Bearer <JWT>")
        import jwt

        try:
            key, algorithms = await self._key(token.strip())
            claims = jwt.decode(
                token.strip(),
                key,
                algorithms=algorithms,
                issuer=self.issuer,
                audience=self.audience,
                leeway=LEEWAY,
                options={"require": ["exp", "sub"], "verify_aud": self.audience is not None},
            )
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise Unauthenticated(f"invalid token: {exc}") from None
        roles = claims.get("roles") or []
        admin = isinstance(roles, list) and "admin" in roles
        try:
            subject = validate_id(str(claims["sub"]))
        except EdgewiseError:
            raise Unauthenticated("invalid token: sub is not an id") from None
        return Principal(subject, admin)


def expires_at(authorization: str | None) -> float | None:
    """The ``exp`` (plus the leeway) of a bearer token that :meth:`Authenticator.principal`
    accepted, for a connection that must end with it; None without a token."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    import jwt

    try:
        claims = jwt.decode(token.strip(), options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    exp = claims.get("exp")
    return float(exp) + LEEWAY if isinstance(exp, int | float) else None
