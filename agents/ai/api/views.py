"""The AI utility API, base `/api/v1/ai` (Document 3, 4.2; 0-conventions.md 10).

Every operation needs scope `ai:write`, is metered (a usage row per model call, charged
to the AI budget: 402 AI_BUDGET_EXCEEDED before the model is called when a cap would be
passed) and counts against one AI rate limit per organization (AI_RATE_LIMIT_PER_MINUTE,
429 RATE_LIMITED with Retry-After) on top of the standard buckets.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from agents.engine import generation, helpers, recommend
from platform_core.errors import APIError

from .. import selectors
from . import responses as r
from . import serializers as s
from .base import AIView
from .openai_compat import ChatCompletionsView, EmbeddingsView

__all__ = ["ChatCompletionsView", "EmbeddingsView"]


class AnalyzeView(AIView):
    @extend_schema(request=s.TextSerializer, responses=r.AnalysisSerializer,
                   description="Sentiment, intent, keywords and a short summary of `text`.")
    def post(self, request):
        body = self.body(s.TextSerializer)
        return Response(helpers.analyze(self.organization, body["text"]).as_dict())


class AnalyzeMessageView(AIView):
    @extend_schema(request=None, responses=r.MessageAnalysisSerializer,
                   description="The analysis of one message of the organization (its body); "
                               "an unknown id or another organization's message: 404.")
    def post(self, request, message_id: str):
        message = selectors.message_in(self.organization, message_id)
        if not message.body:
            raise APIError("VALIDATION_ERROR", "The message has no text to analyse.",
                           details={"issues": [{"field": "id", "message": "no text"}]})
        result = helpers.analyze(self.organization, message.body,
                                 conversation_id=message.conversation_id or "",
                                 channel=message.channel)
        return Response({"message_id": message.pk, "channel": message.channel,
                         "direction": message.direction, **result.as_dict()})


class ClassifyIntentView(AIView):
    @extend_schema(request=s.ClassifyIntentSerializer, responses=r.IntentSerializer,
                   description="The intent of `text`: the label of the nearest example over "
                               "the embeddings (local engine), with the top 5 scores.")
    def post(self, request):
        body = self.body(s.ClassifyIntentSerializer)
        result = helpers.classify_intent(self.organization, body["text"], body.get("intents"))
        return Response(result.as_dict())


class SummarizeConversationView(AIView):
    @extend_schema(request=s.ConversationRefSerializer,
                   responses=r.ConversationSummarySerializer,
                   description="An extractive summary of the conversation's last 50 messages, "
                               "key points and the customer's sentiment.")
    def post(self, request):
        body = self.body(s.ConversationRefSerializer)
        conversation = selectors.conversation_in(self.organization, body["conversation_id"])
        turns = selectors.transcript(self.organization, conversation)
        result = helpers.summarize_conversation(self.organization, conversation.pk,
                                                conversation.channel, turns)
        return Response({"conversation_id": conversation.pk, **result.as_dict()})


class DashboardInsightsView(AIView):
    @extend_schema(request=s.WindowSerializer, responses=r.DashboardInsightsSerializer,
                   description="Insights on the last `days` (1-90, default 7) of messaging "
                               "against the period before: volumes, delivery, conversations.")
    def post(self, request):
        body = self.body(s.WindowSerializer)
        figures = selectors.dashboard_figures(self.organization, days=body["days"])
        result = recommend.dashboard_insights(self.organization, figures=figures,
                                              days=body["days"])
        return Response(result.as_dict())


class SuggestReplyView(AIView):
    @extend_schema(request=s.ConversationRefSerializer, responses=r.SuggestReplySerializer,
                   description="Replies the agent can send next, from the intent of the "
                               "customer's last message.")
    def post(self, request):
        body = self.body(s.ConversationRefSerializer)
        conversation = selectors.conversation_in(self.organization, body["conversation_id"])
        turns = selectors.transcript(self.organization, conversation)
        result = helpers.suggest_reply(self.organization, conversation.pk,
                                       conversation.channel, turns)
        return Response({"conversation_id": conversation.pk, **result.as_dict()})


class GenerateContentView(AIView):
    @extend_schema(request=s.GenerateContentSerializer,
                   responses=r.GeneratedContentSerializer,
                   description="Message content from a brief, fitted to the channel's length.")
    def post(self, request):
        body = self.body(s.GenerateContentSerializer)
        result = generation.generate_content(self.organization, prompt=body["prompt"],
                                             channel=body["channel"], tone=body["tone"],
                                             max_length=body.get("max_length"))
        return Response(result.as_dict())


class ImproveTextView(AIView):
    @extend_schema(request=s.ImproveTextSerializer, responses=r.ImprovedTextSerializer,
                   description="The text with its grammar and form improved, and the changes.")
    def post(self, request):
        body = self.body(s.ImproveTextSerializer)
        return Response(generation.improve_text(self.organization, value=body["text"],
                                                tone=body["tone"]).as_dict())


class TranslateView(AIView):
    @extend_schema(request=s.TranslateSerializer, responses=r.TranslationSerializer,
                   description="`text` or `texts` (1-100) translated to `target_language` "
                               "(BCP 47); `{{n}}` placeholders are kept. Local engine: the "
                               "sandbox translation, said in `note`.")
    def post(self, request):
        body = self.body(s.TranslateSerializer)
        texts = [body["text"]] if "text" in body else body["texts"]
        return Response(generation.translate(
            self.organization, texts=texts, target_language=body["target_language"],
            source_language=body["source_language"]).as_dict())


class ComposeCampaignView(AIView):
    @extend_schema(request=s.ComposeCampaignSerializer, responses=r.ComposedCampaignSerializer,
                   description="A campaign draft (name, message, subject for email, call to "
                               "action) for a goal; nothing is created or sent.")
    def post(self, request):
        body = self.body(s.ComposeCampaignSerializer)
        return Response(generation.compose_campaign(
            self.organization, goal=body["goal"], channel=body["channel"],
            audience=body["audience"], tone=body["tone"]).as_dict())


class OptimizeChannelView(AIView):
    @extend_schema(request=s.OptimizeChannelSerializer,
                   responses=r.ChannelRecommendationSerializer,
                   description="The channel to use, ranked on the organization's own delivery "
                               "and reply figures over `days` (optionally one contact's), "
                               "smoothed toward typical rates where history is thin.")
    def post(self, request):
        body = self.body(s.OptimizeChannelSerializer)
        stats = selectors.channel_performance(self.organization, days=body["days"],
                                              contact_id=body.get("contact_id", ""))
        candidates = body.get("channels") or ["sms", "whatsapp", "rcs", "email"]
        result = recommend.optimize_channel(self.organization, stats=stats,
                                            candidates=list(dict.fromkeys(candidates)),
                                            days=body["days"])
        return Response(result.as_dict())
