"""Writes of the agent resource (Document 3, 2.1, 3 and 4.1): create, update (a kept
version each time), deploy, undeploy, delete.

The request bodies are validated by agents/api/serializers.py (shapes, JSON Schema of the
tools); what needs the database or the network is checked here: the sender number of a
deployment, the SSRF guard of URLs, one active agent per binding.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.net import ssrf

from .agent_models import Agent, AgentStatus, AgentVersion, DeployChannel

# The fields an update may change; a version snapshot keeps them all.
CONFIG_FIELDS = ("name", "type", "model", "system_prompt", "tools", "safety_config",
                 "channels", "config")
PHONE_CHANNELS = (DeployChannel.SMS, DeployChannel.WHATSAPP, DeployChannel.VOICE)


def check_url(field: str, url: str) -> str:
    """422 unless `url` is an allowed outbound target (platform_core/net/ssrf.py)."""
    try:
        ssrf.check_url(url)
    except ssrf.UnsafeTarget as exc:
        raise validation_error(field, f"The URL is not an allowed target: {exc}.") from None
    return url


def check_tool_urls(tools: list[dict[str, Any]]) -> None:
    for i, tool in enumerate(tools):
        if tool.get("webhook_url"):
            check_url(f"tools.{i}.webhook_url", tool["webhook_url"])


def _snapshot(agent: Agent) -> dict[str, Any]:
    return {name: getattr(agent, name) for name in CONFIG_FIELDS}


@transaction.atomic
def agent_create(*, principal: Principal, body: dict[str, Any], request=None) -> Agent:
    check_tool_urls(body.get("tools") or [])
    organization = principal.organization
    agent = Agent.objects.for_organization(organization).create(
        organization=organization, name=body["name"], type=body.get("type") or "chatbot",
        model=body["model"], system_prompt=body.get("system_prompt") or "",
        tools=body.get("tools") or [], safety_config=body.get("safety_config") or {},
        channels=body.get("channels") or [], config=body.get("config") or {},
        status=AgentStatus.DRAFT)
    audit_record(action="agent.created", principal=principal, target=agent, request=request,
                 metadata={"name": agent.name, "model": agent.model})
    return agent


def locked(principal: Principal, agent_id: str) -> Agent:
    agent = (Agent.objects.for_organization(principal.organization).select_for_update()
             .filter(pk=agent_id).first())
    if agent is None:
        raise APIError("NOT_FOUND")
    return agent


@transaction.atomic
def agent_update(*, principal: Principal, agent_id: str, body: dict[str, Any],
                 request=None) -> Agent:
    """Only the sent fields change; the configuration replaced is kept as a version and
    `version` rises (every update, even one that sends the same values)."""
    agent = locked(principal, agent_id)
    if "tools" in body:
        check_tool_urls(body["tools"])
    AgentVersion.objects.for_organization(principal.organization).create(
        organization=principal.organization, agent=agent, version=agent.version,
        snapshot=_snapshot(agent))
    for name in CONFIG_FIELDS:
        if name not in body:
            continue
        value = body[name]
        if name == "config":  # the deployment is not the body's to change
            value = {**value, **({"deployment": agent.config["deployment"]}
                                 if "deployment" in agent.config else {})}
        setattr(agent, name, value)
    agent.version += 1
    agent.save()
    audit_record(action="agent.updated", principal=principal, target=agent, request=request,
                 metadata={"version": agent.version, "fields": sorted(body)})
    return agent


def sender_numbers(organization, channel: str) -> set[str]:
    """The organization's own numbers a deployment may bind: its messaging services'
    sender pools, its provider accounts' configured senders, its IVR numbers (voice) and,
    in test mode, the sandbox's default number."""
    from messaging.models import MessagingService
    from messaging.providers.models import ProviderAccount
    from messaging.sending.senders import account_default_sender

    numbers: set[str] = set()
    family = "sms" if channel in ("sms", "mms", "voice") else channel
    for service in MessagingService.objects.for_organization(organization).only("senders"):
        for sender in service.senders:
            if (isinstance(sender, dict) and sender.get("from")
                    and sender.get("channel") in (None, "", family, channel)):
                numbers.add(sender["from"])
    for account in ProviderAccount.objects.for_organization(organization).filter(enabled=True):
        value = account_default_sender(account)
        if value:
            numbers.add(value)
    if channel == DeployChannel.VOICE:
        from voice.models import IvrNumber

        numbers.update(IvrNumber.objects.for_organization(organization)
                       .values_list("phone_number", flat=True))
    if organization.sandbox:
        from messaging.providers.sandbox import DEFAULT_PHONE_SENDER

        numbers.add(DEFAULT_PHONE_SENDER)
    return numbers


