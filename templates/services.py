"""Writes of the templates family and the two render services messaging calls at send time.

Templates (Document 2, 2.3 and 3): whatsapp and rcs templates start `pending` and are
submitted for carrier approval (live mode: a task after commit, see `submission.py`; test
mode: nothing leaves, `POST /api/v1/sandbox/templates/{id}/decision` decides); sms, mms
and email templates are `approved` at once. Every decision goes through
`template_apply_status`, which emits the template-approval event:

- `template.approved` / `template.rejected` when a carrier (or the sandbox) decides;
- `template.status_updated` for every other status change (back to `pending` after an
  edit, `paused`, `disabled`).

  data: {template_id, name, channel, language, category, status, previous_status,
         reason, source}   (source: sandbox, provider_submission, provider_webhook,
                            status_sync, update)

Send time (messaging calls these, keyword-only):

    render_for_send(*, organization, channel, template_name, language, variables)
        -> RenderedTemplate(body, components, template_id, ...)
    render_content_for_send(*, organization, content_template_id, channel, variables)
        -> RenderedContent(...)

Both raise APIError 422 INVALID_TEMPLATE whose `details` name what is wrong (`field`,
`reason`: unknown_template, unknown_language, language_required, not_approved,
missing_variables, extra_variables, invalid_variables; plus `missing` / `extra` lists);
the content render raises 422 NO_VARIANT_FOR_CHANNEL when no variant resolves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from . import components as comp
from .models import (
    APPROVAL_CHANNELS,
    RICH_CHANNELS,
    ContentTemplate,
    MessageTemplate,
    TemplateCategory,
    TemplateChannel,
    TemplateStatus,
)
from .translation import TranslationError, translate

LOCALE = re.compile(r"^[a-z]{2,3}([_-][A-Za-z0-9]{2,8})*$")
WHATSAPP_NAME = re.compile(r"^[a-z0-9_]{1,512}$")
LOCALIZE_MAX = 25

DECISION_EVENTS = {TemplateStatus.APPROVED: "template.approved",
                   TemplateStatus.REJECTED: "template.rejected"}
STATUS_EVENT = "template.status_updated"


# --- Field checks -----------------------------------------------------------------------


def check_language(value: Any, field_name: str = "language") -> str:
    if not isinstance(value, str) or not LOCALE.match(value) or len(value) > 35:
        raise validation_error(field_name, "A locale code such as `en`, `en_US` or `pt-BR` is "
                                           "required.")
    return value


def _check_name(name: Any, channel: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise validation_error("name", "name is required.")
    name = name.strip()
    if len(name) > 512:
        raise validation_error("name", "At most 512 characters.")
    if channel == TemplateChannel.WHATSAPP and not WHATSAPP_NAME.match(name):
        raise validation_error("name", "WhatsApp template names use lowercase letters, digits "
                                       "and underscores only.")
    return name


def _check_category(value: Any) -> str:
    category = str(value or TemplateCategory.UTILITY).lower()
    if category not in TemplateCategory.values:
        raise validation_error("category",
                               f"category is one of {', '.join(TemplateCategory.values)}.")
    return category


def _shape(channel: str, *, components: Any, content: Any, subject: Any
           ) -> tuple[list[dict], str, str, int]:
    """(components, content, subject, placeholder_count) for the channel's template shape."""
    if channel in RICH_CHANNELS:
        if components is None and content not in (None, ""):
            components = [{"type": "BODY", "text": content}]
        if components is None:
            raise validation_error("components", f"{channel} templates need `components` "
                                                 "(or a plain `content` body).")
        if subject:
            raise validation_error("subject", "Only email templates have a subject.")
        normalized, count = comp.normalize_components(components)
        return normalized, "", "", count
    if components not in (None, []):
        raise validation_error("components", f"{channel} templates take a plain `content` "
                                             "body; components are for whatsapp and rcs.")
    if subject and channel != TemplateChannel.EMAIL:
        raise validation_error("subject", "Only email templates have a subject.")
    count = comp.check_content(content, subject)
    return [], content, subject or "", count


def _is_live(organization) -> bool:
    return not organization.sandbox


