"""Response shapes of the analysis and generation operations (the documents leave them
open; these are what the OpenAPI schema publishes)."""

from __future__ import annotations

from rest_framework import serializers

from .serializers import TaskResultSerializer


class SentimentSerializer(serializers.Serializer):
    label = serializers.ChoiceField(choices=["positive", "neutral", "negative"])
    score = serializers.FloatField(help_text="-1 (negative) to 1 (positive)")


class AnalysisSerializer(TaskResultSerializer):
    sentiment = SentimentSerializer()
    intent = serializers.CharField()
    keywords = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()
    word_count = serializers.IntegerField()
    is_question = serializers.BooleanField()


class MessageAnalysisSerializer(AnalysisSerializer):
    message_id = serializers.CharField()
    channel = serializers.CharField()
    direction = serializers.CharField()


class IntentScoreSerializer(serializers.Serializer):
    intent = serializers.CharField()
    score = serializers.FloatField()


class IntentSerializer(TaskResultSerializer):
    intent = serializers.CharField()
    confidence = serializers.FloatField(help_text="Cosine similarity 0-1 to the nearest "
                                                  "labelled example (local engine).")
    ranking = IntentScoreSerializer(many=True)


class ConversationSummarySerializer(TaskResultSerializer):
    conversation_id = serializers.CharField()
    summary = serializers.CharField()
    key_points = serializers.ListField(child=serializers.CharField())
    sentiment = serializers.CharField()
    message_count = serializers.IntegerField()
    customer_message_count = serializers.IntegerField()


class InsightSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    value = serializers.FloatField()
    change_percent = serializers.FloatField(allow_null=True)
    detail = serializers.CharField()


class DashboardInsightsSerializer(TaskResultSerializer):
    period_days = serializers.IntegerField()
    figures = serializers.DictField(child=serializers.IntegerField())
    insights = InsightSerializer(many=True)


class ReplySerializer(serializers.Serializer):
    text = serializers.CharField()
    intent = serializers.CharField()


class SuggestReplySerializer(TaskResultSerializer):
    conversation_id = serializers.CharField()
    intent = serializers.CharField()
    suggestions = ReplySerializer(many=True)


class GeneratedContentSerializer(TaskResultSerializer):
    content = serializers.CharField()
    channel = serializers.CharField()
    tone = serializers.CharField()
    characters = serializers.IntegerField()
    topics = serializers.ListField(child=serializers.CharField())
    sms_segments = serializers.IntegerField(allow_null=True)


class ImprovedTextSerializer(TaskResultSerializer):
    text = serializers.CharField()
    changes = serializers.ListField(child=serializers.CharField())
    tone = serializers.CharField()
    sentiment = serializers.CharField()


class TranslationSerializer(TaskResultSerializer):
    translations = serializers.ListField(child=serializers.CharField())
    source_language = serializers.CharField()
    target_language = serializers.CharField()
    note = serializers.CharField(allow_null=True, help_text="Set in local mode: the sandbox "
                                 "translation prefixes the text with the target locale.")


class ComposedCampaignSerializer(TaskResultSerializer):
    name = serializers.CharField()
    channel = serializers.CharField()
    audience = serializers.CharField()
    subject = serializers.CharField(allow_null=True)
    message = serializers.CharField()
    call_to_action = serializers.CharField()
    recommended_send_time = serializers.CharField()
    topics = serializers.ListField(child=serializers.CharField())


class ChannelScoreSerializer(serializers.Serializer):
    channel = serializers.CharField()
    sent = serializers.IntegerField()
    delivered = serializers.IntegerField()
    failed = serializers.IntegerField()
    replies = serializers.IntegerField()
    delivery_rate = serializers.FloatField(allow_null=True)
    reply_rate = serializers.FloatField(allow_null=True)
    score = serializers.FloatField()


class ChannelRecommendationSerializer(TaskResultSerializer):
    recommended_channel = serializers.CharField()
    ranking = ChannelScoreSerializer(many=True)
    rationale = serializers.CharField()