def _check_deploy(organization, body: dict[str, Any]) -> tuple[str, str, str]:
    """(channel, phone_number, webhook_url) of a valid deploy body, else 422."""
    from contacts.normalize import parse_phone

    channel = body["channel"]
    phone, url = body.get("phone_number") or "", body.get("webhook_url") or ""
    if channel == DeployChannel.WEBHOOK:
        if not url:
            raise validation_error("webhook_url", "`webhook_url` is required for the "
                                                  "webhook channel.")
        check_url("webhook_url", url)
    elif url:
        raise validation_error("webhook_url", "`webhook_url` is only for the webhook channel.")
    if channel in PHONE_CHANNELS:
        if not phone:
            raise validation_error("phone_number", f"`phone_number` is required for {channel}.")
        normalized = parse_phone(phone, default_country=organization.default_country)
        if not normalized:
            raise validation_error("phone_number", "Not a valid phone number.")
        if normalized not in sender_numbers(organization, channel):
            raise validation_error("phone_number", "The number is not a sender number of "
                                                   "this organization.")
        phone = normalized
    elif phone:
        raise validation_error("phone_number", "`phone_number` is only for sms, whatsapp "
                                               "and voice.")
    return channel, phone, url


@transaction.atomic
def agent_deploy(*, principal: Principal, agent_id: str, body: dict[str, Any],
                 request=None) -> Agent:
    organization = principal.organization
    agent = locked(principal, agent_id)
    channel, phone, url = _check_deploy(organization, body)
    holder = (Agent.objects.for_organization(organization)
              .filter(status=AgentStatus.ACTIVE, deploy_channel=channel,
                      deploy_phone_number=phone).exclude(pk=agent.pk)
              .values_list("pk", flat=True).first())
    if holder:
        raise APIError("CONFLICT", "Another active agent is deployed on this channel "
                                   "and number; undeploy it first.",
                       details={"agent_id": holder, "channel": channel,
                                "phone_number": phone or None})
    deployment: dict[str, Any] = {"channel": channel, "phone_number": phone or None,
                                  "deployed_at": timezone.now().isoformat()}
    if url:
        deployment["webhook_url"] = url
    agent.config = {**agent.config, "deployment": deployment}
    agent.status = AgentStatus.ACTIVE
    agent.deploy_channel, agent.deploy_phone_number = channel, phone
    agent.save(update_fields=["config", "status", "deploy_channel", "deploy_phone_number",
                              "updated_at"])
    audit_record(action="agent.deployed", principal=principal, target=agent, request=request,
                 metadata={"channel": channel, "phone_number": phone or None})
    return agent


@transaction.atomic
def agent_undeploy(*, principal: Principal, agent_id: str, request=None) -> Agent:
    """Back to draft; the binding is dropped (inbound messages no longer reach it)."""
    agent = locked(principal, agent_id)
    config = dict(agent.config)
    config.pop("deployment", None)
    agent.config = config
    agent.status = AgentStatus.DRAFT
    agent.deploy_channel = agent.deploy_phone_number = ""
    agent.save(update_fields=["config", "status", "deploy_channel", "deploy_phone_number",
                              "updated_at"])
    audit_record(action="agent.undeployed", principal=principal, target=agent, request=request)
    return agent


@transaction.atomic
def agent_delete(*, principal: Principal, agent_id: str, request=None) -> None:
    """Deletes the agent and its versions. Conversations keep `ai_agent_id` and their
    messages (history stays on the tenant); a thread it still led is handed to a human at
    its next inbound message (agents/runtime/turn.py)."""
    agent = locked(principal, agent_id)
    audit_record(action="agent.deleted", principal=principal, target=agent, request=request,
                 metadata={"name": agent.name})
    agent.delete()
