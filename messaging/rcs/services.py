"""Writes of the RCS family: brands, agents, test devices, agent templates.

Each write validates first (serializers and here), calls the provider (the sandbox double
in test mode, Google in live mode; `providers/`), then stores the result, audit row and
event in one transaction. A provider failure raises before anything is stored.

Decisions (brand verification, agent verification and launch, template review) arrive
after the request commits: the double decides at once (`decides_immediately`), Google's
agent verdicts are read by `agent_refresh` (the quality read and the beat sweep).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from .models import (
    AgentStatus,
    BrandStatus,
    RcsAgent,
    RcsBrand,
    RcsTemplate,
    RcsTestDevice,
    TemplateStatus,
    VerificationStatus,
)
from .providers import provider_for

BRAND_FIELDS = ("name", "website", "contact_name", "contact_email")
AGENT_FIELDS = ("display_name", "description", "logo_url", "hero_url", "color", "phone",
                "email", "website", "privacy_url", "terms_url", "use_case", "carriers")
TEMPLATE_FIELDS = ("language", "body", "media_url", "suggestions")


def _record(action: str, principal: Principal | None, target, organization, event: str | None,
            data: dict[str, Any], metadata: dict[str, Any] | None = None) -> None:
    audit_record(action=action, organization=organization, principal=principal, target=target,
                 metadata=metadata or {})
    if event:
        emit(organization=organization, type=event, data=data)


# --- brands --------------------------------------------------------------------------------

def brand_create(*, organization, principal: Principal | None, **fields: Any) -> RcsBrand:
    with transaction.atomic():
        brand = RcsBrand.objects.create(organization=organization,
                                        **{k: v for k, v in fields.items() if k in BRAND_FIELDS})
        _record("rcs.brand.created", principal, brand, organization, "rcs.brand.created",
                {"brand_id": brand.pk, "name": brand.name, "status": brand.status})
    return brand


def brand_update(*, brand: RcsBrand, principal: Principal | None, **fields: Any) -> RcsBrand:
    if brand.status == BrandStatus.SUBMITTED:
        raise APIError("CONFLICT", "The brand is under carrier review; wait for the decision.",
                       details={"status": brand.status})
    changed = [k for k in BRAND_FIELDS if k in fields and getattr(brand, k) != fields[k]]
    with transaction.atomic():
        for key in changed:
            setattr(brand, key, fields[key])
        if changed and brand.status == BrandStatus.VERIFIED and "name" in changed:
            # A verified brand that changes its name needs verifying again.
            brand.status = BrandStatus.DRAFT
            brand.verified_at = None
        brand.save()
        _record("rcs.brand.updated", principal, brand, brand.organization, None, {},
                {"fields": changed})
    return brand


def brand_delete(*, brand: RcsBrand, principal: Principal | None) -> None:
    if brand.agents.exists():
        raise APIError("RCS_BRAND_IN_USE", details={"brand_id": brand.pk})
    if brand.provider_ref:
        provider_for(brand.organization).brand_delete(brand)
    with transaction.atomic():
        _record("rcs.brand.deleted", principal, brand, brand.organization, "rcs.brand.deleted",
                {"brand_id": brand.pk})
        brand.delete()


def brand_submit(*, brand: RcsBrand, principal: Principal | None) -> RcsBrand:
    if brand.status not in (BrandStatus.DRAFT, BrandStatus.REJECTED):
        raise APIError("RCS_BRAND_NOT_SUBMITTABLE", details={"status": brand.status})
    provider = provider_for(brand.organization)
    ref = provider.brand_submit(brand)
    with transaction.atomic():
        brand.provider_ref = ref or brand.provider_ref
        brand.status = BrandStatus.SUBMITTED
        brand.rejection_reason = ""
        brand.submitted_at = timezone.now()
        brand.save()
        _record("rcs.brand.submitted", principal, brand, brand.organization,
                "rcs.brand.submitted", {"brand_id": brand.pk, "status": brand.status})
    if provider.decides_immediately:
        pk = brand.pk
        transaction.on_commit(lambda: brand_decide(organization=brand.organization,
                                                   brand_id=pk))
    return brand


def brand_decide(*, organization, brand_id: str) -> RcsBrand | None:
    """Apply the provider's verdict on a submitted brand (none yet: nothing changes)."""
    with transaction.atomic():
        brand = (RcsBrand.objects.for_organization(organization).select_for_update()
                 .filter(pk=brand_id, status=BrandStatus.SUBMITTED).first())
        if brand is None:
            return None
        decision = provider_for(organization).brand_decision(brand)
        if decision is None or decision.status not in ("verified", "rejected"):
            return brand
        brand.status = decision.status
        brand.rejection_reason = decision.reason[:500]
        brand.verified_at = timezone.now() if decision.status == "verified" else None
        brand.save()
        emit(organization=organization, type=f"rcs.brand.{decision.status}",
             data={"brand_id": brand.pk, "status": brand.status,
                   "reason": brand.rejection_reason or None})
    return brand


