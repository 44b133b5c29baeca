"""Credentials: password hashing, token formats, cookies, CSRF and the decorators that say which
credentials an endpoint accepts (`svc.auth.guard`)."""
