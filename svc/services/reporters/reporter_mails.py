"""What the person who filed a report is mailed (docs/reporter-updates.md): a receipt, word
when it is resolved, the public comments; each with the report's status page link (the page
itself and its signed address: svc.services.reporters.status_page) and a one-click unsubscribe for
the address and project.
"""

import hashlib
import hmac
import re
import uuid
from datetime import timedelta

from flask import current_app
from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import delete, func, select
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from svc import i18n
from svc.config import public_url
from svc.errors import not_found
from svc.extensions import db
from svc.mail import outbox
from svc.models import (
    DONE_STATUSES,
    Comment,
    OutgoingMail,
    Project,
    Report,
    ReportDetail,
    ReportDuplicate,
    ReporterMailCount,
    ReporterOptOut,
)
from svc.models.base import utcnow
from svc.models.mail import LIMITED
from svc.services.reporters import status_links
from svc.services.team.notification_mails import one_click_unsubscribe, title_line
from svc.services.team.notifications import INVALID_LINK as INVALID_UNSUBSCRIBE_LINK

RECEIVED, RESOLVED, PUBLIC_COMMENT = "received", "resolved", "public_comment"
# A reporter's address is anyone's to type: at most this many mails a day to one address about
# one project, and about all projects of the instance, so that svc cannot be made a mail relay.
MAILS_PER_PROJECT_A_DAY = 3
MAILS_PER_ADDRESS_A_DAY = 10
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


# --- mails ---------------------------------------------------------------------------------------


def address_of(report: Report) -> str | None:
    """The reporter's e-mail address, when what the widget sent as their identifier is one:
    its local part as typed (a server may tell `Ann.Lee@` from `ann.lee@`), its domain in lower
    case. Compared without case wherever it is counted or looked up (`_canonical`)."""
    identifier = (report.reporter_identifier or "").strip()
    if not _ADDRESS.match(identifier):
        return None
    local, _, domain = identifier.rpartition("@")
    return f"{local}@{domain.lower()}"


def _canonical(address: str) -> str:
    """One spelling of an address for opt-outs, links and one mail to an address (RFC 5321
    lets a server tell cases apart; in practice none does, and svc must not mail twice)."""
    return address.lower()


def receipt_coming(project: Project, report: Report) -> bool:
    """Whether the reporter will be mailed a receipt: the project mails one, what the widget
    sent as their identifier is an address (anything else is kept as a name), and the address
    did not unsubscribe. (The day's limits may yet hold it back.)"""
    if not _wants(project, RECEIVED):
        return False
    address = address_of(report)
    return address is not None and not _opted_out(project, address)


def _wants(project: Project, event: str) -> bool:
    chosen = project.reporter_updates_in_force
    return bool(chosen.get("enabled")) and event in chosen.get("events", ())


def receipts(report_ids: list[uuid.UUID]) -> list[tuple[uuid.UUID, uuid.UUID, str, str, str, dict]]:
    """The receipts the fan-out mails for these new reports (with `queue`): (report id, project
    id, to, subject, text, headers), read before its write transaction. A receipt holds no word
    the reporter wrote: anyone can file a report naming anyone's address."""
    rows = db.session.execute(
        select(Report, Project, ReportDetail.locale)
        .join(Project, Project.id == Report.project_id)
        .join(ReportDetail, ReportDetail.report_id == Report.id)
        .where(
            Report.id.in_(report_ids),
            Project.reporter_updates.is_not(None),
            Report.reporter_identifier.contains("@"),
        )
    ).all()
    made = []
    for report, project, locale in rows:
        address = address_of(report)
        if address and _wants(project, RECEIVED) and not _opted_out(project, address):
            speak = i18n.speaker(locale)
            names = {"project": project.name, "tracking_id": report.tracking_id}
            subject = speak("[{project}] We received your report {tracking_id}", **names)
            opening = speak(
                "Thank you for telling us about a problem with {project}. "
                "We received it as {tracking_id}.",
                **names,
            )
            mail = _mail(speak, report, project, address, subject, opening)
            made.append((report.id, project.id, address, *mail))
    return made


