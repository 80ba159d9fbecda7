"""Contacts: the searchable list and a contact's detail (fields, opt-outs, lists, timeline).

Reads and writes go through the contacts family's selectors and services, exactly as
`contacts/api/views.py` (`contact_q` is the API's `q`, `contact_create`/`contact_update`
its POST and PATCH); the tenant managers scope every query to the signed-in organization.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from contacts import selectors, services
from contacts.models import Contact, ContactList
from dashboard.paging import keyset_page
from dashboard.views.base import DashboardView
from messaging import selectors as message_selectors
from platform_core.errors import APIError

from .forms import custom_fields_patch, custom_fields_text, split_tags
from .timeline import contact_timeline

READ, WRITE = "contacts:read", "contacts:write"


def contact_or_404(contact_id: str) -> Contact:
    """Another organization's contact answers exactly like a missing one."""
    contact = Contact.objects.filter(pk=contact_id).first()
    if contact is None:
        raise APIError("NOT_FOUND", "No contact with this id.")
    return contact


class ContactListView(DashboardView):
    """GET: contacts matching `q`, newest first, keyset pages. POST: a new contact."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest) -> HttpResponse:
        q = request.GET.get("q", "").strip()
        queryset = Contact.objects.filter(
            selectors.contact_q(q, organization=self.principal.organization))
        page = keyset_page(request, queryset, ordering=("-id",))
        context = {"q": q, "page": page, "section": "contacts"}
        if request.htmx and request.htmx.target == "contacts-results":
            return render(request, "dashboard/contacts/_table.html", context)
        return render(request, "dashboard/contacts/list.html", context)

    def post(self, request: HttpRequest) -> HttpResponse:
        data = request.POST
        contact = services.contact_create(
            organization=self.principal.organization, principal=self.principal,
            request=request, first_name=data.get("first_name", ""),
            last_name=data.get("last_name", ""), phone=data.get("phone") or None,
            email=data.get("email") or None, tags=split_tags(data.get("tags", "")),
        )
        messages.success(request, f"Contact {contact} created.")
        return redirect(f"/dashboard/contacts/{contact.pk}")

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if request.method == "POST":
            messages.error(request, f"{error.message} ({error.code})")
            return redirect("/dashboard/contacts/")
        return super().handle_error(request, error)


class ContactDetailView(DashboardView):
    """GET: the contact, its opt-outs, lists and timeline. POST: edit its fields (PATCH
    semantics of the API: custom-field keys removed from the form are removed)."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest, contact_id: str) -> HttpResponse:
        contact = contact_or_404(contact_id)
        principal = self.principal
        opt_outs = []
        if principal.has_scope("messages:read"):
            opt_outs = list(message_selectors.opt_outs_for(
                organization=principal.organization, recipients=[contact.phone, contact.email]))
        member_of = list(ContactList.objects.filter(memberships__contact_id=contact.pk)
                         .order_by("name"))
        member_ids = {lst.pk for lst in member_of}
        other_lists = ([lst for lst in ContactList.objects.order_by("name")[:200]
                        if lst.pk not in member_ids] if self.can(WRITE) else [])
        return render(request, "dashboard/contacts/detail.html", {
            "contact": contact, "section": "contacts",
            "custom_text": custom_fields_text(contact.custom_fields),
            "timeline": contact_timeline(contact, principal),
            "opt_outs": opt_outs, "member_of": member_of, "other_lists": other_lists,
        })

    def post(self, request: HttpRequest, contact_id: str) -> HttpResponse:
        contact = contact_or_404(contact_id)
        data = request.POST
        changes = {name: data.get(name, "") for name in
                   ("first_name", "last_name", "phone", "email")}
        changes["tags"] = split_tags(data.get("tags", ""))
        changes["custom_fields"] = custom_fields_patch(contact.custom_fields,
                                                       data.get("custom_fields", ""))
        services.contact_update(contact=contact, principal=self.principal, request=request,
                                **changes)
        messages.success(request, "Contact saved.")
        return redirect(f"/dashboard/contacts/{contact.pk}")
