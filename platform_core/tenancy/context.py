"""The current organization of a request or job, held in a context variable.

Set by the base API view after authentication, by `tenant_context` in Celery tasks and
management commands; read by the fail-closed tenant manager.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import Organization

_current_org: ContextVar[Organization | None] = ContextVar("current_org", default=None)


class TenantScopeMissing(RuntimeError):
    """A tenant-scoped query ran with no current organization (fail closed)."""


def get_current_organization() -> Organization | None:
    return _current_org.get()


def require_current_organization() -> Organization:
    org = _current_org.get()
    if org is None:
        raise TenantScopeMissing(
            "tenant-scoped query without a current organization; use tenant_context(org) "
            "or the explicit Model.objects.dangerously_unscoped()"
        )
    return org


def set_current_organization(org: Organization | None):
    return _current_org.set(org)


def reset_current_organization(token) -> None:
    _current_org.reset(token)


@contextlib.contextmanager
def tenant_context(org: Organization) -> Iterator[Organization]:
    """Run a block (a task, a command, a test) as `org`."""
    token = _current_org.set(org)
    try:
        yield org
    finally:
        _current_org.reset(token)