def _live_account(organization, channel: str):
    from .submission import account_provider_name, account_waba_id, live_account

    account = live_account(organization, channel)
    return account, account_provider_name(account), account_waba_id(account)


def _enqueue(task_name: str, template_id: str) -> None:
    from . import tasks

    task = getattr(tasks, task_name)
    transaction.on_commit(lambda: task.delay(template_id))


# --- Templates --------------------------------------------------------------------------


def template_create(
    *,
    principal: Principal,
    name: str,
    channel: str,
    language: str,
    category: str | None = None,
    components: list | None = None,
    content: str | None = None,
    subject: str | None = None,
    waba_id: str | None = None,
    request=None,
) -> MessageTemplate:
    organization = principal.organization
    if channel not in TemplateChannel.values:
        raise validation_error("channel", f"channel is one of {', '.join(TemplateChannel.values)}.")
    name = _check_name(name, channel)
    language = check_language(language)
    category = _check_category(category)
    normalized, content, subject, count = _shape(channel, components=components,
                                                 content=content, subject=subject)
    if waba_id and channel != TemplateChannel.WHATSAPP:
        raise validation_error("waba_id", "Only whatsapp templates have a waba_id.")
    needs_approval = channel in APPROVAL_CHANNELS
    provider = ""
    if needs_approval and _is_live(organization):
        _account, provider, account_waba = _live_account(organization, channel)
        if channel == TemplateChannel.WHATSAPP and not (waba_id or account_waba):
            raise validation_error("waba_id", "A WhatsApp Business Account id is needed: set "
                                              "waba_id here or on the whatsapp account.")
    template = MessageTemplate(
        organization=organization, name=name, channel=channel, language=language,
        category=category, components=normalized, content=content, subject=subject,
        placeholder_count=count, waba_id=waba_id or None, provider=provider,
        status=TemplateStatus.PENDING if needs_approval else TemplateStatus.APPROVED,
    )
    if not needs_approval:
        template.decided_at = timezone.now()
    try:
        with transaction.atomic():
            template.save(force_insert=True)
            audit_record(action="template.created", principal=principal, target=template,
                         request=request, metadata={"name": name, "channel": channel,
                                                    "language": language})
            if needs_approval and _is_live(organization):
                _enqueue("submit_template", template.pk)
    except IntegrityError:
        raise APIError("ALREADY_EXISTS", "A template with this channel, name and language "
                                         "exists already.",
                       details={"channel": channel, "name": name, "language": language}
                       ) from None
    return template


IMMUTABLE = ("name", "channel", "language")


def template_update(*, principal: Principal, template: MessageTemplate, request=None,
                    **changes: Any) -> MessageTemplate:
    """PATCH: category, components / content, subject, waba_id. A change to what the
    carrier approved puts a whatsapp or rcs template back to `pending` (resubmitted)."""
    for name in IMMUTABLE:
        if name in changes and changes[name] != getattr(template, name):
            raise validation_error(name, f"{name} cannot change; create a new template "
                                         "(or a locale variant) instead.")
    resubmit = False
    fields: list[str] = []
    if "category" in changes:
        category = _check_category(changes["category"])
        if category != template.category:
            template.category = category
            fields.append("category")
            resubmit = True
    if any(k in changes for k in ("components", "content", "subject")):
        components = changes.get("components")
        content = changes.get("content")
        subject = changes.get("subject", template.subject)
        if template.is_rich:
            if components is None and content is None:
                components = template.components
        else:
            content = template.content if content is None else content
        normalized, content, subject, count = _shape(template.channel, components=components,
                                                     content=content, subject=subject)
        if (normalized, content, subject) != (template.components, template.content,
                                              template.subject):
            template.components, template.content, template.subject = normalized, content, \
                subject
            template.placeholder_count = count
            fields += ["components", "content", "subject", "placeholder_count"]
            resubmit = True
    if "waba_id" in changes:
        if changes["waba_id"] and template.channel != TemplateChannel.WHATSAPP:
            raise validation_error("waba_id", "Only whatsapp templates have a waba_id.")
        template.waba_id = changes["waba_id"] or None
        fields.append("waba_id")
    live = _is_live(template.organization)
    needs_approval = template.channel in APPROVAL_CHANNELS
    if needs_approval and resubmit and live:
        _live_account(template.organization, template.channel)
    with transaction.atomic():
        if fields:
            template.save(update_fields=[*fields, "updated_at"])
        audit_record(action="template.updated", principal=principal, target=template,
                     request=request, metadata={"fields": sorted(set(fields))})
        if needs_approval and resubmit:
            template_apply_status(template=template, status=TemplateStatus.PENDING,
                                  reason=None, source="update")
            if live:
                _enqueue("resubmit_template", template.pk)
    return template


