"""Task helpers: analysis and generation on top of the engine, one metered call each.

Every helper answers a dict of a fixed shape whatever the engine:

- local engine: the shape is computed here (lexicon sentiment, extractive summaries and
  nearest-example intent over the real embeddings, templated texts) and the call is
  metered as model `local` (tokens of the input and of the answer);
- live engine: the upstream is asked for a JSON object with the same keys (JSON mode);
  each key it answers with the right type replaces the locally computed value, so a
  partial or sloppy model answer still yields the documented shape.

`TaskResult.data` is the shape; `model`, `engine` and `usage` say what produced it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from platform_core.tenancy.models import Organization

from ..usage import metering
from ..usage.models import AIUsage  # noqa: TC001
from . import calls, local, text

_local = local.LocalEngine()


@dataclass
class TaskResult:
    data: dict[str, Any]
    model: str
    engine: str
    usage: AIUsage | None

    def as_dict(self) -> dict[str, Any]:
        usage = self.usage
        return {**self.data, "model": self.model, "engine": self.engine, "usage": {
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "total_tokens": usage.total_tokens if usage else 0,
            "cost_cents": usage.cost_cents if usage else 0,
        }}


def _merge(computed: dict[str, Any], answered: Any) -> dict[str, Any]:
    if not isinstance(answered, dict):
        return computed
    merged = dict(computed)
    for key, value in answered.items():
        if key in computed and (computed[key] is None or isinstance(value, type(computed[key]))):
            merged[key] = value
    return merged


def run(organization: Organization, *, feature: str, instruction: str, payload: str,
        compute: Callable[[], dict[str, Any]], conversation_id: str = "",
        channel: str = "", agent_id: str = "") -> TaskResult:
    """One metered task: `compute()` builds the local answer (and the shape); a live engine
    is asked `instruction` over `payload` for a JSON object of the same keys."""
    from . import get_engine

    engine = get_engine(organization)
    if engine.name == "live":
        computed = compute()
        keys = ", ".join(f'"{k}"' for k in computed)
        result = calls.complete(
            organization,
            [{"role": "system", "content": f"{instruction} Answer one JSON object with the "
              f"keys {keys}, shaped like this example: {json.dumps(computed)[:2000]}"},
             {"role": "user", "content": payload}],
            feature=feature, response_format={"type": "json_object"},
            conversation_id=conversation_id, channel=channel, agent_id=agent_id)
        try:
            answered = json.loads(result.content or "")
        except ValueError:
            answered = None
        return TaskResult(_merge(computed, answered), result.model, "live",
                          result.usage_record)
    prompt_tokens = _local.count_tokens(payload) + 3
    meter = metering.start(organization, feature=feature, engine="local",
                           model=local.LOCAL_MODEL, estimate_prompt_tokens=prompt_tokens,
                           agent_id=agent_id, conversation_id=conversation_id,
                           channel=channel)
    data = compute()
    usage = meter.record(model=local.LOCAL_MODEL, prompt_tokens=prompt_tokens,
                         completion_tokens=_local.count_tokens(json.dumps(data)))
    return TaskResult(data, local.LOCAL_MODEL, "local", usage)


# --- Analysis ----------------------------------------------------------------------------

DEFAULT_INTENTS: dict[str, list[str]] = {
    "billing": ["I have a question about my invoice", "Why was I charged twice?",
                "How do I update my payment method?"],
    "support": ["The app is not working", "I can't log in to my account",
                "I need help with an error message"],
    "sales": ["How much does the premium plan cost?", "I want to buy more licenses",
              "Can I get a demo of the product?"],
    "cancellation": ["I want to cancel my subscription", "Please close my account",
                     "How do I stop my plan?"],
    "appointment": ["I would like to book an appointment", "Can I reschedule my meeting?",
                    "What times are available tomorrow?"],
    "order_status": ["Where is my order?", "My package has not arrived yet",
                     "When will my delivery come?"],
    "complaint": ["This service is terrible", "I am very unhappy with the support",
                  "I want to file a complaint"],
    "greeting": ["Hello", "Hi there, good morning", "Hey, how are you?"],
    "opt_out": ["Stop sending me messages", "Unsubscribe me", "Remove me from your list"],
}


def classify(text_value: str, intents: dict[str, list[str]] | None = None
             ) -> dict[str, Any]:
    """Nearest labelled example over the embeddings: intent, confidence, ranking."""
    intents = intents or DEFAULT_INTENTS
    labels = [(name, example) for name, examples in intents.items() for example in examples]
    from . import minilm

    query = minilm.encode([text_value]).vectors[0]
    scores = _example_vectors(tuple(e for _, e in labels)) @ query
    best: dict[str, float] = {}
    for (name, _), score in zip(labels, scores, strict=True):
        best[name] = max(best.get(name, -1.0), float(score))
    ranking = sorted(best.items(), key=lambda kv: -kv[1])
    return {"intent": ranking[0][0], "confidence": round(max(ranking[0][1], 0.0), 4),
            "ranking": [{"intent": n, "score": round(s, 4)} for n, s in ranking[:5]]}


@functools.lru_cache(maxsize=64)
def _example_vectors(examples: tuple[str, ...]):
    """The labelled examples' vectors, computed once per process for a label set."""
    from . import minilm

    return minilm.encode(list(examples)).vectors


