"""Catalogs and products through Meta's commerce endpoints; our records mirror Meta's."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error

from ..gateway import gateway_for
from ..models import Catalog, Connection, Product
from .common import default_connection


def business_ids(organization) -> set[str]:
    return set(Connection.objects.for_organization(organization).exclude(business_id="")
               .values_list("business_id", flat=True))


def business_catalogs(*, organization, business_id: str) -> list[dict[str, Any]]:
    """Meta's catalogs on one of the organization's businesses (our id where we hold it)."""
    from django.http import Http404

    if business_id not in business_ids(organization):
        raise Http404
    remote = gateway_for(organization).list_catalogs(business_id)
    ours = dict(Catalog.objects.for_organization(organization)
                .filter(business_id=business_id).values_list("meta_catalog_id", "id"))
    return [{"id": ours.get(str(row.get("id"))), "meta_catalog_id": str(row.get("id")),
             "business_id": business_id, "name": row.get("name"),
             "vertical": row.get("vertical"), "product_count": row.get("product_count")}
            for row in remote]


def catalog_create(*, organization, principal, name: str, vertical: str,
                   business_id: str | None) -> Catalog:
    if business_id:
        if business_id not in business_ids(organization):
            raise validation_error("business_id", "Not a business of a connected number.")
    else:
        business_id = default_connection(organization).business_id
        if not business_id:
            raise validation_error("business_id", "The connection names no business; give "
                                                  "business_id.")
    meta_id = gateway_for(organization).create_catalog(business_id, name, vertical)
    with transaction.atomic():
        catalog = Catalog.objects.for_organization(organization).create(
            organization=organization, meta_catalog_id=meta_id, business_id=business_id,
            name=name, vertical=vertical)
        audit_record(action="whatsapp.catalog.created", organization=organization,
                     principal=principal, target=catalog)
    return catalog


def catalog_delete(*, organization, principal, catalog: Catalog) -> None:
    gateway_for(organization).delete_catalog(catalog.meta_catalog_id)
    with transaction.atomic():
        audit_record(action="whatsapp.catalog.deleted", organization=organization,
                     principal=principal, target=catalog)
        catalog.delete()


def _graph_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Our product fields as the Graph API takes them (price in minor units)."""
    return {k: v for k, v in values.items()
            if k in ("retailer_id", "name", "description", "price", "currency", "image_url",
                     "url", "availability")}


def product_create(*, organization, principal, catalog: Catalog,
                   values: dict[str, Any]) -> Product:
    if Product.objects.for_organization(organization).filter(
            catalog=catalog, retailer_id=values["retailer_id"]).exists():
        raise APIError("ALREADY_EXISTS", "This catalog already has a product with this "
                                         "retailer_id.", details={"field": "retailer_id"})
    meta_id = gateway_for(organization).create_product(catalog.meta_catalog_id,
                                                       _graph_fields(values))
    try:
        with transaction.atomic():
            product = Product.objects.for_organization(organization).create(
                organization=organization, catalog=catalog, meta_product_id=meta_id, **values)
            audit_record(action="whatsapp.product.created", organization=organization,
                         principal=principal, target=product)
    except IntegrityError as exc:
        raise APIError("ALREADY_EXISTS", "This catalog already has a product with this "
                                         "retailer_id.", details={"field": "retailer_id"}) from exc
    return product


def product_update(*, organization, principal, product: Product,
                   values: dict[str, Any]) -> Product:
    if "retailer_id" in values and values["retailer_id"] != product.retailer_id and (
            Product.objects.for_organization(organization).filter(
                catalog_id=product.catalog_id, retailer_id=values["retailer_id"]).exists()):
        raise APIError("ALREADY_EXISTS", "This catalog already has a product with this "
                                         "retailer_id.", details={"field": "retailer_id"})
    gateway_for(organization).update_product(product.meta_product_id, _graph_fields(values))
    with transaction.atomic():
        for field, value in values.items():
            setattr(product, field, value)
        product.save()
        audit_record(action="whatsapp.product.updated", organization=organization,
                     principal=principal, target=product, metadata={"fields": sorted(values)})
    return product


def product_delete(*, organization, principal, product: Product) -> None:
    gateway_for(organization).delete_product(product.meta_product_id)
    with transaction.atomic():
        audit_record(action="whatsapp.product.deleted", organization=organization,
                     principal=principal, target=product)
        product.delete()
