"""Steps through the HTTP API of an app in this process, with Flask's test client: what the
tests take most often, and the benchmarks that time svc without a server."""

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


def sqlite_app(tmp_path):
    """An app on a SQLite file of its own, for what only SQLite has (pragmas, its planner)."""
    from svc import create_app

    return create_app(
        {
            "SVC_DATABASE_URL": f"sqlite:///{tmp_path / 'svc.sqlite3'}",
            "SVC_INSTANCE_PATH": str(tmp_path / "instance"),
            "SVC_SECRET_KEY": "test",
        }
    )


def invite(owner, project_id, email, role="member") -> dict:
    response = owner.post(
        f"/api/v1/projects/{project_id}/invitations",
        json={"email": email, "role": role},
        headers=csrf(owner),
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def token_of(invitation: dict) -> str:
    """The token at the end of an invitation's link."""
    return invitation["url"].rsplit("/", 1)[1]


def add_to_project(owner, project_id, invitee, email, role="member") -> dict:
    """Bring a signed-in account into a project the way people join: invited, then accepting."""
    response = invitee.post(
        "/api/v1/invitations/accept",
        json={"token": token_of(invite(owner, project_id, email, role))},
        headers=csrf(invitee),
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def new_member(app, owner, project_id, email, name, role="member"):
    """A client signed in as a new account (`.user`) that has joined the owner's project."""
    client = app.test_client()
    client.user = register(client, email=email, name=name)
    add_to_project(owner, project_id, client, email, role)
    return client


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
