"""A published flow as TwiML, one step at a time (Twilio's call-control markup).

The provider asks for the call's first step (an inbound call on a bound number), then
posts back to the `action` of each `<Gather>` with the caller's `Digits`. Every URL carries
the flow, the version and the node, so a call keeps walking the version it started on
even when a newer one is published meanwhile.

| node | TwiML |
|---|---|
| `ivrStart` | `<Say>greeting</Say>`, then its next node inline |
| `menu` | `<Gather numDigits="1" action="...&node=<menu>">` with `<Say>prompt</Say>`; no input: the no-input edge, else the menu again (3 times, then goodbye) |
| `transfer` | `<Dial>` of the E.164 number (`<Number>`) or extension (`<Client>`); with a no-answer edge, `action` continues there |
| `ringGroup` | one `<Dial>` ringing every member at once |
| `voicemail` | `<Say>prompt</Say><Record>`; the recording is registered (kind `call`) |
| `hangup` | optional `<Say>prompt</Say>`, `<Hangup/>` |
"""

from __future__ import annotations

from urllib.parse import urlencode
from xml.sax.saxutils import escape, quoteattr

from .validation import EXTENSION, edge_key

MAX_ATTEMPTS = 3
DEFAULT_PROMPT = "Please leave a message after the tone."


def document(body: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><Response>{body}</Response>'


def out_of_service() -> str:
    return document("<Say>This number is not in service.</Say><Hangup/>")


class Walk:
    def __init__(self, *, definition: dict, base_url: str, flow_id: str, version: int) -> None:
        self.nodes = {n["id"]: n for n in definition["nodes"]}
        self.edges = definition.get("edges", [])
        self.base_url = base_url
        self.flow_id = flow_id
        self.version = version

    def url(self, **params) -> str:
        query = urlencode({"flow": self.flow_id, "version": self.version, **params})
        return f"{self.base_url}?{query}"

    def _out(self, node_id: str) -> list[dict]:
        return [e for e in self.edges if e["source"] == node_id]

    def start(self) -> str:
        start = next(n for n in self.nodes.values() if n["type"] == "ivrStart")
        return document(self.render(start["id"]))

    def render(self, node_id: str, *, attempt: int = 1, depth: int = 0) -> str:
        node = self.nodes[node_id]
        kind, data = node["type"], node.get("data", {})
        out = self._out(node_id)
        if depth > len(self.nodes):  # a validated flow never gets here
            return "<Hangup/>"
        if kind == "ivrStart":
            greeting = data.get("greeting")
            said = f"<Say>{escape(greeting)}</Say>" if greeting else ""
            return said + self.render(out[0]["target"], depth=depth + 1)
        if kind == "menu":
            gather = (f'<Gather input="dtmf" numDigits="1" timeout="5" method="POST" '
                      f'action={quoteattr(self.url(node=node_id, attempt=attempt))}>'
                      f"<Say>{escape(data['prompt'])}</Say></Gather>")
            fallback = next((e for e in out if edge_key(e) is None), None)
            if fallback is not None:
                return gather + f"<Redirect method=\"POST\">{escape(self.url(node=fallback['target']))}</Redirect>"
            if attempt >= MAX_ATTEMPTS:
                return gather + "<Say>Goodbye.</Say><Hangup/>"
            return gather + (f'<Redirect method="POST">'
                             f"{escape(self.url(node=node_id, attempt=attempt + 1, replay=1))}"
                             "</Redirect>")
        if kind in ("transfer", "ringGroup"):
            targets = [data["transferTo"]] if kind == "transfer" else list(data["members"])
            nouns = "".join(f"<Client>{escape(t)}</Client>" if EXTENSION.fullmatch(t.strip())
                            else f"<Number>{escape(t.strip())}</Number>" for t in targets)
            action = f" action={quoteattr(self.url(node=out[0]['target'], after='dial'))}" \
                if out else ""
            return f'<Dial method="POST"{action}>{nouns}</Dial>'
        if kind == "voicemail":
            prompt = data.get("prompt") or DEFAULT_PROMPT
            return (f"<Say>{escape(prompt)}</Say><Record maxLength=\"120\" playBeep=\"true\" "
                    f"method=\"POST\" action={quoteattr(self.url(event='recorded'))} "
                    f"recordingStatusCallback={quoteattr(self.url(event='recording'))}/>"
                    "<Hangup/>")
        prompt = data.get("prompt")
        return (f"<Say>{escape(prompt)}</Say>" if prompt else "") + "<Hangup/>"

    def step(self, node_id: str, *, digits: str | None, attempt: int, after: str | None) -> str:
        """The answer to a callback at `node_id`: a menu's choice, or the next node."""
        node = self.nodes.get(node_id)
        if node is None:
            return document("<Say>Sorry, something went wrong.</Say><Hangup/>")
        if after == "dial" or node["type"] != "menu":
            return document(self.render(node_id))
        if digits is None:  # a replay of the menu (no input yet)
            return document(self.render(node_id, attempt=attempt))
        chosen = next((e for e in self._out(node_id) if edge_key(e) == digits), None)
        if chosen is None:
            if attempt >= MAX_ATTEMPTS:
                return document("<Say>Sorry, that is not a valid choice. Goodbye.</Say>"
                                "<Hangup/>")
            return document("<Say>Sorry, that is not a valid choice.</Say>" +
                            self.render(node_id, attempt=attempt + 1))
        return document(self.render(chosen["target"]))
