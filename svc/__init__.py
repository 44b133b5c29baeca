"""svc: a self-hosted bug-report collection service.

`svc.create_app` is the application factory of svc.app, loaded when first asked for: the `svc`
command line (svc.client) lives in this package too, and importing the factory with the package
would load Flask, SQLAlchemy and every blueprint into each of its runs (0.75 s of 1.0 s).
"""


def __getattr__(name: str):
    if name == "create_app":
        from svc.app import create_app

        return create_app
    raise AttributeError(f"module 'svc' has no attribute {name!r}")
