"""Templated account emails through Django's email framework (text and HTML bodies)."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

logger = logging.getLogger("platform_core.accounts")


def send_templated_email(*, to: str, template: str, context: dict[str, Any]) -> None:
    """Render `accounts/email/<template>_subject.txt`, `.txt` and `.html` and send them."""
    base = f"accounts/email/{template}"
    subject = " ".join(render_to_string(f"{base}_subject.txt", context).split())
    text = render_to_string(f"{base}.txt", context)
    html = render_to_string(f"{base}.html", context)
    message = EmailMultiAlternatives(subject, text, settings.DEFAULT_FROM_EMAIL, [to])
    message.attach_alternative(html, "text/html")
    message.send()


def send_quietly(**kwargs: Any) -> bool:
    """Send after the change is committed: a mail server failure must not undo it."""
    try:
        send_templated_email(**kwargs)
    except Exception:  # SMTP errors are many kinds; the change already stands
        logger.exception("account email %s could not be sent", kwargs.get("template"))
        return False
    return True
