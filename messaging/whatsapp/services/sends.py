"""The richer WhatsApp messages, all through the messaging pipeline (`message_send`):
reply buttons and list menus, single products and product lists, flows, and marketing
templates. The Cloud API content travels in the message's `metadata["whatsapp"]`:

    {"interactive": {...}}              sent as `type: interactive` (adapters/whatsapp.py)
    {"endpoint": "marketing_messages"}  the Marketing Messages API endpoint

Session messages (interactive, products, flows) need the customer-service window: the
user wrote in the last 24 hours (else 422 WHATSAPP_OUTSIDE_WINDOW); a blocked user is
refused (422 WHATSAPP_USER_BLOCKED).
"""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.db.models import Q

from messaging.models import Message
from messaging.services import message_send
from platform_core.errors import APIError, validation_error

from .. import interactive as ix
from ..models import Catalog, Flow, FlowSend, FlowStatus, Product
from . import recipients


def _send(*, organization, principal, to: str, body: str, whatsapp: dict[str, Any],
          extra_metadata: dict[str, Any] | None = None, template: dict | None = None,
          contact_id: str | None = None) -> Message:
    with transaction.atomic():
        message = message_send(organization=organization, channel="whatsapp", to=to,
                               body=body if not template else None,
                               contact_id=contact_id, principal=principal, **(template or {}))
        metadata = {**(message.metadata or {}), "whatsapp": whatsapp, **(extra_metadata or {})}
        Message.objects.for_organization(organization).filter(pk=message.pk).update(
            metadata=metadata)
        message.metadata = metadata
    return message


def _session_target(organization, to: Any) -> tuple[str, str | None]:
    phone, contact_id = recipients.resolve(organization, to)
    recipients.refuse_blocked(organization, phone)
    recipients.require_window(organization, phone)
    return phone, contact_id


def send_interactive(*, organization, principal, to: Any, body: Any, action: Any,
                     header: Any = None, footer: Any = None) -> Message:
    kind, cloud_action = ix.reply_action(action)
    content = {"type": kind, **ix.envelope(body, header, footer), "action": cloud_action}
    phone, contact_id = _session_target(organization, to)
    return _send(organization=organization, principal=principal, to=phone, body=body,
                 contact_id=contact_id, whatsapp={"interactive": content})


def catalog_for(organization, value: Any, *, field: str = "catalog_id") -> Catalog:
    if not isinstance(value, str) or not value.strip():
        raise validation_error(field, f"{field} is required.")
    catalog = (Catalog.objects.for_organization(organization)
               .filter(Q(pk=value[:40]) | Q(meta_catalog_id=value[:64])).first())
    if catalog is None:
        raise validation_error(field, "No catalog of this organization has this id.")
    return catalog


def _known_skus(catalog: Catalog, skus: list[str]) -> set[str]:
    return set(Product.objects.for_organization(catalog.organization)
               .filter(catalog=catalog, retailer_id__in=skus)
               .values_list("retailer_id", flat=True))


def send_product(*, organization, principal, to: Any, catalog_id: Any,
                 product_retailer_id: Any, body: Any = None, footer: Any = None) -> Message:
    catalog = catalog_for(organization, catalog_id)
    sku = ix.text(product_retailer_id, "product_retailer_id", 100)
    if sku not in _known_skus(catalog, [sku]):
        raise validation_error("product_retailer_id", "The catalog has no product with this "
                                                      "retailer_id.")
    content = {"type": "product", **ix.envelope(body, None, footer, body_required=False),
                "action": {"catalog_id": catalog.meta_catalog_id,
                           "product_retailer_id": sku}}
    phone, contact_id = _session_target(organization, to)
    return _send(organization=organization, principal=principal, to=phone,
                 body=body or f"Product {sku}", contact_id=contact_id,
                 whatsapp={"interactive": content})


