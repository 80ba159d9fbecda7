"""The team-chat scenarios of `make bench` (issue 19, "Done means").

Both run in the bench organization with team-chat users of their own
(`tc-bench-<n>@bench.example.com`, role agent) signed in through session tokens minted
here (team chat acts as a user; the seed's API key has no creating user).

- `team_chat_history`: the channel-history page (GET /channels/{id}/messages, limit 50)
  of a channel holding BENCH_TEAM_CHAT_MESSAGES (100,000) messages, seeded once; requests
  alternate between the newest page and a deep page (a cursor 90% of the way down), one
  at a time against the harness's gunicorn. Reports p50/p95/p99 (p95 is the issue's
  figure).
- `team_chat_fanout`: BENCH_TEAM_CHAT_MEMBERS (200) members each hold a WebSocket on a
  daphne of this scenario (`websockets` client, one asyncio loop); BENCH_TEAM_CHAT_POSTS
  (20) messages are posted through gunicorn, one every 0.5 s, and the time from the POST
  being sent to each member's socket receiving `message.created` is recorded (p50/p99 of
  every receipt).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from contextlib import ExitStack
from types import SimpleNamespace

import httpx

from .base import BenchContext, Measurement, Scenario
from .env import scaled, server_environ
from .event_scenarios import percentile
from .procs import Daphne

HISTORY_CHANNEL = "bench-history"
FANOUT_CHANNEL = "bench-fanout"
PAGE = 50


def _org(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.seed.org_id)


def _users(org, count: int) -> list:
    """`count` bench users, members (agent) of the organization, created once."""
    from platform_core.identity.models import User
    from platform_core.tenancy.context import tenant_context
    from platform_core.tenancy.models import Membership

    with tenant_context(org):
        return _users_in(org, count, User, Membership)


def _users_in(org, count: int, User, Membership) -> list:  # noqa: N803 (classes)
    emails = [f"tc-bench-{i}@bench.example.com" for i in range(count)]
    existing = set(User.objects.filter(email__in=emails).values_list("email", flat=True))
    User.objects.bulk_create([User(email=e, name=e.split("@")[0]) for e in emails
                              if e not in existing])
    users = list(User.objects.filter(email__in=emails).order_by("email"))
    members = set(Membership.objects.for_organization(org).filter(user__in=users)
                  .values_list("user_id", flat=True))
    Membership.objects.bulk_create([Membership(organization=org, user=u, role="agent")
                                    for u in users if u.pk not in members])
    return users


def _tokens(org, users) -> list[str]:
    from platform_core.identity import credentials
    from platform_core.identity.models import UserSession
    from platform_core.tenancy.context import tenant_context

    with tenant_context(org):
        sessions = UserSession.objects.bulk_create([
            UserSession(organization=org, user=u, expires_at=credentials.session_expiry())
            for u in users])
        return [credentials.issue_session_token(s) for s in sessions]


def _channel(org, name: str, users):
    from conversations.team_chat.models import ChannelMember, TeamChannel
    from platform_core.tenancy.context import tenant_context

    with tenant_context(org):
        channel, _ = TeamChannel.objects.get_or_create(
            organization=org, name=name, defaults={"created_by_user": users[0]})
        present = set(ChannelMember.objects.filter(channel=channel)
                      .values_list("user_id", flat=True))
        ChannelMember.objects.bulk_create([
            ChannelMember(organization=org, channel=channel, user=u,
                          role="owner" if i == 0 else "member")
            for i, u in enumerate(users) if u.pk not in present])
    return channel


def _seed_messages(org, channel, sender, total: int) -> None:
    from django.db import connection, transaction

    from conversations.team_chat.models import ChatMessage
    from platform_core.ids import new_id
    from platform_core.tenancy.context import tenant_context

    with tenant_context(org):
        have = ChatMessage.objects.filter(channel=channel).count()
        if have >= total:
            return
        print(f"  seeding {total - have:,} team-chat messages (once)…", flush=True)
        for start in range(have, total, 5000):
            with transaction.atomic():
                ChatMessage.objects.bulk_create([
                    ChatMessage(id=new_id("tcm"), organization=org, channel=channel,
                                sender_user=sender,
                                body=f"history message {n} about release planning")
                    for n in range(start, min(start + 5000, total))])
        with connection.cursor() as cursor:
            cursor.execute(f'ANALYZE "{ChatMessage._meta.db_table}"')


class TeamChatHistory(Scenario):
    name = "team_chat_history"

    def __init__(self):
        self.total = scaled("BENCH_TEAM_CHAT_MESSAGES", 100_000)
        self.title = f"Team-chat history page ({PAGE} roots) at {self.total:,} messages"

    def prepare(self, ctx: BenchContext) -> None:
        from django.http import QueryDict

        from conversations.team_chat.models import ChatMessage
        from platform_core.api.pagination import encode_cursor
        from platform_core.tenancy.context import tenant_context

        org = _org(ctx)
        users = _users(org, 2)
        channel = _channel(org, HISTORY_CHANNEL, users)
        _seed_messages(org, channel, users[0], self.total)
        path = f"/api/v1/team-chat/channels/{channel.pk}/messages"
        with tenant_context(org):
            deep_id = (ChatMessage.objects.filter(channel=channel, parent__isnull=True)
                       .order_by("-id").values_list("pk", flat=True)[int(self.total * 0.9)])
        request = SimpleNamespace(path=path, query_params=QueryDict(f"limit={PAGE}"))
        ctx.values["tc_history"] = {
            "token": _tokens(org, users[:1])[0],
            "urls": [f"{path}?limit={PAGE}",
                     f"{path}?limit={PAGE}&cursor={encode_cursor(request, [deep_id])}"],
        }

    def _client(self, ctx: BenchContext) -> httpx.Client:
        token = ctx.values["tc_history"]["token"]
        return httpx.Client(base_url=ctx.base_url, timeout=30,
                            headers={"Authorization": f"Bearer {token}"})

    def check(self, ctx: BenchContext) -> None:
        with self._client(ctx) as client:
            for url in ctx.values["tc_history"]["urls"]:
                response = client.get(url)
                assert response.status_code == 200, response.text[:300]
                assert len(response.json()["data"]) == PAGE, "a short history page"

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        urls = ctx.values["tc_history"]["urls"]
        timings: list[float] = []
        errors = 0
        with self._client(ctx) as client:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                started = time.perf_counter()
                response = client.get(urls[len(timings) % 2])
                timings.append((time.perf_counter() - started) * 1000)
                errors += response.status_code != 200
        p95 = percentile(timings, 95)
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=len(timings) / seconds,
            p50_ms=percentile(timings, 50), p99_ms=percentile(timings, 99),
            requests=len(timings), errors=errors, figures={"p95_ms": p95 or 0.0},
            notes=f"p95 {p95 or 0:.2f} ms (newest and 90%-deep pages alternating, one "
                  f"client)")


class TeamChatFanout(Scenario):
    name = "team_chat_fanout"

    def __init__(self):
        self.members = scaled("BENCH_TEAM_CHAT_MEMBERS", 200)
        self.posts = scaled("BENCH_TEAM_CHAT_POSTS", 20)
        self.title = (f"Team-chat fan-out: POST -> WebSocket receipt, {self.members} members"
                      f" x {self.posts} messages")

    def prepare(self, ctx: BenchContext) -> None:
        org = _org(ctx)
        users = _users(org, self.members)
        channel = _channel(org, FANOUT_CHANNEL, users)
        ctx.values["tc_fanout"] = {"channel": channel.pk, "tokens": _tokens(org, users)}

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """Nothing: the measurement connects and warms its own sockets."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        env = server_environ()
        if not env.get("REDIS_URL"):
            raise RuntimeError("REDIS_URL is required (the team_chat channel layer)")
        with ExitStack() as stack:
            daphne = stack.enter_context(Daphne(env=env))
            result = asyncio.run(self._run(ctx, daphne.port))
        latencies, expected, failed = result
        return Measurement(
            scenario=self.name, title=self.title,
            p50_ms=percentile(latencies, 50), p99_ms=percentile(latencies, 99),
            requests=len(latencies), errors=expected - len(latencies),
            notes=(f"{len(latencies):,}/{expected:,} receipts; max "
                   f"{max(latencies, default=0):.1f} ms; mean "
                   f"{statistics.fmean(latencies) if latencies else 0:.1f} ms; "
                   f"{failed} sockets failed to open"))

    async def _run(self, ctx: BenchContext, port: int) -> tuple[list[float], int, int]:
        from websockets.asyncio.client import connect

        data = ctx.values["tc_fanout"]
        sent: dict[str, float] = {}
        latencies: list[float] = []
        sockets = []
        failed = 0
        for token in data["tokens"]:
            try:
                ws = await connect(f"ws://127.0.0.1:{port}/ws/team-chat/?token={token}",
                                   open_timeout=30, max_queue=None)
                ready = json.loads(await asyncio.wait_for(ws.recv(), 30))
                assert ready["type"] == "ready", ready
                sockets.append(ws)
            except Exception:
                failed += 1

        async def reader(ws) -> None:
            try:
                async for raw in ws:
                    event = json.loads(raw)
                    if event.get("type") == "message.created":
                        body = event["message"]["body"]
                        if body in sent:
                            latencies.append((time.monotonic() - sent[body]) * 1000)
            except Exception:  # closed at the end
                return

        readers = [asyncio.create_task(reader(ws)) for ws in sockets]
        url = f"{ctx.base_url}/api/v1/team-chat/channels/{data['channel']}/messages"
        headers = {"Authorization": f"Bearer {data['tokens'][0]}"}
        async with httpx.AsyncClient(timeout=30, headers=headers) as client:
            run = f"{time.time():.0f}"
            for i in range(3):  # warm-up, not counted
                await client.post(url, json={"body": f"warmup {run} {i}"})
            await asyncio.sleep(1.0)
            for i in range(self.posts):
                body = f"fanout {run} {i}"
                sent[body] = time.monotonic()
                response = await client.post(url, json={"body": body})
                assert response.status_code == 201, response.text[:300]
                await asyncio.sleep(0.5)
        expected = self.posts * len(sockets)
        deadline = time.monotonic() + 30
        while len(latencies) < expected and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for ws in sockets:
            await ws.close()
        for task in readers:
            task.cancel()
        return latencies, expected, failed


TEAM_CHAT_SCENARIOS: list[Scenario] = [TeamChatHistory(), TeamChatFanout()]
