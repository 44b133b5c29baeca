"""One blueprint per resource. Views parse with a schema, call a service, dump with a schema.

Every module of this package that defines `bp` is a resource's blueprint and is registered: a new
resource's module needs no listing here."""

import importlib
import pkgutil

from flask import Flask

from svc.api.cors import add_cors_headers


def blueprints() -> list:
    names = (f"{__name__}.{found.name}" for found in pkgutil.iter_modules(__path__))
    modules = (importlib.import_module(name) for name in names)
    return [module.bp for module in modules if hasattr(module, "bp")]


def register_blueprints(app: Flask) -> None:
    for blueprint in blueprints():
        app.register_blueprint(blueprint)
    app.after_request(add_cors_headers)
