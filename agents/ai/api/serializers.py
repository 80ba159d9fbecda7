"""Request and response shapes of /api/v1/ai (Document 3, 4.2 and 8)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

MAX_TURNS, MAX_CONTENT = 50, 100_000
MAX_EMBED_INPUTS, MAX_EMBED_CHARS = 96, 10_000
MAX_TEXT = 20_000
CHANNELS = ["sms", "mms", "whatsapp", "rcs", "email", "voice"]
TONES = ["neutral", "friendly", "formal", "urgent", "playful"]


class StrictCharField(serializers.CharField):
    """A JSON string only: numbers and booleans are not silently turned into text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictNumberField(serializers.FloatField):
    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


# --- Chat completions -------------------------------------------------------------------


class ChatMessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["system", "user", "assistant"])
    content = StrictCharField(min_length=1, max_length=MAX_CONTENT, trim_whitespace=False)
    name = StrictCharField(required=False, max_length=64)


class FunctionSerializer(serializers.Serializer):
    name = serializers.RegexField(r"^[a-zA-Z0-9_-]{1,64}$")
    description = StrictCharField(required=False, allow_blank=True, max_length=4000)
    parameters = serializers.DictField(required=False)


class ToolSerializer(serializers.Serializer):
    # Plain strings checked by hand: a `type` enum here would collide in the schema with
    # the other `type` enums.
    type = serializers.RegexField(r"^function$", help_text="`function`")
    function = FunctionSerializer()


class ResponseFormatSerializer(serializers.Serializer):
    type = serializers.RegexField(r"^(text|json_object|json_schema)$",
                                  help_text="`text`, `json_object` (forces JSON) or "
                                            "`json_schema` (with `json_schema.schema`)")
    json_schema = serializers.DictField(required=False)


