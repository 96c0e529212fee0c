// The session viewer's pages: plain DOM, no framework, data from the JSON API only.
"use strict";

const TOKEN = document.querySelector('meta[name="swarmkit-token"]').content;
const main = document.getElementById("main");
let config = { swarm: false, agents: [], allow_decisions: false };
let pollTimer = null;
let listTimer = null;  // the sessions list's next refresh
const LIST_EVERY = 3000;  // ms between refreshes of the list

async function api(path, body) {
  const options = { headers: { "X-Swarmkit-Token": TOKEN }, credentials: "same-origin" };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch("/api/" + path, options);
  const data = await response.json();
  return { ok: response.ok, status: response.status, data };
}

// el("div", {class: "x"}, "text", child): children are text or nodes, never parsed as HTML.
// A style is an object of properties set through the CSSOM: the page's Content-Security-Policy
// (style-src 'self') refuses style attributes, but not what its own script sets this way.
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "style") Object.assign(node.style, value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const json = (value) => JSON.stringify(value, null, 2);
// "1 handoff", "2 handoffs": a count and its noun agree.
const count = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`;
const badge = (text) => el("span", { class: "badge " + text }, text);
// A session's state in the one vocabulary (running, waiting, failed, limited, finished,
// cancelled), each with its colour.
const stateBadge = (state) => el("span", { class: "badge state state-" + state, "data-state": state }, state);
// Dates in the reader's own locale (24 h where it uses 24 h).
// Rounded to the microsecond first, as the command's listing and `show` round a start.
const when = (seconds) => new Date(Math.round(seconds * 1e6) / 1e3).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
const duration = (seconds) => (seconds < 1 ? (seconds * 1000).toFixed(0) + " ms" : seconds.toFixed(1) + " s");

function parsed(text) {
  if (typeof text !== "string") return text;
  try { return JSON.parse(text); } catch (e) { return text; }
}

function shown(value) {
  const v = parsed(value);
  return typeof v === "string" ? v : json(v);
}

// -- the sessions list ------------------------------------------------------------------------

async function sessionsPage() {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") || "";
  const agent = params.get("agent") || "";
  const q = params.get("q") || "";
  const offset = Number(params.get("offset") || 0);
  const limit = 50;
  const query = new URLSearchParams({ status, agent, q, offset, limit });
  const { data } = await api("sessions?" + query);

  const statusSelect = el("select", { name: "status" },
    ["", "running", "waiting", "failed", "limited", "finished", "cancelled", "interrupted", "final_output", "max_handoffs", "cycle", "max_turns", "timeout", "usage_limit", "error"]
      .map((s) => el("option", { value: s, selected: s === status }, s || "any state")));
  const agentInput = config.agents.length
    ? el("select", { name: "agent" }, el("option", { value: "" }, "any agent"),
        config.agents.map((a) => el("option", { value: a, selected: a === agent }, a)))
    : el("input", { name: "agent", placeholder: "agent", value: agent });
  const search = el("input", { name: "q", placeholder: "search ids, prompts, agents", value: q, size: 28 });
  const form = el("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ status: statusSelect.value, agent: agentInput.value, q: search.value });
    go("/?" + next);
  } }, statusSelect, agentInput, search, el("button", { type: "submit" }, "Filter"));

  // A conversation's turns on this page are one thread: its latest turn (the list is newest
  // first) stands for it, and a toggle shows the earlier turns under it.
  const shown = new Map();
  for (const row of data.rows) if (row.conversation) shown.set(row.conversation, (shown.get(row.conversation) || 0) + 1);
  const headed = new Set();
  const rows = data.rows.map((row) => {
    const thread = row.conversation && shown.get(row.conversation) > 1 ? row.conversation : null;
    const head = thread !== null && !headed.has(thread);
    if (thread !== null) headed.add(thread);
    const toggle = head ? el("button", { type: "button", class: "turns", "aria-expanded": "false",
      onclick: (event) => showTurns(thread, event.currentTarget) }, `▸ ${count(shown.get(thread), "turn")}`) : null;
    return el("tr", { "data-session": row.session_id, "data-thread": thread, class: thread && !head ? "earlier-turn" : null, hidden: Boolean(thread && !head) },
    el("td", {}, toggle, el("a", { href: "/session/" + encodeURIComponent(row.session_id), class: "mono" }, row.session_id),
      row.turn > 1 ? el("span", { class: "muted turn" }, ` turn ${row.turn} of `, el("a", { href: "/session/" + encodeURIComponent(row.conversation), class: "mono" }, row.conversation)) : null),
    el("td", {}, stateBadge(row.state || row.status)),
    el("td", { class: "wide" }, row.stop_reason || "–"),
    el("td", {}, row.agents.join(" → ")),
    el("td", { class: "num wide" }, row.handoffs),
    el("td", { class: "num wide" }, row.model_calls),
    el("td", { class: "num" }, row.tokens),
    el("td", {}, when(row.started_at)),
    el("td", { class: "num" }, duration(row.duration)),
    el("td", { class: "muted prompt", title: row.prompt || "" }, row.prompt || ""));
  });
  const head = el("tr", {}, [["session"], ["state"], ["stop reason", "wide"], ["agents"], ["handoffs", "wide"], ["model calls", "wide"], ["tokens"], ["started"], ["duration"], ["prompt"]].map(([h, c]) => el("th", { class: c }, h)));
  const total = data.total === null ? "many" : data.total;
  const page = (to) => { params.set("offset", Math.max(0, to)); go("/?" + params); };
  const pager = el("div", { class: "pager" },
    el("button", { disabled: offset === 0, onclick: () => page(offset - limit) }, "← newer"),
    el("span", { class: "muted", id: "count" }, `${data.rows.length ? offset + 1 : 0}–${offset + data.rows.length} of ${total}`),
    el("button", { disabled: !data.more, onclick: () => page(offset + limit) }, "older →"));

  // The list refreshes itself: soon while the server reads a newer listing (the rows shown
  // are the previous one, and the heading says so), then every few seconds; never while a
  // filter is being typed.
  const marker = el("span", { id: "refreshing", class: "muted refreshing", hidden: !data.refreshing }, " refreshing…");
  main.replaceChildren(el("h1", {}, "Sessions", marker), form,
    data.rows.length ? el("table", { id: "sessions" }, el("thead", {}, head), el("tbody", {}, rows))
      : el("p", { class: "muted" }, "No sessions match."), pager);
  document.body.dataset.listRefreshing = String(Boolean(data.refreshing));
  scheduleList(query, JSON.stringify(data), data.refreshing ? 300 : LIST_EVERY);
}

// Ask for the same page again after `wait` ms; draw it anew only when it changed (so an
// expanded thread stays open) and no filter is being typed.
function scheduleList(query, drawn, wait) {
  clearTimeout(listTimer);
  listTimer = setTimeout(async () => {
    if (location.pathname !== "/") return;
    const { data } = await api("sessions?" + query);
    const typing = main.contains(document.activeElement) && document.activeElement.matches("input, select");
    if (JSON.stringify(data) !== drawn && !typing) await sessionsPage();
    else scheduleList(query, drawn, data.refreshing ? 300 : LIST_EVERY);
  }, wait);
}

function showTurns(thread, button) {
  const open = button.getAttribute("aria-expanded") !== "true";
  button.setAttribute("aria-expanded", String(open));
  button.textContent = (open ? "▾ " : "▸ ") + button.textContent.slice(2);
  for (const tr of document.querySelectorAll("tr.earlier-turn")) {
    if (tr.dataset.thread === thread) tr.hidden = !open;
  }
}

// -- a session ----------------------------------------------------------------------------------

async function sessionPage(sessionId) {
  const { ok, data } = await api("sessions/" + encodeURIComponent(sessionId));
  if (!ok) {
    main.replaceChildren(el("h1", {}, "Session not found"), el("p", {}, data.error), el("a", { href: "/" }, "All sessions"));
    return;
  }
  renderSession(data);
  if (data.state === "running") {
    let seen = data.records;
    pollTimer = setInterval(async () => {
      const next = await api("sessions/" + encodeURIComponent(sessionId));
      if (next.ok && next.data.records !== seen) {
        seen = next.data.records;
        renderSession(next.data);
        if (next.data.state !== "running") clearInterval(pollTimer);
      }
    }, 1000);
  }
}

function renderSession(s) {
  const summary = el("div", { class: "summary" },
    el("div", {}, el("span", {}, "state"), stateBadge(s.state)),
    s.started_at ? el("div", {}, el("span", {}, "started"), when(s.started_at)) : null,
    s.duration !== null && s.duration !== undefined ? el("div", {}, el("span", {}, "took"), duration(s.duration)) : null,
    el("div", {}, el("span", {}, "stop"), s.stop_reason || "–"),
    el("div", {}, el("span", {}, "trail"), el("b", { id: "trail" }, s.trail.join(" → "))),
    el("div", {}, el("span", {}, "handoffs"), s.handoffs),
    el("div", {}, el("span", {}, "model calls"), s.model_calls),
    el("div", {}, el("span", {}, "tokens"), s.tokens),
    el("div", {}, el("span", {}, "records"), s.records));
  const drawing = el("div", { class: "drawing", id: "drawing" });
  drawing.innerHTML = s.drawing; // SVG built and escaped by the server
  main.replaceChildren(...[
    el("p", {}, el("a", { href: "/" }, "← all sessions")),
    el("h1", {}, "Session ", el("span", { class: "mono" }, s.session_id)),
    summary,
    threadPanel(s.thread),
    s.pending ? pendingPanel(s) : null,
    el("h2", {}, "The swarm, and the path this session took"), drawing,
    replayPanel(s),
    waterfall(s),
    el("h2", {}, "Timeline"),
    el("ol", { class: "timeline", id: "timeline" }, s.steps.map((step) => stepItem(step, s.started_at, s.session_id))),
  ].filter(Boolean));
}

function threadPanel(t) {
  // A conversation's turns are sessions of their own: the page lists them as one thread.
  if (!t || t.turns.length < 2) return null;
  const turns = t.turns.map((id, i) => el("li", {}, i + 1 === t.turn
    ? el("b", { class: "mono" }, id)
    : el("a", { href: "/session/" + encodeURIComponent(id), class: "mono" }, id)));
  return el("div", { id: "thread" }, el("h2", {}, `Conversation ${t.conversation}: turn ${t.turn} of ${t.turns.length}`), el("ol", {}, turns));
}

function pendingPanel(s) {
  const p = s.pending;
  const what = p.kind === "tool" ? `tool ${p.tool_name}` : `${p.kind} → ${p.target}`;
  const payload = el("textarea", { id: "payload", rows: 6, cols: 70, class: "mono" }, json(p.payload || {}));
  const reason = el("input", { id: "reason", placeholder: "reason for rejecting", size: 40 });
  const by = el("input", { id: "decided-by", placeholder: "your name (kept in the audit trail)", size: 28 });
  const note = el("input", { id: "decision-note", placeholder: "note (optional)", size: 28 });
  const outcome = el("div", { id: "decision-outcome" });
  const disabled = !s.can_decide;
  async function send(body) {
    body = { ...body, by: by.value, note: note.value };
    const { ok, data } = await api(`sessions/${encodeURIComponent(s.session_id)}/decision`, body);
    if (!ok) {
      outcome.replaceChildren(el("p", { class: "errors" }, data.error),
        el("ul", { class: "errors" }, (data.errors || []).map((e) => el("li", {}, `${e.field}: ${e.message}`))));
      return;
    }
    outcome.replaceChildren(el("p", {}, `Resumed: stopped with ${data.stop_reason} (${data.final_agent})`));
    sessionPage(s.session_id);
  }
  return el("div", { class: "panel pending", id: "pending" },
    el("div", {}, el("b", {}, `Waiting for a human: ${what}`), el("span", { class: "muted" }, ` (active agent ${p.agent}${p.decided_by ? ", decided by " + p.decided_by : ""})`)),
    payload,
    disabled ? el("p", { class: "muted" }, "Decisions are off: start swarmkit ui with --swarm and --allow-decisions.") : null,
    el("div", { class: "filters" }, by, note),
    el("div", { class: "filters" },
      el("button", { class: "primary", id: "approve", disabled, onclick: () => send({ action: "approve" }) }, "Approve"),
      el("button", { id: "edit", disabled, onclick: () => {
        let edited;
        try { edited = JSON.parse(payload.value); } catch (e) {
          outcome.replaceChildren(el("p", { class: "errors" }, "The payload is not valid JSON: " + e.message));
          return;
        }
        send({ action: "edit", payload: edited });
      } }, "Approve with edited payload"),
      reason,
      el("button", { id: "reject", disabled, onclick: () => send({ action: "reject", reason: reason.value }) }, "Reject")),
    outcome);
}

function replayPanel(s) {
  const prompt = el("input", { id: "replay-prompt", placeholder: "optional: what if it had been asked this instead", size: 50 });
  const result = el("div", { id: "replay-result" });
  const button = el("button", { id: "replay", disabled: !s.can_replay, onclick: async () => {
    button.disabled = true;
    const { ok, data } = await api(`sessions/${encodeURIComponent(s.session_id)}/replay`, { prompt: prompt.value });
    button.disabled = false;
    result.replaceChildren(ok ? replayResult(data) : el("p", { class: "errors" }, data.error));
  } }, "Replay against the current code");
  return el("div", { class: "panel" }, el("h2", {}, "Replay"),
    s.can_replay ? null : el("p", { class: "muted" }, "Start swarmkit ui with --swarm module:attribute to replay from here."),
    el("div", { class: "filters" }, button, prompt), result);
}

function replayResult(r) {
  if (r.outcome === "reproduced") {
    return el("p", {}, badge("reproduced"), ` ${r.stop_reason} (${r.final_agent}), trail ${r.trail.join(" → ")}, ${count(r.handoffs, "handoff")}, ${count(r.turns, "model answer")} from the journal, 0 model calls`);
  }
  const rows = r.rows.map((row) => el("tr", { class: row.change }, el("td", { class: "left" }, row.left), el("td", { class: "right" }, row.right)));
  return el("div", { id: "divergence" },
    el("p", {}, badge("diverged"), " ", r.message),
    el("table", { class: "diff" }, el("thead", {}, el("tr", {}, el("th", {}, "journal (expected)"), el("th", {}, "current code (actual)"))), el("tbody", {}, rows)));
}

// -- timeline steps -------------------------------------------------------------------------------

function stepItem(step, origin, sessionId) {
  // Own keys only: a record kind such as "__proto__" or "constructor" must not find
  // Object.prototype's members.
  const known = !step.unknown && !step.unreadable;
  let body = [el("pre", {}, json(step.data))];
  let readable = known;
  try {
    if (known && Object.hasOwn(STEPS, step.kind)) body = STEPS[step.kind](step.data, step);
  } catch (error) {
    readable = false;  // a record whose fields are not what its kind promises
  }
  const label = !readable ? unknownLabel(step) : (Object.hasOwn(LABELS, step.kind) ? LABELS[step.kind] : step.kind);
  if (step.saw) body.push(whatTheModelSaw(step.saw, step, sessionId));
  if (step.explain) body.push(explanation(step.explain));
  const at = step.at !== undefined && origin ? el("span", { class: "at muted", title: when(step.at) },
    "+" + duration(step.at - origin), TIMED.has(step.kind) ? el("span", { class: "took" }, " (" + duration(step.duration) + ")") : null) : el("span");
  return el("li", { class: "step step-" + (readable ? step.kind : "unknown"), "data-seq": step.seq },
    el("span", { class: "seq" }, step.seq), el("span", { class: "kind" }, label), el("div", {}, body), at);
}

const TIMED = new Set(["model_call", "tool_call", "resumed"]);

// What the model saw at one call. The journal keeps a summary (instructions, tool names, the
// latest messages); with the swarm known, opening it loads the whole request the swarm
// rebuilds from the journal: every message as sent, the tools with their schemas, the settings
// and the handoff payload (redacted by the server like everything else).
// Calls whose "what the model saw" is open: a running session's page, drawn again as its
// steps come in, keeps them open (and loads them again, with the new records).
const openSaw = new Set();

function whatTheModelSaw(saw, step, sessionId) {
  const key = sessionId + "\u0000" + step.seq;
  const body = el("div", { class: "saw-body" }, sawSummary(saw,
    config.swarm ? null : "The journal keeps this summary only. Start swarmkit ui with --swarm module:attribute to see the whole request: every message as sent, the tools' schemas, the settings."));
  let loaded = false;
  const details = el("details", { class: "saw", "data-seq": step.seq, open: openSaw.has(key), ontoggle: async () => {
    if (details.open) openSaw.add(key); else openSaw.delete(key);
    if (!details.open || loaded || !config.swarm) return;
    loaded = true;
    body.replaceChildren(el("p", { class: "muted" }, "rebuilding the request from the journal…"));
    const { ok, data } = await api(`sessions/${encodeURIComponent(sessionId)}/requests/${step.seq}`);
    body.replaceChildren(ok ? el("div", { class: "saw-full" }, ...fullRequest(data))
      : el("div", {}, el("p", { class: "errors saw-error" }, data.error), sawSummary(saw)));
    details.dataset.loaded = ok ? "full" : "summary";
  } }, el("summary", {}, `what the model saw (${count(saw.messages, "message")}, ${count((saw.tools || []).length, "tool")})`), body);
  return details;
}

function sawSummary(saw, note) {
  return el("div", { class: "saw-summary" }, note ? el("p", { class: "muted saw-note" }, note) : null,
    el("div", { class: "muted" }, "instructions"), el("pre", {}, saw.instructions || ""),
    el("div", { class: "muted" }, "tools offered"), el("div", {}, (saw.tools || []).map((t) => el("code", { class: "tool-name" }, t))),
    el("div", { class: "muted" }, "latest messages"), el("pre", {}, [].concat(saw.latest || "").join("\n")));
}

function fullRequest(r) {
  const settings = Object.entries(r.settings || {});
  return [
    el("div", { class: "muted" }, "instructions"), el("pre", { class: "saw-instructions" }, r.instructions || ""),
    r.payload !== null && r.payload !== undefined ? [el("div", { class: "muted" }, "handoff payload"), el("pre", { class: "saw-payload" }, json(r.payload))] : null,
    el("div", { class: "muted" }, `messages as sent (${r.messages.length})`),
    el("ol", { class: "saw-messages" }, r.messages.map(sentMessage)),
    el("div", { class: "muted" }, `tools offered (${r.tools.length})`),
    el("div", { class: "saw-tools" }, r.tools.length ? r.tools.map((t) => el("details", { class: "saw-tool", "data-tool": t.name },
      el("summary", {}, el("code", {}, t.name), " ", el("span", { class: "muted" }, t.description || "")),
      el("pre", { class: "schema" }, json(t.parameters)))) : el("span", { class: "muted" }, "none")),
    el("div", { class: "muted" }, "settings"),
    el("div", { class: "saw-settings" }, settings.length ? settings.map(([k, v]) => el("code", { class: "setting" }, `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)) : el("span", { class: "muted" }, "the model's defaults")),
    r.output_schema ? [el("div", { class: "muted" }, `answer schema ${r.output_schema.name}`), el("pre", {}, json(r.output_schema.schema))] : null,
  ];
}

