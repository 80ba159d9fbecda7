"""Router for resource viewsets: plural kebab-case routes, trailing slash optional."""

from rest_framework.routers import SimpleRouter


class ApiRouter(SimpleRouter):
    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"