def address_key(address: str) -> str:
    """What the limits count an address by (contract v6): lower-cased, the local part without
    its `+tag`, the domain without a trailing dot (`Ann+1@Corp.test.` is `ann@corp.test`); kept
    as a hash keyed with the secret key, never as the address."""
    local, _, domain = address.strip().lower().rpartition("@")
    compared = f"{local.split('+', 1)[0]}@{domain.rstrip('.')}"
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, b"svc-reporter-mail|" + compared.encode(), hashlib.sha256).hexdigest()


def queue(project_id: uuid.UUID, to: str, subject: str, text: str, headers: dict) -> bool:
    """Queue a mail to a reporter in the caller's transaction, unless the address had its
    day's share (MAILS_PER_PROJECT_A_DAY about this project, MAILS_PER_ADDRESS_A_DAY in all):
    then only a row saying so is written (counted in /admin/health). Whether it goes. Counted
    in ReporterMailCount, which erasing a reporter's data leaves alone."""
    key = address_key(to)
    if db.engine.dialect.name == "postgresql":
        # Two transactions mailing one address count one after the other (SQLite's writers
        # already do: one at a time).
        db.session.execute(sql("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": key})
    since = utcnow() - timedelta(days=1)
    counted = (
        select(ReporterMailCount.project_id, func.count())
        .where(ReporterMailCount.address_key == key, ReporterMailCount.created_at > since)
        .group_by(ReporterMailCount.project_id)
    )
    sent = dict(db.session.execute(counted).all())
    if (
        sent.get(project_id, 0) >= MAILS_PER_PROJECT_A_DAY
        or sum(sent.values()) >= MAILS_PER_ADDRESS_A_DAY
    ):
        db.session.add(
            OutgoingMail(to_address=to, subject="", text_body="", html_body="", headers={},
                         status=LIMITED, attempts=0, reporter_project_id=project_id)
        )  # fmt: skip
        return False
    db.session.add(ReporterMailCount(address_key=key, project_id=project_id))
    outbox.queue(to, subject, text, headers, reporter_project_id=project_id)
    return True


def forget_counted() -> int:
    """Drop the counts older than the limits' day (the scheduler, hourly): how many."""
    gone = db.session.execute(
        delete(ReporterMailCount)
        .where(ReporterMailCount.created_at <= utcnow() - timedelta(days=1))
        .execution_options(synchronize_session=False)
    ).rowcount
    db.session.commit()
    return gone


def status_changed(report: Report, old: str, new: str) -> None:
    """In the change's transaction: the reporter's mail when the report becomes resolved or
    closed; its duplicates' reporters get theirs, each about their own report."""
    if new in DONE_STATUSES and old not in DONE_STATUSES:
        for each in _following(report):
            _queue_if_wanted(each, RESOLVED, lambda speak, each=each: _done_words(speak, each, new))


def commented(report: Report, comment: Comment) -> None:
    """In the comment's transaction: the reporter's mail of a team's public comment, and its
    duplicates' reporters'. What a reporter wrote is mailed to nobody (contract v6)."""
    if comment.public and not comment.from_reporter:
        for each in _following(report):
            _queue_if_wanted(
                each, PUBLIC_COMMENT, lambda speak, each=each: _reply_words(speak, each, comment)
            )


def _done_words(speak: i18n.Speaker, report: Report, status: str) -> tuple[str, str]:
    names = {
        "project": report.project.name,
        "tracking_id": report.tracking_id,
        "title": title_line(report.title),
        "status": status_links.status_in_words(status, speak),
    }
    return speak("[{project}] {tracking_id} is {status}", **names), speak(
        "The problem you reported, {tracking_id} ({title}), is {status} now. "
        "If it still happens, say so on its page.",
        **names,
    )


