"""The raw Redis client behind Django's default cache, when there is one.

Rate limits, broadcast throttles, the credential invalidation channel and the message
dispatcher's flag need Redis commands the cache API lacks (pipelines, INCRBY, scripts,
pub/sub). Each asks here; None means the embedded default (an in-process cache), and the
caller falls back to what works without a shared Redis.
"""

from __future__ import annotations

from django.conf import settings


def redis_client():
    """django-redis's client for the default cache, or None when the cache is not Redis."""
    if not is_shared():
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default")


def is_shared() -> bool:
    """Whether the default cache is shared by every process (Redis)."""
    return "django_redis" in settings.CACHES["default"]["BACKEND"]
