"""OpenTelemetry spans built from a run's events (extra ``otel``); the loop makes no calls.

```python
from swarmkit.tracing import traced

swarm = Swarm(agents, "triage", model=model, observers=[traced])
```

Every run then has an ``invoke_workflow`` span, with an ``invoke_agent`` span per agent's
stint, and model call, tool call, transfer and rule spans inside, named and attributed after
the OpenTelemetry GenAI semantic conventions (``swarmkit.*`` for what they do not cover);
every span carries ``gen_ai.conversation.id``. A model call served from the journal (a
replay, the journaled steps of a resume) has its span but no ``gen_ai.usage.*``, and a resumed
run's span links to the paused run's (in another process too: a traced run journals its
span's ``traceparent`` with its end), so usage summed over a session's model call spans (or
over its agent spans) counts each call once. ``RunTracing.record_evaluations`` adds an eval's
grades as ``gen_ai.evaluation.result`` events parented to the runs they grade, and each audit
of an active rule (``Swarm(audit=RuleAudit(...))``) is one too, in the audited run. Nothing is
recorded unless the application configured a tracer provider, and the library configures no
exporter: nothing is sent anywhere by default. Prompts, messages, instructions, tool
definitions, arguments and results are recorded only with ``RunTracing(capture_content=True)``,
and JSON keys that name secrets are redacted even then.
The only package of swarmkit that imports ``opentelemetry``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncGenerator, Collection, Iterable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from opentelemetry import _logs, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, Tracer, TracerProvider

from swarmkit import __version__
from swarmkit import events as ev
from swarmkit.exceptions import ConfigurationError
from swarmkit.redaction import DEFAULT_SECRET_PATTERNS, Redactor
from swarmkit.tracing._spans import RunSpans

if TYPE_CHECKING:
    from swarmkit.evals import EvalReport, Grade, TrialResult

__all__ = ["DEFAULT_SECRET_WORDS", "RunTracing", "traced"]

DEFAULT_SECRET_WORDS = DEFAULT_SECRET_PATTERNS
"""Words of a JSON key that mark its value as secret in recorded content (the journal's)."""

_SCOPE = "swarmkit"
_REMEMBERED_RUNS = 1024
"""Run spans a tracer remembers (the latest of each session) to link a resume to, and to
parent an evaluation's results to."""


class RunTracing:
    """An event observer that turns each run into OpenTelemetry spans; see the module docstring.

    ``tracer_provider`` defaults to the global one the application configured (spans are not
    recorded while there is none). ``capture_content`` (off by default) adds the conventions'
    opt-in content: the input and output messages, system instructions and tool definitions
    of each model call, the prompt and answer of the run, tool arguments and results, with
    the values of secret-looking JSON keys redacted.
    ``workflow_name`` names every top-level run's ``invoke_workflow`` span; without it the
    name is the agent that takes the run's first step. ``logger_provider`` (default: the
    global one) receives the evaluation events of ``record_evaluations`` and of rule audits.
    """

    def __init__(
        self,
        *,
        capture_content: bool = False,
        tracer_provider: TracerProvider | None = None,
        secret_words: Collection[str] = DEFAULT_SECRET_WORDS,
        workflow_name: str | None = None,
        logger_provider: _logs.LoggerProvider | None = None,
    ) -> None:
        if not isinstance(capture_content, bool):
            raise ConfigurationError(
                "RunTracing(capture_content=...) must be True or False, "
                f"got {capture_content!r:.60}"
            )
        if workflow_name is not None and (not isinstance(workflow_name, str) or not workflow_name):
            raise ConfigurationError(
                "RunTracing(workflow_name=...) must be a non-empty, low-cardinality name such "
                f"as 'support', or None; got {workflow_name!r:.60}"
            )
        self.capture_content = capture_content
        self.workflow_name = workflow_name
        self.redactor = Redactor.of(secret_words)
        """How recorded content hides secrets (the values of secret-looking JSON keys)."""
        self._runs: OrderedDict[str, SpanContext] = OrderedDict()
        self._provider = tracer_provider
        self._logger_provider = logger_provider
        self._tracers: tuple[TracerProvider, Tracer] | None = None

    def __call__(self, events: AsyncGenerator[ev.Event, None]) -> AsyncGenerator[ev.Event, None]:
        """Pass the run's events on, recording spans as they go by."""
        return self._observe(events)

    async def _observe(
        self, events: AsyncGenerator[ev.Event, None]
    ) -> AsyncGenerator[ev.Event, None]:
        async with aclosing(events):
            first = await anext(events, None)
            if first is None:
                return
            spans = RunSpans(self, self._tracer())
            if not spans.observe(first):
                yield first  # nobody records: pass the rest through untouched
                async for event in events:
                    yield event
                return
            try:
                yield first
                async for event in events:
                    spans.safely_observe(event)
                    yield event
            except BaseException as exc:
                spans.abort(exc)
                raise
            finally:
                spans.close()

    def _tracer(self) -> Tracer:
        provider = self._provider or trace.get_tracer_provider()
        if self._tracers is None or self._tracers[0] is not provider:
            self._tracers = (provider, provider.get_tracer(_SCOPE, __version__))
        return self._tracers[1]

    def previous_run(self, session_id: str) -> SpanContext | None:
        """The span of the session's latest run this tracer recorded, if it remembers one.

        Only this process's recent runs are remembered; a run resumed elsewhere links to the
        span its journal names (``RunStarted.previous_trace``)."""
        return self._runs.get(session_id)

    def remember_run(self, session_id: str, run: SpanContext) -> None:
        """Keep ``run`` as the session's latest run span, for a later resume to link to."""
        self._runs.pop(session_id, None)
        self._runs[session_id] = run
        if len(self._runs) > _REMEMBERED_RUNS:
            self._runs.popitem(last=False)

    def record_evaluations(self, results: EvalReport | Iterable[TrialResult]) -> int:
        """Emit each grade of each trial as a ``gen_ai.evaluation.result`` event; the count.

        An event is parented to the span of the trial's last run, when this tracer recorded
        it (a trial run elsewhere gets an unparented event); its score is the grade's, its
        label ``pass`` or ``fail``, its explanation the grade's detail (secrets hidden)."""
        # Read by shape, so tracing does not import the evals package (and all it loads).
        trials: Iterable[TrialResult] = getattr(results, "trials", results)  # type: ignore[arg-type]
        trials = tuple(trials) if not isinstance(trials, str | bytes) else ()
        if not trials or not all(hasattr(t, "grades") and hasattr(t, "sessions") for t in trials):
            raise ConfigurationError(
                "record_evaluations() takes an EvalReport (what swarmkit.evals.evaluate "
                f"returns) or its trials; got {results!r:.60}"
            )
        logger = self.evaluation_logger()
        emitted = 0
        for trial in trials:
            run = self._runs.get(trial.sessions[-1]) if trial.sessions else None
            where = trace.set_span_in_context(NonRecordingSpan(run)) if run else None
            for grade in trial.grades:
                logger.emit(
                    event_name="gen_ai.evaluation.result",
                    context=where,
                    attributes=_evaluation(grade, trial, self.redactor),
                )
                emitted += 1
        return emitted

    def evaluation_logger(self) -> _logs.Logger:
        """The logger evaluation events go to: ``logger_provider``'s, else the global one's."""
        provider = self._logger_provider or _logs.get_logger_provider()
        return provider.get_logger(_SCOPE, __version__)

    def is_secret(self, key: str) -> bool:
        """Whether a key names a secret, by swarmkit's redaction rules (whole words)."""
        return self.redactor.is_secret(key)


traced = RunTracing()
"""The default observer: spans without content, on the application's tracer provider."""


def _evaluation(grade: Grade, trial: TrialResult, redactor: Redactor) -> dict[str, Any]:
    """A grade as the conventions' evaluation attributes, with the trial it belongs to."""
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": grade.grader,
        "gen_ai.evaluation.score.value": float(grade.score),
        "gen_ai.evaluation.score.label": "pass" if grade.passed else "fail",
        "swarmkit.eval.task_id": trial.task_id,
        "swarmkit.eval.trial": trial.number,
    }
    if grade.detail:
        attributes["gen_ai.evaluation.explanation"] = redactor.in_text(grade.detail)
    if trial.sessions:
        attributes["swarmkit.session_id"] = trial.sessions[-1]
    return attributes
