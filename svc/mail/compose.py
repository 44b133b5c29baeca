"""A mail's text and HTML parts from one plain-text body: the HTML part is the same text,
escaped, with its links made clickable, so what a mail says is written once."""

import html
import re
from email.message import EmailMessage
from email.utils import formatdate

_LINK = re.compile(r"https?://[^\s<>\"]+")


def html_of(text: str) -> str:
    paragraphs = []
    for paragraph in text.strip().split("\n\n"):
        escaped = html.escape(paragraph)
        linked = _LINK.sub(lambda m: f'<a href="{m[0]}">{m[0]}</a>', escaped)
        paragraphs.append(f"<p>{linked.replace(chr(10), '<br>')}</p>")
    return (
        '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">'
        + "".join(paragraphs)
        + "</body></html>"
    )


def message(
    *,
    sender: str,
    to: str,
    subject: str,
    text: str,
    html_body: str,
    headers: dict[str, str],
    message_id: str,
) -> EmailMessage:
    """`message_id` stays the same on every attempt of one mail, so that a receiver can tell a
    mail sent twice (a crash between the server's answer and our record of it) from two."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = message_id
    for name, value in headers.items():
        mail[name] = value
    mail.set_content(text)
    mail.add_alternative(html_body, subtype="html")
    return mail


def message_id_for(mail_id, domain: str) -> str:
    return f"<{mail_id}@{domain}>"
