"""Passkeys as a second factor (docs/identity.md): WebAuthn ceremonies with py_webauthn.

The relying party is SVC_PUBLIC_URL's host and origin (else the request's): a passkey made for
another site is refused. Imported on first use (svc.services.identity.second_factors.passkeys)."""

import json
import uuid
from urllib.parse import urlsplit

import webauthn
from flask import current_app
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import select
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from svc.config import public_url
from svc.errors import Conflict, field_error
from svc.extensions import db
from svc.models import PendingSignIn, SecondFactor, User
from svc.models.base import utcnow
from svc.services.identity import second_factors
from svc.services.listing import Shown

# A registration ceremony, from its options to its answer, within this many seconds.
CEREMONY_SECONDS = 300


def _relying_party() -> tuple[str, str]:
    """(RP id, origin): SVC_PUBLIC_URL's, else the address this request came to."""
    url = urlsplit(public_url())
    return url.hostname, f"{url.scheme}://{url.netloc}"


def _passkeys_of(user_id: uuid.UUID) -> list[SecondFactor]:
    return [f for f in second_factors.factors_of(user_id) if f.kind == second_factors.PASSKEY]


def _ceremonies() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt="svc passkey registration")


def registration_options(user: User, session_id: uuid.UUID) -> dict:
    """The options navigator.credentials.create() takes, and a signed ticket that carries
    their challenge (bound to this user and session) back with the answer."""
    rp_id, _ = _relying_party()
    options = webauthn.generate_registration_options(
        rp_id=rp_id,
        rp_name="svc",
        user_id=user.id.bytes,
        user_name=user.email,
        user_display_name=user.name,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.DISCOURAGED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=webauthn.base64url_to_bytes(f.credential_id))
            for f in _passkeys_of(user.id)
        ],
    )
    ticket = _ceremonies().dumps(
        [str(user.id), str(session_id), bytes_to_base64url(options.challenge)]
    )
    return {"public_key": json.loads(webauthn.options_to_json(options)), "ticket": ticket}


def add(
    user: User, session_id: uuid.UUID, name: str, credential: dict, ticket: str, proof: dict
) -> Shown:
    """Verify the authenticator's answer to registration_options and keep the key, the user's
    proof given (second_factors.check_proof; a first factor comes with recovery codes, as
    confirm_totp's)."""
    try:
        user_id, ticket_session, challenge = _ceremonies().loads(ticket, max_age=CEREMONY_SECONDS)
    except BadSignature:
        raise field_error("ticket", "Expired or invalid: ask for new options") from None
    if (user_id, ticket_session) != (str(user.id), str(session_id)):
        raise field_error("ticket", "Expired or invalid: ask for new options")
    second_factors.check_proof(user, proof)
    rp_id, origin = _relying_party()
    try:
        verified = webauthn.verify_registration_response(
            credential=credential,
            expected_challenge=webauthn.base64url_to_bytes(challenge),
            expected_rp_id=rp_id,
            expected_origin=origin,
        )
    except (InvalidRegistrationResponse, ValueError, KeyError, TypeError) as error:
        raise field_error("credential", f"The passkey was not accepted: {error}") from None
    credential_id = bytes_to_base64url(verified.credential_id)
    taken = select(SecondFactor.id).where(SecondFactor.credential_id == credential_id)
    if db.session.scalar(taken) is not None:
        raise Conflict("This passkey is already registered")
    factor = SecondFactor(
        user_id=user.id,
        kind=second_factors.PASSKEY,
        name=name,
        credential_id=credential_id,
        public_key=verified.credential_public_key,
        sign_count=verified.sign_count,
    )
    db.session.add(factor)
    codes = second_factors.count(user, factor)
    db.session.commit()
    return Shown(factor, recovery_codes=codes)


def sign_in_options(waiting: PendingSignIn) -> dict:
    """The options navigator.credentials.get() takes for a waiting sign-in; their challenge is
    kept with it, so the answer may come to any worker."""
    rp_id, _ = _relying_party()
    passkeys = _passkeys_of(waiting.user_id)
    if not passkeys:
        raise Conflict("This account has no passkey")
    options = webauthn.generate_authentication_options(
        rp_id=rp_id,
        allow_credentials=[
            PublicKeyCredentialDescriptor(id=webauthn.base64url_to_bytes(f.credential_id))
            for f in passkeys
        ],
        user_verification=UserVerificationRequirement.PREFERRED,
    )
    waiting.challenge = bytes_to_base64url(options.challenge)
    db.session.commit()
    return {"public_key": json.loads(webauthn.options_to_json(options))}


def accepts(waiting: PendingSignIn, credential: dict) -> bool:
    if waiting.challenge is None or not isinstance(credential, dict):
        return False
    factor = db.session.scalar(
        select(SecondFactor).where(
            SecondFactor.user_id == waiting.user_id,
            SecondFactor.kind == second_factors.PASSKEY,
            SecondFactor.credential_id == str(credential.get("id", "")),
        )
    )
    if factor is None:
        return False
    rp_id, origin = _relying_party()
    try:
        verified = webauthn.verify_authentication_response(
            credential=credential,
            expected_challenge=webauthn.base64url_to_bytes(waiting.challenge),
            expected_rp_id=rp_id,
            expected_origin=origin,
            credential_public_key=factor.public_key,
            credential_current_sign_count=factor.sign_count,
        )
    except (InvalidAuthenticationResponse, ValueError, KeyError, TypeError):
        return False
    factor.sign_count = verified.new_sign_count
    factor.last_used_at = utcnow()
    return True