def template_delete(*, principal: Principal, template: MessageTemplate, request=None) -> None:
    remote = None
    if _is_live(template.organization) and template.provider_template_id:
        remote = {"organization_id": template.organization_id, "channel": template.channel,
                  "name": template.name, "provider_template_id": template.provider_template_id,
                  "waba_id": template.waba_id}
    with transaction.atomic():
        audit_record(action="template.deleted", principal=principal, target=template,
                     request=request, metadata={"name": template.name,
                                                "channel": template.channel,
                                                "language": template.language})
        template.delete()
        if remote:
            from .tasks import delete_remote_template

            transaction.on_commit(lambda: delete_remote_template.delay(**remote))


def template_apply_status(*, template: MessageTemplate, status: str, reason: str | None,
                          source: str, provider_template_id: str | None = None) -> bool:
    """Move a template to `status` and emit the template-approval event. False: no change."""
    if status not in TemplateStatus.values:
        raise ValueError(f"unknown template status {status!r}")
    previous = template.status
    fields = []
    if provider_template_id and provider_template_id != template.provider_template_id:
        template.provider_template_id = provider_template_id
        fields.append("provider_template_id")
    if status == previous:
        if fields:
            template.save(update_fields=[*fields, "updated_at"])
        return False
    template.status = status
    template.rejection_reason = (reason or None) if status == TemplateStatus.REJECTED else None
    template.decided_at = None if status == TemplateStatus.PENDING else timezone.now()
    with transaction.atomic():
        template.save(update_fields=[*fields, "status", "rejection_reason", "decided_at",
                                     "updated_at"])
        emit(organization=template.organization,
             type=DECISION_EVENTS.get(status, STATUS_EVENT),
             data={"template_id": template.pk, "name": template.name,
                   "channel": template.channel, "language": template.language,
                   "category": template.category, "status": status,
                   "previous_status": previous, "reason": template.rejection_reason,
                   "source": source})
    return True


def template_sandbox_decide(*, principal: Principal, template: MessageTemplate, decision: str,
                            reason: str | None = None, request=None) -> MessageTemplate:
    """The carrier's decision simulated in test mode (0-conventions.md section 6)."""
    if principal.organization.sandbox is not True:
        raise APIError("TEST_MODE_ONLY", "Template decisions can only be simulated with test "
                                         "keys; in live mode the carrier decides.")
    if decision not in (TemplateStatus.APPROVED, TemplateStatus.REJECTED):
        raise validation_error("decision", "decision is approved or rejected.")
    with transaction.atomic():
        locked = MessageTemplate.objects.select_for_update().get(pk=template.pk)
        if locked.status != TemplateStatus.PENDING:
            raise APIError("CONFLICT", f"Only a pending template can be decided; this one is "
                                       f"{locked.status}.",
                           details={"status": locked.status})
        template_apply_status(template=locked, status=decision, reason=reason or None,
                              source="sandbox")
        audit_record(action=f"template.{decision}", principal=principal, target=locked,
                     request=request, metadata={"reason": reason or None, "sandbox": True})
    return locked


def template_family(template: MessageTemplate):
    return MessageTemplate.objects.for_organization(template.organization).filter(
        channel=template.channel, name=template.name)


