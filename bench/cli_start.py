"""Command start-up: ``swarmkit --help`` and ``swarmkit sessions``, this tree against a commit.

Each round starts a fresh interpreter per case, alternating the two trees, so both see the
same machine load; the figures are medians over the rounds and their ratio (target: under
0.5 s for both commands, with no ``openai`` import).
Run: ``.venv/bin/python bench/cli_start.py [--against COMMIT] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.5


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--against", default="HEAD~6", help="the commit to compare with")
    options.add_argument("--rounds", type=int, default=15)
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        _checkout(args.against, base)
        journal = Path(scratch) / "j.sqlite"
        _run(ROOT, ["demo", "--offline", "--journal", str(journal)])
        cases = {"--help": ["--help"], "sessions": ["sessions", "--journal", str(journal)]}
        for name, argv in cases.items():
            now, before = _rounds(args.rounds, argv, ROOT, base)
            print(
                f"swarmkit {name}: {now:.3f} s (before {before:.3f} s), ratio {now / before:.2f}x"
                f"; target < {TARGET_S} s: {'met' if now < TARGET_S else 'not met'}"
            )
        print(f"openai imported by --help: {_imports_openai(['--help'])}")


def _checkout(commit: str, folder: Path) -> None:
    folder.mkdir()
    archive = subprocess.run(
        ["git", "archive", commit, "swarmkit"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)


def _rounds(rounds: int, argv: list[str], now: Path, before: Path) -> tuple[float, float]:
    times: dict[Path, list[float]] = {now: [], before: []}
    for _ in range(rounds):
        for tree in (now, before):
            start = time.perf_counter()
            _run(tree, argv)
            times[tree].append(time.perf_counter() - start)
    return statistics.median(times[now]), statistics.median(times[before])


def _run(tree: Path, argv: list[str]) -> None:
    code = f"from swarmkit.cli import main; raise SystemExit(main({argv!r}))"
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    # The tree is the working folder too: `python -c` puts the working folder first on the path.
    subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, check=True)


def _imports_openai(argv: list[str]) -> bool:
    code = (
        f"import sys\nfrom swarmkit.cli import main\nmain({argv!r})\nprint('openai' in sys.modules)"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().endswith("True")


if __name__ == "__main__":
    main()
