"""A second factor per user (docs/identity.md): TOTP (RFC 6238 with pyotp, the QR
code drawn here by segno), passkeys (WebAuthn with py_webauthn), 10 single-use recovery codes;
and the password sign-in that waits for one (svc.auth.pending).

Enrolling and removing need a browser session (the views say so); OIDC sign-ins and personal
access tokens are never asked for a factor."""

import base64
import hmac
import time
import uuid
from secrets import token_bytes
from urllib.parse import urlsplit

import pyotp
from sqlalchemy import delete, func, or_, select, update

from svc import audit, secrets
from svc.auth import passwords, pending, tokens
from svc.config import public_url, setting
from svc.errors import (
    AccountDeactivated,
    Conflict,
    Forbidden,
    NotFound,
    TooManyGuesses,
    field_error,
    unauthorized,
)
from svc.extensions import db, limiter
from svc.mail import outbox
from svc.models import PendingSignIn, RecoveryCode, SecondFactor, User
from svc.models.base import utcnow
from svc.services.identity import users
from svc.services.listing import Shown

TOTP = "totp"
PASSKEY = "passkey"
_KIND_WORDS = {TOTP: "an authenticator app", PASSKEY: "a passkey"}
RECOVERY_CODE_COUNT = 10
STEP_SECONDS = 30
WRONG_CODE = "Wrong or already used code"
# Wrong answers an account may give in an hour, whatever sign-in they come from: five end one
# waiting sign-in, but the password starts another (docs/identity.md).
WRONG_ANSWERS_AN_HOUR = 10
_HOUR = 3600


# Which factors a user has ------------------------------------------------------------------


def passkeys():
    """svc.services.identity.passkeys, imported on first use: py_webauthn adds an eighth of a
    second to the start of every process (workers, scheduler, the CLI), and only passkeys need
    it."""
    from svc.services.identity import passkeys

    return passkeys


def factors_of(user_id: uuid.UUID) -> list[SecondFactor]:
    """The user's enrolled factors (a TOTP secret counts once its first code was confirmed)."""
    return list(
        db.session.scalars(
            select(SecondFactor)
            .where(SecondFactor.user_id == user_id, SecondFactor.confirmed_at.is_not(None))
            .order_by(SecondFactor.created_at)
        )
    )


def methods_of(user_id: uuid.UUID) -> list[str]:
    """What a waiting sign-in can answer with: the kinds enrolled, then recovery codes."""
    kinds = {factor.kind for factor in factors_of(user_id)}
    methods = [kind for kind in (TOTP, PASSKEY) if kind in kinds]
    return [*methods, "recovery_code"] if methods else []


def recovery_codes_left(user_id: uuid.UUID) -> int:
    unused = (RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None))
    return db.session.scalar(select(func.count()).select_from(RecoveryCode).where(*unused))


def security_of(user: User) -> dict:
    """How the user signs in, for the account page."""
    methods = ["password"] if user.password_hash else []
    return {
        "sign_in_methods": [*methods, *(["oidc"] if user.oidc_subject else [])],
        "factors": factors_of(user.id),
        "recovery_codes_left": recovery_codes_left(user.id),
        "second_factor_required": setting("SVC_REQUIRE_2FA"),
    }


# TOTP --------------------------------------------------------------------------------------


def _issuer() -> str:
    host = urlsplit(public_url()).hostname or "svc"
    return f"svc ({host})"


def _totp_setup(user: User, secret: str) -> dict:
    import segno  # on first use, not in every process, for a QR code now and then

    uri = pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name=_issuer())
    return {"secret": secret, "otpauth_uri": uri, "qr_code": segno.make(uri).svg_data_uri(scale=5)}


def start_totp(user: User) -> dict:
    """A new TOTP secret for the user, not yet counted: its first code confirms it
    (confirm_totp). An earlier unconfirmed one is dropped."""
    db.session.execute(
        delete(SecondFactor).where(
            SecondFactor.user_id == user.id,
            SecondFactor.kind == TOTP,
            SecondFactor.confirmed_at.is_(None),
        )
    )
    secret = pyotp.random_base32()
    factor = SecondFactor(
        user_id=user.id, kind=TOTP, name="Authenticator app", totp_secret=secrets.encrypt(secret)
    )
    db.session.add(factor)
    db.session.commit()
    return {"id": factor.id, **_totp_setup(user, secret)}