# --- agents --------------------------------------------------------------------------------

def _brand(organization, brand_id: Any) -> RcsBrand:
    brand = RcsBrand.objects.for_organization(organization).filter(pk=str(brand_id)).first()
    if brand is None:
        raise validation_error("brand_id", "No such brand in this account.")
    return brand


def agent_create(*, organization, principal: Principal | None, brand_id: str,
                 **fields: Any) -> RcsAgent:
    brand = _brand(organization, brand_id)
    if brand.status == BrandStatus.REJECTED:
        raise validation_error("brand_id", "The brand was rejected; fix it and submit it again.")
    agent = RcsAgent(organization=organization, brand=brand,
                     **{k: v for k, v in fields.items() if k in AGENT_FIELDS})
    provider = provider_for(organization)
    agent.provider_ref = provider.agent_create(agent)
    with transaction.atomic():
        agent.save(force_insert=True)
        _record("rcs.agent.created", principal, agent, organization, "rcs.agent.created",
                {"bot_id": agent.pk, "brand_id": brand.pk, "display_name": agent.display_name})
    return agent


def agent_update(*, agent: RcsAgent, principal: Principal | None, **fields: Any) -> RcsAgent:
    changed = [k for k in AGENT_FIELDS if k in fields and getattr(agent, k) != fields[k]]
    if not changed:
        return agent
    for key in changed:
        setattr(agent, key, fields[key])
    provider_for(agent.organization).agent_update(agent, changed)
    with transaction.atomic():
        agent.save()
        _record("rcs.agent.updated", principal, agent, agent.organization, "rcs.agent.updated",
                {"bot_id": agent.pk, "fields": changed}, {"fields": changed})
    return agent


def agent_delete(*, agent: RcsAgent, principal: Principal | None) -> None:
    provider_for(agent.organization).agent_delete(agent)
    with transaction.atomic():
        _record("rcs.agent.deleted", principal, agent, agent.organization, "rcs.agent.deleted",
                {"bot_id": agent.pk})
        agent.delete()


def agent_verify(*, agent: RcsAgent, principal: Principal | None) -> RcsAgent:
    if agent.verification_status in (VerificationStatus.PENDING, VerificationStatus.VERIFIED):
        raise APIError("RCS_AGENT_NOT_VERIFIABLE",
                       f"The agent's verification is already {agent.verification_status}.",
                       details={"verification_status": agent.verification_status})
    if agent.brand.status not in (BrandStatus.SUBMITTED, BrandStatus.VERIFIED):
        raise APIError("RCS_AGENT_NOT_VERIFIABLE",
                       "Submit the agent's brand for verification first.",
                       details={"brand_status": agent.brand.status})
    provider = provider_for(agent.organization)
    provider.agent_verify(agent)
    with transaction.atomic():
        agent.verification_status = VerificationStatus.PENDING
        agent.save()
        _record("rcs.agent.verification_submitted", principal, agent, agent.organization,
                "rcs.agent.verification_submitted",
                {"bot_id": agent.pk, "verification_status": agent.verification_status})
    if provider.decides_immediately:
        pk = agent.pk
        transaction.on_commit(lambda: agent_refresh(organization=agent.organization,
                                                    agent_id=pk))
    return agent


def agent_refresh(*, organization, agent_id: str) -> RcsAgent | None:
    """Read the provider's verification verdict and carrier launch states into the agent;
    emits `rcs.agent.verified` / `.rejected` / `.launched` when they change."""
    agent = (RcsAgent.objects.for_organization(organization).select_related("brand")
             .filter(pk=agent_id).first())
    if agent is None:
        return None
    decision = provider_for(organization).agent_refresh(agent)
    if decision is None:
        return agent
    with transaction.atomic():
        agent = RcsAgent.objects.for_organization(organization).select_for_update().select_related(
            "brand").get(pk=agent_id)
        was_verification, was_launched = agent.verification_status, agent.launched
        if decision.status in VerificationStatus.values:
            agent.verification_status = decision.status
        if decision.carrier_statuses:
            agent.carrier_statuses = decision.carrier_statuses
        if agent.verification_status == VerificationStatus.VERIFIED:
            agent.status = (AgentStatus.LAUNCHED if agent.carriers_launched
                            else AgentStatus.VERIFIED)
        agent.save()
        data = {"bot_id": agent.pk, "verification_status": agent.verification_status,
                "status": agent.status, "carrier_statuses": agent.carrier_statuses}
        if agent.verification_status != was_verification and agent.verification_status in (
                VerificationStatus.VERIFIED, VerificationStatus.REJECTED):
            emit(organization=organization, type=f"rcs.agent.{agent.verification_status}",
                 data={**data, "reason": decision.reason or None})
        if agent.launched and not was_launched:
            emit(organization=organization, type="rcs.agent.launched", data=data)
    if agent.verification_status == VerificationStatus.VERIFIED and \
            agent.brand.status == BrandStatus.SUBMITTED:
        brand_decide(organization=organization, brand_id=agent.brand_id)
    return agent


