"""SSRF refusals for every address family, at registration (422) and in the client."""

from __future__ import annotations

import socket

import pytest

from platform_core.net import http, ssrf

REFUSED = [
    # IPv4
    "http://127.0.0.1/hook", "http://127.1.2.3:8080/hook", "http://10.0.0.5/hook",
    "http://172.16.3.4/hook", "http://192.168.1.1/hook", "http://169.254.169.254/latest/meta-data",
    "http://169.254.1.1/hook", "http://100.64.0.1/hook", "http://0.0.0.0/hook",
    "http://224.0.0.1/hook", "http://240.0.0.1/hook", "http://255.255.255.255/hook",
    "http://192.0.0.8/hook", "http://198.18.0.1/hook",
    # Numeric forms that resolve to loopback.
    "http://2130706433/hook", "http://0x7f000001/hook", "http://127.0.0.1./hook",
    # IPv6
    "http://[::1]/hook", "http://[::]/hook", "http://[fe80::1]/hook", "http://[fc00::1]/hook",
    "http://[fd12:3456::1]/hook", "http://[fec0::1]/hook", "http://[ff02::1]/hook",
    "http://[::ffff:127.0.0.1]/hook", "http://[::ffff:169.254.169.254]/hook",
    "http://[::ffff:10.0.0.1]/hook", "http://[64:ff9b::7f00:1]/hook",
    "http://[2002:7f00:1::1]/hook", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
    "http://[::7f00:1]/hook", "http://[2001:db8::1]/hook",
    # Names
    "http://localhost/hook", "http://localhost:8000/hook", "http://metadata.google.internal/x",
    # Schemes, credentials, garbage
    "ftp://example.com/hook", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)",
    "http://user:pass@example.com/hook", "http:///nohost", "http://[::1/hook",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", REFUSED)
def test_registration_refuses_non_public_targets(url, tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    response = tenant.client().post("/api/v1/webhooks", {"url": url, "events": ["*"]},
                                    format="json")
    assert response.status_code == 422, (url, response.content)
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["issues"][0]["field"] == "url"


@pytest.mark.django_db
def test_name_resolving_to_a_private_address_is_refused(tenant, settings, monkeypatch):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        table = {"evil.example": "10.1.2.3", "mixed.example": ["93.184.216.34", "::1"],
                 "good.example": "93.184.216.34"}
        if host in table:
            addresses = table[host] if isinstance(table[host], list) else [table[host]]
            return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                     (a, port)) for a in addresses]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    for host in ("evil.example", "mixed.example"):
        response = tenant.client().post("/api/v1/webhooks",
                                        {"url": f"https://{host}/hook", "events": ["*"]},
                                        format="json")
        assert response.status_code == 422, host
    ok = tenant.client().post("/api/v1/webhooks",
                              {"url": "https://good.example/hook", "events": ["*"]}, format="json")
    assert ok.status_code == 201


@pytest.mark.parametrize(("address", "public"), [
    ("8.8.8.8", True), ("1.1.1.1", True), ("2606:4700:4700::1111", True),
    ("::ffff:8.8.8.8", True), ("64:ff9b::808:808", True), ("2002:808:808::1", True),
    ("127.0.0.1", False), ("10.0.0.1", False), ("172.31.255.255", False),
    ("192.168.0.1", False), ("169.254.169.254", False), ("100.100.100.100", False),
    ("0.0.0.0", False), ("::", False), ("::1", False), ("fe80::1%eth0", False),
    ("fd00::1", False), ("::ffff:192.168.0.1", False), ("64:ff9b::a00:1", False),
    ("2002:a00:1::1", False), ("2001::1", False), ("ff05::2", False), ("not-an-ip", False),
])
def test_is_public_address(address, public):
    assert ssrf.is_public_address(address) is public


