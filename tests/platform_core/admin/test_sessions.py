"""Dashboard sessions in the console: the revoke action ends a session token at once."""

from __future__ import annotations

from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import UserSession

from .conftest import ADMIN

SESSIONS = f"{ADMIN}/usersession/"


def test_list_and_detail(console, tenant):
    client = tenant.session_client()
    response = console.get(SESSIONS, {"q": tenant.owner.email, "status": "live"})
    assert response.status_code == 200
    assert client.session_id in response.content.decode()
    assert console.get(f"{SESSIONS}{client.session_id}/change/").status_code == 200
    assert console.get(f"{SESSIONS}add/").status_code == 403


def test_revoke_action_ends_the_session(console, tenant, operator):
    client = tenant.session_client()
    assert client.get("/api/v1/organization").status_code == 200  # snapshot cached
    response = console.post(SESSIONS, {"action": "revoke_selected",
                                       "_selected_action": [client.session_id]}, follow=True)
    assert "Revoked 1 session(s)." in response.content.decode()
    answer = client.get("/api/v1/organization")
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "EXPIRED_TOKEN"
    session = UserSession.objects.dangerously_unscoped().get(pk=client.session_id)
    assert session.revoked_at is not None
    entry = AuditLogEntry.objects.get(action="session.revoked", target_id=session.pk)
    assert (entry.actor_type, entry.actor_id, entry.actor_display) == (
        "operator", operator.pk, operator.email)
    assert entry.organization_id == tenant.org.pk
    assert console.get(SESSIONS, {"status": "revoked"}).context["cl"].result_count == 1
