-- Ledger schema v1 for PostgreSQL (ledger.md §7.1, §7.2). The runner creates the schema `ledger` and
-- ledger.schema_migrations, runs this as the owner role, and applies the grants.

CREATE TABLE ledger.conversations (
  id text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  created_at timestamptz NOT NULL
);

CREATE TABLE ledger.tool_invocations (
  id uuid PRIMARY KEY,
  conversation_id text COLLATE "C" NOT NULL REFERENCES ledger.conversations (id) ON DELETE CASCADE
    CHECK (conversation_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  request_id text COLLATE "C" NOT NULL CHECK (request_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  tool_call_id text COLLATE "C" NOT NULL CHECK (tool_call_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  tool_name text COLLATE "C" NOT NULL CHECK (tool_name ~ '^[a-z_][a-z0-9_.]{0,63}$'),
  event text NOT NULL CHECK (event IN ('start', 'end')),
  seq integer NOT NULL CHECK (seq >= 1),
  ts timestamptz NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  duration_ms bigint CHECK (duration_ms >= 0),
  arguments text CHECK (octet_length(arguments) BETWEEN 1 AND 8203),
  args_bytes bigint CHECK (args_bytes >= 1),
  status text CHECK (status IN ('ok', 'error')),
  error text CHECK (octet_length(error) BETWEEN 1 AND 2059),
  result_preview text CHECK (octet_length(result_preview) BETWEEN 1 AND 2059),
  preview_bytes bigint CHECK (preview_bytes >= 1),
  result_bytes bigint CHECK (result_bytes >= 0),
  result_truncated boolean,
  result_sidecar_path text CHECK (octet_length(result_sidecar_path) BETWEEN 1 AND 1024),
  exit_code integer,
  meta jsonb CHECK (jsonb_typeof(meta) = 'object' AND octet_length(meta::text) <= 16384),
  redaction_version smallint NOT NULL CHECK (redaction_version >= 1),
  chain_seq bigint NOT NULL CHECK (chain_seq >= 1),
  prev_hash bytea NOT NULL CHECK (octet_length(prev_hash) = 32),
  row_hash bytea NOT NULL CHECK (octet_length(row_hash) = 32),
  CONSTRAINT tool_invocations_genesis CHECK (chain_seq <> 1 OR prev_hash = '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea),
  CONSTRAINT tool_invocations_args_pair CHECK ((arguments IS NULL) = (args_bytes IS NULL)),
  CONSTRAINT tool_invocations_preview_pair CHECK ((result_preview IS NULL) = (preview_bytes IS NULL)),
  CONSTRAINT tool_invocations_sidecar_truncated CHECK (result_sidecar_path IS NULL OR result_truncated),
  CONSTRAINT tool_invocations_preview_within_result CHECK (preview_bytes IS NULL OR result_bytes IS NULL OR preview_bytes <= result_bytes),
  CONSTRAINT tool_invocations_shape CHECK (
    (event = 'start'
      AND started_at IS NOT NULL AND ended_at IS NULL AND duration_ms IS NULL AND status IS NULL
      AND error IS NULL AND result_preview IS NULL AND result_bytes IS NULL AND result_truncated IS NULL
      AND result_sidecar_path IS NULL AND exit_code IS NULL)
    OR
    (event = 'end'
      AND ended_at IS NOT NULL AND duration_ms IS NOT NULL AND status IS NOT NULL
      AND result_truncated IS NOT NULL AND arguments IS NULL
      AND (status = 'error') = (error IS NOT NULL))
  ),
  CONSTRAINT tool_invocations_call_key UNIQUE (conversation_id, request_id, tool_call_id, event),
  CONSTRAINT tool_invocations_chain UNIQUE (conversation_id, chain_seq)
);

CREATE INDEX tool_invocations_seq ON ledger.tool_invocations (conversation_id, seq);
CREATE INDEX tool_invocations_tool_ts ON ledger.tool_invocations (tool_name, ts DESC);
CREATE INDEX tool_invocations_start_ts ON ledger.tool_invocations (ts) WHERE event = 'start';

CREATE TABLE ledger.tombstones (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  conversation_id text COLLATE "C" NOT NULL,
  deleted_at timestamptz NOT NULL,
  deleted_by text,
  row_count bigint NOT NULL CHECK (row_count >= 0),
  final_chain_seq bigint CHECK (final_chain_seq >= 1),
  final_row_hash bytea CHECK (octet_length(final_row_hash) = 32)
);

CREATE INDEX tombstones_conversation ON ledger.tombstones (conversation_id);

-- Definer rights: a caller from whom row-level security hides the parent cannot pass a standalone
-- delete off as the cascade, because the parent probe runs as the owner.
CREATE FUNCTION ledger.refuse_mutation() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' AND TG_LEVEL = 'ROW' AND TG_TABLE_SCHEMA = 'ledger' AND TG_TABLE_NAME = 'tool_invocations' THEN
    IF NOT EXISTS (SELECT 1 FROM ledger.conversations c WHERE c.id = OLD.conversation_id) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION 'ledger.% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = '42501';
END
$$;

-- Runs before the conversation row goes; the FK cascade to its rows runs after it.
CREATE FUNCTION ledger.record_tombstone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO ledger.tombstones (conversation_id, deleted_at, deleted_by, row_count, final_chain_seq, final_row_hash)
  SELECT OLD.id, clock_timestamp(), session_user::text, count(*), max(t.chain_seq),
         (SELECT h.row_hash FROM ledger.tool_invocations h
           WHERE h.conversation_id = OLD.id ORDER BY h.chain_seq DESC LIMIT 1)
    FROM ledger.tool_invocations t
   WHERE t.conversation_id = OLD.id;
  RETURN OLD;
END
$$;

REVOKE ALL ON FUNCTION ledger.refuse_mutation() FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.record_tombstone() FROM PUBLIC;

CREATE TRIGGER tool_invocations_refuse_row BEFORE UPDATE OR DELETE ON ledger.tool_invocations
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER tool_invocations_refuse_truncate BEFORE TRUNCATE ON ledger.tool_invocations
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER conversations_refuse_update BEFORE UPDATE ON ledger.conversations
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER conversations_refuse_truncate BEFORE TRUNCATE ON ledger.conversations
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER conversations_tombstone BEFORE DELETE ON ledger.conversations
  FOR EACH ROW EXECUTE FUNCTION ledger.record_tombstone();
CREATE TRIGGER tombstones_refuse_row BEFORE UPDATE OR DELETE ON ledger.tombstones
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER tombstones_refuse_truncate BEFORE TRUNCATE ON ledger.tombstones
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER schema_migrations_refuse_row BEFORE UPDATE OR DELETE ON ledger.schema_migrations
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER schema_migrations_refuse_truncate BEFORE TRUNCATE ON ledger.schema_migrations
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_mutation();

-- ENABLE ALWAYS: session_replication_role = replica must not skip the guards.
ALTER TABLE ledger.tool_invocations ENABLE ALWAYS TRIGGER tool_invocations_refuse_row;
ALTER TABLE ledger.tool_invocations ENABLE ALWAYS TRIGGER tool_invocations_refuse_truncate;
ALTER TABLE ledger.conversations ENABLE ALWAYS TRIGGER conversations_refuse_update;
ALTER TABLE ledger.conversations ENABLE ALWAYS TRIGGER conversations_refuse_truncate;
ALTER TABLE ledger.conversations ENABLE ALWAYS TRIGGER conversations_tombstone;
ALTER TABLE ledger.tombstones ENABLE ALWAYS TRIGGER tombstones_refuse_row;
ALTER TABLE ledger.tombstones ENABLE ALWAYS TRIGGER tombstones_refuse_truncate;
ALTER TABLE ledger.schema_migrations ENABLE ALWAYS TRIGGER schema_migrations_refuse_row;
ALTER TABLE ledger.schema_migrations ENABLE ALWAYS TRIGGER schema_migrations_refuse_truncate;
