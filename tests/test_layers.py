"""Which way the imports point (README, "Layout"): read from the source with `ast`, so that an
import that breaks the layering fails here, whoever adds it."""

import ast
import functools
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SVC = ROOT / "svc"

# What each part may import of svc (besides itself). A part is a package of svc or a module at
# its top; every part is listed (test_every_part_has_a_rule), so a new one is a choice made here.
MAY_IMPORT = {
    # The factory assembles the parts; `svc` itself only loads it when first asked for.
    "svc": {"svc.app"},
    "svc.app": {
        "svc.api",
        "svc.operator_commands",
        "svc.config",
        "svc.dashboard",
        "svc.database",
        "svc.errors",
        "svc.extensions",
        "svc.json_codec",
        "svc.mcp",
        "svc.rate_limits",
        "svc.replay",
        "svc.reporter_pages",
        "svc.security",
        "svc.sso",
        "svc.storage",
        "svc.widget",
    },
    # The coding agents' server: the services, as the API's views call them, with the token
    # checks of auth; it parses with the API's schemas and never imports the API.
    "svc.mcp": {
        "svc.audit",
        "svc.auth",
        "svc.errors",
        "svc.extensions",
        "svc.models",
        "svc.schemas",
        "svc.services",
        "svc.storage",
    },
    # The operator's `flask` commands.
    "svc.operator_commands": {
        "svc.errors",
        "svc.operations",
        "svc.scheduler",
        "svc.schemas",
        "svc.services",
    },
    # The team's dashboard fetches everything from the JSON API: it calls no service.
    "svc.dashboard": {"svc.errors"},
    # The pages a reporter opens from a mail are rendered here from the services' answers.
    "svc.reporter_pages": {
        "svc.dashboard",
        "svc.errors",
        "svc.i18n",
        "svc.models",
        "svc.services",
    },
    "svc.widget": {"svc.errors", "svc.i18n"},
    "svc.replay": {"svc.config", "svc.errors", "svc.widget"},
    # Single sign-on's blueprint; the provider's client is auth's (svc.auth.oidc).
    "svc.sso": {"svc.auth", "svc.config", "svc.errors", "svc.rate_limits", "svc.services"},
    # The scheduler process runs the services' jobs; it needs no blueprint.
    "svc.scheduler": {
        "svc.auth",
        "svc.database",
        "svc.extensions",
        "svc.mail",
        "svc.models",
        "svc.rate_limits",
        "svc.services",
        "svc.webhooks",
    },
    "svc.errors": {"svc.extensions"},
    "svc.rate_limits": {"svc.database", "svc.extensions"},
    "svc.openapi": {"svc.schemas"},
    "svc.security": set(),
    "svc.serve": {"svc.config"},
    # The scheduler's process: the app, then the scheduler's loop.
    "svc.run_scheduler": {"svc.app", "svc.scheduler"},
    "svc.supervise": set(),  # what stays in front of the service imports nothing of it
    "svc.gunicorn_conf": {"svc.config", "svc.extensions", "svc.replay"},
    "svc.gunicorn_worker": set(),
    "svc.extensions": set(),
    "svc.i18n": set(),
    "svc.models": {"svc.extensions"},
    "svc.database": {"svc.extensions"},
    "svc.auth": {
        "svc.audit",
        "svc.config",
        "svc.database",
        "svc.errors",
        "svc.extensions",
        "svc.models",
    },
    "svc.audit": {"svc.extensions", "svc.models"},
    "svc.storage": {"svc.errors"},
    "svc.config": set(),
    "svc.json_codec": set(),
    "svc.wire": set(),
    "svc.deadline": set(),
    "svc.retry": set(),
    # The one claim and record of due rows, for every outbox (its claims last as long as the
    # scheduler's lease, a setting).
    "svc.outbox": {"svc.config", "svc.database", "svc.extensions", "svc.models", "svc.retry"},
    "svc.webhooks": {
        "svc.config",
        "svc.database",
        "svc.deadline",
        "svc.errors",
        "svc.extensions",
        "svc.models",
        "svc.outbox",
        "svc.retry",
        "svc.wire",
    },
    "svc.mail": {
        "svc.config",
        "svc.database",
        "svc.deadline",
        "svc.extensions",
        "svc.i18n",
        "svc.models",
        "svc.outbox",
        "svc.retry",
    },
    # A tracker's calls go through the webhooks' outbound guard; never the services.
    "svc.integrations": {"svc.webhooks", "svc.wire"},
    "svc.secrets": {"svc.config"},
    "svc.operations": {
        "svc.audit",
        "svc.errors",
        "svc.extensions",
        "svc.json_codec",
        "svc.models",
        "svc.storage",
    },
    # The command line is a client like any other: the HTTP API is its only way in.
    "svc.client": set(),
    # What the three layers of a request import today: a new arrow is a choice made here.
    "svc.api": {
        "svc.auth",
        "svc.database",
        "svc.errors",
        "svc.extensions",
        "svc.i18n",
        "svc.json_codec",
        "svc.models",
        "svc.openapi",
        "svc.rate_limits",
        "svc.replay",
        "svc.schemas",
        "svc.services",
        "svc.storage",
    },
    # No services: a schema checks a shape (the webhook URL rule is the sender's own).
    "svc.schemas": {
        "svc.audit",
        "svc.auth",
        "svc.config",
        "svc.errors",
        "svc.i18n",
        "svc.json_codec",
        "svc.models",
        "svc.webhooks",
        "svc.wire",
    },
    "svc.services": {
        "svc.audit",
        "svc.auth",
        "svc.config",
        "svc.database",
        "svc.errors",
        "svc.extensions",
        "svc.i18n",
        "svc.integrations",
        "svc.json_codec",
        "svc.mail",
        "svc.models",
        "svc.outbox",
        "svc.retry",
        "svc.secrets",
        "svc.storage",
        "svc.webhooks",
        "svc.wire",
    },
}


