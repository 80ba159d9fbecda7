"""Catalogs and products, and the product / product-list messages through the pipeline."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from .conftest import BUSINESS, USER, code, data, inbound, messages

pytestmark = pytest.mark.django_db

PRODUCT = {"retailer_id": "SKU-1", "name": "Road bike", "description": "Fast",
           "price": 129900, "currency": "USD", "image_url": "https://cdn.example.com/b.png",
           "url": "https://shop.example.com/b", "availability": "in stock"}


def _catalog(wa, name: str = "Bikes") -> dict:
    response = wa.client().post("/api/v1/whatsapp/catalogs", {"name": name}, format="json")
    assert response.status_code == 201, response.content
    return data(response)


def _product(wa, catalog_id: str, **fields) -> dict:
    response = wa.client().post(f"/api/v1/whatsapp/catalogs/{catalog_id}/products",
                                {**PRODUCT, **fields}, format="json")
    assert response.status_code == 201, response.content
    return data(response)


def test_catalog_crud_and_business_listing(wa):
    client = wa.client()
    catalog = _catalog(wa)
    assert catalog["business_id"] == BUSINESS
    assert catalog["meta_catalog_id"].isdigit()
    assert catalog["product_count"] == 0
    _product(wa, catalog["id"])
    listed = data(client.get("/api/v1/whatsapp/catalogs"))
    assert [(c["id"], c["product_count"]) for c in listed] == [(catalog["id"], 1)]
    business = data(client.get(f"/api/v1/whatsapp/businesses/{BUSINESS}/catalogs"))
    assert business == [{"id": catalog["id"], "meta_catalog_id": catalog["meta_catalog_id"],
                         "business_id": BUSINESS, "name": "Bikes", "vertical": "commerce",
                         "product_count": 1}]
    assert client.get("/api/v1/whatsapp/businesses/123/catalogs").status_code == 404
    assert client.delete(f"/api/v1/whatsapp/catalogs/{catalog['id']}").status_code == 204
    assert data(client.get("/api/v1/whatsapp/catalogs")) == []
    assert client.delete(f"/api/v1/whatsapp/catalogs/{catalog['id']}").status_code == 404


def test_catalog_validation(wa, tenant_factory):
    client = wa.client()
    assert client.post("/api/v1/whatsapp/catalogs", {}, format="json").status_code == 422
    foreign = client.post("/api/v1/whatsapp/catalogs", {"name": "x", "business_id": "555"},
                          format="json")
    assert foreign.status_code == 422
    assert foreign.json()["error"]["details"]["issues"][0]["field"] == "business_id"
    lonely = tenant_factory()
    response = lonely.client().post("/api/v1/whatsapp/catalogs", {"name": "x"}, format="json")
    assert response.status_code == 409
    assert code(response) == "WHATSAPP_NOT_CONNECTED"


def test_products_crud(wa):
    client = wa.client()
    catalog = _catalog(wa)
    product = _product(wa, catalog["id"])
    assert product["catalog_id"] == catalog["id"]
    assert product["meta_product_id"].isdigit()
    assert (product["price"], product["currency"]) == (129900, "USD")
    duplicate = client.post(f"/api/v1/whatsapp/catalogs/{catalog['id']}/products", PRODUCT,
                            format="json")
    assert duplicate.status_code == 409
    assert code(duplicate) == "ALREADY_EXISTS"
    updated = client.put(f"/api/v1/whatsapp/products/{product['id']}",
                         {**PRODUCT, "price": 99900, "availability": "out of stock"},
                         format="json")
    assert updated.status_code == 200
    assert (data(updated)["price"], data(updated)["availability"]) == (99900, "out of stock")
    bad = client.put(f"/api/v1/whatsapp/products/{product['id']}",
                     {**PRODUCT, "currency": "usd", "price": -1}, format="json")
    assert bad.status_code == 422
    fields = {i["field"] for i in bad.json()["error"]["details"]["issues"]}
    assert fields == {"currency", "price"}
    listed = client.get(f"/api/v1/whatsapp/catalogs/{catalog['id']}/products")
    assert [p["retailer_id"] for p in data(listed)] == ["SKU-1"]
    assert client.delete(f"/api/v1/whatsapp/products/{product['id']}").status_code == 204
    assert client.delete(f"/api/v1/whatsapp/products/{product['id']}").status_code == 404
    assert client.get("/api/v1/whatsapp/catalogs/wct_nope/products").status_code == 404


def test_product_list_is_paginated_in_constant_queries(wa):
    catalog = _catalog(wa)
    for i in range(3):
        _product(wa, catalog["id"], retailer_id=f"SKU-{i}")
    client = wa.client()
    with CaptureQueriesContext(connection) as few:
        client.get(f"/api/v1/whatsapp/catalogs/{catalog['id']}/products?limit=2")
    for i in range(3, 9):
        _product(wa, catalog["id"], retailer_id=f"SKU-{i}")
    with CaptureQueriesContext(connection) as many:
        page = client.get(f"/api/v1/whatsapp/catalogs/{catalog['id']}/products?limit=5")
    assert len(many) == len(few)
    body = page.json()
    assert len(body["data"]) == 5
    cursor = body["meta"]["pagination"]["cursor"]
    rest = client.get(f"/api/v1/whatsapp/catalogs/{catalog['id']}/products?limit=5&cursor={cursor}")
    assert len(data(rest)) == 4


def test_send_single_product_through_the_pipeline(wa):
    catalog = _catalog(wa)
    _product(wa, catalog["id"])
    client = wa.client()
    body = {"to": USER, "catalog_id": catalog["id"], "product_retailer_id": "SKU-1",
            "body": "Our best seller"}
    closed = client.post("/api/v1/whatsapp/catalog/send", body, format="json")
    assert closed.status_code == 422
    assert code(closed) == "WHATSAPP_OUTSIDE_WINDOW"
    assert inbound(wa).status_code == 201
    response = client.post("/api/v1/whatsapp/catalog/send", body, format="json")
    assert response.status_code == 202, response.content
    sent = data(response)
    (message,) = messages(wa, pk=sent["message_id"])
    assert (message.channel, message.to, message.direction) == ("whatsapp", USER, "outbound")
    assert message.metadata["whatsapp"]["interactive"] == {
        "type": "product", "body": {"text": "Our best seller"},
        "action": {"catalog_id": catalog["meta_catalog_id"], "product_retailer_id": "SKU-1"}}
    unknown = client.post("/api/v1/whatsapp/catalog/send",
                          {**body, "product_retailer_id": "NOPE"}, format="json")
    assert unknown.status_code == 422
    assert unknown.json()["error"]["details"]["issues"][0]["field"] == "product_retailer_id"
    # Meta's catalog id works as well as ours.
    meta = client.post("/api/v1/whatsapp/catalog/send",
                       {**body, "catalog_id": catalog["meta_catalog_id"]}, format="json")
    assert meta.status_code == 202


def test_send_product_list_sections_and_limits(wa):
    catalog = _catalog(wa)
    for i in range(31):
        _product(wa, catalog["id"], retailer_id=f"SKU-{i}")
    inbound(wa)
    client = wa.client()
    body = {"to": USER, "catalog_id": catalog["id"], "header": "Bikes", "body": "Pick one",
            "sections": [{"title": "Road", "product_items": [{"product_retailer_id": "SKU-1"},
                                                             {"product_retailer_id": "SKU-2"}]},
                         {"title": "Gravel", "product_items": [
                             {"product_retailer_id": "SKU-3"}]}]}
    response = client.post("/api/v1/whatsapp/catalog/send-list", body, format="json")
    assert response.status_code == 202, response.content
    (message,) = messages(wa, pk=data(response)["message_id"])
    sent = message.metadata["whatsapp"]["interactive"]
    assert sent["type"] == "product_list"
    assert sent["header"] == {"type": "text", "text": "Bikes"}
    assert [s["title"] for s in sent["action"]["sections"]] == ["Road", "Gravel"]

    def refused(changes: dict) -> str:
        answer = client.post("/api/v1/whatsapp/catalog/send-list", {**body, **changes},
                             format="json")
        assert answer.status_code == 422, answer.content
        return answer.json()["error"]["details"]["issues"][0]["field"]

    eleven = [{"title": f"S{i}", "product_items": [{"product_retailer_id": "SKU-1"}]}
              for i in range(11)]
    assert refused({"sections": eleven}) == "sections"
    thirty_one = [{"title": "All", "product_items": [{"product_retailer_id": f"SKU-{i}"}
                                                      for i in range(31)]}]
    assert refused({"sections": thirty_one}) == "sections"
    assert refused({"sections": [{"title": "x" * 25, "product_items": [
        {"product_retailer_id": "SKU-1"}]}]}) == "sections[0].title"
    assert refused({"sections": [{"title": "A", "product_items": [
        {"product_retailer_id": "NOPE"}]}]}) == "sections[0].product_items[0].product_retailer_id"
    assert refused({"sections": [{"title": "A", "product_items": []}]}) == \
        "sections[0].product_items"
