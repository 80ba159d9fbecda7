"""Reads of the insights endpoints go to the read replica when one is configured.

`DATABASE_REPLICA_URL` adds the `replica` alias (config/settings/base.py) and installs
`ReplicaRouter`. The router sends a read to the replica only inside `replica_reads()`,
which the insights GET views enter; everything else (the PUTs' read-merge-write, other
apps, the rollup job) stays on the primary. The replica lags 1-3 seconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS

_replica_reads: ContextVar[bool] = ContextVar("insights_replica_reads", default=False)


def replica_alias() -> str | None:
    alias = getattr(settings, "DATABASE_REPLICA_ALIAS", None)
    return alias if alias and alias in settings.DATABASES else None


@contextlib.contextmanager
def replica_reads() -> Iterator[None]:
    token = _replica_reads.set(True)
    try:
        yield
    finally:
        _replica_reads.reset(token)


def read_alias() -> str:
    """Where a read of the current context goes (raw SQL takes its cursor here)."""
    if _replica_reads.get():
        return replica_alias() or DEFAULT_DB_ALIAS
    return DEFAULT_DB_ALIAS


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        if _replica_reads.get():
            return replica_alias()
        return None

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        aliases = {DEFAULT_DB_ALIAS, replica_alias()}
        if obj1._state.db in aliases and obj2._state.db in aliases:
            return True
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        if db != DEFAULT_DB_ALIAS and db == getattr(settings, "DATABASE_REPLICA_ALIAS", None):
            return False  # the replica follows the primary; never migrated itself
        return None