def _check_locales(locales: Any, source_language: str) -> list[str]:
    if not isinstance(locales, list) or not locales:
        raise validation_error("locales", "A non-empty list of locale codes is required.")
    if len(locales) > LOCALIZE_MAX:
        raise validation_error("locales", f"At most {LOCALIZE_MAX} locales per request.")
    seen: set[str] = set()
    result = []
    for index, locale in enumerate(locales):
        locale = check_language(locale, f"locales.{index}")
        if locale == source_language:
            raise validation_error(f"locales.{index}", f"{locale} is the template's own language.")
        if locale in seen:
            raise validation_error(f"locales.{index}", f"{locale} is listed twice.")
        seen.add(locale)
        result.append(locale)
    return result


def template_localize(*, principal: Principal, template: MessageTemplate, locales: list,
                      request=None) -> tuple[list[dict], bool]:
    """Translate into each locale and create one variant per locale through the approval
    path. Answers per-locale rows (`created`, `existing` or `failed` with `error`) and
    whether anything was created."""
    locales = _check_locales(locales, template.language)
    organization = template.organization
    needs_approval = template.channel in APPROVAL_CHANNELS
    live = _is_live(organization)
    provider = template.provider
    if needs_approval and live:
        _account, provider, _waba = _live_account(organization, template.channel)
    existing = {t.language: t for t in template_family(template)}
    if template.is_rich:
        texts = comp.translatable_texts(template.components)
    else:
        texts = [template.content] + ([template.subject] if template.subject else [])
    rows: list[dict] = []
    planned: list[tuple[dict, MessageTemplate]] = []
    for locale in locales:
        row: dict[str, Any] = {"language": locale, "template_id": None, "status": None}
        rows.append(row)
        if locale in existing:
            row.update(template_id=existing[locale].pk, status=existing[locale].status,
                       result="existing")
            continue
        try:
            translated = translate(texts, template.language, locale)
            if template.is_rich:
                components, count = comp.normalize_components(
                    comp.with_translations(template.components, translated))
                content, subject = "", ""
            else:
                components = []
                content = translated[0]
                subject = translated[1] if template.subject else ""
                count = comp.check_content(content, subject)
        except TranslationError as exc:
            row.update(result="failed", error={"code": "TRANSLATION_FAILED",
                                               "message": str(exc)})
            continue
        except APIError as exc:
            row.update(result="failed", error={"code": exc.code, "message": exc.message,
                                               "details": exc.details})
            continue
        variant = MessageTemplate(
            organization=organization, name=template.name, channel=template.channel,
            language=locale, category=template.category, components=components,
            content=content, subject=subject, placeholder_count=count,
            waba_id=template.waba_id, localized_from=template, provider=provider,
            status=TemplateStatus.PENDING if needs_approval else TemplateStatus.APPROVED,
            decided_at=None if needs_approval else timezone.now(),
        )
        planned.append((row, variant))
    created = False
    with transaction.atomic():
        for row, variant in planned:
            try:
                with transaction.atomic():
                    variant.save(force_insert=True)
            except IntegrityError:  # created concurrently: report the one that won
                other = template_family(template).filter(language=variant.language).first()
                row.update(template_id=other.pk if other else None,
                           status=other.status if other else None, result="existing")
                continue
            row.update(template_id=variant.pk, status=variant.status, result="created")
            created = True
            if needs_approval and live:
                _enqueue("submit_template", variant.pk)
        audit_record(action="template.localized", principal=principal, target=template,
                     request=request,
                     metadata={"locales": locales,
                               "created": [r["language"] for r in rows
                                           if r.get("result") == "created"]})
    return rows, created


# --- Send-time rendering ----------------------------------------------------------------


@dataclass(frozen=True)
class RenderedTemplate:
    """A template ready to send. `components` are the rendered rich components (empty for
    plain channels); `parameters` the WhatsApp Cloud API send form (`template.components`);
    `language` the variant's locale (store it on the message)."""

    body: str
    components: list[dict]
    template_id: str
    name: str = ""
    channel: str = ""
    language: str = ""
    category: str = ""
    subject: str = ""
    parameters: list[dict] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)


def _invalid(message: str, *, field_name: str, reason: str, **details: Any) -> APIError:
    return APIError("INVALID_TEMPLATE", message,
                    details={"field": field_name, "reason": reason, **details})


