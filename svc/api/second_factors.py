"""A second factor (docs/api.md §3.2, docs/identity.md): answering one to finish a password
sign-in (the half-signed-in cookie), and enrolling or removing one (a browser session)."""

import uuid

from flask import Blueprint, after_this_request

from svc.api.auth import sign_in
from svc.api.decorators import body, rate_limited, response
from svc.auth.cookies import clear_pending_cookie
from svc.auth.guard import (
    current_caller,
    current_pending_sign_in,
    current_user,
    login_required,
    pending_sign_in_required,
    session_required,
)
from svc.schemas.second_factors import (
    EnrolledOut,
    PasskeyIn,
    PasskeyOptionsOut,
    ProofIn,
    RecoveryCodesOut,
    SecondFactorAnswerIn,
    SignedInOut,
    SignInSecurityOut,
    TotpConfirmIn,
    TotpSetupOut,
)
from svc.services.identity import second_factors
from svc.services.listing import Shown

bp = Blueprint("second_factors", __name__, url_prefix="/api/v1/auth")


@bp.post("/second-factor")
@pending_sign_in_required
@rate_limited("SVC_RATE_LIMIT_AUTH")
@body(SecondFactorAnswerIn())
@response(SignedInOut(), errors=(401, 409))
def answer_second_factor(data):
    """Finish a password sign-in with a TOTP code, a recovery code or a passkey: the session
    starts now."""
    user, method, codes = second_factors.complete(current_pending_sign_in(), data)
    sign_in(user, method=f"password+{method}")

    @after_this_request
    def forget_waiting(resp):
        clear_pending_cookie(resp)
        return resp

    return Shown(user, recovery_codes=codes)


@bp.post("/second-factor/passkey-options")
@pending_sign_in_required
@response(PasskeyOptionsOut(), errors=(409,))
def passkey_sign_in_options():
    """The challenge a passkey signs to finish the waiting sign-in."""
    return second_factors.passkeys().sign_in_options(current_pending_sign_in())


@bp.post("/second-factor/enrolment")
@pending_sign_in_required
@response(TotpSetupOut(), errors=(409,))
def enrol_while_signing_in():
    """SVC_REQUIRE_2FA: the authenticator app's secret and QR code to enrol before the session
    starts; its first code, sent to /second-factor, finishes both."""
    return second_factors.enrolment_setup(current_pending_sign_in())


@bp.get("/security")
@login_required
@response(SignInSecurityOut())
def security():
    """How the signed-in user signs in: methods, second factors, recovery codes left."""
    return second_factors.security_of(current_user())


@bp.post("/factors/totp")
@session_required
@response(TotpSetupOut(), 201)
def start_totp():
    """A new authenticator app: its secret and QR code; counted once a code confirms it."""
    return second_factors.start_totp(current_user())


@bp.post("/factors/<uuid:factor_id>/confirm")
@session_required
@body(TotpConfirmIn())
@response(EnrolledOut(), errors=(404, 409))
def confirm_totp(data, factor_id: uuid.UUID):
    """Confirm an authenticator app with its current code; a first factor's answer carries the
    recovery codes, shown this once."""
    return second_factors.confirm_totp(current_user(), factor_id, data["code"], data)


@bp.post("/factors/passkey-options")
@session_required
@response(PasskeyOptionsOut())
def passkey_registration_options():
    """What navigator.credentials.create() needs to make a passkey for svc."""
    caller = current_caller()
    return second_factors.passkeys().registration_options(caller.user, caller.session_id)


@bp.post("/factors/passkeys")
@session_required
@body(PasskeyIn())
@response(EnrolledOut(), 201, errors=(409,))
def add_passkey(data):
    """Keep the passkey the browser made from those options."""
    caller = current_caller()
    return second_factors.passkeys().add(
        caller.user, caller.session_id, data["name"], data["credential"], data["ticket"], data
    )


@bp.delete("/factors/<uuid:factor_id>")
@session_required
@body(ProofIn())
@response(None, 204, errors=(404,))
def remove_factor(data, factor_id: uuid.UUID):
    """Remove a second factor (`current_password` or `current_code` in the body); with the
    last one go the recovery codes."""
    second_factors.remove_factor(current_user(), factor_id, data)


@bp.post("/recovery-codes")
@session_required
@body(ProofIn())
@response(RecoveryCodesOut(), 201, errors=(409,))
def new_recovery_codes(data):
    """10 new recovery codes (`current_password` or `current_code` in the body), shown this
    once; the old ones stop working."""
    return {"recovery_codes": second_factors.new_recovery_codes(current_user(), data)}