def send_product_list(*, organization, principal, to: Any, catalog_id: Any, header: Any,
                      body: Any, sections: Any, footer: Any = None) -> Message:
    catalog = catalog_for(organization, catalog_id)
    envelope = ix.envelope(body, header, footer)
    if "header" not in envelope:
        raise ix.invalid("header", "A product list needs a header.")
    if not isinstance(sections, list) or not sections:
        raise ix.invalid("sections", "sections is a non-empty list.")
    if len(sections) > ix.MAX_SECTIONS:
        raise ix.invalid("sections", f"At most {ix.MAX_SECTIONS} sections.")
    clean, skus = [], []
    for i, section in enumerate(sections):
        path = f"sections[{i}]"
        if not isinstance(section, dict):
            raise ix.invalid(path, 'A section is {"title", "product_items"}.')
        title = ix.text(section.get("title"), f"{path}.title", ix.SECTION_TITLE_MAX)
        items = section.get("product_items")
        if not isinstance(items, list) or not items:
            raise ix.invalid(f"{path}.product_items", "product_items is a non-empty list.")
        rows = []
        for j, item in enumerate(items):
            ipath = f"{path}.product_items[{j}].product_retailer_id"
            sku = ix.text(item.get("product_retailer_id") if isinstance(item, dict) else None,
                          ipath, 100)
            skus.append((ipath, sku))
            rows.append({"product_retailer_id": sku})
        clean.append({"title": title, "product_items": rows})
    if len(skus) > ix.MAX_LIST_PRODUCTS:
        raise ix.invalid("sections", f"At most {ix.MAX_LIST_PRODUCTS} products in a list.")
    known = _known_skus(catalog, [s for _, s in skus])
    for path, sku in skus:
        if sku not in known:
            raise ix.invalid(path, "The catalog has no product with this retailer_id.")
    content = {"type": "product_list", **envelope,
               "action": {"catalog_id": catalog.meta_catalog_id, "sections": clean}}
    phone, contact_id = _session_target(organization, to)
    return _send(organization=organization, principal=principal, to=phone, body=body,
                 contact_id=contact_id, whatsapp={"interactive": content})


def send_flow(*, organization, principal, to: Any, flow: Flow, flow_cta: Any, body: Any,
              header: Any = None, footer: Any = None, flow_token: Any = None,
              flow_action: Any = None, screen: Any = None, data: Any = None
              ) -> tuple[Message, str]:
    if flow.status != FlowStatus.PUBLISHED:
        raise APIError("WHATSAPP_FLOW_NOT_PUBLISHED", details={"flow_id": flow.pk,
                                                               "status": flow.status})
    cta = ix.text(flow_cta, "flow_cta", 30)
    envelope = ix.envelope(body, header, footer)
    token = ix.text(flow_token, "flow_token", 200, required=False) or (
        "ft_" + secrets.token_urlsafe(18))
    action_kind = flow_action or "navigate"
    if action_kind not in ("navigate", "data_exchange"):
        raise ix.invalid("flow_action", "flow_action is navigate or data_exchange.")
    screens = [s.get("id") for s in (flow.definition or {}).get("screens") or []]
    parameters: dict[str, Any] = {"flow_message_version": "3", "flow_token": token,
                                  "flow_id": flow.meta_flow_id, "flow_cta": cta,
                                  "flow_action": action_kind}
    if action_kind == "navigate":
        first = screen or (screens[0] if screens else None)
        if first not in screens:
            raise ix.invalid("screen", "screen names one of the flow's screens.")
        payload: dict[str, Any] = {"screen": first}
        if data is not None:
            if not isinstance(data, dict) or not data:
                raise ix.invalid("data", "data is a non-empty object.")
            payload["data"] = data
        parameters["flow_action_payload"] = payload
    if FlowSend.objects.for_organization(organization).filter(flow_token=token).exists():
        raise validation_error("flow_token", "This flow_token was already used.")
    content = {"type": "flow", **envelope,
               "action": {"name": "flow", "parameters": parameters}}
    phone, contact_id = _session_target(organization, to)
    with transaction.atomic():
        message = _send(organization=organization, principal=principal, to=phone, body=body,
                        contact_id=contact_id, whatsapp={"interactive": content},
                        extra_metadata={"flow_token": token, "flow_id": flow.pk})
        FlowSend.objects.for_organization(organization).create(
            organization=organization, flow=flow, flow_token=token, message_id=message.pk,
            to=phone)
    return message, token


def send_marketing(*, organization, principal, to: Any, template_name: Any, language: Any,
                   variables: Any, tracking_id: Any) -> Message:
    from templates.models import MessageTemplate

    name = ix.text(template_name, "template_name", 512)
    tracking = ix.text(tracking_id, "tracking_id", 512, required=False)
    templates = MessageTemplate.objects.for_organization(organization).filter(
        channel="whatsapp", name=name)
    if language:
        templates = templates.filter(language=language)
    template = templates.order_by("language").first()
    if template is not None and str(template.category).lower() != "marketing":
        raise APIError("WHATSAPP_TEMPLATE_NOT_MARKETING",
                       details={"template_name": name, "category": template.category})
    phone, contact_id = recipients.resolve(organization, to)
    recipients.refuse_blocked(organization, phone)
    whatsapp: dict[str, Any] = {"endpoint": "marketing_messages"}
    if tracking:
        whatsapp["biz_opaque_callback_data"] = tracking
    # A missing template, an unapproved one or wrong variables: message_send's
    # 422 INVALID_TEMPLATE (templates family).
    return _send(organization=organization, principal=principal, to=phone, body="",
                 contact_id=contact_id, whatsapp=whatsapp,
                 extra_metadata={"tracking_id": tracking} if tracking else None,
                 template={"template_name": name, "language": language or None,
                           "variables": variables if isinstance(variables, dict | list)
                           else None})
