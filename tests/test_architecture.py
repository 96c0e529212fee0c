"""The direction of dependencies the README promises, checked on the source."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

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


def test_importing_swarmkit_loads_no_http_client_nor_any_extra() -> None:
    """`import swarmkit` in a fresh interpreter imports no openai, httpx, tenacity or extra."""
    heavy = (
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
    probe = (
        "import sys, swarmkit\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_adapter_loads_on_first_use() -> None:
    """`swarmkit.OpenAIModel` still works: the adapter is imported when it is asked for."""
    probe = (
        "import sys, swarmkit\n"
        "model = swarmkit.OpenAIModel('gpt-4o-mini', api_key='sk-test')\n"
        "print('openai' in sys.modules, type(model).__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["True", "OpenAIModel"]


INTEGRATIONS = {"mcp.py": {"mcp"}, "tracing.py": {"opentelemetry"}}


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
    """mcp is imported by swarmkit/mcp.py alone, opentelemetry by swarmkit/tracing.py alone."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if _top(name) in {"mcp", "opentelemetry"}
        and _top(name) not in INTEGRATIONS.get(module, set())
    ]
    assert offenders == []


def test_nothing_in_the_package_imports_an_integration_module() -> None:
    """Arrows point into the core: no module imports swarmkit.mcp or swarmkit.tracing."""
    offenders = [
        (module, name)
        for module, tree in _modules()
        for name in _imports(tree)
        if name in {"swarmkit.mcp", "swarmkit.tracing"}
    ]
    assert offenders == []