function sentMessage(m) {
  const who = m.kind === "assistant" && m.agent ? `assistant (${m.agent})` : m.kind === "tool" ? `tool result ${m.name}${m.is_error ? " (error)" : ""}` : m.kind;
  return el("li", { class: "msg msg-" + m.kind },
    el("span", { class: "role" }, who),
    el("div", {},
      m.content !== null && m.content !== undefined && m.content !== "" ? el("pre", {}, shown(m.content)) : null,
      (m.tool_calls || []).map((c) => el("div", { class: "call" }, "calls ", el("code", {}, c.name), " ", el("code", {}, shown(c.arguments))))));
}

// The session on a time axis: one lane per agent (and one for people's decisions), a bar per
// step from the record before it to its own.
function waterfall(s) {
  const timed = s.steps.filter((step) => step.at !== undefined);
  if (!timed.length || !s.duration) return null;
  const origin = s.started_at;
  const lanes = [];
  for (const step of timed) {
    const lane = step.kind === "resumed" || step.kind === "interrupt" ? "decisions" : step.agent || "run";
    if (!lanes.includes(lane)) lanes.push(lane);
  }
  const rows = lanes.map((lane) => el("div", { class: "lane" }, el("span", { class: "lane-name" }, lane),
    el("div", { class: "bars" }, timed.filter((step) => (step.kind === "resumed" || step.kind === "interrupt" ? "decisions" : step.agent || "run") === lane)
      .map((step) => el("span", {
        class: "bar bar-" + step.kind,
        title: `${step.seq} ${LABELS[step.kind] || step.kind}: ${duration(step.duration)}`,
        style: { left: `${(100 * (step.at - step.duration - origin)) / s.duration}%`, width: `${Math.max(0.4, (100 * step.duration) / s.duration)}%` },
      })))));
  return el("div", { class: "panel", id: "waterfall" }, el("h2", {}, `Waterfall (${duration(s.duration)})`), rows);
}

