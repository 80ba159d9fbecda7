"""SAML single sign-on (Document 1, 4.2 and 5 rule 9) against a real pysaml2 IdP."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import re

import pytest
import time_machine
from defusedxml import ElementTree as SafeET
from django.conf import settings
from rest_framework.test import APIClient

from platform_core.audit.models import AuditLogEntry

from .conftest import SamlFlow, enable_saml, ticket_of
from .idp import TestIdP, make_keypair

MD = "{urn:oasis:names:tc:SAML:2.0:metadata}"


def _invite(tenant, email: str, role: str = "developer", name: str = "") -> None:
    response = tenant.client().post(
        "/api/v1/users", {"email": email, "name": name, "role": role}, format="json"
    )
    assert response.status_code == 201, response.content


def _exchange(ticket: str):
    return APIClient().post("/api/v1/auth/sso/exchange", {"ticket": ticket}, format="json")


def _error(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


# --- Happy path --------------------------------------------------------------------------------


@pytest.mark.parametrize("use_metadata", [False, True], ids=["fields", "metadata-xml"])
def test_invited_user_signs_in_and_gets_a_working_session(tenant, idp, anon, use_metadata):
    enable_saml(tenant, idp, use_metadata=use_metadata)
    _invite(tenant, "dev@example.com")
    flow = SamlFlow(anon, idp, tenant.org.slug)

    request, relay = flow.start(redirect="/inbox?tab=mine")
    # The AuthnRequest is addressed to our ACS and signed by the SP (the IdP verified it).
    assert (
        request.assertion_consumer_service_url
        == f"{settings.PUBLIC_BASE_URL}/auth/saml/{tenant.org.slug}/callback"
    )
    response = flow.post(
        idp.respond(request, "dev@example.com", attributes={"displayName": ["Dana Dev"]}), relay
    )
    assert response.status_code == 302, response.content
    assert response["Location"].startswith(f"{settings.PUBLIC_BASE_URL}/dashboard/sso?ticket=")

    exchanged = _exchange(ticket_of(response))
    assert exchanged.status_code == 200, exchanged.content
    data = exchanged.json()["data"]
    assert data["redirect"] == "/inbox?tab=mine"
    assert data["user"]["email"] == "dev@example.com"
    assert data["user"]["name"] == "Dana Dev"  # first-login provisioning filled the name
    assert data["organization"]["slug"] == tenant.org.slug

    session = APIClient()
    session.credentials(HTTP_AUTHORIZATION=f"Bearer {data['token']}")
    org = session.get("/api/v1/organization")
    assert org.status_code == 200
    assert org.json()["data"]["id"] == tenant.org.pk
    actions = set(
        AuditLogEntry.objects.filter(organization=tenant.org).values_list("action", flat=True)
    )
    assert {"saml.user_provisioned", "saml.login", "session.created"} <= actions


def test_second_login_does_not_provision_again(flow, saml_tenant):
    _invite(saml_tenant, "again@example.com")
    assert _exchange(ticket_of(flow.sign_in("again@example.com"))).status_code == 200
    assert _exchange(ticket_of(flow.sign_in("again@example.com"))).status_code == 200
    assert (
        AuditLogEntry.objects.filter(
            organization=saml_tenant.org, action="saml.user_provisioned"
        ).count()
        == 1
    )


def test_response_signed_as_a_whole_is_accepted(flow, saml_tenant):
    response = flow.sign_in(saml_tenant.owner.email, sign_assertion=False, sign_response=True)
    assert response.status_code == 302, response.content


def test_ticket_is_single_use_and_short_lived(flow, saml_tenant):
    ticket = ticket_of(flow.sign_in(saml_tenant.owner.email))
    assert _exchange(ticket).status_code == 200
    assert _error(_exchange(ticket)) == (401, "SSO_TICKET_INVALID")
    late = ticket_of(flow.sign_in(saml_tenant.owner.email))
    with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)):
        assert _error(_exchange(late)) == (401, "SSO_TICKET_INVALID")
    assert _error(_exchange("forged")) == (401, "SSO_TICKET_INVALID")


# --- Refusals ----------------------------------------------------------------------------------


def test_unsigned_response_is_refused(flow, saml_tenant):
    response = flow.sign_in(saml_tenant.owner.email, sign_assertion=False)
    assert _error(response) == (401, "SAML_SIGNATURE_INVALID")


def test_response_signed_by_another_key_is_refused(saml_tenant, idp, anon):
    impostor = TestIdP(entity_id=idp.entity_id, keypair=make_keypair("impostor"))
    try:
        impostor.metadata = idp.metadata
        impostor.server.metadata = idp.metadata
        flow = SamlFlow(anon, idp, saml_tenant.org.slug)
        request, relay = flow.start()
        response = flow.post(impostor.respond(request, saml_tenant.owner.email), relay)
        assert _error(response) == (401, "SAML_SIGNATURE_INVALID")
    finally:
        impostor.close()


def test_wrong_audience_is_refused(flow, saml_tenant, idp):
    slug = saml_tenant.org.slug
    other_sp = "https://other-sp.example.test/metadata"
    metadata = APIClient().get(f"/auth/saml/{slug}/metadata").content.decode()
    idp.trust_sp(
        metadata.replace(f"{settings.PUBLIC_BASE_URL}/auth/saml/{slug}/metadata", other_sp)
    )
    request, relay = flow.start()
    response = flow.post(idp.respond(request, saml_tenant.owner.email, audience=other_sp), relay)
    assert _error(response) == (401, "SAML_AUDIENCE_MISMATCH")


def test_wrong_destination_is_refused(flow, saml_tenant, idp):
    request, relay = flow.start()
    response = flow.post(
        idp.respond(
            request, saml_tenant.owner.email, destination="https://elsewhere.example.test/acs"
        ),
        relay,
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] in ("SAML_RESPONSE_INVALID", "SAML_SIGNATURE_INVALID")


def test_expired_assertion_is_refused(flow, saml_tenant, idp):
    request, relay = flow.start()
    with time_machine.travel(dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)):
        stale = idp.respond(request, saml_tenant.owner.email)  # valid for 5 minutes, then
    assert _error(flow.post(stale, relay)) == (401, "SAML_ASSERTION_EXPIRED")


def test_assertion_not_yet_valid_is_refused(flow, saml_tenant, idp):
    request, relay = flow.start()
    with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)):
        early = idp.respond(request, saml_tenant.owner.email)
    assert _error(flow.post(early, relay)) == (401, "SAML_ASSERTION_EXPIRED")


def test_replayed_assertion_is_refused(flow, saml_tenant, idp):
    request, relay = flow.start()
    saml_response = idp.respond(request, saml_tenant.owner.email)
    assert flow.post(saml_response, relay).status_code == 302
    assert _error(flow.post(saml_response, relay)) == (401, "SAML_ASSERTION_REPLAYED")


def test_response_to_another_request_is_refused(flow, saml_tenant, idp):
    request, _relay = flow.start()
    _other_request, other_relay = flow.start()
    response = flow.post(idp.respond(request, saml_tenant.owner.email), other_relay)
    assert _error(response) == (401, "SAML_UNSOLICITED_RESPONSE")


def test_response_naming_a_request_never_issued_is_refused(flow, saml_tenant, idp):
    """InResponseTo must be the request the RelayState names (djangosaml2's outstanding-
    request cache): an ID this SP never issued is unsolicited."""
    request, relay = flow.start()
    forged = copy.copy(request)
    forged.id = "id-never-issued-by-this-sp"
    response = flow.post(idp.respond(forged, saml_tenant.owner.email), relay)
    assert _error(response) == (401, "SAML_UNSOLICITED_RESPONSE")
    assert not AuditLogEntry.objects.filter(
        organization=saml_tenant.org, action="saml.login"
    ).exists()


def test_assertion_posted_after_its_lifetime_is_refused(flow, saml_tenant, idp):
    """Issued now, valid five minutes: posted seven minutes later (the RelayState still
    valid, beyond the 60 s clock skew) it is expired, and the request stays unanswered."""
    request, relay = flow.start()
    saml_response = idp.respond(request, saml_tenant.owner.email)
    with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(minutes=7)):
        assert _error(flow.post(saml_response, relay)) == (401, "SAML_ASSERTION_EXPIRED")
    assert flow.post(saml_response, relay).status_code == 302


def test_user_of_another_organization_is_refused(flow, other_tenant):
    response = flow.sign_in(other_tenant.owner.email)
    assert _error(response) == (403, "SAML_USER_NOT_IN_ORG")


def test_uninvited_person_is_refused(flow, saml_tenant):
    assert _error(flow.sign_in("stranger@example.com")) == (403, "SAML_USER_NOT_IN_ORG")
    assert AuditLogEntry.objects.filter(
        organization=saml_tenant.org, action="saml.login_refused"
    ).exists()


def _inject_unsigned_assertion(saml_response: str, *, email: str, before: bool) -> str:
    """Signature wrapping: copy the signed assertion, strip its signature, give it another
    subject and id, and add it to the (still validly signed) response."""
    xml = base64.b64decode(saml_response).decode()
    match = re.search(r"<ns1:Assertion\b.*?</ns1:Assertion>", xml, re.S)
    assert match, xml[:400]
    signed = match.group(0)
    evil = re.sub(r"<ns2:Signature\b.*?</ns2:Signature>", "", signed, flags=re.S)
    evil = re.sub(r'ID="[^"]+"', 'ID="id-evil-assertion"', evil, count=1)
    evil = re.sub(r"(<ns1:NameID[^>]*>)[^<]+(</ns1:NameID>)", rf"\g<1>{email}\g<2>", evil)
    wrapped = xml.replace(signed, evil + signed if before else signed + evil)
    return base64.b64encode(wrapped.encode()).decode()


@pytest.mark.parametrize("before", [True, False], ids=["evil-first", "evil-last"])
def test_signature_wrapping_is_refused(flow, saml_tenant, other_tenant, idp, before):
    request, relay = flow.start()
    genuine = idp.respond(request, "stranger@example.com")
    wrapped = _inject_unsigned_assertion(genuine, email=saml_tenant.owner.email, before=before)
    response = flow.post(wrapped, relay)
    assert _error(response) == (401, "SAML_SIGNATURE_INVALID")


def test_tampered_relay_state_is_refused(flow, saml_tenant, idp):
    request, relay = flow.start(redirect="/inbox")
    saml_response = idp.respond(request, saml_tenant.owner.email)
    tampered = relay[:-3] + ("AAA" if not relay.endswith("AAA") else "BBB")
    assert _error(flow.post(saml_response, tampered)) == (400, "SAML_RELAY_STATE_INVALID")
    assert _error(flow.post(saml_response, "")) == (400, "SAML_RELAY_STATE_INVALID")
    # Forged with another key: refused too.
    from django.core import signing

    forged = signing.dumps(
        {"o": saml_tenant.org.pk, "q": request.id, "r": "//evil.test"},
        key="not-the-secret",
        salt="platform_core.sso.saml.relay",
    )
    assert _error(flow.post(saml_response, forged)) == (400, "SAML_RELAY_STATE_INVALID")
    # The genuine one still works afterwards.
    assert flow.post(saml_response, relay).status_code == 302


def test_relay_state_of_another_organization_is_refused(saml_tenant, idp, anon, tenant_factory):
    other = tenant_factory()
    enable_saml(other, idp)
    mine = SamlFlow(anon, idp, saml_tenant.org.slug)
    theirs = SamlFlow(anon, idp, other.org.slug)
    request, _relay = mine.start()
    _request, their_relay = theirs.start()
    response = mine.post(idp.respond(request, saml_tenant.owner.email), their_relay)
    assert _error(response) == (400, "SAML_RELAY_STATE_INVALID")


@pytest.mark.parametrize(
    "target", ["https://evil.test/x", "//evil.test/x", "/\\evil.test", "javascript:alert(1)"]
)
def test_login_refuses_off_site_redirects(flow, saml_tenant, target):
    response = flow.client.get(f"/auth/saml/{saml_tenant.org.slug}/login", {"redirect": target})
    assert _error(response) == (400, "VALIDATION_ERROR")


def test_garbage_response_is_refused(flow, saml_tenant):
    _request, relay = flow.start()
    assert flow.post(base64.b64encode(b"<not-saml/>").decode(), relay).status_code == 401
    assert flow.post("%%%not base64", relay).status_code == 401


def test_login_needs_saml_enabled(tenant, anon):
    assert _error(anon.get(f"/auth/saml/{tenant.org.slug}/login")) == (404, "SAML_NOT_ENABLED")
    assert _error(anon.get("/auth/saml/no-such-org/login")) == (404, "SAML_NOT_ENABLED")
    assert _error(anon.post("/auth/saml/no-such-org/callback", {})) == (404, "SAML_NOT_ENABLED")


# --- Metadata and logout ---------------------------------------------------------------------


def test_sp_metadata_is_well_formed(saml_tenant, anon):
    slug = saml_tenant.org.slug
    response = anon.get(f"/auth/saml/{slug}/metadata")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/samlmetadata+xml")
    root = SafeET.fromstring(response.content)
    assert root.tag == f"{MD}EntityDescriptor"
    assert root.get("entityID") == f"{settings.PUBLIC_BASE_URL}/auth/saml/{slug}/metadata"
    sp = root.find(f"{MD}SPSSODescriptor")
    acs = sp.find(f"{MD}AssertionConsumerService")
    assert acs.get("Location") == f"{settings.PUBLIC_BASE_URL}/auth/saml/{slug}/callback"
    assert acs.get("Binding") == "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
    assert sp.find(f"{MD}KeyDescriptor") is not None  # signing details


def test_metadata_before_configuration_and_for_unknown_org(tenant, anon):
    response = anon.get(f"/auth/saml/{tenant.org.slug}/metadata")
    assert response.status_code == 200
    root = SafeET.fromstring(response.content)
    assert root.get("entityID").endswith(f"/auth/saml/{tenant.org.slug}/metadata")
    assert anon.get("/auth/saml/nope-nope/metadata").status_code == 404


def test_logout_without_slo_destroys_the_session(flow, saml_tenant):
    data = _exchange(ticket_of(flow.sign_in(saml_tenant.owner.email))).json()["data"]
    browser = APIClient()
    browser.credentials(HTTP_AUTHORIZATION=f"Bearer {data['token']}")
    response = browser.get(f"/auth/saml/{saml_tenant.org.slug}/logout")
    assert response.status_code == 200
    assert response.json()["data"] == {"status": "logged_out"}
    assert _error(browser.get("/api/v1/organization")) == (401, "EXPIRED_TOKEN")


def test_logout_without_single_sign_on_logs_out_anyway(tenant, anon):
    """Document 1, 4.2: without a single-logout endpoint the answer is 200 `logged_out`
    and the local session ends; logout is idempotent, only an unknown slug is 404."""
    browser = tenant.session_client()
    assert browser.get("/api/v1/organization").status_code == 200
    for _ in range(2):
        response = browser.get(f"/auth/saml/{tenant.org.slug}/logout")
        assert response.status_code == 200
        assert response.json()["data"] == {"status": "logged_out"}
    assert _error(browser.get("/api/v1/organization")) == (401, "EXPIRED_TOKEN")
    anonymous = anon.get(f"/auth/saml/{tenant.org.slug}/logout", {"nameId": "x@example.com"})
    assert anonymous.status_code == 200
    assert anonymous.json()["data"] == {"status": "logged_out"}
    assert anon.get(f"/auth/saml/{tenant.org.slug}/logout",
                    {"SAMLResponse": "x"}).json()["data"] == {"status": "logged_out"}
    assert _error(anon.get("/auth/saml/no-such-org/logout")) == (404, "SAML_NOT_ENABLED")


def test_logout_with_slo_redirects_a_logout_request(tenant, anon):
    idp = TestIdP(with_slo=True)
    try:
        enable_saml(tenant, idp)
        flow = SamlFlow(anon, idp, tenant.org.slug)
        data = _exchange(ticket_of(flow.sign_in(tenant.owner.email))).json()["data"]
        browser = APIClient()
        browser.credentials(HTTP_AUTHORIZATION=f"Bearer {data['token']}")
        response = browser.get(f"/auth/saml/{tenant.org.slug}/logout")
        assert response.status_code == 302
        assert response["Location"].startswith(idp.slo_url)
        logout_request = idp.read_logout_request(response["Location"])
        assert logout_request.name_id.text == tenant.owner.email
        assert _error(browser.get("/api/v1/organization")) == (401, "EXPIRED_TOKEN")
        by_name = anon.get(f"/auth/saml/{tenant.org.slug}/logout", {"nameId": "x@example.com"})
        assert by_name.status_code == 302
        assert idp.read_logout_request(by_name["Location"]).name_id.text == "x@example.com"
    finally:
        idp.close()
