"""The direction of dependencies the README promises, checked on the source."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from swarmkit import Swarm
from swarmkit.config import SwarmConfig

PACKAGE = Path(__file__).resolve().parents[1] / "swarmkit"
NETWORK_ADAPTER = {"models/_openai.py", "models/_responses.py", "models/_retry.py"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _top(name: str) -> str:
    return name.split(".", maxsplit=1)[0]


def test_only_the_openai_adapter_imports_openai_and_tenacity() -> None:
    """openai and tenacity stay behind the Model protocol."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if _top(name) in {"openai", "tenacity"} and module not in NETWORK_ADAPTER
    ]
    assert offenders == []


def test_conditions_and_graph_use_the_standard_library_only() -> None:
    """The condition language and HandoffGraph know nothing of agents, models or pydantic."""
    allowed_own = {"swarmkit.conditions", "swarmkit.exceptions"}
    offenders = []
    for module, tree in _modules():
        if not (module.startswith("conditions/") or module == "graph.py"):
            continue
        for name in _imports(tree):
            own = name.startswith("swarmkit")
            if own and not any(name.startswith(prefix) for prefix in allowed_own):
                offenders.append((module, name))
            if not own and _top(name) not in sys.stdlib_module_names | {"__future__"}:
                offenders.append((module, name))
    assert offenders == []


def test_conditions_never_evaluate_python() -> None:
    """No eval, exec or compile anywhere in the package."""
    calls = [
        (module, node.func.id)
        for module, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"eval", "exec", "compile"}
    ]
    assert calls == []


def test_the_library_never_configures_structlog() -> None:
    """Only the command (an application) configures structlog."""
    configuring = [
        module
        for module, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "configure"
        and not module.startswith("cli/")
    ]
    assert configuring == []


HEAVY = (
    "openai",
    "httpx",
    "tenacity",
    "temporalio",
    "psycopg",
    "mcp",
    "opentelemetry",
    "dbos",
    "sqlalchemy",
)
"""What a plain import must not load: the HTTP clients and every extra."""


def test_importing_swarmkit_loads_no_http_client_nor_any_extra() -> None:
    """`import swarmkit` (or its journal, or lowlevel) loads no openai, httpx or extra."""
    for module in ("swarmkit", "swarmkit.journal", "swarmkit.lowlevel"):
        probe = (
            f"import sys, {module}\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
        )
        assert done.stdout.strip() == "[]", module


_FIRST_CALL_PROBE = """
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import swarmkit

ANSWER = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
          "choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": "hi"}}]}

class Answer(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_port}/v1"
model = swarmkit.OpenAIModel("m", api_key="sk-test-key", base_url=url)
print(type(model).__name__, "openai" in sys.modules)
agent = swarmkit.Agent(name="a", instructions="say hi", model=model)
result = swarmkit.Swarm([agent], "a").run_sync("hello")
print(result.final_output, "openai" in sys.modules)
server.shutdown()
"""


def test_the_openai_package_loads_on_the_first_call_not_at_construction() -> None:
    """Building an OpenAIModel imports no openai; its first call (to a loopback server) does."""
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CALL_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.split() == ["OpenAIModel", "False", "hi", "True"]


INTEGRATIONS = {"mcp.py": {"mcp"}, "mcp_server": {"mcp"}, "tracing": {"opentelemetry"}}
"""Which extra each integration (a module, or a package by its folder) alone may import."""


def test_only_the_temporal_package_imports_temporalio() -> None:
    """temporalio stays behind swarmkit.temporal, and nothing outside it imports that package."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if not module.startswith("temporal/")
        and (_top(name) == "temporalio" or name.startswith("swarmkit.temporal"))
    ]
    assert offenders == []


def test_only_the_dbos_package_imports_dbos() -> None:
    """dbos stays behind swarmkit.dbos, and nothing outside it imports that package."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if not module.startswith("dbos/")
        and (_top(name) == "dbos" or name.startswith("swarmkit.dbos"))
    ]
    assert offenders == []


