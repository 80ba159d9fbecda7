"""Database preparation: create it if missing, migrate, and seed the benchmark data once.

The data: one live organization with a `*` secret key (through the bootstrap service) and
100,000 API-key rows in it, the organization-scoped table the list scenarios page through.
A second run reuses everything; the raw key, which the database cannot give back, is kept
under var/bench/ and replaced by a fresh key when it is lost.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from .env import WORK_DIR

ORG_SLUG = "bench-core"
OWNER_EMAIL = "owner@bench.example.com"
ROW_COUNT = 100_000
BATCH = 5_000


@dataclass(frozen=True)
class Seed:
    org_id: str
    raw_key: str
    row_count: int


def ensure_database(database_url: str) -> bool:
    """Create the database named by `database_url` when missing; True when created."""
    import psycopg
    from psycopg import sql

    url = urlparse(database_url)
    if url.scheme not in ("postgres", "postgresql", "pgsql"):
        raise SystemExit(f"bench: DATABASE_URL must be PostgreSQL, got {url.scheme!r}")
    name = unquote(url.path.lstrip("/"))
    conninfo = {
        "host": url.hostname or "127.0.0.1",
        "port": url.port or 5432,
        "user": unquote(url.username or "postgres"),
        "dbname": "postgres",
        "connect_timeout": 5,
    }
    if url.password:
        conninfo["password"] = unquote(url.password)
    try:
        conn = psycopg.connect(autocommit=True, **conninfo)
    except psycopg.OperationalError as exc:
        raise SystemExit(f"bench: PostgreSQL unreachable at {conninfo['host']}:"
                         f"{conninfo['port']}: {exc}") from None
    with conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists:
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return True


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def _key_file(database_name: str):
    return WORK_DIR / f"key-{database_name}.json"


def _bulk_rows(org, count: int) -> None:
    from platform_core.identity.models import APIKey, KeyMode, KeyType
    from platform_core.tenancy.context import tenant_context

    made = 0
    with tenant_context(org):
        while made < count:
            n = min(BATCH, count - made)
            rows = []
            for i in range(made, made + n):
                digest = secrets.token_hex(32)
                rows.append(APIKey(
                    organization=org,
                    name=f"bench key {i}",
                    type=KeyType.SECRET,
                    mode=KeyMode.LIVE,
                    prefix="svc_live_sk_" + digest[:4],
                    last4=digest[-4:],
                    key_hash=digest,
                    scopes=["messages:read", "contacts:read"],
                ))
            APIKey.objects.bulk_create(rows, batch_size=BATCH)
            made += n
            print(f"  seeded {made:,}/{count:,} rows", flush=True)


def ensure_seed(*, rows: int = ROW_COUNT) -> Seed:
    from django.conf import settings
    from django.db import connection, transaction

    from platform_core.identity import credentials, services
    from platform_core.identity.models import APIKey, KeyMode, KeyType
    from platform_core.tenancy.models import Organization

    database_name = settings.DATABASES["default"]["NAME"]
    org = Organization.objects.filter(slug=ORG_SLUG).first()
    raw_key = None
    if org is None:
        org, _owner, _password, _key, raw_key = services.organization_create(
            name="Bench Core", slug=ORG_SLUG, owner_email=OWNER_EMAIL, sandbox=False
        )
        print(f"  created organization {org.pk}", flush=True)
    else:
        saved = _key_file(database_name)
        if saved.exists():
            data = json.loads(saved.read_text())
            if data.get("org_id") == org.pk:
                candidate = data.get("raw_key", "")
                live = APIKey.objects.for_organization(org).filter(
                    key_hash=credentials.digest(candidate), revoked_at=None
                ).exists()
                raw_key = candidate if live else None
        if raw_key is None:
            _key, raw_key = services.api_key_create(
                organization=org, name="Bench key", key_type=KeyType.SECRET,
                mode=KeyMode.LIVE, scopes=["*"],
            )
            print("  issued a new `*` secret key for the bench organization", flush=True)
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    key_path = _key_file(database_name)
    key_path.write_text(json.dumps({"org_id": org.pk, "raw_key": raw_key}))
    key_path.chmod(0o600)

    existing = APIKey.objects.for_organization(org).count()
    if existing < rows:
        started = time.monotonic()
        print(f"  seeding {rows - existing:,} API-key rows (once)…", flush=True)
        with transaction.atomic():
            _bulk_rows(org, rows - existing)
        with connection.cursor() as cursor:
            cursor.execute(f'ANALYZE "{APIKey._meta.db_table}"')
        print(f"  seeded in {time.monotonic() - started:.1f}s", flush=True)
    total = APIKey.objects.for_organization(org).count()
    return Seed(org_id=org.pk, raw_key=raw_key, row_count=total)
