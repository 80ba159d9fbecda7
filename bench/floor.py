"""The framework's floor: a bare DRF view with no database, cache or envelope work.

Mounted at `/bench/floor` only when the server runs with `BENCH_FLOOR=1` (config/urls.py),
so the benchmark measures what Django + DRF cost by themselves in the same server, with
the same middleware, as the real endpoints.
"""

from __future__ import annotations

from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView


class FloorView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]

    def get(self, request):
        return Response({"ok": True})
