"""Writing audit rows. Services call `audit_record` in the same transaction as the change."""

from __future__ import annotations

from typing import Any

from platform_core.identity.principal import Principal

from .models import AuditLogEntry


def _request_origin(request) -> tuple[str | None, str]:
    if request is None:
        return None, ""
    from platform_core.api.authentication import client_ip

    return client_ip(request), request.META.get("HTTP_USER_AGENT", "")[:400]


def audit_record(
    *,
    action: str,
    organization=None,
    principal: Principal | None = None,
    actor_type: str | None = None,
    actor_id: str = "",
    actor_display: str = "",
    target: Any = None,
    target_type: str = "",
    target_id: str = "",
    request=None,
    metadata: dict[str, Any] | None = None,
) -> AuditLogEntry:
    if principal is not None:
        organization = organization or principal.organization
        if actor_type is None:
            operator = principal.kind == "operator"
            actor_type = "operator" if operator else ("user" if principal.user_id else principal.kind)
        actor_id = actor_id or principal.actor_id
        if principal.impersonator_id:
            metadata = {**(metadata or {}), "impersonator_id": principal.impersonator_id}
    if target is not None:
        target_type = target_type or target._meta.model_name
        target_id = target_id or str(target.pk)
    ip, user_agent = _request_origin(request)
    return AuditLogEntry.objects.create(
        organization=organization,
        actor_type=actor_type or "system",
        actor_id=actor_id,
        actor_display=actor_display,
        action=action,
        target_type=target_type,
        target_id=target_id,
        ip_address=ip,
        user_agent=user_agent,
        metadata=metadata or {},
    )
