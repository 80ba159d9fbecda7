"""`manage.py create_org`: the bootstrap contract of 0-conventions.md section 1."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from platform_core.identity.models import APIKey, User
from platform_core.tenancy.models import Membership, Organization

from .conftest import login

KEYS = {"org_id", "slug", "sandbox", "owner_id", "owner_email", "owner_password", "api_key"}
ROOT = Path(__file__).resolve().parents[3]


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("create_org", *args, "--json", stdout=out)
    text = out.getvalue()
    assert text.count("\n") <= 1
    return json.loads(text)


def key_client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    return client


@pytest.mark.django_db
def test_json_sandbox():
    result = run(
        "--name",
        "Acme",
        "--slug",
        "acme",
        "--owner-email",
        "Boss@Acme.test",
        "--owner-password",
        "S3cure-pass-word",
        "--sandbox",
    )
    assert set(result) == KEYS
    assert result["slug"] == "acme"
    assert result["sandbox"] is True
    assert result["org_id"].startswith("org_")
    assert result["owner_id"].startswith("usr_")
    assert result["owner_email"] == "boss@acme.test"
    assert result["owner_password"] == "S3cure-pass-word"  # noqa: S105
    assert result["api_key"].startswith("svc_test_sk_")

    org = Organization.objects.get(pk=result["org_id"])
    assert (org.name, org.sandbox) == ("Acme", True)
    membership = Membership.objects.for_organization(org).get()
    assert (membership.user_id, membership.role) == (result["owner_id"], "owner")
    key = APIKey.objects.for_organization(org).get()
    assert (key.scopes, key.type, key.mode) == (["*"], "secret", "test")

    # The key works against the API, and the owner can log in.
    response = key_client(result["api_key"]).get("/api/v1/organization")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == org.pk
    assert key_client(result["api_key"]).get("/api/v1/users").status_code == 200
    assert login("boss@acme.test", "S3cure-pass-word").status_code == 200


@pytest.mark.django_db
def test_json_live_generates_password():
    result = run("--name", "Live Co", "--slug", "live-co", "--owner-email", "o@live.test")
    assert result["sandbox"] is False
    assert result["api_key"].startswith("svc_live_sk_")
    assert len(result["owner_password"]) >= 12
    assert key_client(result["api_key"]).get("/api/v1/organization").status_code == 200
    assert login("o@live.test", result["owner_password"]).status_code == 200


@pytest.mark.django_db
def test_human_output_without_json():
    out = io.StringIO()
    call_command(
        "create_org", "--name", "H", "--slug", "human", "--owner-email", "h@h.test", stdout=out
    )
    assert "svc_live_sk_" in out.getvalue()


@pytest.mark.django_db
def test_duplicate_slug_fails_clearly():
    run("--name", "One", "--slug", "dup", "--owner-email", "one@dup.test")
    with pytest.raises(CommandError, match="dup.*already exists"):
        call_command(
            "create_org",
            "--name",
            "Two",
            "--slug",
            "dup",
            "--owner-email",
            "two@dup.test",
            "--json",
            stdout=io.StringIO(),
        )
    assert Organization.objects.filter(slug="dup").count() == 1
    # Nothing half-created for the second attempt.
    assert not User.objects.filter(email="two@dup.test").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--slug", "Bad Slug", "--owner-email", "a@b.test"], "slug"),
        (["--slug", "ok-slug", "--owner-email", "not-an-email"], "email"),
        (["--slug", "ok-slug", "--owner-email", "a@b.test", "--owner-password", ""], "password"),
    ],
)
def test_invalid_arguments(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("create_org", "--name", "X", *args, stdout=io.StringIO())
    assert not Organization.objects.filter(slug="ok-slug").exists()


@pytest.mark.django_db
def test_existing_user_without_password_keeps_it():
    first = run(
        "--name",
        "A",
        "--slug",
        "org-a",
        "--owner-email",
        "shared@x.test",
        "--owner-password",
        "First-pass-123",
    )
    second = run("--name", "B", "--slug", "org-b", "--owner-email", "SHARED@x.test")
    assert second["owner_id"] == first["owner_id"]
    assert second["owner_password"] is None
    # The password was not reset: the old one still logs into either organization.
    assert login("shared@x.test", "First-pass-123", organization="org-a").status_code == 200
    assert login("shared@x.test", "First-pass-123", organization="org-b").status_code == 200
    assert key_client(second["api_key"]).get("/api/v1/organization").status_code == 200


@pytest.mark.django_db
def test_existing_user_with_other_password_is_refused():
    run(
        "--name",
        "A",
        "--slug",
        "org-a",
        "--owner-email",
        "shared@x.test",
        "--owner-password",
        "First-pass-123",
    )
    with pytest.raises(CommandError, match="already exists"):
        run(
            "--name",
            "B",
            "--slug",
            "org-b",
            "--owner-email",
            "shared@x.test",
            "--owner-password",
            "Other-pass-456",
        )
    assert not Organization.objects.filter(slug="org-b").exists()
    assert login("shared@x.test", "First-pass-123").status_code == 200
    # Naming their current password is accepted (idempotent scripts).
    result = run(
        "--name",
        "B",
        "--slug",
        "org-b",
        "--owner-email",
        "shared@x.test",
        "--owner-password",
        "First-pass-123",
    )
    assert result["owner_password"] == "First-pass-123"  # noqa: S105


@pytest.mark.django_db(transaction=True)
def test_subprocess_contract():
    """One real process run: stdout is exactly one JSON object; a duplicate exits non-zero."""
    slug = f"sub-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    from django.db import connection

    # The child process must use the test database this test runs against.
    settings_dict = connection.settings_dict
    env["DATABASE_URL"] = (
        f"postgres://{settings_dict['USER']}@{settings_dict['HOST']}:"
        f"{settings_dict['PORT']}/{settings_dict['NAME']}"
    )
    cmd = [
        sys.executable,
        "manage.py",
        "create_org",
        "--name",
        "Sub",
        "--slug",
        slug,
        "--owner-email",
        f"{slug}@sub.test",
        "--sandbox",
        "--json",
    ]
    done = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == KEYS
    assert done.stdout.strip().count("\n") == 0
    assert result["api_key"].startswith("svc_test_sk_")
    assert key_client(result["api_key"]).get("/api/v1/organization").status_code == 200

    again = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert again.returncode != 0
    assert "already exists" in again.stderr
    assert slug in again.stderr
    assert again.stdout == ""
