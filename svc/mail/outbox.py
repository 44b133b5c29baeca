"""The durable mail outbox, with the webhook outbox's rules (svc.webhooks.delivery):

- `queue` writes the mail in the caller's transaction, beside what it tells of;
- `claim_due` takes due mails as every outbox does (svc.outbox.claim_due: a conditional update
  that pushes `next_attempt_at` past the attempt's deadline, a lease), so no two processes send
  one mail at once and a mail whose sender died is sent again once its lease ends: a restart
  or SIGKILL loses none;
- `attempt` sends with no transaction open, then records `sent`, or the next retry, or
  `failed` after the last (svc.outbox.record_outcome). The record follows the server's
  answer at once; the mail keeps one Message-ID on every attempt, so in the rare crash between
  the two a receiver sees the same message again, not a new one.

With no SMTP server configured, a mail is written to the log (the scheduler's) and counts as
sent: development installs see their links there.

Once a mail is handed over (or logged), or has failed for good, its subject, bodies and headers
are cleared: the links it carried (an invitation, a reset, a status page) must not keep working
from the table or from a backup. Its row, with the address and the outcome, stays
SVC_MAIL_LOG_DAYS for the health page, then `forget_done` deletes it.
"""

import logging
import uuid
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from sqlalchemy import delete, select

from svc import outbox
from svc.config import public_url, setting
from svc.extensions import db
from svc.mail import compose, smtp
from svc.models.base import utcnow
from svc.models.mail import FAILED, LIMITED, PENDING, SENT, OutgoingMail

log = logging.getLogger(__name__)
# What a mail no longer holds once it went or failed for good.
_CLEARED = {"subject": "", "text_body": "", "html_body": "", "headers": {}}


def queue(
    to: str,
    subject: str,
    text: str,
    headers: dict[str, str] | None = None,
    reporter_project_id: uuid.UUID | None = None,
) -> uuid.UUID:
    """Add a mail to the current transaction; the caller commits it with its change. Its id."""
    mail_id = uuid.uuid4()
    db.session.add(
        OutgoingMail(
            id=mail_id,
            to_address=to,
            subject=subject,
            text_body=text,
            html_body=compose.html_of(
                text, public_url("/"), (headers or {}).get("Content-Language", "en")
            ),
            headers=headers or {},
            status=PENDING,
            attempts=0,
            next_attempt_at=utcnow(),
            reporter_project_id=reporter_project_id,
        )
    )
    return mail_id


def claim_due(limit: int, running=(), now: datetime | None = None) -> list[tuple]:
    """Claim up to `limit` due mails: [(id, number of the attempt now to be made, None)], none
    of those in `running` (attempts still under way)."""
    now = now or utcnow()
    due = (
        select(OutgoingMail.id, OutgoingMail.attempts)
        .where(OutgoingMail.status == PENDING, OutgoingMail.next_attempt_at <= now)
        .order_by(OutgoingMail.next_attempt_at, OutgoingMail.id)
        .limit(limit + len(running))
    )
    claimed = outbox.claim_due(
        OutgoingMail, due, now=now, attempt_seconds=setting("SVC_MAIL_TIMEOUT"), limit=limit,
        admit=lambda row: row[0] not in running,
    )  # fmt: skip
    return [(mail_id, attempt_number, None) for mail_id, attempt_number in claimed]


def sender_address() -> str:
    configured = setting("SVC_MAIL_FROM")
    if configured:
        return configured
    host = urlsplit(setting("SVC_PUBLIC_URL") or "http://localhost").hostname or "localhost"
    return f"svc@{host}"


def attempt(mail_id: uuid.UUID, attempt_number: int) -> str | None:
    """Make one claimed attempt and record it; the error, or None when the mail went."""
    mail = db.session.get(OutgoingMail, mail_id)
    if mail is None:
        db.session.rollback()
        return None
    sender = sender_address()
    try:
        message = compose.message(
            sender=sender,
            to=mail.to_address,
            subject=mail.subject,
            text=mail.text_body,
            html_body=mail.html_body,
            headers=mail.headers,
            message_id=compose.message_id_for(mail.id, sender.rpartition("@")[2]),
        )
    except (ValueError, TypeError) as exc:
        # The email package refuses it (a line break in a header): no retry can build it.
        db.session.rollback()
        error = f"cannot be built: {exc}"[:500]
        _record(mail_id, attempt_number, error, final=True)
        log.error("mail %s attempt %d: %s", mail_id, attempt_number, error)
        return error
    db.session.commit()  # no transaction stays open while the server takes its time
    error = _send(message)
    _record(mail_id, attempt_number, error)
    log.info("mail %s attempt %d: %s", mail_id, attempt_number, error or "sent")
    return error


def _send(message) -> str | None:
    url = setting("SVC_SMTP_URL")
    if not url:
        log.info("mail is off (no SVC_SMTP_URL); this mail would have gone:\n%s", message)
        return None
    try:
        smtp.send(
            message,
            smtp.parse_url(url),
            timeout=setting("SVC_MAIL_TIMEOUT"),
            ca_bundle=setting("SVC_SMTP_CA_BUNDLE"),
        )
    except OSError as exc:  # smtplib's and ssl's errors included
        return f"{type(exc).__name__}: {exc}"[:500]
    return None


def _record(
    mail_id: uuid.UUID,
    attempt_number: int,
    error: str | None,
    final: bool = False,
    now: datetime | None = None,
) -> None:
    """The attempt's outcome: sent, a retry later, or failed (retries spent, or `final`)."""
    now = now or utcnow()
    values = outbox.settled(now, attempt_number, setting("SVC_MAIL_RETRY_DELAYS"),
                            succeeded=error is None, final=final, done=SENT)  # fmt: skip
    values["last_error"] = error
    if error is None:
        values["sent_at"] = now
    if "status" in values:  # sent or failed for good: the links it carried go
        values.update(_CLEARED)
    outbox.record_outcome(OutgoingMail, mail_id, attempt_number, values)


def forget_done() -> int:
    """Delete the rows of mails that went or failed more than SVC_MAIL_LOG_DAYS ago (the
    scheduler, hourly): how many."""
    cutoff = utcnow() - timedelta(days=setting("SVC_MAIL_LOG_DAYS"))
    gone = db.session.execute(
        delete(OutgoingMail)
        .where(OutgoingMail.status.in_((SENT, FAILED, LIMITED)), OutgoingMail.created_at < cutoff)
        .execution_options(synchronize_session=False)
    ).rowcount
    db.session.commit()
    return gone