function unknownLabel(step) {
  return step.unknown ? `unknown record (${String(step.kind)})` : `unreadable record (${String(step.kind)})`;
}

const LABELS = { run_started: "start", agent_started: "agent", model_call: "model", tool_call: "tool",
  handoff_refused: "refused", handoff_invalid: "refused", interrupt: "pause", run_finished: "stop" };
const DECIDED = { rule: "a rule", llm: "the LLM", tool: "a tool" };

const STEPS = {
  run_started: (d) => [el("div", {}, `entry agent ${d.entry_agent}`), el("pre", {}, d.prompt), el("div", { class: "muted" }, "context ", el("code", {}, JSON.stringify(d.context || {}))),
    d.next_turn ? el("div", { class: "next-turn" }, "next turn ", el("b", {}, d.next_turn.agent), ` by policy ${d.next_turn.policy}`, d.next_turn.condition ? el("code", {}, " " + d.next_turn.condition) : null, ` (last was ${d.next_turn.last_agent})`) : null],
  agent_started: (d) => [el("div", {}, el("b", {}, d.agent), ` is active (${d.handoff_count ? "after handoff #" + d.handoff_count : "entry agent"})`)],
  rule: (d) => [el("div", {}, `${d.agent}: rule `, el("code", {}, d.condition || "always"), ` fired → `, el("b", {}, d.target), " (no model call)")],
  model_call: (d) => {
    if (d.error) return [el("div", { class: "errors" }, `${d.agent} call ${d.turn} failed: ${d.error}`)];
    const r = d.response || {};
    const u = r.usage || {};
    const calls = (r.tool_calls || []).map((c) => el("div", {}, "calls ", el("code", {}, c.name), " ", el("code", {}, shown(c.arguments))));
    return [el("div", {}, `${d.agent} call ${d.turn}: ${u.total_tokens || 0} tokens (${u.prompt_tokens || 0} in, ${u.completion_tokens || 0} out)`), ...calls, r.content ? el("pre", {}, r.content) : null];
  },
  tool_call: (d) => {
    const o = d.outcome || {};
    const dec = d.decision;
    return [el("div", {}, `${d.agent} `, el("code", {}, d.name), " ", el("code", { class: "executed" }, shown(d.arguments))),
      dec ? el("div", { class: "decision" }, decided(dec)) : null,
      d.proposed_arguments !== undefined ? el("div", { class: "proposed muted" }, "the model proposed ", el("code", {}, shown(d.proposed_arguments))) : null,
      d.sub_session ? el("div", { class: "muted" }, "sub-run ", el("a", { href: "/session/" + encodeURIComponent(d.sub_session), class: "mono" }, d.sub_session)) : null,
      el("pre", { class: o.is_error ? "errors" : "" }, (o.is_error ? "error: " : "→ ") + shown(o.content))];
  },
  handoff: (d) => [el("div", {}, `#${d.number} ${d.source} → `, el("b", {}, d.target), `, decided by ${DECIDED[d.decided_by] || d.decided_by}`, d.decided_by === "rule" ? el("code", {}, " " + (d.condition || "always")) : null),
    d.payload !== null && d.payload !== undefined ? el("div", { class: "payload" }, el("span", { class: "payload-type" }, d.payload_type || "payload"), el("pre", {}, json(d.payload))) : null,
    d.message ? el("div", {}, "message: " + d.message) : null],
  handoff_refused: (d) => [el("div", {}, `${d.source} → ${d.target} refused (${d.reason}), asked by ${d.decided_by}`), d.detail ? el("div", { class: "muted" }, d.detail) : null],
  handoff_invalid: (d) => [el("div", {}, `${d.source} → ${d.target || "?"} refused (invalid payload), asked by ${d.decided_by} with `, el("code", {}, d.tool_name), " ", el("code", {}, shown(d.arguments))),
    el("pre", { class: "errors" }, d.problem)],
  interrupt: (d) => [el("div", {}, `waiting for a human: ${d.kind} ${d.tool_name || d.target}`), d.payload ? el("pre", {}, json(d.payload)) : null],
  resumed: (d) => [el("div", {}, `decision: ${d.kind}${d.reason ? " (" + d.reason + ")" : ""}`, d.decided_by ? ` by ${d.decided_by}` : "", d.note ? ` — ${d.note}` : ""), d.payload ? el("pre", {}, json(d.payload)) : null],
  run_finished: (d) => [el("div", {}, badge(d.stop_reason), ` ${d.final_agent} was active after ${count(d.turns, "model call")}; trail ${(d.trail || []).join(" → ")}`),
    d.error ? el("div", { class: "errors" }, d.error) : null, d.final_output ? el("pre", {}, d.final_output) : null],
};