def analysis_of(text_value: str) -> dict[str, Any]:
    mood = text.sentiment(text_value)
    return {
        "sentiment": {"label": mood.label, "score": mood.score},
        "intent": classify(text_value)["intent"],
        "keywords": text.keywords(text_value),
        "summary": " ".join(text.extractive_summary(text_value, 2)),
        "word_count": len(text_value.split()),
        "is_question": text_value.rstrip().endswith("?"),
    }


def analyze(organization: Organization, text_value: str, **attribution: str) -> TaskResult:
    return run(organization, feature="analyze", payload=text_value,
               instruction="Analyse the customer text: sentiment (label positive, negative "
                           "or neutral and score -1..1), intent, keywords, a short summary.",
               compute=lambda: analysis_of(text_value), **attribution)


def classify_intent(organization: Organization, text_value: str,
                    intents: dict[str, list[str]] | None = None) -> TaskResult:
    names = ", ".join(intents or DEFAULT_INTENTS)
    return run(organization, feature="classify_intent", payload=text_value,
               instruction=f"Classify the intent of the text among: {names}.",
               compute=lambda: classify(text_value, intents))


def summarize_turns(turns: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Extractive summary of a conversation's turns `(speaker, text)`."""
    inbound = " ".join(t for who, t in turns if who == "customer")
    everything = "\n".join(t for _, t in turns)
    mood = text.sentiment(inbound)
    points = text.extractive_summary(everything, 3)
    return {"summary": " ".join(points), "key_points": points,
            "sentiment": mood.label, "message_count": len(turns),
            "customer_message_count": sum(1 for who, _ in turns if who == "customer")}


def summarize_conversation(organization: Organization, conversation_id: str, channel: str,
                           turns: Sequence[tuple[str, str]]) -> TaskResult:
    transcript = "\n".join(f"{who}: {t}" for who, t in turns)
    return run(organization, feature="summarize_conversation", payload=transcript,
               instruction="Summarise this customer conversation.",
               compute=lambda: summarize_turns(turns),
               conversation_id=conversation_id, channel=channel)


_REPLIES = {
    "billing": "Thanks for reaching out about billing. I'm checking your account now and "
               "will come back to you shortly with the details.",
    "support": "Sorry you're running into trouble. Could you tell me what you see on your "
               "screen so I can help you fix it?",
    "sales": "Thanks for your interest! I'd be happy to walk you through our plans. What "
             "are you looking to achieve?",
    "cancellation": "I'm sorry to hear you want to cancel. I can help with that. May I ask "
                    "what made you decide to leave?",
    "appointment": "I'd be glad to help you book a time. Which day and time suit you best?",
    "order_status": "Let me check on your order. Could you share your order number?",
    "complaint": "I'm sorry about your experience. I've noted your feedback and I'll make "
                 "sure it's handled. Can you tell me more about what happened?",
    "greeting": "Hi! Thanks for getting in touch. How can I help you today?",
    "opt_out": "Understood. You won't receive further messages from us. Reply START to "
               "opt back in at any time.",
}


def reply_suggestions(last_customer_text: str) -> dict[str, Any]:
    intent = classify(last_customer_text)["intent"] if last_customer_text else "greeting"
    primary = _REPLIES[intent]
    return {"intent": intent, "suggestions": [
        {"text": primary, "intent": intent},
        {"text": "Thanks for your message! Let me look into this and get back to you.",
         "intent": "acknowledge"},
    ]}


def suggest_reply(organization: Organization, conversation_id: str, channel: str,
                  turns: Sequence[tuple[str, str]]) -> TaskResult:
    last = next((t for who, t in reversed(turns) if who == "customer"), "")
    transcript = "\n".join(f"{who}: {t}" for who, t in turns)
    return run(organization, feature="suggest_reply", payload=transcript,
               instruction="Suggest replies the agent can send next in this conversation.",
               compute=lambda: reply_suggestions(last),
               conversation_id=conversation_id, channel=channel)
