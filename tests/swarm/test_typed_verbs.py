"""A type checker sees every keyword of the Swarm verbs, so a misspelt one fails before a run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Each line that ends in "# error: <message>" must get exactly that error; every other line,
# including the deprecated but still typed seams, must check clean.
PROGRAM = """\
from __future__ import annotations

from swarmkit import Swarm, approve
from swarmkit.journal import InMemoryJournal
from swarmkit.runtime import Runtime


async def spelt_right(swarm: Swarm, journal: InMemoryJournal, runtime: Runtime) -> None:
    await swarm.run("x", context={"user": 1}, session_id="s", journal=journal)
    swarm.run_sync("x", context={}, deps=object(), start_agent="a")
    async for _ in swarm.stream("x", continue_session=True, session_id="s"):
        pass
    await swarm.resume("s", journal, decision=approve())
    await swarm.replay("s", journal, tools="execute", live_after=2)
    await swarm.what_if("s", journal, prompt="y", rules=False)
    await swarm.run("x", runtime=runtime)


async def spelt_wrong(swarm: Swarm) -> None:
    await swarm.run("x", contxt={})  # error: Unexpected keyword argument "contxt"
    swarm.run_sync("x", contxt={})  # error: Unexpected keyword argument "contxt"
    swarm.stream("x", sesion_id="s")  # error: Unexpected keyword argument "sesion_id"
    await swarm.resume("s", decison=None)  # error: Unexpected keyword argument "decison"
    await swarm.replay("s", tool="execute")  # error: Unexpected keyword argument "tool"
    await swarm.what_if("s", rule=False)  # error: Unexpected keyword argument "rule"
    await swarm.resume("s", runtime="now")  # error: Argument "runtime" to "resume"
"""


# Strict, as the repo runs it; of the installed packages only pydantic is read (swarmkit's
# models need it), the rest taken as untyped, so the check takes seconds, not a minute.
CONFIG = """\
[mypy]
strict = True
python_version = 3.11
plugins = pydantic.mypy
mypy_path = {root}
follow_imports = skip

[mypy-swarmkit.*,pydantic.*,pydantic_core.*,annotated_types.*,typing_inspection.*]
follow_imports = silent
"""


def _mypy_errors(program: Path, workdir: Path) -> dict[int, str]:
    """mypy --strict on ``program``, against this checkout of swarmkit: each error's line."""
    config = workdir / "mypy.ini"
    config.write_text(CONFIG.format(root=ROOT), encoding="utf-8")
    command = [sys.executable, "-m", "mypy", "--config-file", str(config)]
    command += ["--cache-dir", str(workdir / "cache"), "--no-error-summary", program.name]
    done = subprocess.run(command, capture_output=True, text=True, cwd=program.parent, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    errors = re.findall(rf"^{re.escape(program.name)}:(\d+): error: (.*)$", done.stdout, re.M)
    return {int(line): message for line, message in errors}


def test_mypy_refuses_a_misspelt_keyword_on_each_verb_and_passes_the_right_ones(
    tmp_path: Path,
) -> None:
    """mypy --strict names each misspelt keyword and wrongly typed seam, and nothing else."""
    program = tmp_path / "verbs.py"
    program.write_text(PROGRAM, encoding="utf-8")
    expected = {
        number: line.split("# error: ")[1]
        for number, line in enumerate(PROGRAM.splitlines(), start=1)
        if "# error: " in line
    }
    errors = _mypy_errors(program, tmp_path)
    assert set(errors) == set(expected), errors
    for number, message in expected.items():
        assert errors[number].startswith(message), (number, errors[number])
