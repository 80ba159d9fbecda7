"""The dashboard session's security rules, through the Django test client: cookie flags,
CSRF on every form, session fixation, lockout, reset link, impersonation banner, and the
live socket's authentication."""

from __future__ import annotations

import re

import pytest
from channels.testing import WebsocketCommunicator
from django.core import mail
from django.test import Client

from platform_core.accounts import services as account_services
from platform_core.accounts.models import ImpersonationGrant
from platform_core.identity import dashboard_cookie
from platform_core.identity import services as identity_services
from platform_core.identity.models import User, UserSession
from tests.platform_core.accounts.conftest import NEW_PASSWORD, PASSWORD, add_member

from .conftest import consent

pytestmark = pytest.mark.django_db

COOKIE = dashboard_cookie.COOKIE_NAME


def _csrf(client: Client, path: str = "/dashboard/signin") -> str:
    response = client.get(path)
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                     response.content.decode()).group(1)


def _sign_in(client: Client, email: str, password: str, **extra):
    return client.post("/dashboard/signin", {"email": email, "password": password,
                                             "csrfmiddlewaretoken": _csrf(client), **extra})


def _live_sessions(user) -> list[str]:
    return list(UserSession.objects.dangerously_unscoped()
                .filter(user=user, revoked_at=None).values_list("pk", flat=True))