_VAR_KEY = re.compile(r"^[1-9]\d{0,2}$")


def _variable_values(variables: Any, *, field_name: str = "variables") -> dict[str, str]:
    if variables in (None, ""):
        return {}
    if not isinstance(variables, dict):
        raise _invalid("variables must be an object keyed \"1\", \"2\", ... .",
                       field_name=field_name, reason="invalid_variables")
    values: dict[str, str] = {}
    for key, value in variables.items():
        key = str(key)
        if not _VAR_KEY.match(key):
            raise _invalid(f"Variable keys are positional numbers (\"1\", \"2\", ...), not "
                           f"{key!r}.", field_name=f"{field_name}.{key}",
                           reason="invalid_variables")
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise _invalid(f"Variable {key} must be a string or a number.",
                           field_name=f"{field_name}.{key}", reason="invalid_variables")
        text = str(value)
        if not text.strip():
            raise _invalid(f"Variable {key} is empty.", field_name=f"{field_name}.{key}",
                           reason="invalid_variables")
        values[key] = text
    return values


def _check_variables(values: dict[str, str], count: int, *, label: str,
                     allow_extra: bool = False) -> None:
    expected = {str(n) for n in range(1, count + 1)}
    missing = sorted(expected - set(values), key=int)
    if missing:
        names = ", ".join(missing)
        raise _invalid(f"Missing variable{'s' if len(missing) > 1 else ''} {names} for {label} "
                       f"(it uses {{{{1}}}}..{{{{{count}}}}}).",
                       field_name="variables", reason="missing_variables", missing=missing,
                       expected=count)
    extra = sorted(set(values) - expected, key=int)
    if extra and not allow_extra:
        names = ", ".join(extra)
        raise _invalid(f"Variable{'s' if len(extra) > 1 else ''} {names} not used by {label} "
                       f"(it uses {count} placeholder{'s' if count != 1 else ''}).",
                       field_name="variables", reason="extra_variables", extra=extra,
                       expected=count)


def resolve_template(*, organization, channel: str, template_name: Any, language: Any
                     ) -> MessageTemplate:
    """The variant a send names (any status), or INVALID_TEMPLATE."""
    if not isinstance(template_name, str) or not template_name.strip():
        raise _invalid("template_name is required.", field_name="template_name",
                       reason="unknown_template")
    variants = list(MessageTemplate.objects.for_organization(organization).filter(
        channel=channel, name=template_name.strip()))
    if not variants:
        raise _invalid(f"No {channel} template named {template_name!r}.",
                       field_name="template_name", reason="unknown_template",
                       template_name=template_name, channel=channel)
    languages = sorted(v.language for v in variants)
    if language in (None, ""):
        if len(variants) == 1:
            return variants[0]
        raise _invalid(f"language is required: template {template_name!r} has variants "
                       f"{', '.join(languages)}.", field_name="language",
                       reason="language_required", available_languages=languages)

    def norm(value: str) -> str:
        return str(value).replace("-", "_").lower()

    for variant in variants:
        if variant.language == language:
            return variant
    for variant in variants:
        if norm(variant.language) == norm(language):
            return variant
    raise _invalid(f"Template {template_name!r} has no {language!r} variant "
                   f"(available: {', '.join(languages)}).", field_name="language",
                   reason="unknown_language", available_languages=languages)


def render_template(template: MessageTemplate, variables: Any, *,
                    allow_extra: bool = False) -> RenderedTemplate:
    """Fill a template's placeholders (whatever its status)."""
    values = _variable_values(variables)
    label = f"template {template.name!r} ({template.language})"
    _check_variables(values, template.placeholder_count, label=label, allow_extra=allow_extra)
    if template.is_rich:
        rendered = comp.render_components(template.components, values)
        body = comp.body_text(rendered)
        parameters = comp.send_parameters(template.components, values)
    else:
        rendered, parameters = [], []
        body = comp.substitute(template.content, values)
    return RenderedTemplate(
        body=body, components=rendered, template_id=template.pk, name=template.name,
        channel=template.channel, language=template.language, category=template.category,
        subject=comp.substitute(template.subject, values), parameters=parameters,
        variables=values,
    )


