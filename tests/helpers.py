"""Small steps many tests take, through the HTTP API."""

PASSWORD = "correct horse battery"


def register(client, email="ada@example.com", name="Ada Lovelace", password=PASSWORD):
    response = client.post(
        "/api/v1/auth/register", json={"name": name, "email": email, "password": password}
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def csrf(client) -> dict:
    """The header a cookie-authenticated write must carry."""
    cookie = client.get_cookie("svc_csrf_token")
    return {"X-CSRF-Token": cookie.value if cookie else ""}


def create_pat(client, name="cli", **extra) -> dict:
    response = client.post("/api/v1/tokens", json={"name": name, **extra}, headers=csrf(client))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def create_project(client, name="Web Shop", **extra) -> dict:
    response = client.post("/api/v1/projects", json={"name": name, **extra}, headers=csrf(client))
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def png_bytes(width: int = 2, height: int = 2, padding: int = 0) -> bytes:
    """A valid PNG image; `padding` adds an ancillary chunk to make it larger."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    extra = chunk(b"tEXt", b"pad\x00" + b"x" * padding) if padding else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + extra
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


REPORT = {
    "title": "Checkout button does nothing",
    "description": "Clicking pay has no effect.",
    "severity": "high",
    "category": "bug",
}


def file_report(client, api_key: str, headers: dict | None = None, **fields):
    """POST /api/v1/reports with the API key; returns the response."""
    return client.post(
        "/api/v1/reports",
        json={**REPORT, **fields},
        headers={"X-API-Key": api_key, **(headers or {})},
    )


def upload(client, api_key: str, data: bytes, filename: str = "shot.png"):
    import io

    return client.post(
        "/api/v1/upload/screenshot",
        headers={"X-API-Key": api_key},
        data={"file": (io.BytesIO(data), filename)},
        content_type="multipart/form-data",
    )
