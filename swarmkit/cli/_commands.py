"""What each `swarmkit` command does, loaded by the entry point once the arguments name one."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from swarmkit.cli._browse import _read_session
from swarmkit.cli._journal_file import (
    journal_path,
    open_for_reading,
    open_for_writing,
    swarm_journal_path,
)
from swarmkit.cli._spend import open_ledger
from swarmkit.cli._target import load_swarm, swarm_target
from swarmkit.cli._usage import (
    DEFAULT_DEMO_MODEL,
    DEMO_JOURNAL,
    EXIT_FAILED,
    EXIT_OK,
    MISSING_KEY,
    RunStopped,
    UsageError,
    fail,
)
from swarmkit.console import LiveView, plural, result_lines, timeline
from swarmkit.demo import run_demo
from swarmkit.drawing import draw_session, draw_swarm
from swarmkit.events import Event, EventObserver
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.interrupts import Decision, approve, edit, reject
from swarmkit.journal import (
    JournalRecord,
    open_journal,
    session_status,
    status_of,
    turn_sessions,
)
from swarmkit.lowlevel import journal_label
from swarmkit.models import Model, OpenAIModel
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm


def program() -> str:
    """How to call this command again from the current folder, in a shell where the venv is
    not active: ``swarmkit`` when that is what PATH finds, else the script's path."""
    script = Path(sys.argv[0])
    if script.name != "swarmkit":
        return "swarmkit"
    found = shutil.which("swarmkit")
    if found and Path(found).resolve() == script.resolve():
        return "swarmkit"
    relative = os.path.relpath(script.absolute())
    return script.as_posix() if relative.startswith("..") else relative


# -- commands --------------------------------------------------------------------------------


async def _check(args: argparse.Namespace) -> int:
    from swarmkit.check import has_errors, render_json, render_text  # noqa: PLC0415

    findings = load_swarm(args.target).check()
    sys.stdout.write(render_json(findings) if args.json else render_text(findings))
    return EXIT_FAILED if has_errors(findings) else EXIT_OK


def _warn_findings(swarm: Swarm) -> None:
    """``swarmkit run`` shows the check's findings on stderr and runs anyway."""
    from swarmkit.check import render_text  # noqa: PLC0415

    findings = swarm.check()
    if findings:
        sys.stderr.write(render_text(findings))


async def _demo(args: argparse.Namespace) -> int:
    model = None if args.offline else _demo_model(args.model)
    path = journal_path(args.journal) if args.journal else DEMO_JOURNAL
    with open_for_writing(path):
        pass  # a bad path is a usage error before anything runs
    code = await run_demo(sys.stdout, journal_path=path, model=model, program=program())
    if code != EXIT_OK:
        return fail("the demo did not complete: a run failed or its replay differed", code)
    return code


def _demo_model(name: str | None) -> Model | None:
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(name or DEFAULT_DEMO_MODEL)
    if name and os.environ.get("OPENAI_BASE_URL"):
        return OpenAIModel(name, api_key=_LOCAL_KEY)
    if name:
        raise UsageError(f"--model runs the demo live: {MISSING_KEY} (or drop --model)")
    return None


# Local OpenAI-compatible servers ignore the key, but the client refuses to start without one.
_LOCAL_KEY = "no-key-needed"


async def _run(args: argparse.Namespace) -> int:
    _check_base_url(args.base_url)
    context = _context(args.context)
    swarm = _with_model(load_swarm(args.target), args.model, args.base_url)
    if not args.no_check:
        _warn_findings(swarm)
    path = swarm_journal_path(args.journal, swarm)
    out = sys.stdout
    with open_for_writing(path) as journal:
        where = journal_label(path)
        out.write(f"swarmkit run {args.target} (model: {_model_name(swarm)}; journal: {where})\n")
        view = LiveView(out, swarm)
        events = swarm.stream(
            args.prompt, context=context, session_id=args.session_id, journal=journal
        )
        try:
            result = await view.follow(events)
        except (asyncio.CancelledError, KeyboardInterrupt) as stop:
            if view.session_id is None:
                raise
            resume = (
                f"{program()} resume {view.session_id} --swarm {args.target} "
                f"--journal {journal_label(path)}"
            )
            message = f"stopped by Ctrl-C; the run is journaled; continue it: {resume}"
            raise RunStopped(message) from stop
    _say_how_to_continue(result, args.target, path)
    return EXIT_FAILED if result.stop_reason == "error" else EXIT_OK