function decided(d) {
  const verb = { approve: "approved", reject: "rejected", edit: "edited" }[d.kind] || d.kind;
  return [`${verb} by ${d.decided_by || "a person (unnamed)"}`, d.at ? ` at ${when(d.at)}` : "",
    d.edited && d.edited.length ? `: changed ${d.edited.join(", ")}` : "", d.note ? ` — ${d.note}` : ""].join("");
}

function explanation(e) {
  const trials = e.trials.map((t) => el("li", { class: t.matched ? "hit" : "miss" },
    `→ ${t.target} when `, el("code", {}, t.when || "always"), t.matched ? ": matched" : ": did not match",
    t.values.length ? " (" + t.values.map((v) => `${v.path} = ${v.found ? JSON.stringify(v.value) : "missing"}`).join(", ") + ")" : ""));
  const ending = e.fired ? `rule fired → ${e.fired}` : "no rule matched; the model decides";
  return el("div", { class: "explain" }, el("b", {}, "why: "), ending, el("ol", {}, trials));
}

// -- the queue of people ----------------------------------------------------------------------

async function queuePage() {
  const { ok, data } = await api("queue");
  if (!ok) { main.replaceChildren(el("p", { class: "errors" }, data.error)); return; }
  const disabled = !config.allow_decisions;
  const by = el("input", { id: "person", placeholder: "your name", size: 20 });
  const outcome = el("div", { id: "queue-outcome" });
  async function send(sessionId, action, body) {
    const reply = await api(`queue/${encodeURIComponent(sessionId)}/${action}`, { ...body, by: by.value });
    if (!reply.ok) { outcome.replaceChildren(el("p", { class: "errors" }, reply.data.error)); return; }
    if (reply.data.stop_reason) {
      outcome.replaceChildren(el("p", { id: "handed-back" }, `Run went on: ${reply.data.stop_reason} (${reply.data.final_agent}): ${reply.data.final_output || ""}`));
      return;
    }
    outcome.replaceChildren(el("p", {}, `${action}: done`));
    await queueRows();
  }
  const rows = el("tbody", {});
  async function queueRows() {
    const fresh = (await api("queue")).data;
    rows.replaceChildren(...fresh.map((c) => queueRow(c, send, disabled)));
  }
  main.replaceChildren(
    el("h1", {}, "Waiting for a person"),
    disabled ? el("p", { class: "muted" }, "Read only: start swarmkit ui with --swarm and --allow-decisions to claim and reply.") : null,
    el("div", { class: "filters" }, by),
    el("table", { id: "queue" },
      el("thead", {}, el("tr", {}, ["session", "queue", "priority", "waiting", "claimed by", "state", "payload", "act"].map((h) => el("th", {}, h)))),
      rows),
    outcome);
  rows.replaceChildren(...data.map((c) => queueRow(c, send, disabled)));
}

