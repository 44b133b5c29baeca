"""A file in an answer, named: how every download of the API is sent (an export, a HAR, a
Playwright test, a reporter's data, the audit log), and the Markdown shown inline."""

from flask import Response


def download(body, mimetype: str, filename: str, inline: bool = False) -> Response:
    """`body` (bytes, text or an iterator of them) as a file named `filename`: to save, or with
    `inline` to show. The names are svc's own (a tracking id, a date, a cleaned identifier)."""
    disposition = "inline" if inline else "attachment"
    return Response(
        body,
        mimetype=mimetype,
        headers={"Content-Disposition": f'{disposition}; filename="{filename}"'},
    )
