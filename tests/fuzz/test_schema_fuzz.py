"""Schema-driven fuzzing of every operation against a live server (`make fuzz` runs more).

Schemathesis reads `/api/v1/schema`, generates valid and invalid requests for every
operation (examples, boundary coverage, random fuzzing) and fails on any 5xx or any answer
outside the envelope (tests/fuzz/envelope_check.py). The server is gunicorn, as in
production (Django's development server answers malformed requests itself, in HTML), on
this test's database; the tenant is committed so the server sees it. The seed is fixed,
so a failure reproduces. FUZZ_MAX_EXAMPLES raises the number of generated cases per
operation (10 here, 100 with `make fuzz`); FUZZ_PATHS (a path regex) fuzzes just those
paths, for a developer checking new endpoints.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from bench.server import GunicornServer

ROOT = Path(__file__).resolve().parents[2]
# Never fuzzed: the live event stream answers forever (its own tests use an SSE client).
STREAM = r"/events/stream$"
# Operations that take the credential in use away (revoke the key, switch the organization
# to live mode): each group is fuzzed with a tenant of its own, after which its key may
# rightly be refused.
SELF_ALTERING = (r"^/api/v1/api-keys", r"^/api/v1/organization$")
# What an API key is rightly refused whatever is sent: session-only operations, signed URLs
# and tokens, provider webhooks (signed with provider credentials), owner-only settings.
CLOSED_TO_API_KEYS = {
    "DELETE /api/v1/auth/sessions/{id}/", "GET /api/v1/auth/sessions/",
    "GET /api/v1/auth/consent", "POST /api/v1/auth/consent", "POST /api/v1/auth/logout",
    "GET /api/v1/auth/impersonate-cookie-consume", "POST /api/v1/auth/impersonate-cookie-set",
    "POST /api/v1/auth/impersonate-exchange",
    "GET /api/v1/files/{id}/content", "PATCH /api/v1/settings/saml",
    "GET /api/v1/inbound/whatsapp/{org_slug}", "POST /api/v1/inbound/whatsapp/{org_slug}",
    "POST /api/v1/inbound/rcs/{org_slug}", "POST /api/v1/inbound/twilio/{org_slug}",
    # A routing offer is answered by the offered agent, a signed-in member.
    "POST /api/v1/conversations/{id}/assignment/accept/",
    "POST /api/v1/conversations/{id}/assignment/decline/",
    "GET /api/v1/recordings/{id}/content", "POST /api/v1/voice/twilio/{org_slug}",
}


# Refused here because of the fuzz tenant's data, not the credential: its only member is the
# owner (the id schemathesis follows from the users list), whom a key may not remove.
REFUSED_FOR_THE_TENANTS_DATA = {"DELETE /api/v1/users/{id}/"}


def refused_operations(output: str) -> set[str]:
    """The operations schemathesis saw answer only 401/403 (its "Authentication failed")."""
    if "Authentication failed:" not in output:
        return set()
    refused = set()
    for line in output.split("Authentication failed:", 1)[1].splitlines()[1:]:
        if line.startswith("  - "):
            refused.add(line[4:].strip())
        elif line.strip() and not re.match(r"^\d{3} ", line):
            break
    return refused
UNLIMITED = str(10**9)


def _server_env() -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        # Standard buckets never refuse, so generated requests reach the logic behind them.
        "RATE_LIMIT_READ_PER_MINUTE": UNLIMITED,
        "RATE_LIMIT_WRITE_PER_MINUTE": UNLIMITED,
        "AI_RATE_LIMIT_PER_MINUTE": UNLIMITED,
    }


def _fuzz(server: GunicornServer, api_key: str, *selection: str,
          credential_kept: bool = True) -> str:
    """One schemathesis run over the selected operations; its whole output."""
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file", str(Path(__file__).with_name("schemathesis.toml")),
        "run", f"{server.base_url}/api/v1/schema",
        "--url", server.base_url,
        "-H", f"X-API-Key: {api_key}",
        "--checks", "not_a_server_error,envelope_answer",
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", os.environ.get("FUZZ_MAX_EXAMPLES", "10"),
        "--seed", "20261124",
        "--generation-database", "none",
        *selection,
        "--request-timeout", "30",
        # One generator thread: under CPython 3.11 hypothesis' lambda descriptions
        # (ast.parse) can fail when two threads generate at once.
        "--workers", "1",
        "--no-color",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz.envelope_check",
           "PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,  # noqa: S603
                            timeout=2700, check=False)
    output = result.stdout + result.stderr
    report = ROOT / "var" / "fuzz-report.txt"  # the last run whole, for a reader of a failure
    report.parent.mkdir(exist_ok=True)
    report.write_text(output)
    assert result.returncode == 0, output[-30000:] + "\nserver log:\n" + server.log_tail(60)
    assert "generated" in output
    if credential_kept:  # the key reached every operation open to it: their logic was tested
        refused = refused_operations(output) - REFUSED_FOR_THE_TENANTS_DATA
        assert refused <= CLOSED_TO_API_KEYS, output[-10000:]
    return output


@pytest.mark.slow
@pytest.mark.timeout(3000)
@pytest.mark.django_db(transaction=True)
def test_every_operation_answers_the_envelope(tenant_factory):
    if connection.vendor != "postgresql":
        pytest.skip("the fuzzed server shares the test database over TCP (PostgreSQL)")
    only = os.environ.get("FUZZ_PATHS")  # a regex: fuzz just these paths (while developing)
    with GunicornServer(env=_server_env(), workers=2) as server:
        if only:
            _fuzz(server, tenant_factory().raw_key, "--include-path-regex", only,
                  "--exclude-path-regex", "|".join((STREAM, *SELF_ALTERING)))
            return
        _fuzz(server, tenant_factory().raw_key,
              "--exclude-path-regex", "|".join((STREAM, *SELF_ALTERING)))
        for group in SELF_ALTERING:
            _fuzz(server, tenant_factory().raw_key, "--include-path-regex", group,
                  credential_kept=False)