function queueRow(c, send, disabled) {
  const text = el("textarea", { class: "reply-text", rows: 2, cols: 36, placeholder: "reply to the customer" });
  const to = el("select", { class: "hand-to" }, (config.takers || []).map((a) => el("option", { value: a }, a)));
  const state = c.escalated_at ? "escalated" : (c.overdue ? "overdue" : "");
  return el("tr", { "data-session": c.session_id },
    el("td", {}, el("a", { href: "/session/" + encodeURIComponent(c.session_id), class: "mono" }, c.session_id)),
    el("td", {}, c.queue), el("td", {}, String(c.priority)), el("td", {}, duration(c.age)),
    el("td", { class: "claimed-by" }, c.claimed_by || "-"), el("td", {}, state),
    el("td", { class: "mono" }, c.payload ? json(c.payload) : (c.message || "")),
    el("td", {},
      el("button", { class: "claim", disabled, onclick: () => send(c.session_id, "claim", {}) }, "Claim"),
      text,
      el("button", { class: "send-reply", disabled, onclick: () => send(c.session_id, "reply", { text: text.value }) }, "Reply"),
      to,
      el("button", { class: "hand-back", disabled, onclick: () => send(c.session_id, "hand-back", { to: to.value }) }, "Hand back"),
      el("button", { class: "close", disabled, onclick: () => send(c.session_id, "close", {}) }, "Close")));
}

