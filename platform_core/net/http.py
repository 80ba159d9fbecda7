"""The hardened outbound HTTP client: every call the platform makes to a customer's URL.

- The URL is checked by `ssrf.check_url` at call time (DNS is resolved now, not when the
  URL was registered), and the connection is made to one of the checked addresses: the
  URL's host is replaced by that IP while the `Host` header and the TLS SNI / certificate
  check keep the original name. So a name that re-resolves to a private address between
  the check and the connect (DNS rebinding) never reaches it.
- Redirects are never followed; environment proxies are ignored (they would bypass the
  pinning); a bounded timeout covers connect, write and read, and the whole exchange
  must finish within it; the response body is read up to a cap and the rest dropped.
- Connections are kept alive per (scheme, host name, address, port), never shared between
  host names, so a TLS connection is only ever reused for the name it was verified for.
  The client is thread-safe: the outbound drains call it from a thread pool
  (platform_core/net/pool.py) to send many requests at once.

    response = http.request("POST", url, content=body, headers={...}, timeout=10)
    response.status_code, response.headers, response.body, response.request_headers

Failures raise `OutboundError` with a short `kind` (`unsafe_target`, `timeout`,
`connect_error`, `connection_reset`, `tls_error`, `protocol_error`) and the request headers
that were (or would have been) sent.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from . import ssrf

USER_AGENT = "Engage-Webhooks/1.0"
DEFAULT_MAX_BODY = 64 * 1024
_MAX_CLIENTS = 64


@dataclass
class OutboundResponse:
    status_code: int
    headers: list[tuple[str, str]]
    body: bytes
    elapsed_ms: int
    address: str
    request_headers: list[tuple[str, str]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


class OutboundError(Exception):
    """The request could not be completed; `kind` says how it failed."""

    def __init__(self, kind: str, message: str, *, request_headers=None, elapsed_ms: int = 0,
                 address: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.request_headers: list[tuple[str, str]] = list(request_headers or [])
        self.elapsed_ms = elapsed_ms
        self.address = address

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@lru_cache(maxsize=4)
def _ssl_context(ca_bundle: str) -> ssl.SSLContext:
    if ca_bundle:
        return ssl.create_default_context(cafile=ca_bundle)
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover - certifi ships with httpx
        return ssl.create_default_context()


class _ClientPool:
    """A small LRU of httpx clients, one per (pid, scheme, name, address, port, CA file)."""

    def __init__(self) -> None:
        self._clients: OrderedDict[tuple, httpx.Client] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple, verify) -> httpx.Client:
        key = (os.getpid(), *key)
        with self._lock:
            client = self._clients.get(key)
            if client is not None:
                self._clients.move_to_end(key)
                return client
            client = httpx.Client(
                verify=verify,
                trust_env=False,
                follow_redirects=False,
                # Room for the per-endpoint caps of several endpoints on one host (the
                # drains decide how many requests a receiver gets; the pool only keeps
                # their connections alive).
                limits=httpx.Limits(max_connections=64, max_keepalive_connections=32,
                                    keepalive_expiry=30),
                headers={"User-Agent": USER_AGENT, "Accept": "*/*",
                         "Accept-Encoding": "identity"},
            )
            self._clients[key] = client
            while len(self._clients) > _MAX_CLIENTS:
                _old_key, old = self._clients.popitem(last=False)
                old.close()
            return client

    def close_all(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()


_pool = _ClientPool()


def close_connections() -> None:
    """Drop every kept-alive connection (tests, worker shutdown)."""
    _pool.close_all()


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _classify(exc: Exception) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    text = f"{exc!r} {exc}".lower()
    if "ssl" in text or "certificate" in text or "tls" in text:
        return "tls_error"
    if "reset" in text or "broken pipe" in text or "aborted" in text:
        return "connection_reset"
    if isinstance(exc, httpx.ConnectError):
        return "connect_error"
    if isinstance(exc, httpx.RemoteProtocolError):
        # The peer closed the connection without (a complete) answer.
        return "connection_reset" if "disconnected" in text or "closed" in text else (
            "protocol_error")
    if isinstance(exc, httpx.ReadError | httpx.WriteError):
        return "connection_reset"
    return "protocol_error"


def request(
    method: str,
    url: str,
    *,
    content: bytes = b"",
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    allow_private: bool | None = None,
    max_body: int = DEFAULT_MAX_BODY,
) -> OutboundResponse:
    """Send one request to a checked address of `url`'s host; never follow a redirect."""
    started = time.monotonic()
    base = httpx.URL(url)
    header_items = list((headers or {}).items())
    try:
        addresses = ssrf.check_url(url, allow_private=allow_private)
    except ssrf.UnsafeTarget as exc:
        raise OutboundError("unsafe_target", str(exc), request_headers=header_items) from exc

    parts = urlsplit(url)
    hostname = parts.hostname or ""
    port = parts.port or ssrf.default_port(parts.scheme)
    host_header = base.netloc.decode("ascii")
    ca_bundle = getattr(settings, "OUTBOUND_HTTP_CA_BUNDLE", "") or ""
    verify = _ssl_context(ca_bundle)
    deadline = started + timeout
    last_error: OutboundError | None = None

    for address in addresses[:3]:
        target = base.copy_with(host=address.split("%", 1)[0])
        extensions: dict = {}
        if parts.scheme == "https" and not _is_ip_literal(hostname):
            extensions["sni_hostname"] = hostname
        remaining = max(deadline - time.monotonic(), 0.05)
        client = _pool.get((parts.scheme, hostname, address, port, ca_bundle), verify)
        req = client.build_request(
            method, target, content=content,
            headers=[("Host", host_header), *header_items],
            extensions=extensions,
            timeout=httpx.Timeout(remaining, connect=min(remaining, 5.0)),
        )
        sent_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in req.headers.raw]
        try:
            response = client.send(req, stream=True)
        except httpx.HTTPError as exc:
            kind = _classify(exc)
            last_error = OutboundError(
                kind, str(exc) or exc.__class__.__name__, request_headers=sent_headers,
                elapsed_ms=int((time.monotonic() - started) * 1000), address=address,
            )
            if kind == "connect_error" and time.monotonic() < deadline:
                continue  # try the next checked address
            raise last_error from exc
        try:
            body = bytearray()
            try:
                for chunk in response.iter_raw():
                    if len(body) < max_body:
                        body.extend(chunk[: max_body - len(body)])
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout("the response took longer than the timeout")
                    if len(body) >= max_body:
                        break
            except httpx.HTTPError as exc:
                raise OutboundError(
                    _classify(exc), str(exc) or exc.__class__.__name__,
                    request_headers=sent_headers,
                    elapsed_ms=int((time.monotonic() - started) * 1000), address=address,
                ) from exc
            elapsed = time.monotonic() - started
            if elapsed > timeout:
                raise OutboundError("timeout", "the response took longer than the timeout",
                                    request_headers=sent_headers,
                                    elapsed_ms=int(elapsed * 1000), address=address)
            return OutboundResponse(
                status_code=response.status_code,
                headers=[(k.decode("latin-1"), v.decode("latin-1"))
                         for k, v in response.headers.raw],
                body=bytes(body),
                elapsed_ms=int(elapsed * 1000),
                address=address,
                request_headers=sent_headers,
            )
        finally:
            response.close()
    assert last_error is not None  # noqa: S101 - loop ran at least once
    raise last_error


def post(url: str, **kwargs) -> OutboundResponse:
    return request("POST", url, **kwargs)
