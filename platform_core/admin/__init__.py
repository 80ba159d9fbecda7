"""The operator console (Django admin) of the platform core: one module per family.

Django's admin autodiscovery imports `platform_core.admin`; importing the modules below
registers their pages.
"""

from django.contrib import admin

from . import audit, identity, tenancy  # noqa: F401  (registers the pages)

admin.site.site_header = "Operator console"
admin.site.site_title = "Operator console"
admin.site.index_title = "Platform core"