UNREADABLE = (
    "Your authenticator app cannot be checked: this svc was restored without the key its secret "
    "was stored with. Sign in with a recovery code, or ask your administrator to reset your "
    "second factor (flask --app svc reset-factors EMAIL)."
)


def _totp_secret(stored: str) -> str:
    """A stored TOTP secret, readable; a 409 with words when no key opens it (an install
    restored without its secret key: docs/operations.md)."""
    try:
        return secrets.decrypt(stored)
    except secrets.Undecryptable:
        raise Conflict(UNREADABLE) from None


def _matching_step(secret: str, code: str) -> int | None:
    """The time step whose code this is: this one, or one step either side (clock drift)."""
    code = code.strip().replace(" ", "")
    totp = pyotp.TOTP(secret)
    now = int(time.time()) // STEP_SECONDS
    for step in (now - 1, now, now + 1):
        if hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def _spend_step(factor: SecondFactor, step: int) -> bool:
    """Record the step as used unless it or a later one was: a conditional UPDATE, so a code
    works once even when two requests bring it at the same moment."""
    result = db.session.execute(
        update(SecondFactor)
        .where(
            SecondFactor.id == factor.id,
            or_(SecondFactor.last_step.is_(None), SecondFactor.last_step < step),
        )
        .values(last_step=step, last_used_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def _totp_accepts(factor: SecondFactor, code: str) -> bool:
    step = _matching_step(_totp_secret(factor.totp_secret), code)
    return step is not None and _spend_step(factor, step)


def _factor_of(user: User, factor_id: uuid.UUID, *kinds: str) -> SecondFactor:
    """The user's factor of that id (of one of `kinds`, when given); 404 for anyone else's."""
    mine = select(SecondFactor).where(SecondFactor.id == factor_id, SecondFactor.user_id == user.id)
    factor = db.session.scalar(mine.where(SecondFactor.kind.in_(kinds)) if kinds else mine)
    if factor is None:
        raise NotFound("No such second factor")
    return factor


PROOF_NEEDED = (
    "Give your current password, or a code from your authenticator app or a recovery code"
)
WRONG_PROOF = "Wrong password or code"


def check_proof(user: User, proof: dict) -> None:
    """A change to how the user signs in (a factor added or removed, new recovery codes) is
    made by the user: a stolen session alone cannot make it. `proof`: `current_password`, or
    `current_code` (a code of an enrolled authenticator app, spent as a sign-in's would be,
    or a recovery code, used up). An account with neither a password nor a factor (made by
    single sign-on) has nothing to prove with but its session."""
    password, code = proof.get("current_password"), proof.get("current_code")
    has_factor = bool(factors_of(user.id))
    if not user.password_hash and not has_factor:
        return
    if password and user.password_hash and passwords.verify_password(user.password_hash, password):
        return
    if code and has_factor and _current_code_accepted(user, code):
        return
    db.session.rollback()
    raise Forbidden(WRONG_PROOF if password or code else PROOF_NEEDED)


def _current_code_accepted(user: User, code: str) -> bool:
    apps = db.session.scalars(
        select(SecondFactor).where(
            SecondFactor.user_id == user.id,
            SecondFactor.kind == TOTP,
            SecondFactor.confirmed_at.is_not(None),
        )
    )
    return any(_totp_accepts(app, code) for app in apps) or _spend_recovery_code(user.id, code)


def _tell(user: User, what: str) -> None:
    """The user hears of every change to how they sign in, in the change's transaction."""
    outbox.queue(
        user.email,
        "svc: your sign-in security changed",
        f"Hello {user.name},\n\n{what} on your svc account ({user.email}).\n\n"
        "If that was not you, sign in, change your password and look at your second factors "
        "on your account page, or ask your administrator to reset them.",
    )


def confirm_totp(user: User, factor_id: uuid.UUID, code: str, proof: dict) -> Shown:
    """Count the new TOTP secret once a code from the app matches, the user's proof (above)
    given. The first factor of a user comes with recovery codes (the answer's
    `recovery_codes`), shown this once."""
    factor = _factor_of(user, factor_id, TOTP)
    if factor.confirmed_at is not None:
        raise Conflict("This authenticator app is already confirmed")
    check_proof(user, proof)
    if not _totp_accepts(factor, code):
        db.session.rollback()
        raise field_error("code", WRONG_CODE)
    codes = count(user, factor)
    db.session.commit()
    return Shown(factor, recovery_codes=codes)


def count(user: User, factor: SecondFactor) -> list[str] | None:
    """Count the factor as enrolled, in the caller's transaction. A user's first factor comes
    with recovery codes, returned here, the only time they are shown."""
    first = not factors_of(user.id)
    factor.confirmed_at = utcnow()
    audit.record(audit.SECOND_FACTOR_ADDED, user, ("user", user.id), kind=factor.kind)
    _tell(user, f"A second factor ({_KIND_WORDS[factor.kind]}) was added")
    return _replace_recovery_codes(user) if first else None


# Recovery codes ----------------------------------------------------------------------------


def _code_hash(code: str) -> str:
    return tokens.sha256_hex(code.strip().lower().replace("-", "").replace(" ", ""))


def _new_code() -> str:
    """16 characters of base32, 80 random bits, in groups of four."""
    raw = base64.b32encode(token_bytes(10)).decode().lower()
    return "-".join(raw[i : i + 4] for i in range(0, 16, 4))


def _replace_recovery_codes(user: User) -> list[str]:
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    codes = [_new_code() for _ in range(RECOVERY_CODE_COUNT)]
    db.session.add_all(RecoveryCode(user_id=user.id, code_hash=_code_hash(c)) for c in codes)
    audit.record(audit.RECOVERY_CODES_CREATED, user, ("user", user.id))
    return codes


def new_recovery_codes(user: User, proof: dict) -> list[str]:
    """10 new codes; the old ones stop working. Only with a factor enrolled, and the user's
    proof (check_proof)."""
    if not factors_of(user.id):
        raise Conflict("Enrol a second factor first: recovery codes stand in for one")
    check_proof(user, proof)
    codes = _replace_recovery_codes(user)
    _tell(user, "New recovery codes were made (the old ones no longer work)")
    db.session.commit()
    return codes


def _spend_recovery_code(user_id: uuid.UUID, code: str) -> bool:
    result = db.session.execute(
        update(RecoveryCode)
        .where(
            RecoveryCode.user_id == user_id,
            RecoveryCode.code_hash == _code_hash(code),
            RecoveryCode.used_at.is_(None),
        )
        .values(used_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


# Removing ----------------------------------------------------------------------------------


def remove_factor(user: User, factor_id: uuid.UUID, proof: dict) -> None:
    """Remove one factor, the user's proof (check_proof) given; with the last one go the
    recovery codes. Under SVC_REQUIRE_2FA the last one stays (409): the account would keep its
    session, and every later one, with no factor at all."""
    factor = _factor_of(user, factor_id)
    check_proof(user, proof)
    if setting("SVC_REQUIRE_2FA") and len(factors_of(user.id)) <= 1:
        raise Conflict(
            "This instance requires a second factor: add another one before removing your last"
        )
    db.session.delete(factor)
    db.session.flush()
    if not factors_of(user.id):
        db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    audit.record(audit.SECOND_FACTOR_REMOVED, user, ("user", user.id), kind=factor.kind)
    _tell(user, f"A second factor ({_KIND_WORDS[factor.kind]}) was removed")
    db.session.commit()


def reset_factors(admin: User | None, user_id: uuid.UUID) -> None:
    """An administrator removes every factor and recovery code of an account (a lost phone):
    its next password sign-in needs none, or enrols one under SVC_REQUIRE_2FA."""
    user = db.session.get(User, user_id)
    if user is None:
        raise NotFound("No such user")
    for model in (SecondFactor, RecoveryCode, PendingSignIn):
        db.session.execute(delete(model).where(model.user_id == user.id))
    audit.record(audit.SECOND_FACTORS_RESET, admin, ("user", user.id))
    by = admin.name if admin else "the operator"
    _tell(user, f"Every second factor and recovery code was removed by {by}")
    db.session.commit()


# Signing in with a factor ------------------------------------------------------------------


def begin_sign_in(user: User) -> tuple[str, dict] | None:
    """A password sign-in that waits for its factor (one is enrolled, or SVC_REQUIRE_2FA asks
    for one): the cookie's value, and what the answer says (how to go on, until when). None
    when no factor is due."""
    methods = methods_of(user.id)
    if not methods and not setting("SVC_REQUIRE_2FA"):
        return None
    token, waiting = pending.begin(user)
    return token, {
        "methods": methods or [TOTP],
        "enrol": not methods,  # SVC_REQUIRE_2FA and none yet: enrol an app now
        "expires_at": waiting.expires_at,
    }


def enrolment_setup(waiting: PendingSignIn) -> dict:
    """SVC_REQUIRE_2FA and no factor yet: a TOTP secret to enrol before the session starts."""
    user = db.session.get(User, waiting.user_id)
    if factors_of(user.id):
        raise Conflict("This account has a second factor: answer with it")
    secret = pyotp.random_base32()
    waiting.enrolling_secret = secrets.encrypt(secret)
    db.session.commit()
    return _totp_setup(user, secret)


def complete(waiting: PendingSignIn, answer: dict) -> tuple[User, str, list[str] | None]:
    """Check the waiting sign-in's answer ({code}, {recovery_code} or {credential}) and spend
    it: the user, the method that passed, and recovery codes when the answer enrolled a first
    factor (SVC_REQUIRE_2FA). A wrong answer counts against the waiting sign-in (five end it)
    and is recorded."""
    user = db.session.get(User, waiting.user_id)
    if not user.active:  # deactivated since the password was accepted
        raise AccountDeactivated()
    _refuse_while_guessed_at(user)
    codes, method = None, None
    if answer.get("recovery_code") and _spend_recovery_code(user.id, answer["recovery_code"]):
        method = "recovery_code"
        audit.record(audit.RECOVERY_CODE_USED, user, ("user", user.id))
    elif answer.get("credential") and passkeys().accepts(waiting, answer["credential"]):
        method = PASSKEY
    elif answer.get("code"):
        method, codes = _code_answer(user, waiting, answer["code"])
    if method is None or not pending.spend(waiting):
        db.session.rollback()
        pending.count_failure(waiting)
        users.record_failed_sign_in(user, user.email, "second factor")
        _count_wrong_answer(user)
        raise unauthorized("Passkey refused" if answer.get("credential") else WRONG_CODE)
    return user, method, codes


def _guesses_key(user: User) -> str:
    return f"second-factor-guesses|{user.id}"


def _refuse_while_guessed_at(user: User) -> None:
    """429 for the rest of the hour once the account's answers were wrong too often. Counted
    where the rate limits are (the database, or SVC_RATE_LIMIT_STORAGE): every worker and host
    sees the same count."""
    storage = limiter.storage
    if storage.get(_guesses_key(user)) >= WRONG_ANSWERS_AN_HOUR:
        wait = max(1, int(storage.get_expiry(_guesses_key(user)) - time.time()) + 1)
        raise TooManyGuesses(
            "Too many wrong answers for this account: wait before trying again", wait
        )


def _count_wrong_answer(user: User) -> None:
    """One more; the user is mailed when the account's limit is reached (someone who has the
    password is guessing)."""
    if limiter.storage.incr(_guesses_key(user), _HOUR) == WRONG_ANSWERS_AN_HOUR:
        outbox.queue(
            user.email,
            "svc: your second factor is being guessed at",
            f"Hello {user.name},\n\n{WRONG_ANSWERS_AN_HOUR} wrong second-factor answers were "
            "given for your svc account within the hour, after your password was accepted: "
            "whoever gave them knows your password. Sign-ins with a second factor wait for the "
            "rest of the hour.\n\nIf that was not you, change your password now.",
        )
        db.session.commit()


def _code_answer(
    user: User, waiting: PendingSignIn, code: str
) -> tuple[str | None, list[str] | None]:
    """A TOTP code: of the secret being enrolled (SVC_REQUIRE_2FA), else of an enrolled app."""
    if waiting.enrolling_secret:
        step = _matching_step(_totp_secret(waiting.enrolling_secret), code)
        if step is None:
            return None, None
        factor = SecondFactor(
            user_id=user.id,
            kind=TOTP,
            name="Authenticator app",
            totp_secret=waiting.enrolling_secret,
            last_step=step,
        )
        db.session.add(factor)
        return TOTP, count(user, factor)
    for factor in factors_of(user.id):
        if factor.kind == TOTP and _totp_accepts(factor, code):
            return TOTP, None
    return None, None
