"""Commerce: the connected catalog and the carousel send (Document 2, 4.6 and 8)."""

from __future__ import annotations

import pytest

from messaging.models import Message
from messaging.rcs.models import RcsCatalogProduct
from platform_core.tenancy.context import tenant_context

from .conftest import error, events, ok

pytestmark = pytest.mark.django_db
USER = "+14155550123"


def _products(tenant, count: int, **extra) -> list[str]:
    with tenant_context(tenant.org):
        RcsCatalogProduct.objects.bulk_create([RcsCatalogProduct(
            organization=tenant.org, retailer_id=f"SKU-{i:02d}", name=f"Mug {i}",
            description="Ceramic", price=f"{10 + i}.00", currency="USD",
            image_url=f"https://cdn.example.com/{i}.png", **extra) for i in range(count)])
    return [f"SKU-{i:02d}" for i in range(count)]


def _load(tenant, pk: str) -> Message:
    with tenant_context(tenant.org):
        return Message.objects.get(pk=pk)


def test_empty_catalog_is_not_an_error(api):
    assert ok(api("GET", "/commerce/catalog")) == {"products": [], "count": 0}


def test_catalog_lists_products(api, tenant):
    _products(tenant, 3)
    with tenant_context(tenant.org):
        RcsCatalogProduct.objects.create(organization=tenant.org)  # only `id`
    data = ok(api("GET", "/commerce/catalog"))
    assert data["count"] == 4
    assert data["products"][0] == {
        "id": data["products"][0]["id"], "retailer_id": "SKU-00", "name": "Mug 0",
        "description": "Ceramic", "price": "10.00", "currency": "USD",
        "image_url": "https://cdn.example.com/0.png", "url": None, "availability": None}
    assert data["products"][3]["retailer_id"] is None


def test_send_catalog_queues_a_carousel(api, tenant):
    skus = _products(tenant, 3)
    response = api("POST", "/commerce/send-catalog", {
        "to": USER, "product_ids": [skus[2], skus[0]], "body": "Our mugs",
        "checkout_url": "https://shop.example/checkout", "card_width": "SMALL",
        "add_to_cart_label": "Add", "checkout_label": "Buy now"})
    data = ok(response, 202)
    assert (data["channel"], data["direction"], data["to"], data["status"]) == (
        "rcs", "outbound", USER, "queued")
    assert (data["cards"], data["truncated"]) == (2, False)
    message = _load(tenant, data["id"])
    assert message.body == "Our mugs"
    carousel = message.metadata["rcs_content"]["richCard"]["carouselCard"]
    assert carousel["cardWidth"] == "SMALL"
    first, second = carousel["cardContents"]
    assert (first["title"], second["title"]) == ("Mug 2", "Mug 0")  # the order asked for
    assert first["description"] == "Ceramic · 12.00 USD"
    assert first["media"]["contentInfo"]["fileUrl"] == "https://cdn.example.com/2.png"
    assert first["suggestions"] == [
        {"reply": {"text": "Add", "postbackData": "add_to_cart:SKU-02"}},
        {"action": {"text": "Buy now", "postbackData": "checkout:SKU-02",
                    "openUrlAction": {"url": "https://shop.example/checkout"}}}]
    # Through the pipeline: the sandbox sent and delivered it, with the message events.
    assert message.status in ("sent", "delivered")
    types = [e.type for e in events(tenant, "message.") if e.data.get("message_id") == data["id"]]
    assert types[:2] == ["message.queued", "message.sent"]


def test_whole_catalog_cut_to_ten_and_reply_checkout(api, tenant):
    _products(tenant, 12)
    data = ok(api("POST", "/commerce/send-catalog", {"to": USER}), 202)
    assert (data["cards"], data["truncated"]) == (10, True)
    message = _load(tenant, data["id"])
    cards = message.metadata["rcs_content"]["richCard"]["carouselCard"]["cardContents"]
    assert len(cards) == 10
    assert message.metadata["rcs_content"]["richCard"]["carouselCard"]["cardWidth"] == "MEDIUM"
    # Without checkout_url the checkout is a reply: the tap comes back as an inbound message.
    assert cards[0]["suggestions"][1] == {"reply": {"text": "Checkout",
                                                    "postbackData": "checkout:SKU-00"}}
    assert message.body.splitlines()[0] == "Mug 0 10.00 USD"


def test_fifty_ids_allowed_and_cut(api, tenant):
    skus = _products(tenant, 50)
    data = ok(api("POST", "/commerce/send-catalog", {"to": USER, "product_ids": skus}), 202)
    assert (data["cards"], data["truncated"]) == (10, True)


def test_fewer_than_two_products(api, tenant):
    error(api("POST", "/commerce/send-catalog", {"to": USER}), 422, "RCS_CAROUSEL_TOO_SMALL")
    skus = _products(tenant, 1)
    err = error(api("POST", "/commerce/send-catalog", {"to": USER, "product_ids": skus}), 422,
                "RCS_CAROUSEL_TOO_SMALL")
    assert err["details"]["found"] == 1
    err = error(api("POST", "/commerce/send-catalog", {"to": USER, "product_ids": skus * 2}),
                422, "RCS_CAROUSEL_TOO_SMALL")  # a repeated SKU is one card
    with tenant_context(tenant.org):
        assert not Message.objects.exists()


@pytest.mark.parametrize(("body", "field"), [
    ({"to": None}, "to"),
    ({"to": "4155550123"}, "to"),
    ({"to": "+1415555012a"}, "to"),
    ({"product_ids": [f"S{i}" for i in range(51)]}, "product_ids"),
    ({"product_ids": []}, "product_ids"),
    ({"body": "x" * 2001}, "body"),
    ({"checkout_url": "http://shop.example/c"}, "checkout_url"),
    ({"card_width": "LARGE"}, "card_width"),
    ({"add_to_cart_label": ""}, "add_to_cart_label"),
    ({"checkout_label": "x" * 26}, "checkout_label"),
    ({"product_ids": ["SKU-00", "NOPE"]}, "product_ids"),
])
def test_send_catalog_validation(api, tenant, body, field):
    _products(tenant, 3)
    err = error(api("POST", "/commerce/send-catalog", {"to": USER, **body}), 422,
                "VALIDATION_ERROR")
    assert field in str(err["details"])


def test_limits_at_the_edge(api, tenant):
    skus = _products(tenant, 2)
    ok(api("POST", "/commerce/send-catalog", {
        "to": USER, "product_ids": skus, "body": "x" * 2000, "add_to_cart_label": "a" * 25,
        "checkout_label": "b"}), 202)


def test_opted_out_recipient_is_refused(api, tenant):
    from messaging.models import OptOut

    skus = _products(tenant, 2)
    with tenant_context(tenant.org):
        OptOut.objects.create(organization=tenant.org, recipient=USER,
                              sender=OptOut.ALL_SENDERS)
    error(api("POST", "/commerce/send-catalog", {"to": USER, "product_ids": skus}), 422,
          "RECIPIENT_OPTED_OUT")
