"""Small steps many tests take, through the HTTP API."""

PASSWORD = "correct horse battery"


def register(client, email="ada@example.com", name="Ada Lovelace", password=PASSWORD):
    response = client.post("/api/v1/auth/register",
                           json={"name": name, "email": email, "password": password})
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
    response = client.post("/api/v1/projects", json={"name": name, **extra},
                           headers=csrf(client))
    assert response.status_code == 201, response.get_json()
    return response.get_json()