// -- spend ---------------------------------------------------------------------------------------

const figure = (v) => (v === null || v === undefined ? "-" : typeof v === "number" ? String(Number(v.toPrecision(6))) : String(v));

function spendTable(id, columns, rows) {
  return el("table", { id },
    el("thead", {}, el("tr", {}, columns.map((c) => el("th", {}, c.replace(/_/g, " "))))),
    el("tbody", {}, rows.map((r) => el("tr", {}, columns.map((c) => el("td", { "data-column": c }, figure(r[c])))))));
}

async function spendPage() {
  const { ok, data } = await api("spend");
  if (!ok) {
    main.replaceChildren(el("p", { class: "error" }, data.error));
    return;
  }
  const spendColumns = ["tenant", "agent", "model", "day", "calls", "input_tokens", "output_tokens", "total_tokens", "cost"];
  const budgetColumns = ["budget", "scope", "period", "unit", "limit", "spent", "held", "left"];
  main.replaceChildren(
    el("p", {}, el("a", { href: "/" }, "← sessions")),
    el("h2", {}, "Spend"),
    data.spend.length ? spendTable("spend", spendColumns, data.spend) : el("p", { class: "muted" }, "No calls settled yet."),
    el("h2", {}, "Budgets"),
    data.budgets.length ? spendTable("budgets", budgetColumns, data.budgets) : el("p", { class: "muted" }, "No budget has counted a call yet."));
}

