"""Request bodies of the loyalty endpoints (Document 3, 2.3 and 4.5).

Program fields keep the document's camelCase (`earnRules`, `pointsPerUnit`, ...); the
program response adds snake_case metadata (`program_source`, `revision_id`, ...).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from loyalty.program import (
    MAX_EARN_RULES,
    MAX_EXPIRY_DAYS,
    MAX_TIERS,
    RESERVED_EVENTS,
    ROUNDINGS,
)

MAX_POINTS = 1_000_000_000
MAX_PREVIEW_EVENTS = 1000


class EarnRuleSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=64, required=False)
    label = serializers.CharField(max_length=200, required=False, allow_blank=True)
    type = serializers.ChoiceField(choices=["perEvent", "perUnit"])
    eventName = serializers.CharField(max_length=200)  # noqa: N815 - the documented name
    points = serializers.IntegerField(min_value=1, max_value=MAX_POINTS, required=False)
    field = serializers.CharField(max_length=100, required=False)
    pointsPerUnit = serializers.DecimalField(  # noqa: N815
        max_digits=18, decimal_places=6, min_value=Decimal("0.000001"),
        max_value=Decimal(MAX_POINTS), required=False)
    rounding = serializers.ChoiceField(choices=ROUNDINGS, required=False)

    def validate_eventName(self, value: str) -> str:  # noqa: N802
        value = value.strip()
        if not value:
            raise serializers.ValidationError("eventName must not be blank.")
        if value in RESERVED_EVENTS:
            raise serializers.ValidationError(
                f"{value} is reserved for redemptions and adjustments.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        rule: dict[str, Any] = {"type": attrs["type"], "eventName": attrs["eventName"]}
        if attrs["type"] == "perEvent":
            if "points" not in attrs:
                raise serializers.ValidationError({"points": "A perEvent rule needs points."})
            rule["points"] = attrs["points"]
        else:
            missing = [name for name in ("field", "pointsPerUnit") if name not in attrs]
            if missing:
                raise serializers.ValidationError(
                    {name: f"A perUnit rule needs {name}." for name in missing})
            ppu = attrs["pointsPerUnit"].normalize()
            rule.update(field=attrs["field"], rounding=attrs.get("rounding", "floor"),
                        pointsPerUnit=int(ppu) if ppu == ppu.to_integral() else float(ppu))
        rule["label"] = attrs.get("label") or ""
        if attrs.get("id"):
            rule["id"] = attrs["id"]
        return rule


class TierSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=64, required=False)
    name = serializers.CharField(max_length=100)
    threshold = serializers.IntegerField(min_value=0, max_value=10**12)
    benefits = serializers.ListField(child=serializers.CharField(max_length=500),
                                     required=False, max_length=50)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        tier = {"name": attrs["name"], "threshold": attrs["threshold"],
                "benefits": attrs.get("benefits", [])}
        if attrs.get("id"):
            tier["id"] = attrs["id"]
        return tier


def _with_ids(items: list[dict[str, Any]], prefix: str, what: str) -> list[dict[str, Any]]:
    """Ids are unique; a missing id is given as `<prefix>_<position>`."""
    out = []
    for index, item in enumerate(items, start=1):
        out.append({"id": item.get("id") or f"{prefix}_{index}", **item})
    ids = [item["id"] for item in out]
    if len(set(ids)) != len(ids):
        raise serializers.ValidationError(f"{what} ids must be unique.")
    return out


class ProgramSerializer(serializers.Serializer):
    """The full program (POST); PUT uses it partially (given fields replace)."""

    name = serializers.CharField(max_length=200)
    earnRules = EarnRuleSerializer(many=True, max_length=MAX_EARN_RULES)  # noqa: N815
    tiers = TierSerializer(many=True, min_length=1, max_length=MAX_TIERS)
    pointsExpiryDays = serializers.IntegerField(  # noqa: N815
        min_value=1, max_value=MAX_EXPIRY_DAYS, required=False, allow_null=True)

    def validate_earnRules(self, value):  # noqa: N802
        return _with_ids(value, "rule", "Earn rule")

    def validate_tiers(self, value):
        tiers = sorted(_with_ids(value, "tier", "Tier"), key=lambda tier: tier["threshold"])
        thresholds = [tier["threshold"] for tier in tiers]
        if thresholds[0] != 0:
            raise serializers.ValidationError("The base tier's threshold must be 0.")
        if len(set(thresholds)) != len(thresholds):
            raise serializers.ValidationError("Tier thresholds must be distinct.")
        return tiers

    def to_config(self) -> dict[str, Any]:
        data = dict(self.validated_data)
        if not self.partial:
            data.setdefault("pointsExpiryDays", None)
        return data


class PreviewEventSerializer(serializers.Serializer):
    event_name = serializers.CharField(max_length=200)
    properties = serializers.JSONField(required=False)
    occurred_at = serializers.DateTimeField(required=False)

    def validate_properties(self, value):
        if value is not None and not isinstance(value, dict):
            raise serializers.ValidationError("properties must be a JSON object.")
        return value or {}


class PreviewSerializer(serializers.Serializer):
    events = PreviewEventSerializer(many=True, max_length=MAX_PREVIEW_EVENTS)
    program = ProgramSerializer(required=False)


class RedeemSerializer(serializers.Serializer):
    points = serializers.IntegerField(min_value=1, max_value=MAX_POINTS)
    reward = serializers.CharField(max_length=200)
    reference = serializers.CharField(max_length=200, required=False, allow_null=True,
                                      allow_blank=True)


class AdjustSerializer(serializers.Serializer):
    points = serializers.IntegerField(min_value=-MAX_POINTS, max_value=MAX_POINTS,
                                      help_text="Positive credits, negative debits; not 0.")
    reason = serializers.CharField(max_length=500)

    def validate_points(self, value: int) -> int:
        if value == 0:
            raise serializers.ValidationError("points must not be 0.")
        return value


class ProgramOutSerializer(serializers.Serializer):
    """Documents the program response in the schema."""

    id = serializers.CharField()
    name = serializers.CharField()
    earnRules = serializers.ListField(child=serializers.DictField())  # noqa: N815
    tiers = serializers.ListField(child=serializers.DictField())
    pointsExpiryDays = serializers.IntegerField(allow_null=True)  # noqa: N815
    program_source = serializers.ChoiceField(choices=["custom", "default"])
    revision_id = serializers.CharField()
    redemption_event_name = serializers.CharField()
    relevant_event_names = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class StateOutSerializer(serializers.Serializer):
    balance = serializers.DictField()
    tier = serializers.DictField()
    traits = serializers.DictField()


class MemberOutSerializer(StateOutSerializer):
    contact_id = serializers.CharField()
    contact = serializers.DictField()


class PreviewOutSerializer(serializers.Serializer):
    state = StateOutSerializer()
    events = serializers.ListField(child=serializers.DictField())
    program = serializers.DictField()


class MovementOutSerializer(serializers.Serializer):
    id = serializers.CharField()
    contact_id = serializers.CharField()
    points = serializers.IntegerField()
    balance = serializers.DictField()
    tier = serializers.DictField()
