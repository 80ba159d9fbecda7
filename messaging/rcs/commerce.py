"""RCS commerce: the carousel of catalog products (`commerce/send-catalog`).

The send goes through the messaging pipeline (`message_send`: opt-outs, provider choice,
503 PROVIDER_NOT_WIRED in live mode, the queued message and its events); the carousel
travels as the message's RCS content (`rich_content`, `metadata.rcs_content`), which the
live RCS adapter sends as Google's `richCard.carouselCard`. The message `body` is the text
of the send (what an SMS fallback carries): the given `body`, else one line per card.

Each card: title = product name, description = description and price, media = image,
suggestions = "add to cart" (a reply, postback `add_to_cart:<sku>`) and "checkout" (an
open-url action to `checkout_url` when given, else a reply, postback `checkout:<sku>`).
Taps arrive as inbound RCS messages (the reply's text) through the inbound pipeline.
"""

from __future__ import annotations

from typing import Any

from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from .models import RcsCatalogProduct

MIN_CARDS = 2
MAX_CARDS = 10
DEFAULT_ADD_TO_CART = "Add to cart"
DEFAULT_CHECKOUT = "Checkout"


def _products(organization, product_ids: list[str] | None) -> list[RcsCatalogProduct]:
    products = RcsCatalogProduct.objects.for_organization(organization)
    if product_ids is None:
        return list(products.order_by("id")[:MAX_CARDS + 1])  # one more: was it cut?
    wanted = list(dict.fromkeys(product_ids))
    by_sku: dict[str, RcsCatalogProduct] = {}
    for product in products.filter(retailer_id__in=wanted).order_by("id"):
        by_sku.setdefault(product.retailer_id, product)
    unknown = [sku for sku in wanted if sku not in by_sku]
    if unknown:
        raise validation_error("product_ids",
                               f"Not in the connected catalog: {', '.join(unknown[:20])}.")
    return [by_sku[sku] for sku in wanted]


def _card(product: RcsCatalogProduct, *, add_label: str, checkout_label: str,
          checkout_url: str | None) -> dict[str, Any]:
    sku = product.retailer_id or product.pk
    content: dict[str, Any] = {"title": (product.name or sku)[:200]}
    price = " ".join(p for p in (product.price, product.currency) if p)
    description = " · ".join(p for p in (product.description, price) if p)
    if description:
        content["description"] = description[:2000]
    if product.image_url:
        content["media"] = {"height": "MEDIUM", "contentInfo": {"fileUrl": product.image_url,
                                                                "forceRefresh": False}}
    checkout: dict[str, Any]
    if checkout_url:
        checkout = {"action": {"text": checkout_label, "postbackData": f"checkout:{sku}",
                               "openUrlAction": {"url": checkout_url}}}
    else:
        checkout = {"reply": {"text": checkout_label, "postbackData": f"checkout:{sku}"}}
    content["suggestions"] = [
        {"reply": {"text": add_label, "postbackData": f"add_to_cart:{sku}"}}, checkout]
    return content


def send_catalog(*, organization, principal: Principal | None, to: str,
                 product_ids: list[str] | None = None, body: str | None = None,
                 checkout_url: str | None = None, card_width: str = "MEDIUM",
                 add_to_cart_label: str | None = None, checkout_label: str | None = None):
    """Queue the carousel; answers (message, cards sent, whether the list was cut)."""
    from messaging.sending.accept import message_send

    products = _products(organization, product_ids)
    if len(products) < MIN_CARDS:
        raise APIError("RCS_CAROUSEL_TOO_SMALL", details={
            "found": len(products), "minimum": MIN_CARDS,
            "issues": [{"field": "product_ids", "message": "A carousel needs at least 2 "
                        "products."}]})
    truncated = len(products) > MAX_CARDS
    products = products[:MAX_CARDS]
    add_label = add_to_cart_label or DEFAULT_ADD_TO_CART
    check_label = checkout_label or DEFAULT_CHECKOUT
    cards = [_card(p, add_label=add_label, checkout_label=check_label,
                   checkout_url=checkout_url) for p in products]
    text = body or "\n".join(
        " ".join(x for x in (p.name or p.retailer_id or p.pk, p.price, p.currency) if x)
        for p in products)[:2000]
    content = {"richCard": {"carouselCard": {"cardWidth": card_width,
                                             "cardContents": cards}}}
    message = message_send(organization=organization, channel="rcs", to=to, body=text,
                           rich_content=content, principal=principal)
    return message, len(cards), truncated