def _reply_words(speak: i18n.Speaker, report: Report, comment: Comment) -> tuple[str, str]:
    names = {
        "project": report.project.name,
        "tracking_id": report.tracking_id,
        "title": title_line(report.title),
        "name": status_links.name_of(comment, report, speak),
    }
    subject = speak("[{project}] A reply about your report {tracking_id}", **names)
    opening = speak("{name} wrote about your report {tracking_id} ({title}):", **names)
    return subject, f"{opening}\n\n{comment.body}"


def _following(report: Report) -> list[Report]:
    """The report and those marked its duplicates (docs/api.md §8.11), one per reporter's
    address: a reporter who filed the bug twice gets one mail."""
    reports = [report]
    if report.duplicate_rows:
        reports += db.session.scalars(
            select(Report)
            .join(ReportDuplicate, ReportDuplicate.report_id == Report.id)
            .where(ReportDuplicate.primary_id == report.id)
            .order_by(Report.created_at)
        )
    by_address = {}
    for each in reports:
        address = address_of(each)
        by_address.setdefault(_canonical(address) if address else each.id, each)
    return list(by_address.values())


def _queue_if_wanted(report: Report, event: str, words) -> None:
    """Queue the mail whose (subject, opening) `words(speaker)` says, in the report's
    language, when its reporter wants it."""
    project = report.project
    address = address_of(report)
    if address and _wants(project, event) and not _opted_out(project, address):
        speak = i18n.speaker(report.detail.locale)
        queue(project.id, address, *_mail(speak, report, project, address, *words(speak)))


def _opted_out(project: Project, address: str) -> bool:
    return db.session.get(ReporterOptOut, (project.id, _canonical(address))) is not None


def _mail(
    speak: i18n.Speaker, report: Report, project: Project, address: str, subject: str, opening: str
):
    """(subject, text, headers): the opening, the status page link, and the footer with the
    one-click unsubscribe for this address and project, in the speaker's language (said by
    Content-Language)."""
    unsubscribe = public_url(f"/unsubscribe/{_unsubscribe_token(project, address)}")
    page = status_links.status_url(report)
    follow = speak("Follow it, add to it, or tell us it still happens: {link}", link=page)
    why = speak("You get this mail because you reported a problem with {project}.",
                project=project.name)  # fmt: skip
    stop = speak("No more mails about {project}: {link}", project=project.name, link=unsubscribe)
    text = f"{opening}\n\n{follow}\n\n--\n{why}\n{stop}"
    headers = {**one_click_unsubscribe(unsubscribe), "Content-Language": speak.language}
    return subject, text, headers


# --- unsubscribing -------------------------------------------------------------------------------


def _serializer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt="svc-reporter-unsubscribe")


def _unsubscribe_token(project: Project, address: str) -> str:
    return _serializer().dumps([str(project.id), _canonical(address)])


def is_unsubscribe_token(token: str) -> bool:
    """Whether a /unsubscribe/ link is a reporter's (the members' are signed apart)."""
    try:
        _serializer().loads(token)
    except BadSignature:
        return False
    return True


def unsubscribe(token: str) -> dict:
    """No more mails to the link's address about the link's project."""
    try:
        project_id, address = _serializer().loads(token)
        project = db.session.get(Project, uuid.UUID(project_id))
    except (BadSignature, ValueError, TypeError):
        raise not_found(INVALID_UNSUBSCRIBE_LINK) from None
    if project is None:
        raise not_found(INVALID_UNSUBSCRIBE_LINK)
    if not _opted_out(project, address):
        db.session.add(ReporterOptOut(project_id=project.id, email=address, created_at=utcnow()))
        try:
            db.session.commit()
        except IntegrityError:  # a second click at the same moment: once is enough
            db.session.rollback()
    return {"email": address, "project_name": project.name}
