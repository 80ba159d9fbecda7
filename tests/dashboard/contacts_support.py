"""Shared helpers of the Contacts screen tests (no tests here): signed-in test clients,
contacts with a timeline, a CSV body."""

from __future__ import annotations

from contacts import services
from contacts.models import Contact
from conversations.models import Conversation
from messaging.models import Message, OptOut
from platform_core.events.models import TrackedEvent
from platform_core.tenancy.context import tenant_context


def make_contact(org, **fields) -> Contact:
    with tenant_context(org):
        return services.contact_create(organization=org, principal=None, **fields)


def give_timeline(org, contact: Contact) -> None:
    """One message, one conversation, one tracked event and an opt-out for `contact`."""
    with tenant_context(org):
        Message.objects.create(organization=org, channel="sms", direction="outbound",
                               to=contact.phone, body="Your order has shipped",
                               status="delivered", contact_id=contact.pk)
        Conversation.objects.create(organization=org, contact_id=contact.pk, channel="sms",
                                    last_message_preview="Where is my parcel?")
        TrackedEvent.objects.create(organization=org, name="order_placed",
                                    properties={"total": 42}, contact_id=contact.pk)
        OptOut.objects.create(organization=org, sender="*", recipient=contact.phone,
                              channel="sms", keyword="STOP")


def csv_text(rows: int, *, bad_every: int = 0) -> str:
    """A CSV of `rows` people; every `bad_every`-th row carries an invalid email."""
    lines = ["First Name,Last Name,E-mail,Phone,Plan"]
    for i in range(1, rows + 1):
        email = "not-an-email" if bad_every and i % bad_every == 0 else f"person{i}@example.com"
        lines.append(f"Person{i},Imported,{email},,gold")
    return "\n".join(lines) + "\n"