class ChatCompletionRequestSerializer(serializers.Serializer):
    messages = ChatMessageSerializer(many=True, allow_empty=False, max_length=MAX_TURNS)
    model = StrictCharField(required=False, max_length=100)
    temperature = StrictNumberField(required=False, min_value=0, max_value=2)
    max_tokens = StrictIntegerField(required=False, min_value=1, max_value=8192)
    response_format = ResponseFormatSerializer(required=False)
    stream = serializers.BooleanField(required=False, default=False)
    tools = ToolSerializer(many=True, required=False, max_length=128)
    tool_choice = serializers.JSONField(required=False)
    stream_options = serializers.DictField(required=False)

    def validate_stream(self, value: Any) -> bool:
        if not isinstance(self.initial_data.get("stream", False), bool):
            raise serializers.ValidationError("Must be a boolean.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        fmt = attrs.get("response_format") or {}
        if fmt.get("type") == "json_schema" and not isinstance(
                (fmt.get("json_schema") or {}).get("schema"), dict):
            raise serializers.ValidationError(
                {"response_format": "json_schema needs json_schema.schema (an object)."})
        return attrs


class ChatMessageOutSerializer(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField(allow_null=True)
    tool_calls = serializers.ListField(child=serializers.DictField(), required=False)


class ChatChoiceSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    message = ChatMessageOutSerializer()
    finish_reason = serializers.CharField()
    logprobs = serializers.DictField(allow_null=True)


class UsageSerializer(serializers.Serializer):
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()


class MetaSerializer(serializers.Serializer):
    request_id = serializers.CharField()
    timestamp = serializers.CharField()
    engine = serializers.CharField(help_text="local or live")
    cost_cents = serializers.IntegerField()


class ChatCompletionSerializer(serializers.Serializer):
    id = serializers.CharField()
    object = serializers.CharField(help_text="chat.completion")
    created = serializers.IntegerField()
    model = serializers.CharField()
    choices = ChatChoiceSerializer(many=True)
    usage = UsageSerializer()
    meta = MetaSerializer()


# --- Embeddings --------------------------------------------------------------------------


class EmbeddingsRequestSerializer(serializers.Serializer):
    input = serializers.JSONField(help_text="One string or an array of 1-96 strings, each "
                                            "1-10,000 characters.")
    model = StrictCharField(required=False, max_length=100)
    encoding_format = serializers.RegexField(
        r"^(float|base64)$", required=False, default="float",
        help_text="`float` (default) or `base64` (little-endian float32, what the openai "
                  "client asks for by default)")

    def validate_input(self, value: Any) -> list[str]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items:
            raise serializers.ValidationError("Give one string or a non-empty array of strings.")
        if len(items) > MAX_EMBED_INPUTS:
            raise serializers.ValidationError(f"At most {MAX_EMBED_INPUTS} strings.")
        for i, item in enumerate(items):
            if not isinstance(item, str) or not 1 <= len(item) <= MAX_EMBED_CHARS:
                raise serializers.ValidationError(
                    f"Item {i}: each input is a string of 1-{MAX_EMBED_CHARS} characters.")
        return items


class EmbeddingItemSerializer(serializers.Serializer):
    object = serializers.CharField(help_text="embedding")
    embedding = serializers.JSONField(help_text="A list of floats, or a base64 string of "
                                                "little-endian float32 with encoding_format "
                                                "base64")
    index = serializers.IntegerField()


class EmbeddingUsageSerializer(serializers.Serializer):
    prompt_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()


class EmbeddingsSerializer(serializers.Serializer):
    object = serializers.CharField(help_text="list")
    data = EmbeddingItemSerializer(many=True)
    model = serializers.CharField()
    usage = EmbeddingUsageSerializer()
    meta = MetaSerializer()


# --- Analysis and generation -------------------------------------------------------------


class TextSerializer(serializers.Serializer):
    text = StrictCharField(min_length=1, max_length=MAX_TEXT)


class ClassifyIntentSerializer(TextSerializer):
    intents = serializers.DictField(
        child=serializers.ListField(child=StrictCharField(min_length=1, max_length=500),
                                    min_length=1, max_length=20),
        required=False, help_text="Your own labels: `{label: [example, ...]}` (up to 50 "
                                  "labels, 20 examples each); default a built-in set.")

    def validate_intents(self, value: dict) -> dict:
        if not 1 <= len(value) <= 50:
            raise serializers.ValidationError("Give 1-50 labels.")
        if any(not 1 <= len(k) <= 64 for k in value):
            raise serializers.ValidationError("Labels are 1-64 characters.")
        return value


class ConversationRefSerializer(serializers.Serializer):
    conversation_id = StrictCharField(min_length=1, max_length=40)


class WindowSerializer(serializers.Serializer):
    days = StrictIntegerField(required=False, default=7, min_value=1, max_value=90)


class GenerateContentSerializer(serializers.Serializer):
    prompt = StrictCharField(min_length=1, max_length=MAX_TEXT)
    channel = serializers.ChoiceField(choices=CHANNELS, required=False, default="sms")
    tone = serializers.ChoiceField(choices=TONES, required=False, default="neutral")
    max_length = StrictIntegerField(required=False, min_value=20, max_value=5000)


class ImproveTextSerializer(TextSerializer):
    tone = serializers.ChoiceField(choices=TONES, required=False, default="neutral")


LANGUAGE = r"^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$"


class TranslateSerializer(serializers.Serializer):
    text = StrictCharField(required=False, min_length=1, max_length=MAX_TEXT)
    texts = serializers.ListField(child=StrictCharField(min_length=1, max_length=MAX_TEXT),
                                  required=False, min_length=1, max_length=100)
    target_language = serializers.RegexField(LANGUAGE, max_length=35)
    source_language = serializers.RegexField(LANGUAGE, max_length=35, required=False,
                                             default="en")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("text" in attrs) == ("texts" in attrs):
            raise serializers.ValidationError("Give either `text` or `texts`.")
        return attrs


class ComposeCampaignSerializer(serializers.Serializer):
    goal = StrictCharField(min_length=1, max_length=MAX_TEXT)
    channel = serializers.ChoiceField(choices=CHANNELS, required=False, default="sms")
    audience = StrictCharField(required=False, allow_blank=True, max_length=500, default="")
    tone = serializers.ChoiceField(choices=TONES, required=False, default="friendly")


class OptimizeChannelSerializer(serializers.Serializer):
    contact_id = StrictCharField(required=False, max_length=40)
    channels = serializers.ListField(child=serializers.ChoiceField(choices=CHANNELS),
                                     required=False, min_length=1, max_length=6)
    days = StrictIntegerField(required=False, default=30, min_value=1, max_value=365)


class TaskUsageSerializer(serializers.Serializer):
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    cost_cents = serializers.IntegerField()


class TaskResultSerializer(serializers.Serializer):
    """Every analysis and generation answer carries these, beside its own fields."""

    model = serializers.CharField(help_text="`local` for the local engine, else upstream's")
    engine = serializers.CharField(help_text="local or live")
    usage = TaskUsageSerializer()
