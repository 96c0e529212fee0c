"""The Postgres journal's tables and statements, as SQL text (no driver is imported here)."""

from __future__ import annotations

POSTGRES_SCHEMA_VERSION = 2
"""The newest schema this swarmkit creates and reads; ``swarmkit_migrations`` records it."""

MIGRATION_LOCK = 0x5377_6B4A
"""The advisory lock that makes concurrent first openings migrate one at a time."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        # `records` is the next seq; `created` breaks ties between equal start times.
        "CREATE TABLE swarmkit_sessions (session_id text PRIMARY KEY,"
        " created bigint GENERATED ALWAYS AS IDENTITY, records integer NOT NULL,"
        " started_at double precision NOT NULL, updated_at double precision NOT NULL,"
        " finished boolean NOT NULL, stop_reason text, prompt text,"
        " agents text[] NOT NULL DEFAULT '{}')",
        "CREATE INDEX swarmkit_sessions_newest"
        " ON swarmkit_sessions (started_at DESC, created DESC)",
        # Data is the JSON text the encoder wrote: no re-parsing on the way in or out.
        "CREATE TABLE swarmkit_records (session_id text NOT NULL, seq integer NOT NULL,"
        " kind text NOT NULL, data text NOT NULL, written_at double precision NOT NULL,"
        " PRIMARY KEY (session_id, seq))",
        "CREATE TABLE swarmkit_leases (session_id text PRIMARY KEY, owner text NOT NULL,"
        " expires_at double precision NOT NULL)",
    ),
    2: (
        # A sealed session's seal (its record count and last link, see _chain), rewritten by
        # each step; and the journal's mark once it seals.
        "ALTER TABLE swarmkit_sessions ADD COLUMN seal text",
        "CREATE TABLE swarmkit_meta (key text PRIMARY KEY, value text NOT NULL)",
    ),
}
"""The statements that bring a schema from version ``n - 1`` to ``n``."""

CREATE_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS swarmkit_migrations (version integer PRIMARY KEY,"
    " applied_at timestamptz NOT NULL DEFAULT now())"
)
MIGRATIONS_EXIST = "SELECT to_regclass('swarmkit_migrations') IS NOT NULL"
MAX_VERSION = "SELECT coalesce(max(version), 0) FROM swarmkit_migrations"
RECORD_MIGRATION = "INSERT INTO swarmkit_migrations (version) VALUES (%s)"

# The journal's clock when one was given, else the database's: one clock for every worker.
_NOW = "coalesce(%(now)s::float8, extract(epoch FROM statement_timestamp())::float8)"

# A step's data come as one text, each record's JSON joined by U+001E, which JSON text
# never holds unescaped: one parameter with nothing to escape, stored exactly as written
# (never re-parsed, so any JSON the encoder wrote goes in). Kinds come as a JSON array, and
# seqs count on from ``first``.
RECORD_SEPARATOR = "\x1e"
"""Joins a step's JSON data texts into one parameter (``chr(30)`` in the SQL)."""
_INSERT_STEP_RECORDS = (
    " INSERT INTO swarmkit_records (session_id, seq, kind, data, written_at)"
    " SELECT s.session_id, %(first)s + r.i - 1, r.kind, r.data,"
    " coalesce(r.at::float8, s.updated_at)"
    " FROM s, ROWS FROM (json_array_elements_text(%(kinds)s::json),"
    " unnest(string_to_array(%(datas)s, chr(30))), json_array_elements_text(%(times)s::json))"
    " WITH ORDINALITY AS r(kind, data, at, i)"
)

