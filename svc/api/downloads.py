"""A file in an answer, named: how every download of the API is sent (an export, a HAR, a
Playwright test, a reporter's data, the audit log), and the Markdown shown inline; and a
stored object (a screenshot, an export job's file) as its store offers it."""

from flask import Response, redirect, send_file

from svc.storage import Download


def download(body, mimetype: str, filename: str, inline: bool = False) -> Response:
    """`body` (bytes, text or an iterator of them) as a file named `filename`: to save, or with
    `inline` to show. The names are svc's own (a tracking id, a date, a cleaned identifier)."""
    disposition = "inline" if inline else "attachment"
    return Response(
        body,
        mimetype=mimetype,
        headers={"Content-Disposition": f'{disposition}; filename="{filename}"'},
    )


def stored(found: Download, filename: str | None = None, max_age: int | None = None) -> Response:
    """A stored object (storage.download): a 302 to the store's presigned URL, or the file on
    this host (conditional, with an ETag) or the store's stream (its length said), private to
    the caller; with `filename`, as an attachment of that name."""
    if found.url:
        return redirect(found.url, 302)
    local = found.path is not None
    answer = send_file(
        found.path or found.stream,
        mimetype=found.content_type,
        download_name=filename,
        as_attachment=filename is not None,
        conditional=local,
        etag=local,
        max_age=max_age,
    )
    if found.stream is not None and found.size is not None:
        answer.content_length = found.size
    answer.cache_control.private = True
    answer.cache_control.public = False
    return answer
