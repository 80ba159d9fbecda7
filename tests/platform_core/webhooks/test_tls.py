"""HTTPS receivers: the connection goes to the checked address while TLS SNI and the
certificate check use the endpoint's host name."""

from __future__ import annotations

import datetime
import socket
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .conftest import deliveries
from .receivers import start_receiver

pytestmark = pytest.mark.django_db

HOST = "hooks.customer.test"


def _self_signed(tmp_path, name: str):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def resolve_to_loopback(monkeypatch):
    real = socket.getaddrinfo

    def fake(host, *args, **kwargs):
        return real("127.0.0.1" if host == HOST else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


@pytest.mark.parametrize(("cert_name", "ok"), [(HOST, True), ("someone-else.test", False)])
def test_tls_uses_the_host_name_for_sni_and_verification(cert_name, ok, tmp_path, tenant,
                                                         private_targets, resolve_to_loopback,
                                                         make_endpoint, emit):
    cert_path, key_path = _self_signed(tmp_path, cert_name)
    private_targets.OUTBOUND_HTTP_CA_BUNDLE = str(cert_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    receiver = start_receiver(tls_context=context)
    try:
        make_endpoint(f"https://{HOST}:{receiver.port}/hook")
        event = emit(tenant)
        row = deliveries(tenant)[0]
        if ok:
            assert receiver.delivered_event_ids() == [event.pk]
            assert receiver.last_sni == HOST
            assert receiver.requests[0].headers["Host"] == f"{HOST}:{receiver.port}"
            assert row.status == "succeeded"
        else:
            # The certificate is checked against the name, not the address we dialled.
            assert receiver.requests == []
            assert row.status == "pending"
            assert row.last_error.startswith("tls_error")
    finally:
        receiver.close()