# --- test devices --------------------------------------------------------------------------

def device_add(*, agent: RcsAgent, principal: Principal | None, phone: str
               ) -> tuple[RcsTestDevice, bool]:
    """Invite `phone` as a tester of the agent and keep it as a test device; (device,
    created). Adding a phone again invites it again."""
    status = provider_for(agent.organization).tester_invite(agent, phone)
    with transaction.atomic():
        device, created = RcsTestDevice.objects.for_organization(agent.organization) \
            .get_or_create(agent=agent, phone=phone,
                           defaults={"organization": agent.organization, "status": status})
        if not created:
            device.status = status
            device.invited_at = timezone.now()
            device.save(update_fields=["status", "invited_at"])
        _record("rcs.tester.invited", principal, device, agent.organization,
                "rcs.tester.invited", {"bot_id": agent.pk, "phone": phone, "status": status})
    return device, created


def device_remove(*, agent: RcsAgent, principal: Principal | None, phone: str) -> None:
    device = agent.devices.filter(phone=phone).first()
    if device is None:
        raise APIError("NOT_FOUND", "The phone is not a test device of this agent.",
                       details={"phone": phone})
    with transaction.atomic():
        _record("rcs.tester.removed", principal, device, agent.organization, None, {})
        device.delete()


# --- templates -----------------------------------------------------------------------------

def template_create(*, agent: RcsAgent, principal: Principal | None, name: str,
                    **fields: Any) -> RcsTemplate:
    template = RcsTemplate(organization=agent.organization, agent=agent, name=name,
                           **{k: v for k, v in fields.items() if k in TEMPLATE_FIELDS})
    try:
        with transaction.atomic():
            template.save(force_insert=True)
            _record("rcs.template.created", principal, template, agent.organization,
                    "rcs.template.submitted",
                    {"bot_id": agent.pk, "template_id": template.pk, "name": name,
                     "status": template.status})
    except IntegrityError:
        raise APIError("ALREADY_EXISTS", "The agent already has a template with this name.",
                       details={"name": name}) from None
    _decide_after_commit(template)
    return template


def template_replace(*, template: RcsTemplate, principal: Principal | None,
                     **fields: Any) -> RcsTemplate:
    with transaction.atomic():
        for key in TEMPLATE_FIELDS:
            setattr(template, key, fields.get(key, RcsTemplate._meta.get_field(key).get_default()))
        template.status = TemplateStatus.PENDING
        template.rejection_reason = ""
        template.save()
        _record("rcs.template.replaced", principal, template, template.organization,
                "rcs.template.submitted",
                {"bot_id": template.agent_id, "template_id": template.pk,
                 "name": template.name, "status": template.status})
    _decide_after_commit(template)
    return template


def template_delete(*, template: RcsTemplate, principal: Principal | None) -> None:
    with transaction.atomic():
        _record("rcs.template.deleted", principal, template, template.organization, None, {})
        template.delete()


def _decide_after_commit(template: RcsTemplate) -> None:
    organization, pk = template.organization, template.pk
    transaction.on_commit(lambda: template_decide(organization=organization, template_id=pk))


def template_decide(*, organization, template_id: str) -> RcsTemplate | None:
    with transaction.atomic():
        template = (RcsTemplate.objects.for_organization(organization).select_for_update()
                    .filter(pk=template_id, status=TemplateStatus.PENDING).first())
        if template is None:
            return None
        decision = provider_for(organization).template_decision(template)
        if decision.status not in (TemplateStatus.APPROVED, TemplateStatus.REJECTED):
            return template
        template.status = decision.status
        template.rejection_reason = decision.reason[:500]
        template.save(update_fields=["status", "rejection_reason", "updated_at"])
        emit(organization=organization, type=f"rcs.template.{decision.status}",
             data={"bot_id": template.agent_id, "template_id": template.pk,
                   "name": template.name, "reason": decision.reason or None})
    return template
