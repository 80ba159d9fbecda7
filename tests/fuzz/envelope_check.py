"""Schemathesis hooks (`SCHEMATHESIS_HOOKS=tests.fuzz.envelope_check`): the check that every
answer of the API is the platform's envelope, whatever was generated.

- an error (4xx/5xx) is `{"error": {code, message, status}, "meta": {...}}` as JSON, its
  `error.status` equal to the HTTP status;
- a success with a body is JSON `{"data": ..., "meta": ...}` unless the operation
  documents another media type (downloads: CSV, XLSX, SAML metadata), and 204 is empty.
5xx answers are caught by schemathesis' own `not_a_server_error`.
"""

from __future__ import annotations

import json

import schemathesis

# Successful answers that are not JSON by design: exports and file downloads.
_DOWNLOAD_TYPES = ("text/csv", "application/vnd.openxmlformats", "application/octet-stream",
                   "application/samlmetadata+xml", "text/xml", "application/xml",
                   "text/event-stream")
# OpenAI-compatible answers: the provider's object itself plus meta (0-conventions 10).
_OPENAI_OBJECTS = ("chat.completion", "list")


def _header(response, name: str) -> str:
    value = response.headers.get(name.lower()) or response.headers.get(name) or ""
    return value[0] if isinstance(value, list) and value else (value or "")


@schemathesis.check
def envelope_answer(ctx, response, case) -> None:
    """Every answer is the envelope (or an empty 204, or a documented download)."""
    status = response.status_code
    content_type = _header(response, "Content-Type").split(";")[0].strip().lower()
    body = response.content or b""
    if status == 204:
        if body:
            raise AssertionError("204 with a body")
        return
    if 300 <= status < 400:
        return  # redirects (short links, presigned downloads) carry a Location, not a body
    if status < 400 and content_type.startswith(_DOWNLOAD_TYPES):
        return
    if content_type != "application/json":
        raise AssertionError(
            f"{status} answered {content_type or 'no content type'!r}, not the JSON envelope:"
            f" {body[:200]!r}")
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise AssertionError(f"{status} answered invalid JSON: {body[:200]!r}") from exc
    if not isinstance(payload, dict) or "meta" not in payload:
        raise AssertionError(f"{status} answered JSON outside the envelope: {body[:200]!r}")
    if status >= 400:
        error = payload.get("error")
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            raise AssertionError(f"{status} error without error.code: {body[:200]!r}")
        if error.get("status") != status:
            raise AssertionError(f"{status} answered error.status {error.get('status')}")
    elif "data" not in payload and payload.get("object") not in _OPENAI_OBJECTS:
        raise AssertionError(f"{status} success without data: {body[:200]!r}")
