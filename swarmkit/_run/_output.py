"""What the loop does with an answer in text: a typed answer is validated, or sent back."""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import BaseModel

from swarmkit._plan import AgentPlan
from swarmkit._run._state import RunState, StopRun
from swarmkit._schema import ArgumentProblem, ArgumentsSchema, arguments_schema
from swarmkit.journal._tape import Tape
from swarmkit.messages import UserMessage
from swarmkit.models import OutputSchema

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)


@functools.cache
def output_validator(output_type: type[BaseModel]) -> ArgumentsSchema[BaseModel]:
    """The strict-mode schema and validator of an output type (built once per type)."""
    return arguments_schema(output_type, strict=True)


@functools.cache
def _schema_for(output_type: type[BaseModel]) -> OutputSchema:
    validator = output_validator(output_type)
    return OutputSchema(
        name=output_type.__name__, schema=validator.parameters, strict=validator.strict
    )


def request_schema(plan: AgentPlan) -> OutputSchema | None:
    """The schema to send as structured output: the agent's output type, where it asks for it."""
    agent = plan.agent
    if agent.output_type is None or not agent.structured_output:
        return None
    return _schema_for(agent.output_type)


def parse_output(output_type: type[BaseModel], text: str) -> BaseModel | ArgumentProblem:
    """The answer validated into ``output_type``; a JSON object inside a code fence is accepted."""
    fenced = _FENCE.match(text)
    return output_validator(output_type).validate(fenced["body"] if fenced else text)


async def accept_answer(tape: Tape, state: RunState, plan: AgentPlan, text: str | None) -> bool:
    """Whether an answer in text ends the run; an invalid typed answer is sent back instead.

    After ``max_output_retries`` answers that do not validate, the run stops with
    ``invalid_output`` and keeps the last raw text.
    """
    output_type = plan.agent.output_type
    state.output_value = None
    state.output_expected = output_type is not None
    if output_type is None:
        return True
    value = parse_output(output_type, text or "")
    if isinstance(value, BaseModel):
        state.output_value = value
        return True
    await tape.note(
        "output_rejected", {"agent": plan.name, "turn": state.turns, "problem": value.message}
    )
    if state.output_retries >= plan.agent.max_output_retries:
        raise StopRun("invalid_output")
    state.output_retries += 1
    state.append(UserMessage(content=_retry_prompt(output_type, value)))
    return False


def _retry_prompt(output_type: type[BaseModel], problem: ArgumentProblem) -> str:
    return (
        f"Your answer is not a valid {output_type.__name__}: {problem.message} "
        "Answer again with only that JSON object."
    )


def output_data(value: Any) -> Any:
    """A validated output as journal data."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value