def test_only_the_integration_modules_import_mcp_and_opentelemetry() -> None:
    """mcp is imported by swarmkit/mcp.py and swarmkit/mcp_server/ alone, opentelemetry by
    swarmkit/tracing/ alone."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if _top(name) in {"mcp", "opentelemetry"}
        and _top(name) not in INTEGRATIONS.get(module.split("/")[0], set())
    ]
    assert offenders == []


def test_nothing_in_the_package_imports_an_integration_module() -> None:
    """Arrows point into the core: no module imports swarmkit.mcp or swarmkit.tracing."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if name in {"swarmkit.mcp", "swarmkit.tracing"} and not module.startswith("tracing/")
    ]
    assert offenders == []


INTEGRATION_PACKAGES = {
    "a2a",
    "agui",
    "cli",
    "console",
    "dbos",
    "demo",
    "evals",
    "mcp",
    "mcp_server",
    "rules",
    "temporal",
    "tracing",
    "ui",
}
"""Packages built on the core's public seams only: the command, the viewer, engines, servers."""

CORE_PARTS = {
    "__init__",
    "_deprecated",
    "_lazy",
    "_log",
    "_run",
    "_schema",
    "_sent",
    "_sessions",
    "_typed_context",
    "agent",
    "bounds",
    "check",
    "conditions",
    "config",
    "context",
    "conversation",
    "delegation",
    "drawing",
    "effects",
    "events",
    "exceptions",
    "factory",
    "filters",
    "graph",
    "handoffs",
    "interrupts",
    "journal",
    "ledger",
    "limits",
    "lowlevel",
    "messages",
    "models",
    "people",
    "plan",
    "queues",
    "redaction",
    "result",
    "runtime",
    "serving",
    "shadow",
    "spec",
    "swarm",
    "testing",
    "tools",
}
"""The core's packages and modules; with INTEGRATION_PACKAGES, everything under swarmkit/."""

CORE_PRIVATE_IMPORTS = {
    # Sessions build courses, tapes and leases from the journal's own parts (their one place).
    ("_sessions", "swarmkit.journal._appender"),
    ("_sessions", "swarmkit.journal._codec"),
    ("_sessions", "swarmkit.journal._course"),
    ("_sessions", "swarmkit.journal._cursor"),
    ("_sessions", "swarmkit.journal._digest"),
    ("_sessions", "swarmkit.journal._records"),
    ("_sessions", "swarmkit.journal._stored"),
    ("_sessions", "swarmkit.journal._tape"),
    # A queue of people's notes sit beside a run's records, which resume steps over.
    ("queues.py", "swarmkit.journal._records"),
    # The spend ledger's SQLite file switches to WAL as the journal's does (one retry loop).
    ("ledger", "swarmkit.journal._sqlite_file"),
    # The extenders' door re-exports the journal's engine-level parts from where they live.
    *(
        ("lowlevel.py", f"swarmkit.journal.{module}")
        for module in ("_codec", "_mirror", "_open", "_records", "_times", "_turns", "_writer")
    ),
}
"""Private modules the core reads across its own packages, each for the reason above."""


ROOT_PLUMBING = {"swarmkit._log", "swarmkit._lazy"}
"""The root package's private modules every package may use: its log events, its lazy names."""


def _private_imports() -> Iterator[tuple[str, str, str]]:
    """(owner, module path, imported module) for each import of another package's private
    module; the owner is a module's top-level package or file under swarmkit/."""
    for module, tree in _modules():
        owner = module.split("/", maxsplit=1)[0]
        for name in _imports(tree):
            parts = name.split(".")[1:] if name.startswith("swarmkit.") else []
            if not parts or parts[0] == owner.removesuffix(".py"):
                continue
            if any(part.startswith("_") for part in parts) and name not in ROOT_PLUMBING:
                yield owner, module, name


def _top_level_parts() -> set[str]:
    """The import name of each package and module directly under swarmkit/."""
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    return packages | {path.stem for path in PACKAGE.glob("*.py")}


def test_every_package_is_listed_as_core_or_integration() -> None:
    """The two lists name exactly what is under swarmkit/: a new or renamed package fails here
    until it is listed, so the public-seams check below never silently skips it."""
    parts = _top_level_parts()
    listed = INTEGRATION_PACKAGES | CORE_PARTS
    assert INTEGRATION_PACKAGES.isdisjoint(CORE_PARTS)
    # (listed but gone or renamed, present but unlisted)
    assert (sorted(listed - parts), sorted(parts - listed)) == ([], [])


