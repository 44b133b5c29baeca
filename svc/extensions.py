"""Flask extensions, created unbound and bound to the app in `create_app`.

Imports nothing of svc. How the service uses its database (SQLite's pragmas, transactions):
svc.database.
"""

import ipaddress

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    # Named constraints: Alembic's batch mode (SQLite) can only alter constraints that have names.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


# Objects stay loaded after a commit: a response that reads a report just created would otherwise
# select its whole row again, and the guard's commit (svc.auth.guard) would unload the caller.
db = SQLAlchemy(model_class=Base, session_options={"expire_on_commit": False})
# render_as_batch: SQLite cannot ALTER most things; batch mode rebuilds the table instead.
migrate = Migrate(render_as_batch=True, compare_type=True)


def client_network() -> str:
    """Whom a per-address limit counts: the client's IPv4 address, or its IPv6 /64 (one host
    is commonly given a whole /64, 2^64 addresses to rotate through)."""
    address = get_remote_address()
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 4:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


limiter = Limiter(key_func=client_network, headers_enabled=True)