def test_session_cookie_is_httponly_secure_and_lax(tenant):
    client = Client(enforce_csrf_checks=True)
    response = _sign_in(client, tenant.owner.email, tenant.password)
    assert response.status_code == 302
    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] is True
    assert cookie["secure"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/"


def test_forms_without_the_csrf_token_are_refused(tenant):
    client = Client(enforce_csrf_checks=True)
    refused = client.post("/dashboard/signin", {"email": tenant.owner.email,
                                                "password": tenant.password})
    assert refused.status_code == 403
    assert COOKIE not in refused.cookies
    # Signed in, a form posted without the token (a cross-site form) is refused too.
    assert _sign_in(client, tenant.owner.email, tenant.password).status_code == 302
    consent(tenant.owner)
    forged = client.post("/dashboard/signout")
    assert forged.status_code == 403
    assert len(_live_sessions(tenant.owner)) == 1


def test_sign_in_never_keeps_a_session_planted_before_it(tenant, other_tenant):
    """Session fixation: an attacker plants their own session cookie in the victim's
    browser; the victim's sign-in replaces it with a new session and ends the planted one,
    and the CSRF token changes too."""
    _planted, planted_token = identity_services.session_start(
        user=other_tenant.owner, organization=other_tenant.org, ip=None, user_agent="attacker")
    client = Client(enforce_csrf_checks=True)
    client.cookies[COOKIE] = planted_token
    csrf_before = _csrf(client)
    response = client.post("/dashboard/signin", {
        "email": tenant.owner.email, "password": tenant.password,
        "csrfmiddlewaretoken": csrf_before})
    assert response.status_code == 302
    new_token = response.cookies[COOKIE].value
    assert new_token != planted_token
    assert _live_sessions(other_tenant.owner) == []  # the planted session ended
    assert client.cookies["csrftoken"].value != csrf_before
    # The attacker's copy of the planted cookie opens nothing now.
    attacker = Client()
    attacker.cookies[COOKIE] = planted_token
    assert attacker.get("/dashboard/")["Location"].startswith("/dashboard/signin")


def test_a_revoked_session_signs_the_browser_out(tenant):
    consent(tenant.owner)
    session, token = identity_services.session_start(
        user=tenant.owner, organization=tenant.org, ip=None, user_agent="t")
    client = Client()
    client.cookies[COOKIE] = token
    assert client.get("/dashboard/").status_code == 200
    identity_services.session_revoke(session=session)
    response = client.get("/dashboard/")
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/signin?next=%2Fdashboard%2F"
    assert response.cookies[COOKIE].value == ""
    # htmx requests are sent to the sign-in page as a whole.
    client.cookies[COOKIE] = token
    partial = client.get("/dashboard/", HTTP_HX_REQUEST="true")
    assert partial["HX-Redirect"].startswith("/dashboard/signin?next=")


def test_repeated_wrong_passwords_lock_the_address(tenant, settings):
    settings.LOGIN_LOCKOUT_ATTEMPTS = 3
    client = Client()
    for _ in range(3):
        assert _sign_in(client, tenant.owner.email, "wrong-password").status_code == 401
    locked = _sign_in(client, tenant.owner.email, tenant.password)
    assert locked.status_code == 429
    assert b'data-error-code="RATE_LIMITED"' in locked.content
    assert COOKIE not in locked.cookies
    # The same rule holds for the API's login; another client address is not locked out.
    api = client.post("/api/v1/auth/login", {"email": tenant.owner.email,
                                             "password": tenant.password},
                      content_type="application/json")
    assert api.status_code == 429
    assert api.json()["error"]["code"] == "RATE_LIMITED"
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert _sign_in(elsewhere, tenant.owner.email, tenant.password).status_code == 302


def test_consent_is_asked_once_and_recorded(tenant):
    client = Client()
    assert _sign_in(client, tenant.owner.email, tenant.password).status_code == 302
    response = client.get("/dashboard/")
    assert response["Location"] == "/dashboard/consent?next=%2Fdashboard%2F"
    token = _csrf(client, "/dashboard/consent?next=/dashboard/")
    declined = client.post("/dashboard/consent", {"csrfmiddlewaretoken": token})
    assert declined.status_code == 302
    assert client.get("/dashboard/").status_code == 302
    accepted = client.post("/dashboard/consent", {"accept": "yes", "next": "/dashboard/",
                                                  "csrfmiddlewaretoken": token})
    assert accepted["Location"] == "/dashboard/"
    assert client.get("/dashboard/").status_code == 200


def test_reset_link_page_sets_the_password_and_ends_every_session(tenant):
    member = add_member(tenant, "agent", email="agent@example.com")
    identity_services.session_start(user=member, organization=tenant.org, ip=None,
                                    user_agent="old")
    client = Client()
    forgot = client.post("/dashboard/forgot-password", {
        "email": "agent@example.com", "csrfmiddlewaretoken": _csrf(client)})
    assert b"reset link is on its way" in forgot.content
    link = re.search(r"http\S+/dashboard/reset-password\?token=(\S+)", mail.outbox[-1].body)
    token = link.group(1)
    page = client.get(f"/dashboard/reset-password?token={token}")
    assert page.status_code == 200
    mismatch = client.post("/dashboard/reset-password", {
        "token": token, "password": NEW_PASSWORD, "password_again": "other",
        "csrfmiddlewaretoken": _csrf(client)})
    assert mismatch.status_code == 422
    done = client.post("/dashboard/reset-password", {
        "token": token, "password": NEW_PASSWORD, "password_again": NEW_PASSWORD,
        "csrfmiddlewaretoken": _csrf(client)})
    assert done["Location"] == "/dashboard/signin"
    assert _live_sessions(member) == []
    assert _sign_in(client, "agent@example.com", PASSWORD).status_code == 401
    assert _sign_in(client, "agent@example.com", NEW_PASSWORD).status_code == 302
    reused = client.post("/dashboard/reset-password", {
        "token": token, "password": NEW_PASSWORD, "password_again": NEW_PASSWORD,
        "csrfmiddlewaretoken": _csrf(client)})
    assert b'data-error-code="INVALID_RESET_TOKEN"' in reused.content


def test_impersonated_session_shows_the_banner_and_the_end_button_ends_it(tenant):
    member = add_member(tenant, "developer", email="dev@example.com")
    operator = User.objects.create_superuser("operator@example.com", "Operator-Horse-4-x")
    _grant, raw = account_services.impersonation_grant_create(
        operator=operator, organization=tenant.org, user=member,
        reason="Ticket 77: the inbox looks empty")
    result = account_services.impersonation_exchange(token=raw, via="exchange", ip=None,
                                                     user_agent="t")
    client = Client()
    client.cookies[COOKIE] = result.token
    page = client.get("/dashboard/").content.decode()  # no consent asked of an operator
    assert 'id="impersonation-banner"' in page
    assert "operator@example.com" in page
    assert "Ticket 77: the inbox looks empty" in page
    assert 'id="org-switcher"' not in page
    end = client.post("/dashboard/impersonation/end",
                      {"csrfmiddlewaretoken": re.search(
                          r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)})
    assert end.status_code == 302
    grant = ImpersonationGrant.objects.get()
    assert grant.ended_at is not None
    assert grant.ended_by == operator
    assert _live_sessions(member) == []


def test_switching_to_an_organization_of_which_one_is_not_a_member_is_refused(
        tenant, other_tenant):
    consent(tenant.owner)
    _session, token = identity_services.session_start(
        user=tenant.owner, organization=tenant.org, ip=None, user_agent="t")
    client = Client()
    client.cookies[COOKIE] = token
    response = client.post("/dashboard/switch", {"organization": other_tenant.org.slug},
                           HTTP_REFERER="http://testserver/dashboard/?tab=1")
    assert response.status_code == 302  # back to the page, with the refusal as a message
    assert response["Location"] == "/dashboard/?tab=1"
    assert len(_live_sessions(tenant.owner)) == 1
    page = client.get(response["Location"]).content.decode()
    assert "NOT_FOUND" in page


def _ws_scope_headers(token: str, origin: str) -> list[tuple[bytes, bytes]]:
    return [(b"host", b"testserver"), (b"origin", origin.encode()),
            (b"cookie", f"{COOKIE}={token}".encode())]


@pytest.mark.django_db(transaction=True)
def test_live_socket_takes_the_cookie_only_from_this_origin(tenant):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from dashboard.consumers import DashboardLiveConsumer
    from platform_core.events.fanout import STREAM_MESSAGE_TYPE, stream_group

    _session, token = identity_services.session_start(
        user=tenant.owner, organization=tenant.org, ip=None, user_agent="t")
    envelope = {"id": "evt_1", "type": "message.received", "data": {"id": "msg_1"}}

    async def scenario():
        cross = WebsocketCommunicator(DashboardLiveConsumer.as_asgi(), "/ws/dashboard",
                                      headers=_ws_scope_headers(token, "https://evil.example"))
        connected, _ = await cross.connect()
        assert connected
        assert (await cross.receive_json_from())["error"]["code"] == "UNAUTHORIZED"
        assert (await cross.receive_output())["code"] == 4401
        await cross.disconnect()

        same = WebsocketCommunicator(DashboardLiveConsumer.as_asgi(), "/ws/dashboard",
                                     headers=_ws_scope_headers(token, "http://testserver"))
        connected, _ = await same.connect()
        assert connected
        assert (await same.receive_json_from())["type"] == "ready"
        await get_channel_layer().group_send(stream_group(tenant.org.pk), {
            "type": STREAM_MESSAGE_TYPE, "envelope": envelope, "position": 1, "prev": None})
        frame = await same.receive_json_from(timeout=5)
        await same.disconnect()
        return frame

    assert async_to_sync(scenario)() == {"type": "event", "event": envelope}