def test_integrations_use_public_seams_only() -> None:
    """The command, the viewer, engines and servers import no private module of the core."""
    offenders = [
        (module, name)
        for owner, module, name in _private_imports()
        if owner.removesuffix(".py") in INTEGRATION_PACKAGES
    ]
    assert offenders == []


def test_the_core_reads_no_private_module_beyond_its_allow_list() -> None:
    """Private imports across the core's packages are the few listed, each with its reason."""
    found = {
        (owner, name)
        for owner, _, name in _private_imports()
        if owner.removesuffix(".py") not in INTEGRATION_PACKAGES
        and name.count(".") > 1  # the root package's own private modules are the core's
    }
    assert found <= CORE_PRIVATE_IMPORTS, sorted(found - CORE_PRIVATE_IMPORTS)


def test_the_swarm_keywords_are_exactly_the_config_fields() -> None:
    """Swarm(...) takes SwarmConfig's fields as keywords, so the facade adds and hides nothing."""
    keywords = set(inspect.signature(Swarm.__init__).parameters) - {"self"}
    config_only = {"models"}  # set by with_models(), not a constructor keyword
    assert keywords == {f.name for f in dataclasses.fields(SwarmConfig)} - config_only


def test_the_facade_and_the_checker_do_not_import_each_other() -> None:
    """check/ takes the compiled spec; only swarm.py (lazily) reaches into check/."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        if module.startswith("check/")
        for name in _imports(tree)
        if name == "swarmkit.swarm"
    ]
    assert offenders == []


MAX_FUNCTION_LINES = 50
"""The house style's limit: a function longer than this (docstring included) needs a reason."""

LONG_FUNCTIONS: dict[tuple[str, str], str] = {}
"""(module path, qualified name) -> why that function reads best long; keep it empty or nearly."""


def _functions(
    node: ast.AST, prefix: str = ""
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function under ``node``, nested ones and methods too, with its dotted qualified
    name (``Class.method``, ``outer.inner``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + child.name, child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def test_no_function_is_over_50_lines_without_a_reason() -> None:
    """A function over 50 lines (its def to its last line) is listed with why it reads best long."""
    long = {
        (module, name): (node.end_lineno or node.lineno) - node.lineno + 1
        for module, tree in _modules()
        for name, node in _functions(tree)
        if (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES
    }
    assert set(long) == set(LONG_FUNCTIONS), long
    assert all(reason.strip() for reason in LONG_FUNCTIONS.values())


MAX_JOURNAL_CLASS_LINES = 300
"""A class of journal/ or _sessions/ stays under this: a store's SQL, pools and seals are
modules beside it, as are a session's course, driver and cursor."""


def test_no_class_of_the_journal_or_the_sessions_is_over_300_lines() -> None:
    """Each class in journal/ (a store above all) and in _sessions/ reads in one sitting."""
    long = {
        (module, node.name): (node.end_lineno or node.lineno) - node.lineno + 1
        for module, tree in _modules()
        if module.startswith(("journal/", "_sessions/"))
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_JOURNAL_CLASS_LINES
    }
    assert long == {}


def test_the_run_loop_is_built_in_one_place() -> None:
    """Every session verb reaches the loop through its course: only _sessions/_driver.py
    calls RunLoop(...)."""
    builders = sorted(
        module
        for module, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "RunLoop"
    )
    assert builders == ["_sessions/_driver.py"]


def test_the_anthropic_package_loads_on_the_first_call_not_at_construction() -> None:
    """Building an AnthropicModel imports no anthropic; building its client (first call) does."""
    probe = (
        "import sys\n"
        "from swarmkit.models import AnthropicModel\n"
        "model = AnthropicModel('claude-x', api_key='sk-ant-test-key')\n"
        "print('anthropic' in sys.modules)\n"
        "model._ready_client()\n"
        "print('anthropic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "True"]


def test_the_google_genai_package_loads_on_the_first_call_not_at_construction() -> None:
    """Building a GeminiModel imports no google-genai; building its client (first call) does."""
    probe = (
        "import sys\n"
        "from swarmkit.models import GeminiModel\n"
        "model = GeminiModel('gemini-x', api_key='gemini-test-key')\n"
        "print('google.genai' in sys.modules)\n"
        "model._ready_client()\n"
        "print('google.genai' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "True"]
