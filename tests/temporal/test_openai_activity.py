"""The OpenAI adapter inside the model activity: its own retries off, Temporal's retries on."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy as TemporalRetryPolicy

from swarmkit import Agent, RetryPolicy, Swarm
from swarmkit.temporal import ActivityOptions, run_session
from tests.models.fake_openai import MODEL, completion, error, fake_api
from tests.temporal.harness import running_worker

RETRY_AT_ONCE = ActivityOptions(
    retry_policy=TemporalRetryPolicy(initial_interval=timedelta(milliseconds=10))
)


async def test_a_server_error_is_retried_by_temporal_alone(temporal_address: str) -> None:
    """A 500 fails the activity's first attempt; Temporal's second attempt gets the answer."""
    api = fake_api(error(500), completion("Hello from the API"), policy=RetryPolicy(max_attempts=1))
    swarm = Swarm([Agent(name="a", instructions="Greet.")], "a", model=api.model)
    async with running_worker(
        temporal_address,
        swarms={"greeter": swarm},
        models={MODEL: api.model},
        model_options=RETRY_AT_ONCE,
    ) as (client, queue):
        result = await run_session(client, "greeter", "hi", task_queue=queue)

    assert result.final_output == "Hello from the API"
    assert len(api.requests) == 2
    assert api.sleep.delays == []  # the adapter never scheduled a retry of its own
    assert api.body()["messages"][0] == {"role": "system", "content": "Greet."}
