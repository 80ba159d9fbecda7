"""Output serialization without rebuilding DRF fields on every request.

DRF builds a serializer's fields afresh for every instance (for a ModelSerializer that
means model introspection): about 0.3 ms, a large part of a detail read. For output, one
serializer per class and thread is kept and given the request's context each time; its
fields read the context through the root serializer, so context-dependent fields still
see the current request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from rest_framework import fields as drf_fields
from rest_framework import relations, serializers
from rest_framework.fields import SkipField

_local = threading.local()
_MISSING = object()


def iso_utc(value: datetime) -> str:
    """An aware datetime as the API writes it: ISO 8601 in UTC with `Z` (DRF's output,
    without its checks). The one formatter for timestamps built outside a serializer."""
    text = value.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


_iso_utc = iso_utc


def _step(field: drf_fields.Field) -> tuple[str, str | None, Callable[[Any], Any], Any]:
    """(output name, attribute or None, converter, field) for one readable field.

    Plain attribute fields read the attribute directly; everything else (nested and
    related fields, method fields, dotted sources) keeps DRF's own resolution.
    """
    plain = (
        not isinstance(
            field,
            serializers.BaseSerializer
            | relations.RelatedField
            | relations.ManyRelatedField
            | drf_fields.SerializerMethodField
            | drf_fields.HiddenField,
        )
        and len(field.source_attrs) == 1
        and field.source != "*"
    )
    converter = field.to_representation
    if (
        plain
        and type(field) is drf_fields.DateTimeField
        and getattr(field, "format", drf_fields.api_settings.DATETIME_FORMAT) == "iso-8601"
        and not hasattr(field, "timezone")
        and settings.USE_TZ
        and settings.TIME_ZONE == "UTC"
    ):
        converter = _iso_utc
    return field.field_name, field.source_attrs[0] if plain else None, converter, field


def _plan(serializer: serializers.BaseSerializer) -> list | None:
    """Steps equivalent to `Serializer.to_representation`, or None when the class
    customizes its representation (then DRF's own path is used)."""
    if type(serializer).to_representation is not serializers.Serializer.to_representation:
        return None
    return [_step(field) for field in serializer._readable_fields]


def _fast_representation(steps: list, instance: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    by_attribute = not isinstance(instance, Mapping)
    for name, attribute, converter, field in steps:
        if attribute is not None and by_attribute:
            value = getattr(instance, attribute, _MISSING)
            if value is not _MISSING and not callable(value):
                out[name] = None if value is None else converter(value)
                continue
        try:  # DRF's resolution: mappings, callables, defaults, dotted and related sources
            value = field.get_attribute(instance)
        except SkipField:
            continue
        check = value.pk if isinstance(value, relations.PKOnlyObject) else value
        out[name] = None if check is None else field.to_representation(value)
    return out


def _reused(serializer_class: type[serializers.BaseSerializer]):
    cache = getattr(_local, "serializers", None)
    if cache is None:
        cache = _local.serializers = {}
    entry = cache.get(serializer_class)
    if entry is None:
        serializer = serializer_class()
        serializer.fields  # noqa: B018 (build and bind the fields once)
        entry = cache[serializer_class] = (serializer, _plan(serializer))
    return entry


def represent(
    serializer_class: type[serializers.BaseSerializer],
    instance: Any,
    *,
    many: bool = False,
    context: dict[str, Any] | None = None,
) -> Any:
    serializer, steps = _reused(serializer_class)
    serializer._context = context or {}
    try:
        if steps is None:
            if many:
                return [serializer.to_representation(item) for item in instance]
            return serializer.to_representation(instance)
        if many:
            return [_fast_representation(steps, item) for item in instance]
        return _fast_representation(steps, instance)
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


def validated_input(
    serializer_class: type[serializers.Serializer],
    data: Any,
    *,
    context: dict[str, Any] | None = None,
) -> serializers.Serializer:
    """`serializer_class(data=data)` validated (raising DRF's ValidationError), through one
    serializer per class and thread: building the fields again for every request costs
    several times the validation itself. Use the result before validating the same class
    again in this thread. Only for serializers whose fields keep no state of a request
    (plain input shapes: no `create()`/`save()`, no per-instance field changes)."""
    inputs = getattr(_local, "inputs", None)
    if inputs is None:
        inputs = _local.inputs = {}
    serializer = inputs.get(serializer_class)
    if serializer is None:
        serializer = inputs[serializer_class] = serializer_class()
        serializer.fields  # noqa: B018 (build and bind the fields once)
    for attribute in ("_validated_data", "_errors", "_data"):
        serializer.__dict__.pop(attribute, None)
    serializer.initial_data = data
    serializer._context = context or {}
    serializer.is_valid(raise_exception=True)
    return serializer
