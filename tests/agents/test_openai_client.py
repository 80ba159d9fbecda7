"""The official `openai` Python client, unmodified, against /api/v1/ai over real HTTP
(Django's live server): completions, streaming, async, embeddings and the error shape."""

from __future__ import annotations

import asyncio

import numpy as np
import openai
import pytest

from agents.usage.models import AIUsage
from tests.conftest import make_tenant

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client_and_tenant(live_server):
    tenant = make_tenant()
    client = openai.OpenAI(base_url=f"{live_server.url}/api/v1/ai", api_key=tenant.raw_key,
                           max_retries=0, timeout=60)
    return client, tenant


def test_chat_completion(client_and_tenant):
    client, tenant = client_and_tenant
    completion = client.chat.completions.create(
        model="anything", messages=[
            {"role": "system", "content": "Refunds take five business days. We ship worldwide."},
            {"role": "user", "content": "How long do refunds take?"}])
    assert completion.object == "chat.completion"
    assert completion.model == "local"
    assert completion.choices[0].message.content == "Refunds take five business days."
    assert completion.usage.total_tokens == (completion.usage.prompt_tokens
                                             + completion.usage.completion_tokens)
    row = AIUsage.objects.for_organization(tenant.org).get()
    assert row.prompt_tokens == completion.usage.prompt_tokens


def test_chat_completion_stream(client_and_tenant):
    client, tenant = client_and_tenant
    stream = client.chat.completions.create(
        model="local", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Summarise: the parcel left the warehouse."}])
    pieces, usage, finish = [], None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    text = "".join(pieces)
    assert text.startswith("Local engine")
    assert "parcel left the warehouse" in text
    assert finish == "stop"
    assert usage is not None
    assert usage.completion_tokens > 0
    assert AIUsage.objects.for_organization(tenant.org).get().completion_tokens == (
        usage.completion_tokens)


def test_async_client(live_server):
    tenant = make_tenant()

    async def run():
        client = openai.AsyncOpenAI(base_url=f"{live_server.url}/api/v1/ai",
                                    api_key=tenant.raw_key, max_retries=0)
        completion = await client.chat.completions.create(
            model="local", messages=[{"role": "user", "content": "Hello there."}])
        stream = await client.chat.completions.create(
            model="local", stream=True, messages=[{"role": "user", "content": "Hi again."}])
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        await client.close()
        return completion, text

    completion, text = asyncio.run(run())
    assert completion.choices[0].message.content.startswith("Local engine")
    assert text.startswith("Local engine")


def test_embeddings(client_and_tenant):
    client, tenant = client_and_tenant
    result = client.embeddings.create(model="all-MiniLM-L6-v2", input=[
        "How do I reset my password?", "I forgot my password and need a new one",
        "The weather is sunny today"])
    assert result.object == "list"
    assert result.model == "all-MiniLM-L6-v2"
    vectors = np.array([d.embedding for d in result.data])
    assert [d.index for d in result.data] == [0, 1, 2]
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > 0.6 > 0.2 > vectors[0] @ vectors[2]
    assert result.usage.prompt_tokens == AIUsage.objects.for_organization(
        tenant.org).get().prompt_tokens
    single = client.embeddings.create(model="x", input="How do I reset my password?")
    assert np.allclose(single.data[0].embedding, vectors[0], atol=1e-5)


def test_error_shape(client_and_tenant):
    client, _ = client_and_tenant
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="local", messages=[], temperature=3)
    assert caught.value.status_code == 400
    body = caught.value.body
    assert body["code"] == "VALIDATION_ERROR"  # the client unwraps `error`
    bad = openai.OpenAI(base_url=client.base_url, api_key="svc_test_sk_nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.embeddings.create(model="x", input="hello")
