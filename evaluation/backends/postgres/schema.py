"""The database schema, as numbered migrations hilbot applies on start (under an advisory lock,
so replicas starting together migrate once)."""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: the append-only event log, runs and their items, and item claims
    """
    CREATE TABLE hilbot_events (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
        stream text NOT NULL,
        idempotency_key text UNIQUE,
        digest bytea NOT NULL,
        line bytea NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (stream, digest)
    );
    CREATE INDEX hilbot_events_order ON hilbot_events (tx, seq);
    CREATE FUNCTION hilbot_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'hilbot_events is append-only: an event is never updated or deleted';
    END $$;
    CREATE TRIGGER hilbot_events_no_change BEFORE UPDATE OR DELETE ON hilbot_events
        FOR EACH ROW EXECUTE FUNCTION hilbot_append_only();
    CREATE TRIGGER hilbot_events_no_truncate BEFORE TRUNCATE ON hilbot_events
        FOR EACH STATEMENT EXECUTE FUNCTION hilbot_append_only();
    CREATE TABLE hilbot_runs (
        run_id text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE hilbot_items (
        run_id text NOT NULL REFERENCES hilbot_runs,
        item_id text NOT NULL,
        PRIMARY KEY (run_id, item_id)
    );
    CREATE TABLE hilbot_claims (
        run_id text NOT NULL,
        item_id text NOT NULL,
        dimension text NOT NULL,
        reviewer_key text NOT NULL,
        state text NOT NULL CHECK (state IN ('open', 'done', 'skipped', 'expired')),
        expires_at timestamptz NOT NULL,
        channel text NOT NULL DEFAULT '',
        chat_id text NOT NULL DEFAULT '',
        message_id text NOT NULL DEFAULT '',
        PRIMARY KEY (run_id, item_id, dimension, reviewer_key)
    );
    CREATE INDEX hilbot_claims_expiring ON hilbot_claims (expires_at) WHERE state = 'open';
    CREATE TABLE hilbot_once (
        key text PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now()
    );
    """,
]
"""Migration ``n`` (1-based) brings the schema from version ``n - 1`` to ``n``."""

META = """
CREATE TABLE IF NOT EXISTS hilbot_meta (key text PRIMARY KEY, value text NOT NULL)
"""
LOCK = 0x68696C626F74  # "hilbot": the advisory lock migrations hold
