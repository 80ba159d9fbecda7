"""Bodies and answers of /api/v1/agents (Document 3, 2.1 and 4.1).

`tools[].parameters` must be a JSON Schema object (`type: object`, checked against the
metaschema with `jsonschema`); tool names are unique per agent. Optional `webhook_url`
(SSRF-checked when saved) and `timeout_seconds` say where a tool call goes.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators
from rest_framework import serializers

from ..agent_models import AgentStatus, DeployChannel

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
AGENT_TYPES = ("chatbot", "voice")
CHANNELS = ("webhook", "sms", "mms", "whatsapp", "voice", "rcs", "email")
MAX_TOOLS = 32


def check_parameters_schema(value: Any) -> dict[str, Any]:
    """A valid JSON Schema whose instances are objects (the tool's arguments)."""
    if not isinstance(value, dict):
        raise serializers.ValidationError("`parameters` must be a JSON Schema object.")
    if value.get("type") != "object":
        raise serializers.ValidationError("`parameters.type` must be \"object\".")
    try:
        validators.validator_for(value).check_schema(value)
    except schema_errors.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise serializers.ValidationError(
            f"`parameters` is not a valid JSON Schema{f' at {where}' if where else ''}: "
            f"{exc.message}") from None
    if "properties" in value and not isinstance(value["properties"], dict):
        raise serializers.ValidationError("`parameters.properties` must be an object.")
    return value


class AgentToolSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64)
    description = serializers.CharField(max_length=1024, allow_blank=True, required=False,
                                        default="")
    parameters = serializers.JSONField()
    webhook_url = serializers.URLField(max_length=2048, required=False)
    timeout_seconds = serializers.IntegerField(min_value=1, max_value=30, required=False)

    def validate_name(self, value: str) -> str:
        if not TOOL_NAME.match(value):
            raise serializers.ValidationError("1-64 letters, digits, `_` or `-`.")
        return value

    def validate_parameters(self, value: Any) -> dict[str, Any]:
        return check_parameters_schema(value)


class SafetySerializer(serializers.Serializer):
    pii_redaction = serializers.BooleanField(required=False, default=False)
    content_filter = serializers.BooleanField(required=False, default=False)


class HandoffConfigSerializer(serializers.Serializer):
    min_confidence = serializers.FloatField(min_value=0, max_value=1, required=False,
                                            help_text="Retrieval similarity below which "
                                                      "the agent hands off (0.3).")
    max_unresolved_turns = serializers.IntegerField(
        min_value=1, max_value=50, required=False,
        help_text="Answers without the customer saying it is solved before handing off (5).")
    max_tool_steps = serializers.IntegerField(min_value=1, max_value=8, required=False,
                                              help_text="Model/tool rounds per turn (4).")
    message = serializers.CharField(max_length=500, required=False, allow_blank=True,
                                    help_text="Sent to the customer when handing off.")


class ConfigSerializer(serializers.Serializer):
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=40), max_length=50, allow_null=True,
        required=False, help_text="Bases retrieval reads (null or absent: all of them).")
    handoff = HandoffConfigSerializer(required=False)


class AgentInSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    type = serializers.ChoiceField(choices=AGENT_TYPES, required=False, default="chatbot")
    model = serializers.CharField(max_length=100)
    system_prompt = serializers.CharField(max_length=100_000, allow_blank=True,
                                          required=False, default="")
    tools = AgentToolSerializer(many=True, required=False, default=list)
    safety_config = SafetySerializer(required=False)
    channels = serializers.ListField(child=serializers.ChoiceField(choices=CHANNELS),
                                     max_length=len(CHANNELS), required=False, default=list)
    config = ConfigSerializer(required=False)

    def validate_tools(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if len(value) > MAX_TOOLS:
            raise serializers.ValidationError(f"At most {MAX_TOOLS} tools.")
        names = [tool["name"] for tool in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise serializers.ValidationError(
                f"Tool names must be unique per agent: {', '.join(duplicates)}.")
        return [dict(tool) for tool in value]

    def validate_channels(self, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class AgentUpdateSerializer(AgentInSerializer):
    """PATCH: every field optional; only the sent ones change."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("partial", True)
        super().__init__(*args, **kwargs)


class DeploySerializer(serializers.Serializer):
    channel = serializers.ChoiceField(choices=DeployChannel.values)
    webhook_url = serializers.URLField(max_length=2048, required=False, allow_blank=True)
    phone_number = serializers.CharField(max_length=40, required=False, allow_blank=True)


class AgentListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=AgentStatus.values, required=False)


class DeploymentSerializer(serializers.Serializer):
    channel = serializers.CharField()
    phone_number = serializers.CharField(allow_null=True)
    deployed_at = serializers.CharField()
    webhook_url = serializers.CharField(required=False)


class AgentSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    model = serializers.CharField()
    system_prompt = serializers.CharField()
    tools = serializers.JSONField()
    safety_config = serializers.JSONField()
    channels = serializers.JSONField()
    status = serializers.CharField()
    version = serializers.IntegerField()
    config = serializers.JSONField(help_text="`deployment` {channel, phone_number, "
                                             "deployed_at} once deployed; "
                                             "`knowledge_base_ids`, `handoff`.")
    active_conversations = serializers.IntegerField()
    conversation_count = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