async def _resume(args: argparse.Namespace) -> int:
    decision = _decision(args)
    target = swarm_target(args)
    swarm = load_swarm(target)
    path = swarm_journal_path(args.journal, swarm)
    records = await _read_session(path, args.session)
    _check_decision(records, decision, args.session, target)
    with open_for_writing(path) as journal:
        print(f"swarmkit resume {args.session} (journal: {journal_label(path)})", flush=True)
        view = LiveView(sys.stdout, swarm)
        # The resumed run streams as `run` shows it: the journaled steps it replays (no
        # model calls), then the ones it takes live.
        live = swarm.with_observers(_shown_on(view))
        result = await live.resume(args.session, journal, decision=decision)
    if view.result is None:
        print("\n".join(result_lines(result)))
    _say_how_to_continue(result, target, path)
    return EXIT_FAILED if result.stop_reason == "error" else EXIT_OK


def _shown_on(view: LiveView) -> EventObserver:
    """An observer that shows each event of a run on ``view`` as it passes."""

    async def show(events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        async for event in events:
            view.show(event)
            yield event

    return show


async def _show(args: argparse.Namespace) -> int:
    records = await _read_session(args.journal, args.session)
    print("\n".join(timeline(records)))
    # A conversation's later turns are sessions of their own: show them after the first.
    path = journal_path(args.journal)
    with open_for_reading(path) as journal:
        turns = await turn_sessions(journal, args.session)
        for number, session_id in enumerate(turns[1:], start=2):
            print(f"\n== turn {number} ({session_id})")
            print("\n".join(timeline(await journal.read(session_id))))
    print(f"journal: {journal_label(path)}")
    return EXIT_OK


async def _replay(args: argparse.Namespace) -> int:
    swarm = load_swarm(swarm_target(args))
    path = swarm_journal_path(args.journal, swarm)
    await _read_session(path, args.session)  # a missing one is a usage error
    if args.prompt is not None or args.context is not None or args.rules_off:
        return await _what_if(swarm, path, args)
    if args.live:
        raise UsageError(
            "--live forks where a change first matters: give --prompt, --context or --rules-off"
        )
    with open_for_reading(path) as journal:
        try:
            result = await swarm.replay(args.session, journal)
        except ReplayDivergenceError as exc:
            return fail(f"replay diverged: {exc}", EXIT_FAILED)
    trail = " -> ".join(result.trail)
    print(
        f"replayed {args.session}: reproduced {result.stop_reason} ({result.final_agent}), "
        f"trail {trail}, {plural(len(result.handoffs), 'handoff')}, "
        f"{plural(result.turns, 'model answer')} from the journal, 0 model calls"
    )
    return EXIT_OK


async def _what_if(swarm: Swarm, path: Path | str, args: argparse.Namespace) -> int:
    """Replay as if asked something else (or with the rules off): where the change first
    alters a request, offline; or, with --live, a labelled fork that goes on from there."""
    context = None if args.context is None else _json_object("--context", args.context)
    change = {"prompt": args.prompt, "context": context, "rules": not args.rules_off}
    opener = open_for_writing if args.live else open_for_reading
    with opener(path) as journal:
        try:
            result = await swarm.what_if(args.session, journal, **change, live=args.live)
        except ReplayDivergenceError as exc:
            print(f"what-if {args.session}: the change first matters at step {exc.step}")
            print(f"  {str(exc).splitlines()[0]}")
            print(exc.diff)
            print("  (offline: the steps before it came from the journal, 0 model calls)")
            return EXIT_OK
    if result.session_id != args.session:
        print(
            f"what-if {args.session}: forked live as {result.session_id}: {result.stop_reason} "
            f"({result.final_agent}), trail {' -> '.join(result.trail)}"
        )
        return EXIT_OK
    print(
        f"what-if {args.session}: the change alters no request; the session ends the same "
        f"way ({result.stop_reason}, {result.final_agent}), 0 model calls"
    )
    return EXIT_OK


async def _draw(args: argparse.Namespace) -> int:
    if (args.target is None) == (args.session is None):
        raise UsageError("draw takes a swarm (module:attribute) or --session SESSION, one of them")
    if args.session is not None:
        text = draw_session(await _read_session(args.journal, args.session), args.format)
    else:
        text = draw_swarm(load_swarm(args.target), args.format)
    sys.stdout.write(text)
    return EXIT_OK


async def _ui(args: argparse.Namespace) -> int:
    from swarmkit.ui import Viewer, ViewerServer  # noqa: PLC0415 - loaded only when asked for

    given = args.target or args.swarm
    swarm = load_swarm(swarm_target(args)) if given else None
    path = journal_path(args.journal) if swarm is None else swarm_journal_path(args.journal, swarm)
    if args.allow_decisions and swarm is None:
        raise UsageError(
            "--allow-decisions needs the swarm (module:attribute or --swarm) to resume with"
        )
    open_for_reading(path).close()  # a missing or foreign file is refused untouched
    ledger = open_ledger(args.ledger) if args.ledger else None
    if isinstance(path, str):  # Postgres: one pool serves pages, listing and decisions
        writable = listing_journal = open_for_writing(path)
    else:
        writable = open_journal(path, read_only=not args.allow_decisions)
        listing_journal = open_journal(path, read_only=True)
    with writable as journal, listing_journal as listing:
        viewer = Viewer(
            journal,
            swarm=swarm,
            allow_decisions=args.allow_decisions,
            listing=listing,
            ledger=ledger,
        )
        server = ViewerServer(viewer, port=args.port)
        server.start()
        print(f"swarmkit ui: {journal_label(path)} at {server.url}  (Ctrl-C stops)", flush=True)
        try:
            await asyncio.Event().wait()  # serve until Ctrl-C cancels this
        finally:
            server.close()
            if ledger is not None:
                await ledger.aclose()
    return EXIT_OK


# -- pausing and resuming --------------------------------------------------------------------


def _say_how_to_continue(result: RunResult, target: str, path: Path | str) -> None:
    """Every stop that can be resumed ends with the exact line that resumes it."""
    where = journal_label(path)
    resume = f"{program()} resume {result.session_id} --swarm {target} --journal {where}"
    status = status_of(result.stop_reason)
    if result.pending is not None and result.pending.kind == "person":
        claim = f"{program()} queue claim {result.session_id} --by NAME --journal {where}"
        print(f"  next:   {claim}   (then reply, and hand-back or close)")
    elif result.pending is not None:
        print(f"  next:   {resume} --approve   (or --reject REASON, or --edit JSON; --by NAME)")
    elif status == "failed" and result.stop_reason == "error":
        print(f"  next:   {resume}   (retries the failed step; the steps before it replay)")
    elif status in ("limited", "waiting"):
        print(f"  next:   {resume}   (goes on with a fresh allowance)")


def _decision(args: argparse.Namespace) -> Decision | None:
    by, note = args.by, args.note
    if args.approve:
        return approve(by=by, note=note)
    if args.reject is not None:
        return reject(args.reject, by=by, note=note)
    if args.edit is not None:
        return edit(payload=_json_object("--edit", args.edit), by=by, note=note)
    if by is not None or note is not None:
        raise UsageError("--by and --note go with a decision: --approve, --reject or --edit")
    return None


RESUMABLE_STOPS = frozenset({"interrupted", "error", "timeout", "usage_limit", "budget"})
"""Stop reasons a session can be resumed from (a pause, an error, a time, usage or spend limit)."""


def _check_decision(
    records: Sequence[JournalRecord], decision: Decision | None, session_id: str, target: str
) -> None:
    state = session_status(records)
    reason = records[-1].data.get("stop_reason") if state != "running" else None
    if state != "running" and reason not in RESUMABLE_STOPS:
        raise UsageError(
            f"session {session_id!r} already finished ({reason}): there is nothing to "
            f"resume. See it with `swarmkit show {session_id}`, replay it with `swarmkit "
            f"replay {session_id} --swarm {target}`, or ask again with `swarmkit run {target} "
            "PROMPT`"
        )
    waiting = state == "waiting"
    if waiting and decision is None:
        raise UsageError(
            f"session {session_id!r} is waiting for a human decision: "
            "pass --approve, --reject REASON or --edit JSON"
        )
    if not waiting and decision is not None:
        raise UsageError(
            f"session {session_id!r} is not waiting for a decision; resume it without "
            "--approve, --reject or --edit"
        )


# -- options ---------------------------------------------------------------------------------


PROVIDER_MODELS = {
    "anthropic": "AnthropicModel",
    "google": "GeminiModel",
    "gemini": "GeminiModel",
    "openai": "OpenAIModel",
    "responses": "OpenAIResponsesModel",
    "openai-responses": "OpenAIResponsesModel",
}
"""``--model PROVIDER:NAME``: each prefix and the swarmkit.models adapter it builds; a name
with no known prefix is an OpenAI Chat Completions model (``gpt-4o``, ``llama3:8b``)."""

_OTHER_KEYS = {"GeminiModel": ("GOOGLE_API_KEY",)}


def _with_model(swarm: Swarm, name: str | None, base_url: str | None) -> Swarm:
    if name is None:
        if base_url is not None:
            raise UsageError("--base-url needs --model NAME, the model the server serves")
        return swarm
    prefix, colon, rest = name.partition(":")
    kind = PROVIDER_MODELS.get(prefix) if colon and rest else None
    if kind is not None and kind != "OpenAIModel":
        return swarm.with_model(_provider_model(kind, rest, name, base_url))
    if kind == "OpenAIModel":
        name = rest
    has_key = bool(os.environ.get("OPENAI_API_KEY"))
    if not has_key and not (base_url or os.environ.get("OPENAI_BASE_URL")):
        raise UsageError(MISSING_KEY)
    api_key = None if has_key else _LOCAL_KEY
    return swarm.with_model(OpenAIModel(name, base_url=base_url, api_key=api_key))


def _provider_model(kind: str, name: str, given: str, base_url: str | None) -> Model:
    """The adapter ``--model PROVIDER:NAME`` names, its key checked before any call."""
    from swarmkit import models  # noqa: PLC0415 - the adapter (and its SDK) loads here

    try:
        adapter = getattr(models, kind)
    except ImportError as exc:  # its extra is not installed: the message names the extra
        raise UsageError(f"--model {given}: {exc}") from None
    keys = (adapter.key_env, *_OTHER_KEYS.get(kind, ()))
    if base_url is None and not any(os.environ.get(key) for key in keys):
        raise UsageError(
            f"--model {given} needs {' or '.join(keys)} set (or --base-url for a server that "
            "speaks that provider's API)"
        )
    api_key = None if any(os.environ.get(key) for key in keys) else _LOCAL_KEY
    model: Model = adapter(name, base_url=base_url, api_key=api_key)
    return model


def _check_base_url(url: str | None) -> None:
    if url is None:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--base-url {url!r} is not an http(s) URL; pass one such as http://localhost:11434/v1"
        )


def _model_name(swarm: Swarm) -> str:
    model = swarm.plans[swarm.entry_agent].model
    return str(getattr(model, "name", type(model).__name__))


def _context(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    return _json_object("--context", text)


def _json_object(option: str, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{option} is not valid JSON ({exc.msg} at column {exc.colno}); pass an object "
            """such as '{"category": "billing"}'"""
        ) from exc
    if not isinstance(value, dict):
        raise UsageError(f"{option} must be a JSON object, got {type(value).__name__}")
    return value


# -- journals --------------------------------------------------------------------------------
