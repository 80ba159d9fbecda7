"""ASGI entry point: `daphne config.asgi:application`.

In production the reverse proxy sends only the SSE stream and WebSockets here; in
development and tests daphne serves everything (other HTTP falls through to Django).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402

from platform_core.realtime.routing import http_routes, websocket_routes  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": URLRouter([*http_routes(), re_path(r"", django_asgi_app)]),
        "websocket": URLRouter(websocket_routes()),
    }
)
