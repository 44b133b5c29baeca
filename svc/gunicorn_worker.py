"""gunicorn's sync worker, answering what gunicorn refuses before svc sees it (a request line
past its limit, headers too large, a malformed request) with svc's JSON error, `{"detail": ...}`,
instead of gunicorn's HTML page.

gunicorn decides the status and logs the refusal as before: its page is written to a stand-in
for the client, and only its status line is kept."""

import json

from gunicorn import util
from gunicorn.workers.sync import SyncWorker

DETAILS = {
    400: "Bad request: the request line or a header is malformed",
    414: "Request line too long: the limit is {line} bytes",
    431: "Request headers too large: the limit is {fields} headers of {field} bytes",
}


class _StatusLine:
    """Takes what gunicorn writes to the client; keeps it."""

    def __init__(self):
        self.written = b""

    def gettimeout(self):
        return None

    def setblocking(self, flag):
        pass

    def sendall(self, data):
        self.written += data


class JsonErrorWorker(SyncWorker):
    def handle_error(self, req, client, addr, exc):
        page = _StatusLine()
        super().handle_error(req, page, addr, exc)
        try:
            _, code, reason = page.written.split(b"\r\n", 1)[0].decode("latin1").split(" ", 2)
            detail = DETAILS.get(int(code), reason).format(
                line=self.cfg.limit_request_line,
                fields=self.cfg.limit_request_fields,
                field=self.cfg.limit_request_field_size,
            )
        except ValueError:  # not the page we know: pass gunicorn's on as it is
            answer = page.written
        else:
            body = json.dumps({"detail": detail}).encode()
            answer = (
                f"HTTP/1.1 {code} {reason}\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode("latin1") + body
        try:
            util.write_nonblock(client, answer)
        except OSError:
            self.log.debug("Failed to send error message.")
