"""Whose account a single sign-on is (docs/identity.md): the provider's checked
claims in, an account out, or a refusal that says why.

- The e-mail must be verified at the provider (`email_verified`) before it links to anything,
  and its domain allowed (SVC_OIDC_ALLOWED_DOMAINS, when set).
- An account linked before (its `oidc_subject`, the issuer and `sub`) is signed into; else the
  account with that address, which is linked now; else a new account, also when registration is
  closed: the allowed domains decide who gets in. A new account has no password.
"""

import re

from sqlalchemy import select

from svc import audit
from svc.errors import Forbidden
from svc.extensions import db
from svc.mail import outbox
from svc.models import User
from svc.services.identity import users


def _refuse(issuer: str, reason: str, message: str, email=None, user=None) -> Forbidden:
    users.record_failed_sign_in(user, email, reason, issuer=issuer)
    return Forbidden(message)


# Microsoft Entra ID's issuers: only a token of theirs speaks for `xms_edov`.
_ENTRA_ISSUER = re.compile(r"^https://login\.microsoftonline\.(com|us)/[^/]+/v2\.0$")


def _verified(issuer: str, claims: dict) -> bool:
    """`email_verified` true; or, from Entra ID, which never sends it, `xms_edov` true (the
    address's domain is verified by the tenant that signs the token). Another provider may
    let a user set any claim, `xms_edov` too."""
    if claims.get("email_verified") in (True, "true"):
        return True
    return bool(_ENTRA_ISSUER.match(issuer)) and claims.get("xms_edov") in (True, "true")


def account_for(issuer: str, claims: dict) -> User:
    """The account these checked claims sign into, created or linked as needed (committed)."""
    email = users.normalize_email(str(claims.get("email") or ""))
    subject = f"{issuer} {claims.get('sub')}"
    if not email or "@" not in email:
        raise _refuse(issuer, "no e-mail", "The provider did not tell svc your e-mail address.")
    if not _verified(issuer, claims):
        raise _refuse(
            issuer,
            "unverified e-mail",
            f"Your e-mail address {email} is not verified at the sign-in provider, so svc "
            "cannot tell it is yours. Verify it there, then sign in again.",
            email,
        )
    if not users.domain_allowed(email):
        words = f"Addresses at {email.rsplit('@', 1)[1]} cannot sign in to this svc."
        raise _refuse(issuer, "domain not allowed", words, email)
    user = db.session.scalar(select(User).where(User.oidc_subject == subject))
    if user is None:
        user = db.session.scalar(select(User).where(User.email == email))
        if user is not None and user.oidc_subject not in (None, subject):
            raise _refuse(
                issuer,
                "linked to another identity",
                f"The svc account of {email} is linked to another account at the provider.",
                email,
                user,
            )
    if user is None:
        name = " ".join(str(claims.get("name") or email.split("@")[0]).split())[:100]
        user = users.add_user(name or email, email, None)
        users.commit_new_account()
    if not user.active:
        raise _refuse(
            issuer, "deactivated", "This account is deactivated: ask an administrator.", email, user
        )
    if user.oidc_subject is None and user.password_hash:
        _linked(user, issuer)
    user.oidc_subject = subject
    db.session.commit()
    return user


def _linked(user: User, issuer: str) -> None:
    """An existing account (its password, a second factor) now also opens by single sign-on,
    by its verified address: recorded, and its owner told, in the sign-in's transaction."""
    audit.record(audit.SSO_LINKED, user, ("user", user.id), issuer=issuer)
    outbox.queue(
        user.email,
        "svc: your account now also signs in with single sign-on",
        f"Hello {user.name},\n\nYour svc account ({user.email}) was just signed into with "
        f"single sign-on ({issuer}), which it will accept from now on: the provider vouched "
        "for your address. svc's own second factor is not asked for such a sign-in.\n\n"
        "If that was not you, tell your administrator at once.",
    )
