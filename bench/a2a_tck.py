"""The official A2A conformance kit (a2aproject/a2a-tck) against ``swarmkit serve a2a`` and a
bare a2a-sdk server of the same version, side by side, test for test.

Both servers answer with the same echo agent (bench/_tck_sut.py): ``swarmkit serve a2a
_tck_sut:swarm`` (bearer token, tasks kept in the journal's SQLite file) and the a2a-sdk's own
DefaultRequestHandler, InMemoryTaskStore and routes around an AgentExecutor that echoes. The
kit runs each category against each server, in the same order, with the same headers
(``Authorization: Bearer <token>`` and ``A2A-Version: 1.0``, through its ``A2A_AUTH_HEADERS``);
the bare server ignores the token. Prints a markdown table of passed / failed / skipped per
category, then every test whose outcome differs, with the kit's reason.

Needs a checkout of the kit and a Python with its requirements (a scratch venv outside this
repository): ``python -m venv /tmp/tck-venv && /tmp/tck-venv/bin/pip install -e /tmp/a2a-tck``.
Run: ``.venv/bin/python bench/a2a_tck.py --tck /tmp/a2a-tck --tck-python
/tmp/tck-venv/bin/python`` (a few minutes; not run by the test suite).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
ENTRY = "from swarmkit.cli import main; raise SystemExit(main())"
CATEGORIES = {
    "mandatory": ("tests/mandatory/", "mandatory or mandatory_protocol"),
    "capabilities": ("tests/optional/capabilities/", None),
    "quality": ("tests/optional/quality/", None),
}
"""Each category's folder and pytest marker, as the kit's own run_tck.py selects them."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _wait_for_card(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server at {url} ended: {log.read_text()}")
        try:
            if httpx.get(url + ".well-known/agent-card.json").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"no agent card at {url} within 60 s")


def _servers(
    work: Path, token: str, timeout: str
) -> dict[str, tuple[str, subprocess.Popen[bytes]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARMKIT_")}
    env |= {"PYTHONPATH": f"{BENCH}{os.pathsep}{ROOT}", "TCK_STREAMING_TIMEOUT": timeout}
    ports = {"swarmkit": _free_port(), "bare a2a-sdk": _free_port()}
    journal = str(work / "journal.sqlite")
    commands = {
        "swarmkit": [sys.executable, "-c", ENTRY, "serve", "a2a", "_tck_sut:swarm", "--journal"],
        "bare a2a-sdk": [sys.executable, str(BENCH / "_tck_sut.py")],
    }
    commands["swarmkit"] += [journal, "--port", str(ports["swarmkit"])]
    commands["bare a2a-sdk"] += ["--port", str(ports["bare a2a-sdk"])]
    started = {}
    for name, command in commands.items():
        log = work / f"{name.split()[0]}.log"
        process = _start(command, env | {"SWARMKIT_SERVE_TOKEN": token}, log)
        url = f"http://127.0.0.1:{ports[name]}/"
        started[name] = (url, process)
        _wait_for_card(url, process, log)
    return started


def _run_category(
    tck: Path, python: str, category: str, url: str, report: Path, env: dict[str, str]
) -> dict[str, tuple[str, str]]:
    """Each test's outcome and, when it did not pass, the kit's one-line reason."""
    folder, marker = CATEGORIES[category]
    # The kit appends "/.well-known/agent-card.json" to the URL it is given.
    command = [python, "-m", "pytest", folder, f"--sut-url={url.rstrip('/')}", "--test-scope=all"]
    command += ["--tb=line", "-q", "-p", "no:cacheprovider", "--json-report"]
    command += [f"--json-report-file={report}", *(["-m", marker] if marker else [])]
    subprocess.run(command, cwd=tck, env=env, stdout=subprocess.DEVNULL, check=False)
    tests = json.loads(report.read_text())["tests"]
    return {test["nodeid"]: (test["outcome"], _reason(test)) for test in tests}


def _reason(test: dict[str, object]) -> str:
    for stage in ("setup", "call", "teardown"):
        step = test.get(stage)
        if not isinstance(step, dict) or step.get("outcome") == "passed":
            continue
        crash = step.get("crash")
        if isinstance(crash, dict):
            return str(crash.get("message", "")).splitlines()[0][:160]
        longrepr = str(step.get("longrepr", "")).strip()
        if longrepr.startswith("("):  # a skip: (file, line, "Skipped: why")
            longrepr = str(ast.literal_eval(longrepr)[-1])
        return longrepr.splitlines()[-1][:160] if longrepr else ""
    return ""


def _counts(outcomes: dict[str, tuple[str, str]]) -> str:
    seen = Counter(outcome for outcome, _ in outcomes.values())
    failed = seen["failed"] + seen["error"]
    return f"{seen['passed']} / {failed} / {seen['skipped'] + seen['xfailed']}"


def _report(results: dict[str, dict[str, dict[str, tuple[str, str]]]]) -> str:
    names = list(next(iter(results.values())))
    lines = [
        "| category | " + " | ".join(f"{n} passed / failed / skipped" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    lines += [
        f"| {category} | " + " | ".join(_counts(by[n]) for n in names) + " |"
        for category, by in results.items()
    ]
    differ, both = ["", "Tests whose outcome differs:", ""], ["", "Tests both fail:", ""]
    for by in results.values():
        for test in sorted(set().union(*by.values())):
            outcomes = [by[n].get(test, ("absent", "")) for n in names]
            if len({outcome for outcome, _ in outcomes}) > 1:
                said = "; ".join(
                    f"{n}: {o}" + (f" ({why})" if why else "")
                    for n, (o, why) in zip(names, outcomes, strict=True)
                )
                differ.append(f"- `{test}`: {said}")
            elif outcomes[0][0] in ("failed", "error"):
                both.append(f"- `{test}`: {outcomes[0][1]}")
    return "\n".join(lines + differ + both)


def main() -> None:
    """Start both servers, run the kit's categories against each, print the comparison."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--tck", type=Path, required=True, help="the a2a-tck checkout")
    parser.add_argument("--tck-python", required=True, help="a Python with the kit installed")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--streaming-timeout", default="2.0", help="TCK_STREAMING_TIMEOUT")
    args = parser.parse_args()
    token = secrets.token_urlsafe(24)
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    env = os.environ | {
        "A2A_AUTH_HEADERS": json.dumps(headers),
        "TCK_STREAMING_TIMEOUT": args.streaming_timeout,
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        servers = _servers(work, token, args.streaming_timeout)
        try:
            results = {
                category: {
                    name: _run_category(
                        args.tck, args.tck_python, category, url, work / "report.json", env
                    )
                    for name, (url, _) in servers.items()
                }
                for category in args.categories.split(",")
            }
        finally:
            for _, process in servers.values():
                process.terminate()
                process.wait(timeout=30)
    print(_report(results))


if __name__ == "__main__":
    main()
