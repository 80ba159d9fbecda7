"""Static contact lists: the lists, one list's members, add and remove members.

The same services and querysets as `ContactListViewSet` and `ListMemberViewSet`: members
in the API's keyset order (`MemberPagination.ordering`), `list_member_add` by identifier
(id, phone or email), `list_member_remove`.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from contacts import selectors, services
from contacts.api.views import MemberPagination
from contacts.models import ContactList, ListMembership
from dashboard.paging import keyset_page
from dashboard.views.base import DashboardView, safe_next
from platform_core.errors import APIError

READ, WRITE = "contacts:read", "contacts:write"


def list_or_404(list_id: str) -> ContactList:
    contact_list = ContactList.objects.filter(pk=list_id).first()
    if contact_list is None:
        raise APIError("NOT_FOUND", "No list with this id.")
    return contact_list


class ListsView(DashboardView):
    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest) -> HttpResponse:
        page = keyset_page(request, ContactList.objects.all(), ordering=("-id",))
        return render(request, "dashboard/contacts/lists.html",
                      {"page": page, "section": "lists"})

    def post(self, request: HttpRequest) -> HttpResponse:
        name = request.POST.get("name", "").strip()
        if not name:
            raise APIError("VALIDATION_ERROR", "A list needs a name.", status=422)
        contact_list = services.list_create(
            organization=self.principal.organization, principal=self.principal,
            request=request, name=name[:255],
            description=request.POST.get("description", "").strip()[:1000] or None)
        messages.success(request, f"List {contact_list.name} created.")
        return redirect(f"/dashboard/contacts/lists/{contact_list.pk}")


class ListDetailView(DashboardView):
    """GET: members (searchable, keyset pages). POST: add a member by identifier; `next`
    sends the browser back (the contact page adds through here too)."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest, list_id: str) -> HttpResponse:
        contact_list = list_or_404(list_id)
        q = request.GET.get("q", "").strip()
        members = ListMembership.objects.filter(contact_list_id=contact_list.pk).filter(
            selectors.contact_q(q, organization=self.principal.organization,
                                prefix="contact__")).select_related("contact")
        page = keyset_page(request, members, ordering=MemberPagination.ordering)
        return render(request, "dashboard/contacts/list_detail.html", {
            "contact_list": contact_list, "page": page, "q": q, "section": "lists",
            "stats": selectors.list_stats(contact_list)})

    def post(self, request: HttpRequest, list_id: str | None = None) -> HttpResponse:
        contact_list = list_or_404(list_id or request.POST.get("list_id", ""))
        identifier = request.POST.get("identifier", "").strip()
        contact, created = services.list_member_add(
            contact_list=contact_list, identifier=identifier, principal=self.principal,
            request=request)
        messages.success(request, f"{contact} {'added to' if created else 'is already on'} "
                                  f"{contact_list.name}.")
        return redirect(safe_next(request.POST.get("next")
                                  or f"/dashboard/contacts/lists/{contact_list.pk}"))

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if request.method == "POST":
            messages.error(request, f"{error.message} ({error.code})")
            return redirect(safe_next(request.POST.get("next") or request.path))
        return super().handle_error(request, error)


class ListAddMemberView(ListDetailView):
    """`lists/add-member`: the list comes in the form (`list_id`), as from a contact page."""

    required_scopes = {"POST": WRITE}


class ListMemberRemoveView(DashboardView):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, list_id: str, contact_id: str) -> HttpResponse:
        contact_list = list_or_404(list_id)
        services.list_member_remove(contact_list=contact_list, contact_id=contact_id,
                                    principal=self.principal, request=request)
        messages.success(request, f"Removed from {contact_list.name}.")
        return redirect(safe_next(request.POST.get("next")
                                  or f"/dashboard/contacts/lists/{contact_list.pk}"))