// -- rules: suggestions, shadow and active rules over time, promotions and demotions -------------

const pct = (x) => (x === null || x === undefined ? "–" : (x * 100).toFixed(1) + "%");
const bounds = (lower, upper) => `${pct(lower)} – ${pct(upper)}`;

async function rulesPage() {
  const params = new URLSearchParams(location.search);
  const query = new URLSearchParams({ min_support: params.get("min_support") || "20", min_precision: params.get("min_precision") || "0.98" });
  const { ok, data } = await api("rules?" + query);
  if (!ok) { main.replaceChildren(el("h1", {}, "Rules"), el("p", { class: "error" }, data.error)); return; }
  const form = el("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    go("/rules?" + new URLSearchParams(new FormData(event.target)));
  } },
    el("label", {}, "min support ", el("input", { name: "min_support", value: query.get("min_support"), size: 5 })),
    el("label", {}, " min precision ", el("input", { name: "min_precision", value: query.get("min_precision"), size: 5 })),
    el("button", { type: "submit" }, "suggest"));
  main.replaceChildren(el("h1", {}, "Rules"),
    el("p", { class: "muted" }, `${count(data.sessions, "session")} in the journal`),
    el("h2", {}, "Suggestions"), form, suggestions(data.suggest),
    el("h2", {}, "Shadow and active rules"), rulesTable(data),
    el("h2", {}, "Promotions and demotions"), rulesLog(data.log));
}

function sessionLink(id) {
  return el("a", { href: "/session/" + encodeURIComponent(id), class: "mono" }, id);
}

