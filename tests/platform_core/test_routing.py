"""`api/v1/` is resolved by first segment (platform_core/api/routing.py): every route
must resolve exactly as Django's plain resolver over the same include list would."""

from __future__ import annotations

import re

import pytest
from django.urls import Resolver404, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from config.urls import api_v1
from platform_core.api.routing import IndexedResolver


def _sample(pattern) -> str:
    """A path a route matches: converters and named groups become `x1` (or `json`)."""
    if isinstance(pattern, RoutePattern):
        return re.sub(r"<[^>]+>", "x1", str(pattern._route))
    regex = pattern._regex
    regex = re.sub(r"\(\?P<format>[^)]*\)", "json", regex)
    regex = re.sub(r"\(\?P<\w+>(?:[^()]|\([^)]*\))*\)", "x1", regex)
    regex = regex.replace("\\.", ".").replace("/?", "/")
    return regex.strip("^$")


def _paths(resolver: URLResolver, outer: str = "") -> list[str]:
    out = []
    for child in resolver.url_patterns:
        if isinstance(child, URLResolver):
            out += _paths(child, outer + _sample(child.pattern))
        else:
            out.append(outer + _sample(child.pattern))
    return out


def _indexed() -> IndexedResolver:
    return next(p for p in get_resolver().url_patterns if isinstance(p, IndexedResolver))


def _plain_resolve(path: str):
    return URLResolver(RoutePattern("api/v1/", is_endpoint=False), api_v1).resolve(path)


def _same(path: str) -> None:
    try:
        expected = _plain_resolve(path)
    except Resolver404:
        with pytest.raises(Resolver404):
            _indexed().resolve(path)
        return
    found = _indexed().resolve(path)
    assert (found.func, found.args, found.kwargs, found.route, found.url_name) == (
        expected.func, expected.args, expected.kwargs, expected.route, expected.url_name
    ), path


def test_every_api_route_resolves_as_the_plain_resolver_does():
    paths = ["api/v1/" + p for p in _paths(_indexed())]
    assert len(paths) > 90
    resolved = 0
    for path in paths:
        _same(path)
        try:
            _plain_resolve(path)
            resolved += 1
        except Resolver404:
            pass
    assert resolved == len(paths)  # every sample really reaches its route


@pytest.mark.parametrize("path", [
    "api/v1/messages", "api/v1/messages/msg_1", "api/v1/messages/templates",
    "api/v1/messages/templates/tpl_1", "api/v1/contacts/segments", "api/v1/contacts/ct_1",
    "api/v1/api-keys.json", "api/v1/nothing-here", "api/v1/", "api/v1/messages/",
    "api/v1/sandbox/inbound", "api/v1/numbers/lookup/+14155550100",
])
def test_tricky_paths_resolve_the_same(path):
    _same(path)


def test_an_unknown_segment_answers_the_404_envelope(tenant):
    response = tenant.client().get("/api/v1/no-such-family/x")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