def render_for_send(*, organization, channel: str, template_name: str,
                    language: str | None, variables: dict | None) -> RenderedTemplate:
    """The approved template variant a send names, rendered with `variables`.

    422 INVALID_TEMPLATE naming what is wrong: unknown template or language, a template that
    is not `approved`, a missing, extra or malformed variable.
    """
    template = resolve_template(organization=organization, channel=channel,
                                template_name=template_name, language=language)
    if template.status != TemplateStatus.APPROVED:
        raise _invalid(f"Template {template.name!r} ({template.language}) is {template.status}; "
                       "only approved templates can be sent.", field_name="template_name",
                       reason="not_approved", status=template.status,
                       template_id=template.pk)
    return render_template(template, variables)


# --- Content templates ------------------------------------------------------------------

VARIANT_KEYS = {
    TemplateChannel.SMS: {"body"},
    TemplateChannel.MMS: {"body", "media_urls"},
    TemplateChannel.EMAIL: {"body", "subject", "html"},
    TemplateChannel.WHATSAPP: {"body", "media_urls", "template_name", "language"},
    TemplateChannel.RCS: {"body", "media_urls", "template_name", "language", "rich_card",
                          "suggestions"},
}
FALLBACK_MAX = 5


def _variant_texts(variant: dict, path: str) -> list[tuple[str, str]]:
    texts = []
    for key in ("subject", "body", "html"):
        if isinstance(variant.get(key), str):
            texts.append((f"{path}.{key}", variant[key]))
    card = variant.get("rich_card")
    if isinstance(card, dict):
        for key in ("title", "description"):
            if isinstance(card.get(key), str):
                texts.append((f"{path}.rich_card.{key}", card[key]))
    return texts


def check_variants(variants: Any, fallback: Any) -> tuple[dict, list[str]]:
    issues = comp.Issues()
    if not isinstance(variants, dict) or not variants:
        issues.add("variants", "An object of per-channel variants is required, e.g. "
                               "{\"sms\": {\"body\": \"...\"}}.")
        issues.raise_if_any()
    clean: dict[str, dict] = {}
    for channel, variant in variants.items():
        path = f"variants.{channel}"
        if channel not in VARIANT_KEYS:
            issues.add(path, f"Unknown channel; channels are {', '.join(VARIANT_KEYS)}.")
            continue
        if not isinstance(variant, dict) or not variant:
            issues.add(path, "A variant is a non-empty object.")
            continue
        unknown = sorted(set(variant) - VARIANT_KEYS[channel])
        if unknown:
            issues.add(f"{path}.{unknown[0]}", f"Not a field of a {channel} variant (fields: "
                                               f"{', '.join(sorted(VARIANT_KEYS[channel]))}).")
            continue
        if not any(variant.get(k) for k in ("body", "template_name", "media_urls", "rich_card")):
            issues.add(path, "A variant needs a body, a template_name, media_urls or a "
                             "rich_card.")
            continue
        for key in ("body", "subject", "html"):
            if key in variant and (not isinstance(variant[key], str)
                                   or len(variant[key]) > comp.CONTENT_MAX):
                issues.add(f"{path}.{key}", f"A string of at most {comp.CONTENT_MAX} characters.")
        if channel == TemplateChannel.EMAIL and not (variant.get("body") or variant.get("html")):
            issues.add(path, "An email variant needs a body (or html).")
        if "template_name" in variant:
            if not isinstance(variant["template_name"], str) or not variant["template_name"]:
                issues.add(f"{path}.template_name", "The name of a template of this channel.")
            if variant.get("language") is not None and not (
                    isinstance(variant["language"], str) and LOCALE.match(variant["language"])):
                issues.add(f"{path}.language", "A locale code such as `en`.")
        elif "language" in variant:
            issues.add(f"{path}.language", "language goes with template_name.")
        media = variant.get("media_urls")
        if media is not None and (not isinstance(media, list) or len(media) > 10 or not all(
                isinstance(u, str) and re.match(r"^https?://\S+$", u) for u in media)):
            issues.add(f"{path}.media_urls", "A list of at most 10 http(s) URLs.")
        card = variant.get("rich_card")
        if card is not None and (not isinstance(card, dict) or not card.get("title")
                                 or len(str(card.get("title"))) > 200
                                 or len(str(card.get("description", ""))) > 2000):
            issues.add(f"{path}.rich_card", "A rich card has a title (at most 200 characters), "
                                            "an optional description and media_url.")
        suggestions = variant.get("suggestions")
        if suggestions is not None and (
                not isinstance(suggestions, list) or len(suggestions) > 11
                or not all(isinstance(s, dict) and isinstance(s.get("text"), str)
                           and 0 < len(s["text"]) <= 25 for s in suggestions)):
            issues.add(f"{path}.suggestions", "At most 11 suggestions, each with a text of 1-25 "
                                              "characters.")
        comp.check_contiguous(_variant_texts(variant, path), issues)
        clean[channel] = variant
    chain: list[str] = []
    if fallback is None:
        fallback = []
    if not isinstance(fallback, list) or len(fallback) > FALLBACK_MAX:
        issues.add("fallback", f"A list of at most {FALLBACK_MAX} channels.")
    else:
        for index, channel in enumerate(fallback):
            if not isinstance(channel, str) or channel not in VARIANT_KEYS:
                issues.add(f"fallback.{index}", "Not a channel.")
            elif channel in chain:
                issues.add(f"fallback.{index}", f"{channel} is listed twice.")
            elif channel not in variants:
                issues.add(f"fallback.{index}", f"No variant for {channel}: the fallback chain "
                                                "names channels that have one.")
            else:
                chain.append(channel)
    issues.raise_if_any()
    return clean, chain


