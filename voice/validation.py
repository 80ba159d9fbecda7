"""Validation of an IVR flow graph (Document 3, 4.10). Every failure is a 422
VALIDATION_ERROR whose details name the node (`node_id`) and the rule broken (`rule`):

| rule | meaning |
|---|---|
| `shape` | a node or edge is malformed (ids, types, data) |
| `start_count` | not exactly one `ivrStart` node |
| `no_terminal` | no `hangup`, `transfer`, `voicemail` or `ringGroup` node |
| `unreachable` | a node no path from `ivrStart` reaches |
| `loop_without_exit` | a node on a cycle from which no terminal node can be reached |
| `no_exit` | a non-terminal node from which no terminal node can be reached |
| `dtmf_key` | a menu option key other than `0`-`9`, `*`, `#`, or repeated |
| `menu_route` | a menu option without an edge, or a menu edge naming no option |
| `transfer_target` | a transfer/ring-group target that is not E.164 nor an extension |
| `sip_refused` | a raw `sip:` URI as a target |
| `dangling_edge` | an edge whose source or target is not a node |

Edges leave a menu through its option: `sourceHandle` (or `data.key`) is the DTMF key. A
menu edge without a key is the no-input route. `ivrStart` has one edge; `transfer` and
`ringGroup` may have one (taken when nobody answers); `hangup` and `voicemail` none.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

import phonenumbers

from platform_core.errors import APIError

NODE_TYPES = ("ivrStart", "menu", "transfer", "hangup", "voicemail", "ringGroup")
TERMINALS = frozenset({"hangup", "transfer", "voicemail", "ringGroup"})
DTMF_KEY = re.compile(r"[0-9*#]")
EXTENSION = re.compile(r"[0-9]{2,8}")
ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
MAX_NODES, MAX_EDGES, TEXT_MAX = 200, 1000, 1000


def _fail(rule: str, message: str, *, node_id: str | None = None, field: str = "definition"):
    details: dict[str, Any] = {"rule": rule, "issues": [{"field": field, "message": message}]}
    if node_id is not None:
        details["node_id"] = node_id
    return APIError("VALIDATION_ERROR", message, status=422, details=details)


def edge_key(edge: dict) -> str | None:
    key = edge.get("sourceHandle")
    if key is None and isinstance(edge.get("data"), dict):
        key = edge["data"].get("key")
    return key if isinstance(key, str) and key else None


def target_ok(raw: Any, *, node_id: str, field: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _fail("transfer_target", f"Node {node_id}: a target is required.",
                    node_id=node_id, field=field)
    text = raw.strip()
    if re.match(r"(?i)\s*sips?:", text):
        raise _fail("sip_refused", f"Node {node_id}: raw sip: URIs are not allowed; use an "
                    "E.164 number or an on-net extension.", node_id=node_id, field=field)
    if EXTENSION.fullmatch(text):
        return text
    try:
        number = phonenumbers.parse(text, None) if text.startswith("+") else None
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        raise _fail("transfer_target", f"Node {node_id}: {text[:40]!r} is neither an E.164 "
                    "number nor an extension (2-8 digits).", node_id=node_id, field=field)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _text(data: dict, name: str, *, node_id: str, field: str, required: bool) -> None:
    value = data.get(name)
    if value is None and not required:
        return
    if not isinstance(value, str) or not value.strip() or len(value) > TEXT_MAX:
        raise _fail("shape", f"Node {node_id}: data.{name} must be text of 1-{TEXT_MAX} "
                    "characters.", node_id=node_id, field=f"{field}.data.{name}")


def _shape(definition: Any) -> tuple[list[dict], list[dict]]:
    if not isinstance(definition, dict):
        raise _fail("shape", "definition must be an object with nodes and edges.")
    nodes, edges = definition.get("nodes"), definition.get("edges", [])
    if not isinstance(nodes, list) or not 1 <= len(nodes) <= MAX_NODES:
        raise _fail("shape", f"definition.nodes must hold 1-{MAX_NODES} nodes.",
                    field="definition.nodes")
    if not isinstance(edges, list) or len(edges) > MAX_EDGES:
        raise _fail("shape", f"definition.edges must be a list of at most {MAX_EDGES}.",
                    field="definition.edges")
    seen: set[str] = set()
    for i, node in enumerate(nodes):
        field = f"definition.nodes[{i}]"
        if not isinstance(node, dict) or not isinstance(node.get("id"), str) \
                or not ID.fullmatch(node["id"]):
            raise _fail("shape", f"{field}.id must be 1-64 letters, digits, _ . : -",
                        field=field)
        if node["id"] in seen:
            raise _fail("shape", f"Node id {node['id']} is repeated.", node_id=node["id"],
                        field=field)
        seen.add(node["id"])
        if node.get("type") not in NODE_TYPES:
            raise _fail("shape", f"Node {node['id']}: type must be one of "
                        f"{', '.join(NODE_TYPES)}.", node_id=node["id"], field=f"{field}.type")
        if not isinstance(node.setdefault("data", {}), dict):
            raise _fail("shape", f"Node {node['id']}: data must be an object.",
                        node_id=node["id"], field=f"{field}.data")
    edge_ids: set[str] = set()
    for i, edge in enumerate(edges):
        field = f"definition.edges[{i}]"
        if not isinstance(edge, dict) or not all(
                isinstance(edge.get(k), str) and ID.fullmatch(edge[k])
                for k in ("id", "source", "target")):
            raise _fail("shape", f"{field} needs id, source and target (1-64 characters).",
                        field=field)
        if edge["id"] in edge_ids:
            raise _fail("shape", f"Edge id {edge['id']} is repeated.", field=field)
        edge_ids.add(edge["id"])
        for end in ("source", "target"):
            if edge[end] not in seen:
                raise _fail("dangling_edge", f"Edge {edge['id']}: {end} {edge[end]} is not a "
                            "node.", node_id=edge[end], field=f"{field}.{end}")
        key = edge.get("sourceHandle")
        if key is not None and not isinstance(key, str):
            raise _fail("shape", f"Edge {edge['id']}: sourceHandle must be text.",
                        field=f"{field}.sourceHandle")
    return nodes, edges


def _node_rules(node: dict, index: int, out: list[dict]) -> None:
    node_id, kind, data = node["id"], node["type"], node["data"]
    field = f"definition.nodes[{index}]"
    if kind == "ivrStart":
        _text(data, "greeting", node_id=node_id, field=field, required=False)
        if len(out) != 1:
            raise _fail("no_exit", f"Node {node_id}: ivrStart needs exactly one outgoing edge.",
                        node_id=node_id, field=field)
    elif kind == "menu":
        _text(data, "prompt", node_id=node_id, field=field, required=True)
        options = data.get("menuOptions")
        if not isinstance(options, list) or not 1 <= len(options) <= 12:
            raise _fail("shape", f"Node {node_id}: data.menuOptions must hold 1-12 options.",
                        node_id=node_id, field=f"{field}.data.menuOptions")
        keys: list[str] = []
        for j, option in enumerate(options):
            key = option.get("key") if isinstance(option, dict) else None
            if not isinstance(key, str) or not DTMF_KEY.fullmatch(key) or key in keys:
                raise _fail("dtmf_key", f"Node {node_id}: option {j} key must be one of 0-9, "
                            "* or # and unique in the menu.", node_id=node_id,
                            field=f"{field}.data.menuOptions[{j}].key")
            label = option.get("label", "")
            if not isinstance(label, str) or len(label) > 200:
                raise _fail("shape", f"Node {node_id}: option {j} label is text up to 200.",
                            node_id=node_id, field=f"{field}.data.menuOptions[{j}].label")
            keys.append(key)
        routed = [edge_key(e) for e in out]
        for key in keys:
            if routed.count(key) != 1:
                raise _fail("menu_route", f"Node {node_id}: option {key} needs exactly one "
                            "edge (sourceHandle = the key).", node_id=node_id, field=field)
        stray = [k for k in routed if k is not None and k not in keys]
        if stray or routed.count(None) > 1:
            raise _fail("menu_route", f"Node {node_id}: an edge names no option of the menu "
                        "(or more than one no-input edge).", node_id=node_id, field=field)
    elif kind == "transfer":
        target_ok(data.get("transferTo"), node_id=node_id, field=f"{field}.data.transferTo")
    elif kind == "ringGroup":
        members = data.get("members")
        if not isinstance(members, list) or not 1 <= len(members) <= 10:
            raise _fail("transfer_target", f"Node {node_id}: data.members must hold 1-10 "
                        "targets.", node_id=node_id, field=f"{field}.data.members")
        for j, member in enumerate(members):
            target_ok(member, node_id=node_id, field=f"{field}.data.members[{j}]")
    elif kind in ("hangup", "voicemail"):
        _text(data, "prompt", node_id=node_id, field=field, required=False)
        if out:
            raise _fail("shape", f"Node {node_id}: a {kind} node ends the call and has no "
                        "outgoing edge.", node_id=node_id, field=field)
    if kind in ("transfer", "ringGroup") and len(out) > 1:
        raise _fail("shape", f"Node {node_id}: at most one no-answer edge.", node_id=node_id,
                    field=field)


def _on_cycle(start: str, successors: dict[str, list[str]]) -> bool:
    seen, queue = set(), deque(successors[start])
    while queue:
        current = queue.popleft()
        if current == start:
            return True
        if current not in seen:
            seen.add(current)
            queue.extend(successors[current])
    return False


def validate(definition: Any) -> dict:
    """The definition, checked; raises the 422 naming the first node that breaks a rule."""
    nodes, edges = _shape(definition)
    starts = [n for n in nodes if n["type"] == "ivrStart"]
    if len(starts) != 1:
        raise _fail("start_count", f"A flow has exactly one ivrStart node ({len(starts)} "
                    "found).", node_id=starts[1]["id"] if len(starts) > 1 else None)
    if not any(n["type"] in TERMINALS for n in nodes):
        raise _fail("no_terminal", "A flow needs at least one terminal node (hangup, "
                    "transfer, voicemail or ringGroup).")
    successors: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    predecessors: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    outgoing: dict[str, list[dict]] = {n["id"]: [] for n in nodes}
    for edge in edges:
        successors[edge["source"]].append(edge["target"])
        predecessors[edge["target"]].append(edge["source"])
        outgoing[edge["source"]].append(edge)
    for index, node in enumerate(nodes):
        _node_rules(node, index, outgoing[node["id"]])
    reached = {starts[0]["id"]}
    queue = deque(reached)
    while queue:
        for nxt in successors[queue.popleft()]:
            if nxt not in reached:
                reached.add(nxt)
                queue.append(nxt)
    for node in nodes:
        if node["id"] not in reached:
            raise _fail("unreachable", f"Node {node['id']} cannot be reached from ivrStart.",
                        node_id=node["id"])
    exits = {n["id"] for n in nodes if n["type"] in TERMINALS}
    queue = deque(exits)
    while queue:
        for previous in predecessors[queue.popleft()]:
            if previous not in exits:
                exits.add(previous)
                queue.append(previous)
    for node in nodes:
        if node["id"] not in exits:
            rule = "loop_without_exit" if _on_cycle(node["id"], successors) else "no_exit"
            raise _fail(rule, f"Node {node['id']}: no path from it ends the call "
                        f"({'a loop without exit' if rule == 'loop_without_exit' else 'dead end'}).",
                        node_id=node["id"])
    return {"nodes": nodes, "edges": edges}