def test_client_refuses_without_connecting(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    with pytest.raises(http.OutboundError) as info:
        http.post("http://127.0.0.1:9/hook", content=b"{}", headers={"X-A": "1"}, timeout=1)
    assert info.value.kind == "unsafe_target"
    assert info.value.request_headers == [("X-A", "1")]


def test_client_allows_private_only_when_told(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    assert ssrf.check_url("http://127.0.0.1:9/", allow_private=True) == ["127.0.0.1"]
    with pytest.raises(ssrf.UnsafeTarget):
        ssrf.check_url("http://127.0.0.1:9/")


# With ALLOW_PRIVATE_WEBHOOK_TARGETS (development): loopback and private ranges open, cloud
# metadata and link-local stay refused in every form.
ALWAYS_REFUSED = [
    "https://169.254.169.254/latest/meta-data/", "http://169.254.1.1/hook",
    "http://[fe80::1]/hook", "http://[fe80::a9fe:a9fe]/hook", "http://[febf::1]/hook",
    "http://[::ffff:169.254.169.254]/hook", "http://[::ffff:a9fe:a9fe]/hook",
    "http://[64:ff9b::a9fe:a9fe]/hook", "http://[2002:a9fe:a9fe::1]/hook",
    "http://metadata.google.internal/x", "http://metadata/x", "http://instance-data/x",
    "http://100.64.0.1/hook", "http://0.0.0.0/hook", "http://224.0.0.1/hook",
]
OPENED_FOR_DEVELOPMENT = [
    "http://127.0.0.1:8765/hook", "http://localhost:8765/hook", "http://10.0.0.5/hook",
    "http://172.16.3.4/hook", "http://192.168.1.1/hook", "http://[::1]:8765/hook",
    "http://[fd12:3456::1]/hook", "http://[::ffff:127.0.0.1]/hook",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ALWAYS_REFUSED)
def test_metadata_and_link_local_are_refused_even_with_private_targets_allowed(
        url, tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    api = tenant.client()
    webhook = api.post("/api/v1/webhooks", {"url": url, "events": ["*"]}, format="json")
    assert webhook.status_code == 422, (url, webhook.content)
    assert webhook.json()["error"]["details"]["issues"][0]["field"] == "url"
    https_url = url.replace("http://", "https://", 1)
    sink = api.patch("/api/v1/developer/event-sinks/http_batch", {"url": https_url},
                     format="json")
    assert sink.status_code == 422, (https_url, sink.content)
    send = api.post("/api/v1/messages", {"channel": "sms", "to": "+14155550100", "body": "x",
                                         "webhook_url": url}, format="json")
    assert send.status_code == 422, (url, send.content)
    with pytest.raises(ssrf.UnsafeTarget):
        ssrf.check_url(url)
    with pytest.raises(http.OutboundError) as info:  # and again when called
        http.post(url, content=b"{}", headers={}, timeout=1)
    assert info.value.kind == "unsafe_target"


@pytest.mark.django_db
@pytest.mark.parametrize("url", OPENED_FOR_DEVELOPMENT)
def test_private_targets_allowed_open_only_loopback_and_private_ranges(url, tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    created = tenant.client().post("/api/v1/webhooks", {"url": url, "events": ["*"]},
                                   format="json")
    assert created.status_code == 201, (url, created.content)
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    with pytest.raises(ssrf.UnsafeTarget):
        ssrf.check_url(url)


@pytest.mark.django_db
def test_a_name_rebound_to_metadata_is_refused_at_connect_time(tenant, settings, monkeypatch):
    """Saved while it pointed at a private address; at delivery it resolves to the metadata
    address: refused then, with private targets allowed."""
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    answers = {"rebind.example": "10.1.2.3"}
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host in answers:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    created = tenant.client().post("/api/v1/webhooks",
                                   {"url": "http://rebind.example/hook", "events": ["*"]},
                                   format="json")
    assert created.status_code == 201
    answers["rebind.example"] = "169.254.169.254"
    with pytest.raises(http.OutboundError) as info:
        http.post("http://rebind.example/hook", content=b"{}", headers={}, timeout=1)
    assert info.value.kind == "unsafe_target"


@pytest.mark.parametrize(("address", "opened"), [
    ("127.0.0.1", True), ("10.1.1.1", True), ("172.31.0.1", True), ("192.168.9.9", True),
    ("::1", True), ("fd00::1", True), ("::ffff:10.0.0.1", True),
    ("169.254.169.254", False), ("fe80::1", False), ("::ffff:169.254.169.254", False),
    ("100.64.0.1", False), ("8.8.8.8", False), ("0.0.0.0", False), ("nonsense", False),
])
def test_is_development_address(address, opened):
    assert ssrf.is_development_address(address) is opened
