"""Background jobs of the templates family: carrier submission and the status sync (beat).

Live mode only; test mode never calls a provider. Each task takes ids and calls services.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from platform_core.errors import APIError
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization

from . import services, submission
from .models import APPROVAL_CHANNELS, MessageTemplate, TemplateStatus

logger = logging.getLogger("templates.tasks")

SYNC_BATCH = 200
# A pending template without a provider id is submitted again after this long.
RESUBMIT_AFTER = timedelta(minutes=5)


def _load(template_id: str) -> MessageTemplate | None:
    template = (MessageTemplate.objects.dangerously_unscoped().select_related("organization")
                .filter(pk=template_id).first())
    if template is None or template.organization.sandbox:
        return None  # gone, or test mode: nothing ever leaves
    return template


def _submitter(template: MessageTemplate):
    """(submitter, account) for a live template, or (None, None) with the reason recorded."""
    try:
        account = submission.live_account(template.organization, template.channel)
    except APIError as exc:
        _record_failure(template, exc.message)
        return None, None
    name = submission.account_provider_name(account)
    submitter = submission.submitter_for(name)
    if submitter is None:
        _record_failure(template, f"No template submission is available for the {name!r} "
                                  f"{template.channel} provider; the template stays pending.")
        return None, None
    return submitter, account


def _record_failure(template: MessageTemplate, message: str) -> None:
    logger.warning("template %s submission failed: %s", template.pk, message)
    MessageTemplate.objects.dangerously_unscoped().filter(pk=template.pk).update(
        submission_error=message[:1000], updated_at=timezone.now())


def _apply(template: MessageTemplate, verdict: submission.ProviderVerdict, source: str) -> None:
    with transaction.atomic():
        locked = MessageTemplate.objects.select_for_update().get(pk=template.pk)
        if verdict.status is None:
            if verdict.provider_template_id and not locked.provider_template_id:
                locked.provider_template_id = verdict.provider_template_id
                locked.save(update_fields=["provider_template_id", "updated_at"])
            return
        services.template_apply_status(template=locked, status=verdict.status,
                                       reason=verdict.reason, source=source,
                                       provider_template_id=verdict.provider_template_id)


def _submit(template: MessageTemplate, *, edit: bool) -> None:
    submitter, account = _submitter(template)
    if submitter is None:
        return
    # Claim this attempt: a concurrent worker that read the same count stops here.
    claimed = MessageTemplate.objects.dangerously_unscoped().filter(
        pk=template.pk, submission_attempts=template.submission_attempts,
        status=TemplateStatus.PENDING,
    ).update(submission_attempts=F("submission_attempts") + 1, updated_at=timezone.now())
    if not claimed:
        return
    try:
        verdict = (submitter.update if edit else submitter.submit)(template, account)
    except submission.SubmissionRejected as exc:
        _apply(template, submission.ProviderVerdict(status=TemplateStatus.REJECTED,
                                                    reason=exc.reason), "provider_submission")
        return
    except submission.SubmissionFailed as exc:
        _record_failure(template, str(exc))
        return
    MessageTemplate.objects.dangerously_unscoped().filter(pk=template.pk).update(
        submitted_at=timezone.now(), submission_error=None,
        provider_template_id=verdict.provider_template_id or template.provider_template_id)
    if verdict.status not in (None, TemplateStatus.PENDING):
        _apply(template, verdict, "provider_submission")


@shared_task(name="templates.submit_template", ignore_result=True)
def submit_template(template_id: str) -> None:
    """Submit a pending live template to its carrier (once it has a provider id, the status
    sync and the provider webhook take over)."""
    template = _load(template_id)
    if template is None or template.status != TemplateStatus.PENDING:
        return
    if template.provider_template_id:
        return
    with tenant_context(template.organization):
        _submit(template, edit=False)


@shared_task(name="templates.resubmit_template", ignore_result=True)
def resubmit_template(template_id: str) -> None:
    """Send an edited template back for review (a new submission if it never had an id)."""
    template = _load(template_id)
    if template is None or template.status != TemplateStatus.PENDING:
        return
    with tenant_context(template.organization):
        _submit(template, edit=bool(template.provider_template_id))


@shared_task(name="templates.delete_remote_template", ignore_result=True)
def delete_remote_template(*, organization_id: str, channel: str, name: str,
                           provider_template_id: str | None, waba_id: str | None) -> None:
    """Best effort: remove a deleted template at the carrier too."""
    organization = Organization.objects.filter(pk=organization_id).first()
    if organization is None or organization.sandbox:
        return
    with tenant_context(organization):
        try:
            account = submission.live_account(organization, channel)
        except APIError:
            return
        submitter = submission.submitter_for(submission.account_provider_name(account))
        if submitter is None:
            return
        try:
            submitter.delete(name=name, provider_template_id=provider_template_id,
                             waba_id=waba_id, account=account)
        except (submission.SubmissionFailed, submission.SubmissionRejected) as exc:
            logger.warning("could not delete template %s at the provider: %s", name, exc)


@shared_task(name="templates.sync_statuses", ignore_result=True)
def sync_statuses(batch: int = SYNC_BATCH) -> int:
    """Beat: read the carrier status of pending live templates; resubmit stalled ones.

    Answers how many templates were looked at.
    """
    now = timezone.now()
    pending = list(
        MessageTemplate.objects.dangerously_unscoped()
        .select_related("organization")
        .filter(status=TemplateStatus.PENDING, channel__in=list(APPROVAL_CHANNELS),
                organization__sandbox=False, organization__is_active=True)
        .order_by("updated_at")[:batch]
    )
    for template in pending:
        with tenant_context(template.organization):
            try:
                if not template.provider_template_id:
                    if template.updated_at <= now - RESUBMIT_AFTER or (
                            template.submission_attempts == 0):
                        _submit(template, edit=False)
                    continue
                submitter, account = _submitter(template)
                if submitter is None:
                    continue
                try:
                    verdict = submitter.fetch_status(template, account)
                except submission.SubmissionFailed as exc:
                    _record_failure(template, str(exc))
                    continue
                if verdict.status not in (None, TemplateStatus.PENDING):
                    _apply(template, verdict, "status_sync")
                else:  # still pending: move it to the back of the queue
                    MessageTemplate.objects.dangerously_unscoped().filter(
                        pk=template.pk).update(updated_at=timezone.now())
            except Exception:
                logger.exception("status sync of template %s failed", template.pk)
    return len(pending)
