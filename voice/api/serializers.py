"""Shapes of the IVR flows API (Document 3, 4.10)."""

from __future__ import annotations

from rest_framework import serializers

from voice.models import IvrFlow


class FlowInSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    active = serializers.BooleanField(required=False, default=False)
    definition = serializers.JSONField(
        help_text="`nodes[]` (`id`, `type`, `data`) and `edges[]` (`id`, `source`, `target`, "
                  "`sourceHandle` = the DTMF key for a menu's option).")
    phone_numbers = serializers.ListField(
        child=serializers.CharField(max_length=32), max_length=20, required=False,
        help_text="E.164 numbers of the organization whose inbound calls this flow answers.")


class FlowPatchSerializer(FlowInSerializer):
    name = serializers.CharField(max_length=200, required=False)
    definition = serializers.JSONField(required=False)


class FlowSerializer(serializers.ModelSerializer):
    phone_numbers = serializers.SerializerMethodField()

    class Meta:
        model = IvrFlow
        fields = ["id", "name", "active", "definition", "version", "published_at",
                  "phone_numbers", "created_at", "updated_at"]

    def get_phone_numbers(self, obj: IvrFlow) -> list[str]:
        return sorted(n.phone_number for n in obj.numbers.all())


class PublishSerializer(serializers.Serializer):
    id = serializers.CharField()
    version = serializers.IntegerField()
    published_at = serializers.DateTimeField()


class PreviewSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    twiml = serializers.CharField()
