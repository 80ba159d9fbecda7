"""Output serialization without rebuilding DRF fields on every request.

DRF builds a serializer's fields afresh for every instance (for a ModelSerializer that
means model introspection): about 0.3 ms, a large part of a detail read. For output, one
serializer per class and thread is kept and given the request's context each time; its
fields read the context through the root serializer, so context-dependent fields still
see the current request.
"""

from __future__ import annotations

import threading
from typing import Any

from rest_framework import serializers

_local = threading.local()


def _reused(serializer_class: type[serializers.BaseSerializer]) -> serializers.BaseSerializer:
    cache = getattr(_local, "serializers", None)
    if cache is None:
        cache = _local.serializers = {}
    serializer = cache.get(serializer_class)
    if serializer is None:
        serializer = cache[serializer_class] = serializer_class()
        serializer.fields  # noqa: B018 (build and bind the fields once)
    return serializer


def represent(
    serializer_class: type[serializers.BaseSerializer],
    instance: Any,
    *,
    many: bool = False,
    context: dict[str, Any] | None = None,
) -> Any:
    serializer = _reused(serializer_class)
    serializer._context = context or {}
    try:
        if many:
            return [serializer.to_representation(item) for item in instance]
        return serializer.to_representation(instance)
    finally:
        serializer._context = {}


class OutputOnly:
    """What `get_serializer` returns for reads: `.data` through the reused serializer."""

    def __init__(self, serializer_class, instance, many: bool, context: dict[str, Any]) -> None:
        self._args = (serializer_class, instance, many, context)

    @property
    def data(self) -> Any:
        serializer_class, instance, many, context = self._args
        return represent(serializer_class, instance, many=many, context=context)
