"""Refuse outbound targets that are not public (SSRF guard): the one rule for webhooks,
sinks, status callbacks, provider endpoints and every other URL the platform calls.

Only http(s); every address the host resolves to must be public: private, loopback,
link-local (cloud metadata at 169.254.169.254), multicast, reserved, unspecified,
shared (100.64/10) and their IPv6 equivalents (unique-local fc00::/7, link-local fe80::/10,
IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16 with a non-public IPv4
inside, Teredo) are refused. ALLOW_PRIVATE_WEBHOOK_TARGETS (development, `make run`,
tests) opens only loopback and the private ranges (RFC 1918, IPv6 unique-local): cloud
metadata and link-local addresses, in any form, and the metadata host names stay refused
whatever it says. URLs are checked when saved and again when called: delivery code
re-resolves at send time and connects to the checked address (no DNS rebinding):
`platform_core.net.http` does that.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

# Not globally reachable although Python's tables do not all say so.
_ALSO_BLOCKED = (
    ipaddress.ip_network("100.64.0.0/10"),   # shared address space (carrier-grade NAT)
    ipaddress.ip_network("192.0.0.0/24"),    # IETF protocol assignments
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Names that reach cloud metadata services whatever they resolve to.
_METADATA_HOSTS = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal",
})


# What ALLOW_PRIVATE_WEBHOOK_TARGETS opens: loopback and the private ranges, nothing else.
_DEVELOPMENT_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",  # RFC 1918 + loopback
    "::1/128", "fc00::/7",                                           # IPv6 loopback, ULA
))


class UnsafeTarget(ValueError):
    """The URL is not an acceptable outbound target; the message says why."""


def is_public_address(address: str) -> bool:
    """True when `address` (IPv4 or IPv6 text, optionally with a %zone) is globally routable."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return is_public_address(str(embedded))
        if ip.teredo:
            return False
    if isinstance(ip, ipaddress.IPv4Address) and any(ip in net for net in _ALSO_BLOCKED):
        return False
    return ip.is_global and not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    )


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, NAT64, 6to4), if any."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def is_development_address(address: str) -> bool:
    """True for loopback and private-range addresses (in any IPv6 form of them): what
    ALLOW_PRIVATE_WEBHOOK_TARGETS lets through. Link-local and metadata never are."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _embedded_ipv4(ip) or ip
    return any(ip in network for network in _DEVELOPMENT_NETWORKS)


def is_allowed_address(address: str, *, allow_private: bool) -> bool:
    return is_public_address(address) or (allow_private and is_development_address(address))


def _literal_address(host: str) -> str | None:
    literal = host.strip("[]")
    try:
        ipaddress.ip_address(literal.split("%", 1)[0])
    except ValueError:
        return None
    return literal


def check_host(host: str, *, allow_private: bool | None = None) -> None:
    """What can be refused without DNS: metadata host names, `localhost` and literal
    addresses outside the allowed ranges. For a quick check when a URL is accepted; the
    full check (`check_url`) resolves the name, when saved or called."""
    if allow_private is None:
        allow_private = settings.ALLOW_PRIVATE_WEBHOOK_TARGETS
    host = host.rstrip(".").lower()
    if host in _METADATA_HOSTS:
        raise UnsafeTarget(f"{host} is a metadata service")
    if not allow_private and (host == "localhost" or host.endswith(".localhost")):
        raise UnsafeTarget(f"{host} is not a public host")
    literal = _literal_address(host)
    if literal is not None and not is_allowed_address(literal, allow_private=allow_private):
        raise UnsafeTarget(f"{host} is not a public address")


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (IPv4 first, then IPv6; stable order)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve") from exc
    addresses = {info[4][0] for info in infos}
    return sorted(addresses, key=lambda a: (":" in a, a))


def default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def check_url(url: str, *, schemes: tuple[str, ...] = ("http", "https"),
              allow_private: bool | None = None) -> list[str]:
    """Validate `url` and return the addresses it resolves to (all of them public)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeTarget("the URL is malformed") from exc
    if parts.scheme not in schemes:
        raise UnsafeTarget(f"the URL scheme must be {' or '.join(schemes)}")
    if not parts.hostname:
        raise UnsafeTarget("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeTarget("credentials in the URL are not allowed")
    if allow_private is None:
        allow_private = settings.ALLOW_PRIVATE_WEBHOOK_TARGETS
    check_host(parts.hostname, allow_private=allow_private)
    addresses = resolve(parts.hostname, port or default_port(parts.scheme))
    if not addresses:
        raise UnsafeTarget(f"host {parts.hostname!r} does not resolve")
    if any(not is_allowed_address(a, allow_private=allow_private) for a in addresses):
        raise UnsafeTarget(f"{parts.hostname} resolves to a non-public address")
    return addresses
