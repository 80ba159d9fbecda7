"""The data of the contacts and messaging scenarios, seeded once and reused.

- Contacts in the bench organization (bench/seed.py's `bench-core`): up to 100,000
  (`CONTACT_ROWS` x BENCH_SCALE, or BENCH_CONTACTS), bulk-created in batches. Contact `i`
  is deterministic, so a later, larger run tops the table up from where it stands:
    phone  +1415<2000000 + i>          (valid US numbers, unique)
    email  contact<i>@example.com      (70%; the rest @example.org)
    tags   "vip" (20%), "newsletter" (33%), and EXPORT_TAG on the first 10,000
    custom_fields  plan (pro 30%, team 20%, free 50%), city, score (0-999), seq = i
  The three-rule filter `tags eq vip AND custom_fields.plan eq pro AND email contains
  @example.com` selects about 4.2% of them; `custom_fields.seq lt N` selects exactly N.
- A sandbox (test-mode) organization `bench-sandbox` with a `*` test key for the sends:
  the bench organization is live, and a live send needs a provider account.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import UTC, datetime, timedelta

from .env import WORK_DIR, scaled

CONTACT_ROWS = 100_000
BATCH = 5_000
EXPORT_TAG = "export-10k"
EXPORT_TAGGED = 10_000  # contacts 0..9,999 carry EXPORT_TAG
SANDBOX_SLUG = "bench-sandbox"
SANDBOX_OWNER = "owner@bench-sandbox.example.com"

FIRST_NAMES = ("Ann", "Bob", "Chen", "Dana", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo",
               "Kofi", "Lea", "Mia", "Noor", "Omar", "Pia")
LAST_NAMES = ("Smith", "Garcia", "Nguyen", "Okafor", "Rossi", "Schmidt", "Tanaka", "Kowalski",
              "Dubois", "Silva", "Haddad", "Berg")
CITIES = ("Austin", "Berlin", "Chicago", "Denver", "Lagos", "Lisbon", "Osaka", "Toronto")
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)

# tags eq vip AND custom_fields.plan eq pro AND email contains @example.com
THREE_RULE_FILTER = {
    "op": "and",
    "rules": [
        {"field": "tags", "operator": "eq", "value": "vip"},
        {"field": "custom_fields.plan", "operator": "eq", "value": "pro"},
        {"field": "email", "operator": "contains", "value": "@example.com"},
    ],
}
# What the rule-based autopilot turns into the same three rules (checked by the scenario).
THREE_RULE_DESCRIPTION = "contacts tagged vip and with plan = pro and with email at example.com"


def contact_target() -> int:
    return scaled("BENCH_CONTACTS", CONTACT_ROWS, minimum=1000)


def seq_filter(rows: int) -> dict:
    """A filter tree selecting exactly the first `rows` seeded contacts."""
    return {"op": "and", "rules": [
        {"field": "custom_fields.seq", "operator": "lt", "value": rows}]}


def _mix(i: int) -> int:
    return int.from_bytes(hashlib.blake2b(i.to_bytes(8, "big"), digest_size=8).digest(), "big")


def contact_values(i: int) -> dict:
    h = _mix(i)
    roll = h % 10
    plan = "pro" if roll < 3 else ("team" if roll < 5 else "free")
    tags = []
    if (h >> 8) % 5 == 0:
        tags.append("vip")
    if (h >> 16) % 3 == 0:
        tags.append("newsletter")
    if i < EXPORT_TAGGED:
        tags.append(EXPORT_TAG)
    domain = "example.com" if (h >> 24) % 10 < 7 else "example.org"
    return {
        "first_name": FIRST_NAMES[(h >> 32) % len(FIRST_NAMES)],
        "last_name": LAST_NAMES[(h >> 40) % len(LAST_NAMES)],
        "phone": f"+1415{2_000_000 + i:07d}",
        "email": f"contact{i}@{domain}",
        "tags": tags,
        "custom_fields": {"plan": plan, "city": CITIES[(h >> 48) % len(CITIES)],
                          "score": (h >> 4) % 1000, "seq": i},
        "created_at": _EPOCH + timedelta(minutes=7 * i),
    }


def ensure_contacts(org, *, rows: int) -> int:
    """At least `rows` seeded contacts in `org` (bulk-created once); returns the count."""
    from django.db import connection, transaction

    from contacts.models import Contact
    from platform_core.tenancy.context import tenant_context

    with tenant_context(org):
        existing = Contact.objects.for_organization(org).count()
        if existing >= rows:
            return existing
        started = time.monotonic()
        print(f"  seeding {rows - existing:,} contacts (once)…", flush=True)
        with transaction.atomic():
            made = existing
            while made < rows:
                n = min(BATCH, rows - made)
                Contact.objects.bulk_create(
                    [Contact(organization=org, **contact_values(i))
                     for i in range(made, made + n)],
                    batch_size=BATCH, ignore_conflicts=True,
                )
                made += n
                print(f"  seeded contacts {made:,}/{rows:,}", flush=True)
        with connection.cursor() as cursor:
            cursor.execute(f'ANALYZE "{Contact._meta.db_table}"')
        print(f"  seeded in {time.monotonic() - started:.1f}s", flush=True)
        return Contact.objects.for_organization(org).count()


def first_contact_ids(org, count: int) -> list[str]:
    from contacts.models import Contact

    return list(Contact.objects.for_organization(org).filter(custom_fields__seq__lt=count)
                .order_by("id").values_list("pk", flat=True)[:count])


def ensure_sandbox_org() -> tuple[str, str]:
    """(organization id, raw `*` test key) of the sandbox bench organization."""
    from django.conf import settings

    from platform_core.identity import credentials, services
    from platform_core.identity.models import APIKey, KeyMode, KeyType
    from platform_core.tenancy.models import Organization

    key_path = WORK_DIR / f"key-{settings.DATABASES['default']['NAME']}-sandbox.json"
    org = Organization.objects.filter(slug=SANDBOX_SLUG).first()
    raw_key = None
    if org is None:
        org, _owner, _password, _key, raw_key = services.organization_create(
            name="Bench Sandbox", slug=SANDBOX_SLUG, owner_email=SANDBOX_OWNER, sandbox=True)
        print(f"  created sandbox organization {org.pk}", flush=True)
    else:
        if not org.sandbox:
            raise RuntimeError(f"organization {SANDBOX_SLUG!r} exists but is not in test mode")
        if key_path.exists():
            data = json.loads(key_path.read_text())
            candidate = data.get("raw_key", "") if data.get("org_id") == org.pk else ""
            if candidate and APIKey.objects.for_organization(org).filter(
                    key_hash=credentials.digest(candidate), revoked_at=None).exists():
                raw_key = candidate
        if raw_key is None:
            _key, raw_key = services.api_key_create(
                organization=org, name="Bench sandbox key", key_type=KeyType.SECRET,
                mode=KeyMode.TEST, scopes=["*"])
            print("  issued a new `*` test key for the sandbox organization", flush=True)
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    key_path.write_text(json.dumps({"org_id": org.pk, "raw_key": raw_key}))
    key_path.chmod(0o600)
    return org.pk, raw_key


def clear_sandbox_messages(org) -> int:
    """Delete the sandbox organization's messages and events (left by earlier rounds)."""
    from messaging.models import Message
    from platform_core.events.models import Event
    from platform_core.tenancy.context import tenant_context

    with tenant_context(org):
        deleted, _ = Message.objects.for_organization(org).delete()
        Event.objects.for_organization(org).delete()
    return deleted
