"""What the loop does with an answer: a required tool asked for, typed output validated."""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from pydantic import BaseModel

from swarmkit._run._state import RunState, StopRun
from swarmkit._schema import ArgumentProblem, ArgumentsSchema, arguments_schema
from swarmkit.lowlevel import StepWriter
from swarmkit.messages import Message, ToolMessage, UserMessage
from swarmkit.models import ModelResponse, OutputSchema
from swarmkit.plan import AgentPlan

_CUT_NOTE = (
    "The answer was cut by the output limit (finish_reason=length) before these arguments were "
    "complete; call again with shorter arguments, or raise the limit (max_tokens)."
)
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


async def accept_answer(
    tape: StepWriter, state: RunState, plan: AgentPlan, response: ModelResponse
) -> bool:
    """Whether an answer in text ends the run, or goes back to the model first.

    A model that had to call a tool is told so and asked again, once a run (a server that
    ignores tool_choice would otherwise cost a reminder on every answer). A typed answer that does
    not validate goes back with the error; after ``max_output_retries`` of them the run stops
    with ``invalid_output``, keeping the last raw text.
    """
    if _must_call_tool(state) and not state.output.reminded:
        await _remind_of_tool(tape, state, plan)
        return False
    state.output.truncated = response.finish_reason == "length"
    return await _accept_output(tape, state, plan, response.message.content or "")


def after_tool_calls(state: RunState, response: ModelResponse) -> None:
    """After a turn's tool calls: a call whose arguments the output limit cut is told why."""
    if response.finish_reason != "length":
        return
    cut = {call.id for call in response.message.tool_calls}

    def noted(message: Message) -> Message:
        if isinstance(message, ToolMessage) and message.is_error and message.tool_call_id in cut:
            return replace(message, content=f"{message.content}\n{_CUT_NOTE}")
        return message

    # Only this turn's results, the last ones added: earlier messages were sent as they are.
    state.conversation.amend_latest(len(response.message.tool_calls), noted)


async def _accept_output(tape: StepWriter, state: RunState, plan: AgentPlan, text: str) -> bool:
    output_type = plan.agent.output_type
    state.output.value = None
    state.output.expected = output_type is not None
    if output_type is None:
        return True
    value = parse_output(output_type, text)
    if isinstance(value, BaseModel):
        state.output.value = value
        return True
    await tape.note(
        "output_rejected",
        {"agent": plan.name, "turn": state.budget.turns, "problem": value.message},
    )
    if state.output.retries >= plan.agent.max_output_retries:
        raise StopRun("invalid_output")
    state.output.retries += 1
    state.conversation.add(UserMessage(content=_retry_prompt(output_type, value)))
    return False


def _must_call_tool(state: RunState) -> bool:
    return state.offer.tool_choice not in (None, "auto", "none")


async def _remind_of_tool(tape: StepWriter, state: RunState, plan: AgentPlan) -> None:
    choice = state.offer.tool_choice
    what = "one of your tools" if choice == "required" else f"the tool {choice!r}"
    await tape.note(
        "tool_required", {"agent": plan.name, "turn": state.budget.turns, "tool": choice}
    )
    state.output.reminded = True
    state.conversation.add(
        UserMessage(content=f"You had to call {what}, but answered in text. Call it now.")
    )


def _retry_prompt(output_type: type[BaseModel], problem: ArgumentProblem) -> str:
    return (
        f"Your answer is not a valid {output_type.__name__}: {problem.message} "
        "Answer again with only that JSON object."
    )