# A step in clear goes in only while the journal has no mark (a sealed step has a seal).
_MAY_WRITE = (
    " (%(seal)s::text IS NOT NULL OR NOT EXISTS (SELECT FROM swarmkit_meta WHERE key = 'seal'))"
)
# A step is one statement, so it commits whole or not at all. The first step creates the
# session's row (started when its first record was, so an import keeps its start); a later
# one moves the row's count on only if the step continues it (its seq, and the seal it chains
# to), which also serialises writers of one session on that row. No row back means the seq
# or seal was wrong, or a step in clear met a sealed journal.
APPEND_FIRST_STEP = (
    "WITH s AS (INSERT INTO swarmkit_sessions (session_id, records, started_at, updated_at,"
    " finished, stop_reason, prompt, agents, seal)"
    " SELECT %(session_id)s, %(count)s, coalesce((%(times)s::json->>0)::float8, t.now), t.now,"
    " %(finished)s, %(stop_reason)s,"
    " %(prompt)s, ARRAY(SELECT json_array_elements_text(%(agents)s::json)), %(seal)s"
    f" FROM (SELECT {_NOW} AS now) AS t WHERE{_MAY_WRITE}"
    " ON CONFLICT (session_id) DO NOTHING RETURNING session_id, updated_at)" + _INSERT_STEP_RECORDS
)
APPEND_NEXT_STEP = (
    "WITH s AS (UPDATE swarmkit_sessions AS x SET records = x.records + %(count)s,"
    " updated_at = t.now, finished = x.finished OR %(finished)s,"
    " stop_reason = CASE WHEN %(finished)s THEN %(stop_reason)s ELSE x.stop_reason END,"
    " prompt = coalesce(x.prompt, %(prompt)s),"
    " agents = x.agents || ARRAY(SELECT a FROM json_array_elements_text(%(agents)s::json)"
    " WITH ORDINALITY AS n(a, i) WHERE NOT a = ANY(x.agents) ORDER BY i), seal = %(seal)s"
    f" FROM (SELECT {_NOW} AS now) AS t"
    " WHERE x.session_id = %(session_id)s AND x.records = %(first)s"
    f" AND x.seal IS NOT DISTINCT FROM %(prev_seal)s AND{_MAY_WRITE}"
    " RETURNING x.session_id, x.updated_at)" + _INSERT_STEP_RECORDS
)
NEXT_SEQ = "SELECT records FROM swarmkit_sessions WHERE session_id = %s"
SEAL_ROW = -2
"""The seq of the row ``SELECT_SESSION`` gives the session's seal in."""
MARK_ROW = -1
"""The seq of the row ``SELECT_SESSION`` gives when the journal is marked."""
# One statement, so the records and the seal come from one snapshot: a step committed in
# between would otherwise look like records missing from the session's end.
SELECT_SESSION = (
    f"SELECT {SEAL_ROW}, NULL::text, seal, NULL::float8 FROM swarmkit_sessions"
    " WHERE session_id = %(session_id)s AND seal IS NOT NULL"
    f" UNION ALL SELECT {MARK_ROW}, NULL, NULL, NULL FROM swarmkit_meta WHERE key = 'seal'"
    " UNION ALL SELECT seq, kind, data, written_at FROM swarmkit_records"
    " WHERE session_id = %(session_id)s ORDER BY 1"
)
# Many sessions' records (only some kinds, when given) in one statement, so they come from
# one snapshot; a first row with a null session id says the journal is marked or one of the
# sessions sealed, and the reader then opens and checks each session whole instead.
SELECT_MANY = (
    "SELECT NULL::text, NULL::integer, NULL::text, NULL::text, NULL::float8"
    " WHERE EXISTS (SELECT FROM swarmkit_meta WHERE key = 'seal')"
    " OR EXISTS (SELECT FROM swarmkit_sessions WHERE session_id = ANY(%(ids)s)"
    " AND seal IS NOT NULL)"
    " UNION ALL SELECT session_id, seq, kind, data, written_at FROM swarmkit_records"
    " WHERE session_id = ANY(%(ids)s) AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s))"
    # A record of a leading kind only where its text starts with its first member (or is
    # sealed: read, so that the batch is refused and read whole).
    " AND (kind <> ALL(%(led)s::text[]) OR left(data, length((%(heads)s::text[])"
    "[array_position(%(led)s::text[], kind)])) = (%(heads)s::text[])"
    "[array_position(%(led)s::text[], kind)]"
    ' OR left(data, 12) = \'{"chained":"\' OR left(data, 11) = \'{"sealed":"\')'
    " ORDER BY 1 NULLS FIRST, 2"
)
SEAL_AND_RECORD = (
    "SELECT seal, (SELECT data FROM swarmkit_records WHERE session_id = %(session_id)s"
    " AND seq = %(seq)s) FROM swarmkit_sessions WHERE session_id = %(session_id)s"
)
SEALED_STATE = (
    "SELECT EXISTS (SELECT FROM swarmkit_meta WHERE key = 'seal'),"
    " EXISTS (SELECT FROM swarmkit_sessions WHERE session_id = %s AND seal IS NOT NULL)"
)
IS_MARKED = "SELECT 1 FROM swarmkit_meta WHERE key = 'seal'"
SELECT_MARK = "SELECT value FROM swarmkit_meta WHERE key = 'seal'"
INSERT_MARK = "INSERT INTO swarmkit_meta (key, value) VALUES ('seal', %s) ON CONFLICT DO NOTHING"
SESSION_IDS = "SELECT session_id FROM swarmkit_sessions"
# Agents come as JSON text: most sessions share a few lists, each decoded once, where an
# array would build a Python list per row.
SELECT_SESSIONS = (
    "SELECT session_id, records, started_at, updated_at, finished, stop_reason, prompt,"
    " array_to_json(agents)::text FROM swarmkit_sessions ORDER BY started_at DESC, created DESC"
)
# Two statements in one transaction: deleting the session row first waits for a step in
# flight, and the records statement, with a snapshot taken after that, sees its records too.
DELETE_SESSION_ROW = "DELETE FROM swarmkit_sessions WHERE session_id = %s"
DELETE_RECORDS = "DELETE FROM swarmkit_records WHERE session_id = %s"
# A lease row's commit does not wait for the disk flush (for that transaction only): the
# server sees it at once, so a second writer is still refused at once; a crash of the server
# that loses it is the holder's lease ending early, which the steps' seq check already covers,
# and the holder's next step, which waits for the flush, makes it durable with itself.
_QUICK_COMMIT = "set_config('synchronous_commit', 'off', true)"
# Taken when free, expired, or already ours; otherwise the holder comes back instead, in the
# same round trip (nothing back means the lease changed in between: ask again).
TAKE_LEASE = (
    f"WITH t AS (SELECT {_NOW} AS now, {_QUICK_COMMIT} AS quick),"
    " taken AS (INSERT INTO swarmkit_leases AS l (session_id, owner, expires_at)"
    " SELECT %(session_id)s, %(owner)s, t.now + %(ttl)s FROM t"
    " ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner,"
    " expires_at = excluded.expires_at"
    " WHERE l.owner = excluded.owner OR l.expires_at <= (SELECT now FROM t)"
    " RETURNING l.session_id)"
    " SELECT NULL::text, NULL::float8 FROM taken"
    " UNION ALL SELECT owner, expires_at FROM swarmkit_leases"
    " WHERE session_id = %(session_id)s AND NOT EXISTS (SELECT FROM taken)"
)
RELEASE_LEASE = (
    f"WITH quick AS (SELECT {_QUICK_COMMIT})"
    " DELETE FROM swarmkit_leases USING quick WHERE session_id = %s AND owner = %s"
)
