"""The engine behind the hooks earlier apps left for it.

- Template localization (`templates.translation`): the translator installed here uses the
  organization's engine. The local engine keeps the sandbox translation (`[fr] text`); a
  live engine translates through the upstream, metered as feature `template_localize`.
- Segment suggestions and autopilot (`contacts.segments`): `SEGMENTS_SUGGEST_ENGINE` and
  `SEGMENTS_AUTOPILOT_ENGINE` name the classes below. With the local engine they are the
  signal-based and rule-based engines those apps ship; with a live engine the upstream is
  asked (JSON mode, metered) and its answer is checked by the segments app like any other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from platform_core.tenancy.context import get_current_organization


def translate_for_templates(texts: Sequence[str], source_locale: str,
                            target_locale: str) -> list[str]:
    from templates.translation import TranslationError, sandbox_translate

    from . import get_engine
    from .generation import translate

    organization = get_current_organization()
    if organization is None or get_engine(organization).name == "local":
        return sandbox_translate(texts, source_locale, target_locale)
    result = translate(organization, texts=list(texts), target_language=target_locale,
                       source_language=source_locale)
    translations = result.data.get("translations")
    if not isinstance(translations, list):
        raise TranslationError("the model answered no translations")
    return [str(t) for t in translations]


class SegmentSuggestEngine:
    """`candidates(organization)` for contacts.segments.suggest."""

    def candidates(self, organization) -> list:
        from contacts.segments.suggest import SignalSuggestEngine, Suggestion

        from . import calls, get_engine

        signals = SignalSuggestEngine().candidates(organization)
        if get_engine(organization).name == "local":
            return signals
        examples = [s.as_dict() for s in signals[:3]]
        result = calls.complete(organization, [
            {"role": "system", "content": "Suggest up to 8 contact segments as JSON "
             '{"suggestions": [{"name", "description", "rationale", "filters"}]}, using '
             "the filter language of these examples: " + json.dumps(examples)[:4000]},
            {"role": "user", "content": "Suggest segments for this organization."}],
            feature="segment_suggest", response_format={"type": "json_object"})
        try:
            rows = json.loads(result.content or "")["suggestions"]
            return [Suggestion(name=str(r["name"]), description=str(r.get("description", "")),
                               rationale=str(r.get("rationale", "")), filters=r["filters"])
                    for r in rows if isinstance(r, dict)] or signals
        except (ValueError, KeyError, TypeError):
            return signals


class SegmentAutopilotEngine:
    """`describe_to_filters(description, organization)` for contacts.segments.autopilot."""

    def describe_to_filters(self, description: str, organization) -> dict[str, Any]:
        from contacts.segments.autopilot import AutopilotParseError, RuleBasedAutopilot

        from . import calls, get_engine

        if get_engine(organization).name == "local":
            return RuleBasedAutopilot().describe_to_filters(description, organization)
        try:
            return RuleBasedAutopilot().describe_to_filters(description, organization)
        except AutopilotParseError:
            pass  # the rules did not understand it: ask the model
        result = calls.complete(organization, [
            {"role": "system", "content": "Turn the audience description into the segment "
             'filter tree JSON {"op": "and"|"or", "rules": [{"field", "operator", "value"}]} '
             "over the contact fields (tags, email, phone, created_at, attributes.<name>, "
             "lists, events). Answer JSON only."},
            {"role": "user", "content": description}],
            feature="segment_autopilot", response_format={"type": "json_object"})
        try:
            tree = json.loads(result.content or "")
        except ValueError:
            raise AutopilotParseError("the model did not answer a filter") from None
        if not isinstance(tree, dict):
            raise AutopilotParseError("the model did not answer a filter")
        return tree


def install() -> None:
    from templates import translation

    translation.set_engine(translate_for_templates)