def content_template_create(*, principal: Principal, name: str, variants: dict,
                            fallback: list | None = None, description: str | None = None,
                            request=None) -> ContentTemplate:
    variants, chain = check_variants(variants, fallback)
    template = ContentTemplate(organization=principal.organization, name=name,
                               description=description or None, variants=variants,
                               fallback=chain)
    with transaction.atomic():
        template.save(force_insert=True)
        audit_record(action="content_template.created", principal=principal, target=template,
                     request=request, metadata={"name": name, "channels": sorted(variants)})
    return template


def content_template_update(*, principal: Principal, template: ContentTemplate, request=None,
                            **changes: Any) -> ContentTemplate:
    fields = []
    if "name" in changes:
        template.name = changes["name"]
        fields.append("name")
    if "description" in changes:
        template.description = changes["description"] or None
        fields.append("description")
    if "variants" in changes or "fallback" in changes:
        variants, chain = check_variants(changes.get("variants", template.variants),
                                         changes.get("fallback", template.fallback))
        template.variants, template.fallback = variants, chain
        fields += ["variants", "fallback"]
    with transaction.atomic():
        if fields:
            template.save(update_fields=[*fields, "updated_at"])
        audit_record(action="content_template.updated", principal=principal, target=template,
                     request=request, metadata={"fields": fields})
    return template


def content_template_delete(*, principal: Principal, template: ContentTemplate,
                            request=None) -> None:
    with transaction.atomic():
        audit_record(action="content_template.deleted", principal=principal, target=template,
                     request=request, metadata={"name": template.name})
        template.delete()


@dataclass(frozen=True)
class RenderedContent:
    """A content template resolved for one channel.

    `resolved_channel` is the channel whose variant was used (the target's own, or a
    fallback variant that renders on the target); `fallback` lists the channels left in the
    author's chain after it, for the message's own fallback (render again for each)."""

    content_template_id: str
    channel: str
    resolved_channel: str
    body: str
    subject: str = ""
    html: str = ""
    media_urls: list[str] = field(default_factory=list)
    components: list[dict] = field(default_factory=list)
    parameters: list[dict] = field(default_factory=list)
    rich_card: dict | None = None
    suggestions: list[dict] = field(default_factory=list)
    template_id: str | None = None
    template_name: str | None = None
    language: str | None = None
    template_status: str | None = None
    fallback: list[str] = field(default_factory=list)

    @property
    def fallback_used(self) -> bool:
        return self.channel != self.resolved_channel


