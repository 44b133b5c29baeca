"""A report's status page link and what the reporter is told in words (docs/reporter-updates.md):
read by the page (svc.services.reporters.status_page), the mails and the intake alike, and importing
none of them.

The page's address is signed, not stored: the report's id and an HMAC of it and of the report's
`status_link_version` under the secret key. Filing a report writes nothing for it, every mail
can carry the link, and a new link (the version raised by one) ends the old one at once.
Rotating the secret key ends every link, as it ends every session.
"""

import base64
import binascii
import hashlib
import hmac
import uuid

from flask import current_app

from svc import i18n
from svc.auth import tokens
from svc.config import public_url
from svc.errors import not_found
from svc.extensions import db
from svc.i18n import N_
from svc.models import Comment, Report

INVALID_LINK = "This status page does not exist"
ENGLISH = i18n.speaker(i18n.DEFAULT)
_STATUS_WORDS = {
    "new": N_("received, not yet looked at"),
    # new again, after it was resolved or closed
    "reopened": N_("open again, waiting to be looked at"),
    "in_progress": N_("being worked on"),
    "resolved": N_("resolved"),
    "closed": N_("closed"),
}


def name_of(comment: Comment, report: Report, speak: i18n.Speaker = ENGLISH) -> str:
    """Who wrote a comment, as the reporter sees it."""
    if comment.author:
        return comment.author.name
    return speak("The {project} team", project=report.project.name)


def status_in_words(status: str, speak: i18n.Speaker = ENGLISH) -> str:
    return speak(_STATUS_WORDS[status])


# --- the status page's address -------------------------------------------------------------------


def _mac(report_id: uuid.UUID, version: int) -> bytes:
    message = b"svc-status-page|" + report_id.bytes + version.to_bytes(8, "big")
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, message, hashlib.sha256).digest()[:16]


def _encode(raw: bytes) -> str:
    return tokens.base64url(raw)


def token_of(report: Report) -> str:
    return _encode(report.id.bytes + _mac(report.id, report.status_link_version))


def status_url(report: Report) -> str:
    return public_url(f"/status/{token_of(report)}")


def report_of(token: str) -> Report:
    """The report a status page token names; 404 for any other string, an old link's too."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, binascii.Error):
        raise not_found(INVALID_LINK) from None
    # Decoding skips stray characters: only the one spelling of a token is that token.
    if len(raw) != 32 or _encode(raw) != token:
        raise not_found(INVALID_LINK)
    report = db.session.get(Report, uuid.UUID(bytes=raw[:16]))
    if report is None or not hmac.compare_digest(
        raw[16:], _mac(report.id, report.status_link_version)
    ):
        raise not_found(INVALID_LINK)
    # Reporter updates turned off: the page goes dark with the mails (turned on again, the
    # same links work again: nothing about them is stored).
    if not report.project.reporter_updates_in_force["enabled"]:
        raise not_found(INVALID_LINK)
    return report


def speaker_of(report: Report) -> i18n.Speaker:
    """The report's reporter's language (docs/api.md §8.1), for their page and mails."""
    return i18n.speaker(report.detail.locale)
