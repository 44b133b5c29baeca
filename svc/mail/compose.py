"""A mail's text and HTML parts from one plain-text body: the HTML part is the same text,
escaped, with the service's own links made clickable, so what a mail says is written once."""

import html
import re
from email import policy
from email.message import EmailMessage
from email.utils import formatdate

from svc.i18n import RIGHT_TO_LEFT

# RFC 5322's own line limit, not Python's default 78: a header longer than 78 characters with
# no space to fold at (List-Unsubscribe's <https://...> link) was written as RFC 2047 encoded
# words, and mail programs then found no one-click link.
_POLICY = policy.SMTP.clone(max_line_length=998)

# An address ends before a sentence's own punctuation ("see https://x/y." links https://x/y).
_LINK = re.compile(r"https?://[^\s<>\"]*[^\s<>\".,;:!?)']")


def html_of(text: str, own_links: str, language: str = "en") -> str:
    """Only addresses that start with `own_links` (the service's public URL) become links: a
    name or a title someone typed must not turn into one (the invitation mails made svc a
    relay for anyone's links). The page says its language and direction, as the text part's
    Content-Language does: an Arabic mail reads right to left."""
    prefix = html.escape(own_links.rstrip("/") + "/")

    def link(found):
        address = found[0]
        return f'<a href="{address}">{address}</a>' if address.startswith(prefix) else address

    paragraphs = []
    for paragraph in text.strip().split("\n\n"):
        linked = _LINK.sub(link, html.escape(paragraph))
        paragraphs.append(f"<p>{linked.replace(chr(10), '<br>')}</p>")
    direction = "rtl" if language.split("-")[0] in RIGHT_TO_LEFT else "ltr"
    return (
        f'<!doctype html><html lang="{html.escape(language)}" dir="{direction}">'
        '<body style="font-family: sans-serif; line-height: 1.5">'
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
    mail = EmailMessage(policy=_POLICY)
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = message_id
    mail.set_content(text)
    mail.add_alternative(html_body, subtype="html")
    # After the content: setting it clears every Content-* header (Content-Language).
    for name, value in headers.items():
        mail[name] = value
    return mail


def message_id_for(mail_id, domain: str) -> str:
    return f"<{mail_id}@{domain}>"
