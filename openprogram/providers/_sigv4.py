"""AWS Signature Version 4 request signing, written from the AWS specification.

("Create a signed AWS API request", AWS IAM user guide.) The four steps:
canonical request → string to sign → signing key (an HMAC chain over date,
region, service) → signature in an ``Authorization`` header. Checked against
the published test suite vectors in ``tests/providers/test_sigv4.py``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import parse_qsl, quote, urlsplit

__all__ = ["AwsCredentials", "credentials_from_env", "sign"]

_ALGORITHM = "AWS4-HMAC-SHA256"
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An access key pair, plus a session token for temporary credentials."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


def credentials_from_env(env: Mapping[str, str] | None = None) -> AwsCredentials | None:
    """The standard ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``."""
    env = os.environ if env is None else env
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return None
    return AwsCredentials(key, secret, env.get("AWS_SESSION_TOKEN") or None)


def sign(
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    credentials: AwsCredentials,
    region: str,
    service: str,
    now: datetime | None = None,
) -> dict[str, str]:
    """Sign a request; return ``headers`` plus ``X-Amz-Date``, the token and ``Authorization``.

    Every header given is signed (pass ``Host``), so send exactly these headers.
    ``url`` must be the URL as sent, path already percent-encoded.
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    out = dict(headers)
    out["X-Amz-Date"] = stamp
    if credentials.session_token:
        out["X-Amz-Security-Token"] = credentials.session_token
    signed_names, canonical_headers = _canonical_headers(out)
    parts = urlsplit(url)
    canonical = "\n".join(
        (
            method.upper(),
            _canonical_path(parts.path),
            _canonical_query(parts.query),
            canonical_headers,
            signed_names,
            hashlib.sha256(body).hexdigest(),
        )
    )
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join((_ALGORITHM, stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()))
    key = _signing_key(credentials.secret_access_key, stamp[:8], region, service)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out["Authorization"] = (
        f"{_ALGORITHM} Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={signed_names}, Signature={signature}"
    )
    return out


def _canonical_headers(headers: Mapping[str, str]) -> tuple[str, str]:
    pairs = sorted((k.lower(), _SPACES.sub(" ", v.strip())) for k, v in headers.items())
    names = ";".join(k for k, _ in pairs)
    return names, "".join(f"{k}:{v}\n" for k, v in pairs)


def _canonical_path(path: str) -> str:
    # Services other than S3 encode each segment twice: the path on the wire is
    # already encoded once, so encoding it again (keeping "/") is the second pass.
    return quote(path or "/", safe="/-_.~")


def _canonical_query(query: str) -> str:
    pairs = sorted(
        (quote(k, safe="-_.~"), quote(v, safe="-_.~"))
        for k, v in parse_qsl(query, keep_blank_values=True)
    )
    return "&".join(f"{k}={v}" for k, v in pairs)


def _signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key
