"""Signature checks of the providers' inbound webhooks, each exactly as the provider signs.

- Twilio (`X-Twilio-Signature`): base64 HMAC-SHA1, keyed with the account's Auth Token, of
  the full public URL Twilio requested followed by every POST parameter name and value,
  sorted by name (values of a repeated name sorted too), without delimiters. Twilio signs
  the URL sometimes with and sometimes without the default port, so both forms are
  accepted (as Twilio's own RequestValidator does). A JSON body is signed through the
  `bodySHA256` query parameter (hex SHA-256 of the raw body) instead of parameters.
  `X-Twilio-Webhooks-Signature-Settings: algorithm=HMAC_SHA256` selects HMAC-SHA256.
- Meta / WhatsApp Cloud API (`X-Hub-Signature-256`): `sha256=` + hex HMAC-SHA256 of the raw
  body keyed with the app secret.
- Google RCS Business Messaging (`X-Goog-Signature`): base64 HMAC-SHA512 of the decoded
  `message.data` of the Pub/Sub push body, keyed with the agent's webhook client token.

Every comparison is constant-time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qs, urlsplit, urlunsplit

TWILIO_ALGORITHMS = {"HMAC_SHA1": hashlib.sha1, "HMAC_SHA256": hashlib.sha256}


def twilio_algorithm(settings_header: str) -> str:
    """The algorithm named by X-Twilio-Webhooks-Signature-Settings (default HMAC_SHA1)."""
    for part in (settings_header or "").split(","):
        name, sep, value = part.partition("=")
        if sep and name.strip() == "algorithm" and value.strip():
            return value.strip().upper()
    return "HMAC_SHA1"


def _url_variants(url: str) -> list[str]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if parts.username or parts.password:
        return [url]
    default_port = 443 if parts.scheme == "https" else 80
    without = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    with_port = urlunsplit((parts.scheme, f"{host}:{parts.port or default_port}", parts.path,
                            parts.query, parts.fragment))
    return [url, without, with_port]


def twilio_signature(token: str, url: str, params: Mapping[str, Iterable[str]],
                     algorithm: str = "HMAC_SHA1") -> str:
    text = url
    for name in sorted(set(params)):
        for value in sorted(set(params[name])):
            text += name + value
    digest = hmac.new(token.encode(), text.encode(), TWILIO_ALGORITHMS[algorithm]).digest()
    return base64.b64encode(digest).decode()


def twilio_valid(*, token: str, url: str, params: Mapping[str, Iterable[str]], raw_body: bytes,
                 signature: str, algorithm: str = "HMAC_SHA1") -> bool:
    if not token or not signature or algorithm not in TWILIO_ALGORITHMS:
        return False
    body_hash = parse_qs(urlsplit(url).query).get("bodySHA256")
    if body_hash:
        if not hmac.compare_digest(hashlib.sha256(raw_body).hexdigest(), body_hash[0]):
            return False
        params = {}
    valid = False
    for variant in _url_variants(url):
        valid |= hmac.compare_digest(twilio_signature(token, variant, params, algorithm),
                                     signature)
    return valid


def meta_valid(*, app_secret: str, raw_body: bytes, header: str) -> bool:
    if not app_secret or not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(app_secret.encode(), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header[len("sha256="):].strip().lower())


def google_rbm_valid(*, client_token: str, data: bytes, header: str) -> bool:
    if not client_token or not header:
        return False
    expected = base64.b64encode(
        hmac.new(client_token.encode(), data, hashlib.sha512).digest()).decode()
    return hmac.compare_digest(expected, header.strip())
