"""The broadcast scenario of `make bench` (issue 7, "Done means"): broadcast throughput in
test mode, messages per second queued and delivered.

It runs in the sandbox (test-mode) organization `bench-sandbox` of the messaging scenarios
(bench/messaging_scenarios.py), where N contacts with distinct valid US numbers
(+1 415 300-0000 upwards; N = BENCH_BROADCAST_RECIPIENTS, default 10,000 x BENCH_SCALE) and a
contact list `bench-broadcast-<N>` holding exactly them are seeded once (bulk-created,
`contact_count` set to the membership count) and reused.

One solo Celery worker process per queue family runs (`FamilyWorkers` of
bench/messaging_scenarios.py: `-Q sends`, `events`, `webhooks`, `default`) with
bench/worker_settings.py (sandbox receipt after BENCH_SANDBOX_RECEIPT_DELAY, default 0 s):
the broadcast's runner creates the messages on `default` while the `sends` worker drains
them in batches, so the two stages overlap. The broadcast is created through `messaging.broadcasts.services.broadcast_create`
(what POST /api/v1/broadcasts calls) with `{channel: "sms", body, audience: {list_id}}`
and `rate_per_second` 10,000 (the highest allowed), so the per-sender throttle does not
bound the figure. Its start task snapshots the audience, the runners create the messages
in batches, and the send drain moves them to `sent` and (the receipt) `delivered`.

- queued/s = recipients queued / (last recipient `processed_at` - create call),
- delivered/s = messages delivered / (last message `delivered_at` - create call), and the
  end-to-end time (figure `delivered_seconds`; target: under 30 s for 10,000),
the create call being the wall-clock time just before `broadcast_create`. The Broadcast
counters are polled until `queued` reaches the snapshot's size, then until `delivered`
does (bounded by a deadline). A 20-recipient broadcast warms the worker up first. The
scenario's broadcasts (with their recipients), messages and events are deleted before and
after, and the Celery keys of the benchmark's broker database.
"""

from __future__ import annotations

import time
from contextlib import ExitStack

from .base import BenchContext, Measurement, Scenario
from .env import scaled
from .messaging_scenarios import (
    FamilyWorkers,
    _broker,
    _sandbox_org,
    ensure_sandbox,
    family_workers,
)
from .procs import check_broker, clean_broker
from .server import ServerError

WARMUP_RECIPIENTS = 20
RATE_PER_SECOND = 10_000.0  # messaging.broadcasts.services.RATE_MAX
NAME_PREFIX = "bench broadcast"
LIST_PREFIX = "bench-broadcast-"
SETTLED = ("delivered", "failed")


def broadcast_phone(i: int) -> str:
    return f"+1415{3_000_000 + i:07d}"


def ensure_broadcast_list(org, recipients: int) -> str:
    """The id of the list `bench-broadcast-<recipients>` holding exactly the first
    `recipients` seeded broadcast contacts (contacts and memberships bulk-created once)."""
    from django.db import transaction

    from contacts.models import Contact, ContactList, ListMembership
    from platform_core.tenancy.context import tenant_context

    name = f"{LIST_PREFIX}{recipients}"
    with tenant_context(org):
        lists = ContactList.objects.for_organization(org)
        contact_list = lists.filter(name=name).first()
        if contact_list is not None and contact_list.contact_count == recipients:
            return contact_list.pk
        started = time.monotonic()
        print(f"  seeding the broadcast list {name} (once)…", flush=True)
        with transaction.atomic():
            if contact_list is None:
                contact_list = lists.create(organization=org, name=name,
                                            description="bench broadcast audience")
            phones = [broadcast_phone(i) for i in range(recipients)]
            contacts = Contact.objects.for_organization(org)
            Contact.objects.bulk_create(
                [Contact(organization=org, first_name="Bench", last_name=f"Recipient {i}",
                         phone=phones[i], custom_fields={"bench_broadcast_seq": i})
                 for i in range(recipients)],
                batch_size=5000, ignore_conflicts=True)
            ids = list(contacts.filter(phone__in=phones).values_list("pk", flat=True))
            if len(ids) != recipients:
                raise RuntimeError(f"seeded {len(ids)} broadcast contacts, expected {recipients}")
            memberships = ListMembership.objects.for_organization(org)
            memberships.filter(contact_list=contact_list).exclude(contact_id__in=ids).delete()
            ListMembership.objects.bulk_create(
                [ListMembership(organization=org, contact_list=contact_list, contact_id=pk)
                 for pk in ids], batch_size=5000, ignore_conflicts=True)
            count = memberships.filter(contact_list=contact_list).count()
            lists.filter(pk=contact_list.pk).update(contact_count=count)
        print(f"  seeded {count:,} members in {time.monotonic() - started:.1f}s", flush=True)
        if count != recipients:
            raise RuntimeError(f"the list {name} holds {count} contacts, expected {recipients}")
        return contact_list.pk