function suggestions(s) {
  if (s.note) return el("p", { class: "muted", id: "suggest-note" }, s.note);
  const head = el("tr", {}, ["rule", "held-out precision", "support", "95% bounds", "saves", "model chose otherwise"].map((h) => el("th", {}, h)));
  const rows = s.suggestions.map((r) => el("tr", { "data-rule": `${r.source} -> ${r.target} if ${r.when}` },
    el("td", {}, el("code", {}, r.line), r.conflicts.length ? el("div", { class: "decision" }, r.conflicts.join("; ")) : null),
    el("td", { class: "num" }, pct(r.precision)),
    el("td", { class: "num" }, `${r.agreed} / ${r.support}`),
    el("td", { class: "num bounds" }, bounds(r.bounds[0], r.bounds[1])),
    el("td", { class: "num" }, `${count(r.saved_calls, "call")}, ${r.saved_tokens} tokens`),
    el("td", {}, r.counter_count ? [`${r.counter_count}: `, r.counter_examples.map((c) => [sessionLink(c.session_id), ` → ${c.chosen} `])] : "none")));
  const withheld = s.withheld.map((w) => el("li", {}, el("code", {}, `${w.source} -> ${w.target} if ${w.when}`), ` withheld (${w.reason}): ${w.why}`));
  return el("div", {},
    el("p", { class: "muted" }, `learned on ${s.sessions - s.held_out_sessions} sessions, checked on ${s.held_out_sessions} held out`),
    s.suggestions.length ? el("table", { id: "suggestions" }, el("thead", {}, head), el("tbody", {}, rows)) : el("p", { class: "muted" }, "No rule meets both thresholds."),
    withheld.length ? el("details", { id: "withheld" }, el("summary", {}, count(withheld.length, "withheld rule")), el("ul", {}, withheld)) : null);
}

// The agreement's 95% interval per day: one bar from lower to upper (CSS boxes, no markup).
function agreementPicture(series) {
  return el("div", { class: "agreement", role: "img", "aria-label": "agreement per day with 95% bounds" },
    series.map((point) => el("span", { class: "day", title: `${point.day}: ${point.agreements}/${point.fired}, ${bounds(point.lower, point.upper)}` },
      el("span", { class: "interval", style: { bottom: (point.lower * 100).toFixed(1) + "%", height: Math.max(2, (point.upper - point.lower) * 100).toFixed(1) + "%" } }))));
}

function seriesTable(series) {
  return el("table", { class: "series" }, el("thead", {}, el("tr", {}, ["day", "agreed", "rate", "95% bounds"].map((h) => el("th", {}, h)))),
    el("tbody", {}, series.map((p) => el("tr", {}, el("td", {}, p.day), el("td", { class: "num" }, `${p.agreements} / ${p.fired}`),
      el("td", { class: "num" }, pct(p.rate)), el("td", { class: "num" }, bounds(p.lower, p.upper))))));
}

function rulesTable(data) {
  if (!data.rules.length) return el("p", { class: "muted", id: "rules-note" }, data.rules_note || "No shadow or active rule yet.");
  const head = el("tr", {}, ["rule", "mode", "agreed", "95% bounds", "decided", "would save", "over time"].map((h) => el("th", {}, h)));
  const rows = data.rules.map((r) => el("tr", { "data-rule": r.rule, "data-mode": r.mode },
    el("td", {}, el("code", {}, r.rule)),
    el("td", {}, badge(r.mode)),
    el("td", { class: "num" }, `${r.agreements} / ${r.fired} (${pct(r.rate)})`),
    el("td", { class: "num bounds" }, bounds(r.lower, r.upper)),
    el("td", { class: "num" }, r.decided),
    el("td", { class: "num" }, `${count(r.calls_saved, "call")}, ${r.tokens_saved} tokens`),
    el("td", {}, r.series.length ? el("details", {}, el("summary", {}, agreementPicture(r.series)), seriesTable(r.series)) : "–")));
  return el("table", { id: "rules" }, el("thead", {}, head), el("tbody", {}, rows));
}

function rulesLog(log) {
  if (!log.length) return el("p", { class: "muted", id: "log-note" }, "No rule promoted or demoted yet.");
  const rows = log.map((r) => {
    const { seq, kind, at, rule, ...rest } = r;
    return el("tr", { "data-kind": kind }, el("td", { class: "num" }, seq), el("td", {}, badge(kind)),
      el("td", {}, when(at)), el("td", {}, el("code", {}, rule || "")), el("td", {}, el("pre", {}, json(rest))));
  });
  return el("table", { id: "rules-log" }, el("thead", {}, el("tr", {}, ["#", "change", "when", "rule", "record"].map((h) => el("th", {}, h)))), el("tbody", {}, rows));
}

// -- routing ---------------------------------------------------------------------------------------

function go(url) {
  history.pushState(null, "", url);
  route();
}

async function route() {
  clearInterval(pollTimer);
  clearTimeout(listTimer);
  document.body.dataset.ready = "false";
  const path = location.pathname;
  if (path === "/rules") await rulesPage();
  else if (path.startsWith("/session/")) await sessionPage(decodeURIComponent(path.slice("/session/".length)));
  else if (path === "/queue") await queuePage();
  else if (path === "/spend") await spendPage();
  else await sessionsPage();
  document.body.dataset.ready = "true";
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (link && link.origin === location.origin && !event.ctrlKey && !event.metaKey) {
    event.preventDefault();
    go(link.pathname + link.search);
  }
});
window.addEventListener("popstate", route);

(async () => {
  config = (await api("config")).data;
  if (config.spend) document.querySelector("header.top").append(" ", el("a", { href: "/spend", id: "spend-link" }, "spend"));
  await route();
})();
