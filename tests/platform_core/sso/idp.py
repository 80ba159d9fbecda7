"""A real SAML identity provider in the test process: pysaml2's `Server` with its own key
and self-signed certificate (made with `cryptography`), signing through xmlsec1."""

from __future__ import annotations

import base64
import datetime as dt
import os
import shutil
import tempfile
from urllib.parse import parse_qs, urlparse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, xmldsig
from saml2.config import IdPConfig
from saml2.mdstore import MetadataStore
from saml2.metadata import create_metadata_string
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS, NameID
from saml2.server import Server

AUTHN = {
    "class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport",
    "authn_auth": "https://idp.example.test",
}


def make_keypair(common_name: str, *, days: int = 365, offset_days: int = -1) -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    start = dt.datetime.now(dt.UTC) + dt.timedelta(days=offset_days)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    return key_pem, cert.public_bytes(serialization.Encoding.PEM).decode()


class TestIdP:
    __test__ = False

    def __init__(
        self,
        entity_id: str = "https://idp.example.test/metadata",
        keypair: tuple[str, str] | None = None,
        with_slo: bool = False,
    ) -> None:
        self.entity_id = entity_id
        self.sso_url = "https://idp.example.test/sso"
        self.slo_url = "https://idp.example.test/slo" if with_slo else ""
        self.key_pem, self.cert_pem = keypair or make_keypair("test-idp")
        self.folder = tempfile.mkdtemp(prefix="test-idp-")
        key_file = os.path.join(self.folder, "idp.key")
        cert_file = os.path.join(self.folder, "idp.crt")
        with open(key_file, "w") as fh:
            fh.write(self.key_pem)
        with open(cert_file, "w") as fh:
            fh.write(self.cert_pem)
        endpoints = {"single_sign_on_service": [(self.sso_url, BINDING_HTTP_REDIRECT)]}
        if self.slo_url:
            endpoints["single_logout_service"] = [(self.slo_url, BINDING_HTTP_REDIRECT)]
        self.config = IdPConfig().load(
            {
                "entityid": entity_id,
                "xmlsec_binary": shutil.which("xmlsec1"),
                "key_file": key_file,
                "cert_file": cert_file,
                "metadata": {},
                "service": {
                    "idp": {
                        "endpoints": endpoints,
                        "name_id_format": [NAMEID_FORMAT_EMAILADDRESS],
                        "signing_algorithm": xmldsig.SIG_RSA_SHA256,
                        "digest_algorithm": xmldsig.DIGEST_SHA256,
                        "policy": {
                            "default": {
                                "lifetime": {"minutes": 5},
                                "attribute_restrictions": None,
                                "name_form": "urn:oasis:names:tc:SAML:2.0:attrname-format:uri",
                            }
                        },
                    }
                },
            }
        )
        self.server = Server(config=self.config)
        self.metadata = MetadataStore(
            self.config.attribute_converters, self.config, disable_ssl_certificate_validation=True
        )
        self.server.metadata = self.metadata

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def metadata_xml(self) -> str:
        return create_metadata_string(None, config=self.config, valid=None).decode()

    def trust_sp(self, sp_metadata_xml: str) -> None:
        self.metadata.load("inline", sp_metadata_xml)

    def read_authn_request(self, location: str):
        """Parse (and verify the SP's signature of) the AuthnRequest in a redirect URL."""
        query = {k: v[0] for k, v in parse_qs(urlparse(location).query).items()}
        parsed = self.server.parse_authn_request(
            query["SAMLRequest"],
            BINDING_HTTP_REDIRECT,
            relay_state=query.get("RelayState"),
            sigalg=query.get("SigAlg"),
            signature=query.get("Signature"),
        )
        return parsed.message, query

    def respond(
        self,
        request,
        email: str,
        *,
        sign_assertion: bool = True,
        sign_response: bool = False,
        audience: str | None = None,
        destination: str | None = None,
        attributes: dict | None = None,
    ) -> str:
        """A base64 SAMLResponse answering `request` (the parsed AuthnRequest)."""
        identity = {"mail": [email], **(attributes or {})}
        response = self.server.create_authn_response(
            identity=identity,
            in_response_to=request.id,
            destination=destination or request.assertion_consumer_service_url,
            sp_entity_id=audience or request.issuer.text,
            userid=email,
            name_id=NameID(format=NAMEID_FORMAT_EMAILADDRESS, text=email),
            authn=AUTHN,
            sign_assertion=sign_assertion,
            sign_response=sign_response,
        )
        return base64.b64encode(str(response).encode()).decode()

    def read_logout_request(self, location: str):
        query = {k: v[0] for k, v in parse_qs(urlparse(location).query).items()}
        return self.server.parse_logout_request(
            query["SAMLRequest"],
            BINDING_HTTP_REDIRECT,
            relay_state=query.get("RelayState"),
            sigalg=query.get("SigAlg"),
            signature=query.get("Signature"),
        ).message


__all__ = ["TestIdP", "make_keypair", "BINDING_HTTP_POST"]