def _portable(variant: dict) -> bool:
    """A variant another channel can carry: it has a plain body and names no template."""
    return bool(variant.get("body")) and not variant.get("template_name")


def resolve_variant(template: ContentTemplate, channel: str) -> tuple[str, dict]:
    variants = template.variants or {}
    if channel in variants:
        return channel, variants[channel]
    for candidate in template.fallback or []:
        variant = variants.get(candidate)
        if variant and _portable(variant):
            return candidate, variant
    raise APIError(
        "NO_VARIANT_FOR_CHANNEL",
        f"Content template {template.pk} has no {channel} variant and no fallback variant "
        "renders on it.",
        details={"channel": channel, "variants": sorted(variants),
                 "fallback": list(template.fallback or [])},
    )


def render_content(template: ContentTemplate, *, channel: str, variables: Any,
                   require_approved: bool) -> RenderedContent:
    if channel not in TemplateChannel.values:
        raise validation_error("channel", f"channel is one of {', '.join(TemplateChannel.values)}.")
    resolved, variant = resolve_variant(template, channel)
    chain = list(template.fallback or [])
    remaining = chain[chain.index(resolved) + 1:] if resolved in chain else [
        c for c in chain if c != resolved]
    base = {"content_template_id": template.pk, "channel": channel,
            "resolved_channel": resolved, "fallback": remaining}
    if variant.get("template_name") and resolved == channel:
        if require_approved:
            rendered = render_for_send(organization=template.organization, channel=channel,
                                       template_name=variant["template_name"],
                                       language=variant.get("language"), variables=variables)
        else:
            target = resolve_template(organization=template.organization, channel=channel,
                                      template_name=variant["template_name"],
                                      language=variant.get("language"))
            rendered = render_template(target, variables, allow_extra=True)
        status = MessageTemplate.objects.for_organization(template.organization).filter(
            pk=rendered.template_id).values_list("status", flat=True).first()
        return RenderedContent(
            **base, body=rendered.body, subject=rendered.subject,
            media_urls=list(variant.get("media_urls") or []),
            components=rendered.components, parameters=rendered.parameters,
            template_id=rendered.template_id, template_name=rendered.name,
            language=rendered.language, template_status=status)
    values = _variable_values(variables)
    count = max([n for _p, text in _variant_texts(variant, "v")
                 for n in comp.placeholders_in(text)] or [0])
    # The same variables serve every variant of the chain: extras are fine, gaps are not.
    _check_variables(values, count, label=f"the {resolved} variant", allow_extra=True)
    if resolved != channel:  # a fallback variant: only its plain body travels
        return RenderedContent(**base, body=comp.substitute(variant["body"], values))
    card = variant.get("rich_card")
    if isinstance(card, dict):
        card = {k: comp.substitute(v, values) if isinstance(v, str) else v
                for k, v in card.items()}
    return RenderedContent(
        **base, body=comp.substitute(variant.get("body", ""), values),
        subject=comp.substitute(variant.get("subject", ""), values),
        html=comp.substitute(variant.get("html", ""), values),
        media_urls=list(variant.get("media_urls") or []), rich_card=card,
        suggestions=list(variant.get("suggestions") or []),
    )


def render_content_for_send(*, organization, content_template_id: str, channel: str,
                            variables: dict | None) -> RenderedContent:
    """The content template resolved and rendered for a send on `channel`.

    422 INVALID_TEMPLATE (field `content_template_id`) when the id is unknown in the
    organization; 422 NO_VARIANT_FOR_CHANNEL when nothing resolves; a variant naming a
    template must name an approved one (INVALID_TEMPLATE otherwise).
    """
    template = ContentTemplate.objects.for_organization(organization).filter(
        pk=content_template_id).first()
    if template is None:
        raise _invalid(f"No content template {content_template_id!r}.",
                       field_name="content_template_id", reason="unknown_template")
    return render_content(template, channel=channel, variables=variables,
                          require_approved=True)
