// The official AG-UI client (@ag-ui/client) reads three runs of one thread from swarmkit's
// AG-UI endpoint: a run that pauses for approval, its resume, and a next turn. It prints what
// it saw as JSON: every event (run, type and the fields the test checks), every error or
// warning the client raised, and the thread's messages and state as the client keeps them.
import { HttpAgent } from "@ag-ui/client";

const [url, token] = process.argv.slice(2);
const problems = [];
for (const level of ["error", "warn"]) {
  const original = console[level];
  console[level] = (...args) => {
    problems.push(`${level}: ${args.map(String).join(" ")}`);
    original(...args);
  };
}

const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` }, threadId: "desk-1" });
const seen = [];
let runId = "";
const watcher = {
  onEvent: ({ event }) => {
    const { type, subagentRunId, parentToolCallId, name, delta, toolCallId, toolCallName, content, outcome } = event;
    seen.push({ runId, type, subagentRunId, parentToolCallId, name, delta, toolCallId, toolCallName, content,
                outcome: outcome?.type });
  },
  onRunErrorEvent: ({ event }) => { problems.push(`RUN_ERROR: ${event.message}`); },
  onRunFailed: ({ error }) => { problems.push(`run failed: ${error}`); },
};

async function run(id, parameters) {
  runId = id;
  try {
    await agent.runAgent({ runId: id, ...parameters }, watcher);
  } catch (error) {
    problems.push(`${id} threw: ${error?.message ?? error}`);
  }
}

agent.addMessage({ id: "u1", role: "user", content: "Refund order A1, please." });
await run("r1", {});
const interrupts = agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason, toolCallId: i.toolCallId }));
await run("r2", {
  resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { decision: "approve" } })),
});
agent.addMessage({ id: "u2", role: "user", content: "Thanks!" });
await run("r3", {});

process.stdout.write(JSON.stringify({ events: seen, problems, interrupts, messages: agent.messages, state: agent.state }));