# The repository's own packages: the service, the harness that runs it for the tests and the
# benchmarks, and those two. What each may import of the others.
PACKAGE_MAY_IMPORT = {
    "svc": set(),
    "harness": {"svc"},
    "bench": {"svc", "harness"},
    "tests": {"svc", "harness"},
}


def _part(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(SVC.parent).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _imported_names(path: Path) -> list[str]:
    """The modules a file imports, absolute imports only (`from svc import x` imports svc.x)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


@functools.cache
def imports_by_part() -> dict[str, set[str]]:
    """{part: the other parts of svc its modules import}."""
    graph = defaultdict(set)
    for path in SVC.rglob("*.py"):
        source = _part(_module_name(path))
        for name in _imported_names(path):
            if name.startswith("svc.") and _part(name) != source:
                graph[source].add(_part(name))
    return graph


@pytest.mark.parametrize("package", sorted(PACKAGE_MAY_IMPORT))
def test_each_package_imports_only_the_packages_it_may(package):
    others = set(PACKAGE_MAY_IMPORT) - {package}
    imported = {
        name.split(".")[0]
        for path in (ROOT / package).rglob("*.py")
        for name in _imported_names(path)
    }
    assert imported & others <= PACKAGE_MAY_IMPORT[package]


def readme_layers() -> dict[str, set[str]]:
    """The README's layer diagram ("Layout"): `part  ->  a, b, c  (a comment)`, a line that
    starts with spaces and has no arrow going on with the line before."""
    block = (ROOT / "README.md").read_text().split("Imports point down only.", 1)[1]
    diagram = block.split("```", 2)[1]
    layers, last = {}, None
    for line in diagram.splitlines()[1:]:
        if "->" in line:
            last, imported = (side.strip() for side in line.split("->", 1))
            layers[last] = set()
        else:
            imported = line.strip()
        imported = re.sub(r"\(.*?\)", "", imported)
        layers[last] |= {f"svc.{name.strip()}" for name in imported.split(",") if name.strip()}
    return {f"svc.{part}": imported for part, imported in layers.items()}


def test_the_readme_draws_the_layers_as_they_are():
    drawn = readme_layers()
    assert set(drawn) <= set(MAY_IMPORT)
    assert {part: MAY_IMPORT[part] for part in drawn} == drawn
    assert {"svc.api", "svc.schemas", "svc.services", "svc.auth", "svc.models"} <= set(drawn)


def test_no_relative_imports():
    relative = [
        str(path)
        for path in SVC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert relative == []  # the rules above read absolute imports only


@pytest.mark.parametrize("part", sorted(MAY_IMPORT))
def test_each_part_imports_only_what_it_may(part):
    assert imports_by_part().get(part, set()) - MAY_IMPORT[part] == set()


def test_nothing_imports_the_api_but_the_app_factory():
    graph = imports_by_part()
    assert {part for part, imported in graph.items() if "svc.api" in imported} <= {"svc.app"}


def test_no_two_parts_import_each_other():
    graph = imports_by_part()
    mutual = {
        frozenset({a, b})
        for a, imported in graph.items()
        for b in imported
        if a in graph.get(b, ())
    }
    assert mutual == set()


def test_nothing_below_the_api_names_an_http_status():
    """Services, storage, auth and webhooks raise domain errors; svc/errors.py maps them."""
    below = [
        path
        for part in ("services", "auth", "webhooks", "storage")
        for path in SVC.glob(f"{part}/**/*.py")
    ]
    naming = [
        f"{path.relative_to(SVC)}:{node.lineno}"
        for path in below
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "APIError"
    ]
    assert naming == []


# What a report change sets off, each used in svc/services/reporting/report_changes.py alone: a
# writer that uses one itself is a copy of that module, which drifts.
REPORT_CHANGE_EFFECTS = (
    ("payloads", "UPDATED"),
    ("payloads", "COMMENTED"),
    ("stats", "recount"),
    ("tracker_calls", "status_changed"),
    ("reporter_mails", "status_changed"),
    ("reporter_mails", "commented"),
    ("notifications", "report_reopened"),
    ("notifications", "report_assigned"),
    ("notifications", "report_mentioned"),
)


@functools.cache
def _uses(path: Path) -> set[tuple[str, str]]:
    """Every `module.name` the code of a file uses (read with ast: not its comments or
    docstrings), and every name it imports from a module (`from m import name`)."""
    tree = ast.parse(path.read_text(), str(path))
    used = {
        (node.value.id, node.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            used |= {(node.module.rsplit(".", 1)[-1], alias.name) for alias in node.names}
    return used


def test_what_a_report_change_sets_off_is_written_once():
    home = SVC / "services" / "reporting" / "report_changes.py"
    elsewhere = {
        f"{path.relative_to(SVC)}: {'.'.join(effect)}"
        for path in SVC.rglob("*.py")
        if path != home
        for effect in REPORT_CHANGE_EFFECTS
        if effect in _uses(path)
    }
    assert elsewhere == set()
    assert set(REPORT_CHANGE_EFFECTS) <= _uses(home)


def test_every_part_has_a_rule():
    parts = {_part(_module_name(path)) for path in SVC.rglob("*.py")}
    assert parts - set(MAY_IMPORT) == set()


def module_imports() -> dict[str, set[str]]:
    """{module of svc: the modules of svc it imports when it is imported}: the statements of its
    body (not those inside a function, which run later, nor `if TYPE_CHECKING`). `from p import
    m` imports the module p.m where there is one, else p."""
    modules = {_module_name(path): path for path in SVC.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        imported = set()
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    imported.add(whole if whole in modules else node.module)
        graph[name] = {module for module in imported if module in modules and module != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycle_between_modules():
    """Seams 3: a cycle ran through six modules of services and worked only because each edge
    was written `from svc.services import x`; one `from x import name` broke the import."""
    assert import_cycles(module_imports()) == []


def test_the_cycle_test_finds_a_cycle():
    graph = {module: set(imported) for module, imported in module_imports().items()}
    graph["svc.services.reporting.report_changes"].add("svc.services.reporters.status_page")
    assert ["svc.services.reporters.status_page", "svc.services.reporting.report_changes"] in [
        [module for module in cycle if "status_page" in module or "report_changes" in module]
        for cycle in import_cycles(graph)
    ]


def test_a_service_process_loads_no_migration_tool_nor_cryptography(tmp_path):
    """Every worker and the scheduler create the app: Flask-Migrate (alembic, mako, pygments)
    and cryptography are 18 MB in each, loaded only where migrations run or a secret is used;
    the stemmer, the QR codes, ada and APScheduler 7 MB more, loaded where they are used
    (docs/performance.md, "Memory")."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; from svc import create_app; create_app(); "
         "print(' '.join(sys.modules))"],
        cwd=ROOT, env={**os.environ, "SVC_INSTANCE_PATH": str(tmp_path)},
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    heavy_ones = ("flask_migrate", "alembic", "mako", "pygments", "cryptography")
    for heavy in (*heavy_ones, "snowballstemmer", "segno", "ada_url", "apscheduler", "apispec"):
        assert heavy not in loaded, heavy
