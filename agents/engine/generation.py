"""Generation and recommendation helpers (templated locally, JSON mode when live).

The local engine writes from templates filled with what it computes from the input
(keywords, sentences, the organization's delivery figures); it never invents facts and
says `model: "local"`. Translation in local mode keeps the sandbox behaviour of the
templates app (`[<locale>] text`) and says so in `note`.
"""

from __future__ import annotations

import re
from typing import Any

from platform_core.tenancy.models import Organization

from . import text
from .helpers import TaskResult, run

SMS_SEGMENT = 160
_CHANNEL_LIMITS = {"sms": 160, "whatsapp": 1024, "rcs": 1024, "email": 5000, "push": 178,
                   "voice": 1000}
_TONE_OPENERS = {"friendly": "Hi there!", "formal": "Dear customer,",
                 "urgent": "Don't miss out:", "playful": "Guess what?",
                 "neutral": ""}


def _fit(value: str, limit: int) -> str:
    if len(value) <= limit:
        return value
    cut = value[: limit - 1]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:") + "…"


def content_for(prompt: str, channel: str, tone: str, max_length: int | None) -> dict[str, Any]:
    limit = min(max_length or _CHANNEL_LIMITS.get(channel, 1000),
                _CHANNEL_LIMITS.get(channel, 5000))
    topics = text.keywords(prompt, 3)
    core = text.sentences(prompt)[0] if text.sentences(prompt) else prompt
    core = core[0].upper() + core[1:] if core else core
    if core and core[-1] not in ".!?":
        core += "."
    opener = _TONE_OPENERS.get(tone, "")
    body = " ".join(p for p in (opener, core, "Reply to learn more.") if p)
    content = _fit(body, limit)
    return {"content": content, "channel": channel, "tone": tone,
            "characters": len(content), "topics": topics,
            "sms_segments": -(-len(content) // SMS_SEGMENT) if channel == "sms" else None}


def generate_content(organization: Organization, *, prompt: str, channel: str, tone: str,
                     max_length: int | None) -> TaskResult:
    return run(organization, feature="generate_content", payload=prompt,
               instruction=f"Write {channel} marketing or service content in a {tone} tone "
                           f"from the brief{f', at most {max_length} characters' if max_length else ''}.",
               compute=lambda: content_for(prompt, channel, tone, max_length), channel=channel)


_CONTRACTIONS = {"dont": "don't", "cant": "can't", "wont": "won't", "im": "I'm",
                 "youre": "you're", "isnt": "isn't", "doesnt": "doesn't", "didnt": "didn't",
                 "i": "I", "u": "you", "ur": "your", "pls": "please", "thx": "thanks"}


def improved(value: str, tone: str) -> dict[str, Any]:
    changes: list[str] = []
    result = re.sub(r"\s+", " ", value).strip()
    if result != value:
        changes.append("normalised whitespace")
    deduped = re.sub(r"\b(\w+)( \1\b)+", r"\1", result, flags=re.I)
    if deduped != result:
        changes.append("removed repeated words")
        result = deduped

    def fix(match: re.Match) -> str:
        word = match.group(0)
        return _CONTRACTIONS.get(word.lower(), word)

    fixed = re.sub(r"\b[\w']+\b", fix, result)
    if fixed != result:
        changes.append("fixed contractions and shorthand")
        result = fixed
    capped = re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), result)
    if capped != result:
        changes.append("capitalised sentences")
        result = capped
    if result and result[-1] not in ".!?…":
        result += "."
        changes.append("ended with punctuation")
    shouted = re.sub(r"!{2,}", "!", result)
    if shouted != result:
        changes.append("toned down repeated exclamation marks")
        result = shouted
    return {"text": result, "changes": changes, "tone": tone,
            "sentiment": text.sentiment(result).label}


def improve_text(organization: Organization, *, value: str, tone: str) -> TaskResult:
    return run(organization, feature="improve_text", payload=value,
               instruction=f"Improve the text (grammar, clarity) in a {tone} tone; list the "
                           "changes you made.",
               compute=lambda: improved(value, tone))


def translate(organization: Organization, *, texts: list[str], target_language: str,
              source_language: str) -> TaskResult:
    from templates.translation import sandbox_translate

    from . import get_engine

    def compute() -> dict[str, Any]:
        return {"translations": sandbox_translate(texts, source_language, target_language),
                "source_language": source_language, "target_language": target_language,
                "note": ("local engine: sandbox translation (the text prefixed with the "
                         "target locale); configure LLM_BASE_URL for real translation")
                if get_engine(organization).name == "local" else None}

    payload = "\n".join(f"{i}: {t}" for i, t in enumerate(texts))
    return run(organization, feature="translate", payload=payload,
               instruction=f"Translate each numbered text from {source_language} to "
                           f"{target_language}; keep every {{{{n}}}} placeholder; answer "
                           "`translations` as a list in the same order.",
               compute=compute)


def campaign_for(goal: str, channel: str, audience: str, tone: str) -> dict[str, Any]:
    topics = text.keywords(goal, 3)
    name = " ".join(w.capitalize() for w in (topics or ["campaign"])) + f" – {channel}"
    message = content_for(goal, channel, tone, None)["content"]
    return {"name": _fit(name, 80), "channel": channel, "audience": audience or "all contacts",
            "subject": _fit(text.sentences(goal)[0], 78) if channel == "email" and
            text.sentences(goal) else None,
            "message": message, "call_to_action": "Reply to learn more.",
            "recommended_send_time": "Tuesday 10:00 in each contact's timezone",
            "topics": topics}


def compose_campaign(organization: Organization, *, goal: str, channel: str, audience: str,
                     tone: str) -> TaskResult:
    return run(organization, feature="compose_campaign", payload=goal,
               instruction=f"Compose a {channel} campaign for the goal, audience "
                           f"'{audience}', {tone} tone.",
               compute=lambda: campaign_for(goal, channel, audience, tone), channel=channel)