def clean_broadcasts(org) -> None:
    """Delete the bench broadcasts (recipients cascade), then the sandbox organization's
    messages and events (bench/contacts_data.py)."""
    from messaging.broadcasts.models import Broadcast
    from platform_core.tenancy.context import tenant_context

    from . import contacts_data as data

    with tenant_context(org):
        Broadcast.objects.for_organization(org).filter(name__startswith=NAME_PREFIX).delete()
    data.clear_sandbox_messages(org)


class BroadcastThroughput(Scenario):
    name = "broadcast"
    needs_server = False

    def __init__(self):
        self.recipients = scaled("BENCH_BROADCAST_RECIPIENTS", 10_000,
                                 minimum=WARMUP_RECIPIENTS)
        self.title = (f"Broadcast to {self.recipients:,} contacts, sms, sandbox, 1 solo worker"
                      f" per queue family (req/s = delivered/s)")

    def prepare(self, ctx: BenchContext) -> None:
        ensure_sandbox(ctx)
        org = _sandbox_org(ctx)
        try:
            ctx.values["broadcast_list_id"] = ensure_broadcast_list(org, self.recipients)
            ctx.values["broadcast_warm_list_id"] = ensure_broadcast_list(org, WARMUP_RECIPIENTS)
        except (RuntimeError, AssertionError):
            raise
        except Exception as exc:
            raise RuntimeError(f"broadcast audience: {type(exc).__name__}: {exc}") from exc

    def check(self, ctx: BenchContext) -> None:
        try:
            check_broker(_broker())
        except ServerError as exc:
            raise AssertionError(str(exc)) from None

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The measurement warms its own worker up first."""

    def _clean(self, ctx: BenchContext) -> None:
        clean_broker(_broker())
        clean_broadcasts(_sandbox_org(ctx))

    @staticmethod
    def _create(org, list_id: str, label: str):
        from messaging.broadcasts import services
        from platform_core.tenancy.context import tenant_context

        with tenant_context(org):
            return services.broadcast_create(
                organization=org, principal=None, name=f"{NAME_PREFIX} {label}",
                channel="sms", body=f"{NAME_PREFIX} {label}: hello {{{{contact.first_name}}}}",
                audience={"list_id": list_id}, rate_per_second=RATE_PER_SECOND)

    @staticmethod
    def _counters(org, broadcast_id: str) -> dict:
        from messaging.broadcasts.models import Broadcast

        return (Broadcast.objects.for_organization(org).filter(pk=broadcast_id)
                .values("status", "total_recipients", "queued", "sent", "delivered", "failed",
                        "skipped_opted_out", "skipped_invalid", "canceled", "error_code")
                .first()) or {}

    def _wait(self, org, broadcast_id: str, worker: FamilyWorkers, *, expected: int,
              deadline: float, done) -> tuple[dict, bool]:
        """Poll the counters until `done(counters)` or the deadline; (counters, reached)."""
        counters = {}
        while time.monotonic() < deadline:
            worker.check_alive()
            counters = self._counters(org, broadcast_id)
            if counters.get("status") == "failed":
                raise RuntimeError(f"the broadcast failed: {counters}")
            if done(counters):
                return counters, True
            time.sleep(0.1)
        return counters, False

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        org = _sandbox_org(ctx)
        try:
            with ExitStack() as stack:
                self._clean(ctx)
                stack.callback(self._clean, ctx)
                worker = stack.enter_context(family_workers())
                warm = self._create(org, ctx.values["broadcast_warm_list_id"], "warm-up")
                _, ok = self._wait(org, warm.pk, worker, expected=WARMUP_RECIPIENTS,
                                   deadline=time.monotonic() + 120,
                                   done=lambda c: c.get("delivered", 0) >= WARMUP_RECIPIENTS)
                if not ok:
                    raise RuntimeError(f"the warm-up broadcast was not delivered in 120 s;"
                                       f" worker log:\n{worker.log_tail()}")
                return self._run(ctx, org, worker)
        except (ServerError, AssertionError) as exc:
            raise RuntimeError(str(exc)) from exc
        except RuntimeError:
            raise
        except Exception as exc:  # a database or broker error: this scenario is not measured
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc

    def _run(self, ctx: BenchContext, org, worker: FamilyWorkers) -> Measurement:
        from django.db.models import Max

        from messaging.broadcasts.models import BroadcastRecipient
        from messaging.models import Message

        n = self.recipients
        started = time.time()
        broadcast = self._create(org, ctx.values["broadcast_list_id"], "run")
        deadline = time.monotonic() + 60 + n * 0.5

        def all_queued(c: dict) -> bool:
            total = c.get("total_recipients", 0)
            handled = (c.get("queued", 0) + c.get("skipped_opted_out", 0)
                       + c.get("skipped_invalid", 0) + c.get("canceled", 0))
            return total >= n and handled >= total

        counters, queued_ok = self._wait(org, broadcast.pk, worker, expected=n,
                                         deadline=deadline, done=all_queued)
        if queued_ok:
            counters, _ = self._wait(
                org, broadcast.pk, worker, expected=n, deadline=deadline,
                done=lambda c: c.get("delivered", 0) + c.get("failed", 0) >= c.get("queued", 0))
        recipients = BroadcastRecipient.objects.for_organization(org).filter(
            broadcast_id=broadcast.pk)
        messages = Message.objects.for_organization(org).filter(campaign_id=broadcast.pk)
        last_queued = recipients.filter(message_id__isnull=False).aggregate(
            last=Max("processed_at"))["last"]
        last_delivered = messages.filter(status="delivered").aggregate(
            last=Max("delivered_at"))["last"]
        queued, delivered = counters.get("queued", 0), counters.get("delivered", 0)
        # Exactness: one message per queued recipient, none twice.
        message_count = messages.count()
        if not queued or last_queued is None:
            raise RuntimeError(f"no message was queued ({counters})")
        queue_seconds = last_queued.timestamp() - started
        queued_rate = queued / queue_seconds if queue_seconds > 0 else None
        delivered_rate = delivered_seconds = None
        if delivered and last_delivered is not None:
            delivered_seconds = last_delivered.timestamp() - started
            delivered_rate = delivered / delivered_seconds if delivered_seconds > 0 else None
        complete = queued_ok and delivered >= n
        figures = {"queued_per_second": queued_rate or 0.0,
                   "delivered_per_second": delivered_rate or 0.0,
                   "delivered_seconds": delivered_seconds if complete else float("inf")}
        notes = (f"{queued:,}/{n:,} queued in {queue_seconds:.1f}s"
                 f" ({queued_rate or 0:,.0f} messages/s queued); {delivered:,}/{n:,} delivered"
                 + (f" in {delivered_seconds:.1f}s ({delivered_rate:,.0f} messages/s delivered)"
                    if delivered_rate else "")
                 + f", both from the create call; {message_count:,} messages for"
                 f" {queued:,} queued recipients; one solo worker per queue family,"
                 f" rate_per_second {RATE_PER_SECOND:,.0f};"
                 f" counters {({k: v for k, v in counters.items() if v})}"
                 + ("" if complete else "; timed out"))
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=delivered_rate, requests=delivered,
            errors=n - delivered + abs(message_count - queued),
            notes=notes, figures=figures,
        )


BROADCAST_SCENARIOS: list[Scenario] = [BroadcastThroughput()]
