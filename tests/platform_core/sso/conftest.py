"""Fixtures of the SSO tests: a real pysaml2 IdP and organizations wired to it."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import pytest

from .idp import TestIdP


@pytest.fixture
def idp():
    if shutil.which("xmlsec1") is None:
        pytest.skip("xmlsec1 (Debian package xmlsec1) is not installed")
    provider = TestIdP()
    yield provider
    provider.close()


def enable_saml(tenant, idp: TestIdP, *, use_metadata: bool = False) -> dict:
    """PATCH the organization's SAML settings as its owner, then let the IdP trust the SP."""
    owner = tenant.session_client()
    if use_metadata:
        body = {"enabled": True, "idp_metadata_xml": idp.metadata_xml}
    else:
        body = {
            "enabled": True,
            "idp_entity_id": idp.entity_id,
            "idp_sso_url": idp.sso_url,
            "idp_x509_cert": idp.cert_pem,
        }
        if idp.slo_url:
            body["idp_slo_url"] = idp.slo_url
    response = owner.patch("/api/v1/settings/saml", body, format="json")
    assert response.status_code == 200, response.content
    metadata = owner.get(f"/auth/saml/{tenant.org.slug}/metadata")
    assert metadata.status_code == 200
    idp.trust_sp(metadata.content.decode())
    return response.json()["data"]


@dataclass
class SamlFlow:
    """Drives one browser sign-in: login redirect, IdP, callback."""

    client: object
    idp: TestIdP
    slug: str

    def start(self, redirect: str = "/inbox"):
        response = self.client.get(f"/auth/saml/{self.slug}/login", {"redirect": redirect})
        assert response.status_code == 302, response.content
        request, query = self.idp.read_authn_request(response["Location"])
        return request, query["RelayState"]

    def post(self, saml_response: str, relay_state: str):
        return self.client.post(
            f"/auth/saml/{self.slug}/callback",
            {"SAMLResponse": saml_response, "RelayState": relay_state},
        )

    def sign_in(self, email: str, **respond):
        request, relay = self.start()
        return self.post(self.idp.respond(request, email, **respond), relay)


def ticket_of(response) -> str:
    assert response.status_code == 302, response.content
    return parse_qs(urlparse(response["Location"]).query)["ticket"][0]


@pytest.fixture
def saml_tenant(tenant, idp):
    enable_saml(tenant, idp)
    return tenant


@pytest.fixture
def flow(saml_tenant, idp, anon):
    return SamlFlow(anon, idp, saml_tenant.org.slug)
