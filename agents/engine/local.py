"""The local engine: the default in test mode and with no LLM configured. No network.

Embeddings are real (all-MiniLM-L6-v2, see minilm.py). Generation does not pretend to be a
language model: every answer is labelled `model: "local"` and built from what this module
computes on the conversation:

- a question with context (system or earlier turns) is answered by the context sentence
  closest in meaning to it (cosine over the embeddings);
- otherwise the answer is an extractive summary of the last user turn, prefixed to say so;
- `response_format` `json_object` answers a JSON object (`answer`, `summary`, `sentiment`,
  `keywords`); `json_schema` answers an object with the schema's required properties,
  strings filled with the answer, numbers 0, booleans false, arrays empty, enums their
  first value;
- tools are never called (a local answer is text; `notes.tools_ignored` says so);
- `max_tokens` cuts the answer at that many WordPiece tokens (`finish_reason: length`).

Token counts are WordPiece tokens of the model's tokenizer: each message's content plus 3
for its role framing, and the completion's own count.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from . import minilm, text
from .base import ChatDelta, ChatResult, EmbedResult

LOCAL_MODEL = "local"
EMBEDDING_MODEL = minilm.MODEL_NAME
_PER_MESSAGE = 3


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


class LocalEngine:
    name = "local"

    def default_model(self) -> str:
        return LOCAL_MODEL

    def count_tokens(self, value: str) -> int:
        return minilm.count_tokens(value) if value else 0

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        return sum(self.count_tokens(_content(m)) + _PER_MESSAGE for m in messages)

    # --- chat ------------------------------------------------------------------------------

    def _answer(self, messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        last_user = next((_content(m) for m in reversed(messages) if m.get("role") == "user"),
                         "")
        context = [s for m in messages if m.get("role") in ("system", "assistant", "tool")
                   or (m.get("role") == "user" and _content(m) != last_user)
                   for s in text.sentences(_content(m))]
        if last_user.rstrip().endswith("?") and context:
            index, score = text.nearest(last_user, context)
            return context[index], {"method": "nearest_context_sentence",
                                    "similarity": round(score, 4)}
        summary = text.extractive_summary(last_user, 2)
        answer = ("Local engine (no language model configured). Summary of your message: "
                  + " ".join(summary)) if summary else "Local engine: the message was empty."
        return answer, {"method": "extractive_summary"}

    def _json_answer(self, answer: str, last_user: str,
                     response_format: dict[str, Any]) -> str:
        schema = (response_format.get("json_schema") or {}).get("schema")
        if response_format.get("type") == "json_schema" and isinstance(schema, dict):
            return json.dumps(_fill(schema, answer))
        mood = text.sentiment(last_user)
        return json.dumps({"answer": answer, "summary": " ".join(
            text.extractive_summary(last_user, 2)), "sentiment": mood.label,
            "keywords": text.keywords(last_user)})

    def _truncate(self, content: str, max_tokens: int | None) -> tuple[str, str]:
        if max_tokens is None or self.count_tokens(content) <= max_tokens:
            return content, "stop"
        ids = minilm.model().tokenizer.encode(content, add_special_tokens=False)
        end = ids.offsets[max_tokens - 1][1] if max_tokens <= len(ids.offsets) else len(content)
        return content[:end], "length"

    def chat(self, messages: list[dict[str, Any]], *, model: str | None = None,
             temperature: float | None = None, max_tokens: int | None = None,
             tools: list[dict[str, Any]] | None = None,
             response_format: dict[str, Any] | None = None,
             stream: bool = False) -> ChatResult | Iterator[ChatDelta]:
        answer, notes = self._answer(messages)
        if response_format and response_format.get("type") in ("json_object", "json_schema"):
            last_user = next((_content(m) for m in reversed(messages)
                              if m.get("role") == "user"), "")
            answer = self._json_answer(answer, last_user, response_format)
            finish = "stop"  # a JSON answer is never cut: it would stop being JSON
        else:
            answer, finish = self._truncate(answer, max_tokens)
        if tools:
            notes["tools_ignored"] = True
        result = ChatResult(content=answer, model=LOCAL_MODEL,
                            prompt_tokens=self.prompt_tokens(messages),
                            completion_tokens=self.count_tokens(answer),
                            finish_reason=finish, notes=notes)
        return self._stream(result) if stream else result

    def _stream(self, result: ChatResult) -> Iterator[ChatDelta]:
        words = (result.content or "").split(" ")
        for i, word in enumerate(words):
            yield ChatDelta(content=word if i == 0 else " " + word, model=LOCAL_MODEL)
        yield ChatDelta(finish_reason=result.finish_reason, model=LOCAL_MODEL,
                        prompt_tokens=result.prompt_tokens,
                        completion_tokens=result.completion_tokens)

    # --- embeddings ------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> EmbedResult:
        encoded = minilm.encode(texts)
        return EmbedResult(vectors=encoded.vectors.tolist(), model=EMBEDDING_MODEL,
                           prompt_tokens=sum(encoded.token_counts))


def _fill(schema: dict[str, Any], answer: str, depth: int = 0) -> Any:
    """A value of the JSON schema's shape (bounded depth: schemas can be recursive)."""
    if depth > 5:
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {name: _fill(sub if isinstance(sub, dict) else {}, answer, depth + 1)
                for name, sub in props.items()}
    return {"string": answer, "integer": 0, "number": 0, "boolean": False,
            "array": [], "null": None}.get(kind, answer)
