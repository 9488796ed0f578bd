-- Ledger schema v1 for SQLite (ledger.md §7.1, §7.3). The runner creates schema_migrations itself.

CREATE TABLE conversations (
  id TEXT PRIMARY KEY NOT NULL
    CHECK (length(id) BETWEEN 1 AND 128 AND id GLOB '[A-Za-z0-9]*' AND id NOT GLOB '*[^A-Za-z0-9._:-]*'),
  created_at TEXT NOT NULL
    CHECK (length(created_at) = 27 AND created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z')
) STRICT;

CREATE TABLE tool_invocations (
  id TEXT PRIMARY KEY NOT NULL
    CHECK (length(id) = 36 AND id GLOB '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'),
  conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE
    CHECK (length(conversation_id) BETWEEN 1 AND 128 AND conversation_id GLOB '[A-Za-z0-9]*' AND conversation_id NOT GLOB '*[^A-Za-z0-9._:-]*'),
  request_id TEXT NOT NULL
    CHECK (length(request_id) BETWEEN 1 AND 128 AND request_id GLOB '[A-Za-z0-9]*' AND request_id NOT GLOB '*[^A-Za-z0-9._:-]*'),
  tool_call_id TEXT NOT NULL
    CHECK (length(tool_call_id) BETWEEN 1 AND 128 AND tool_call_id GLOB '[A-Za-z0-9]*' AND tool_call_id NOT GLOB '*[^A-Za-z0-9._:-]*'),
  tool_name TEXT NOT NULL
    CHECK (length(tool_name) BETWEEN 1 AND 64 AND tool_name GLOB '[a-z_]*' AND tool_name NOT GLOB '*[^a-z0-9_.]*'),
  event TEXT NOT NULL CHECK (event IN ('start', 'end')),
  seq INTEGER NOT NULL CHECK (seq >= 1),
  ts TEXT NOT NULL
    CHECK (length(ts) = 27 AND ts GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z'),
  started_at TEXT
    CHECK (length(started_at) = 27 AND started_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z'),
  ended_at TEXT
    CHECK (length(ended_at) = 27 AND ended_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z'),
  duration_ms INTEGER CHECK (duration_ms >= 0),
  arguments TEXT CHECK (length(CAST(arguments AS BLOB)) BETWEEN 1 AND 8203),
  args_bytes INTEGER CHECK (args_bytes >= 1),
  status TEXT CHECK (status IN ('ok', 'error')),
  error TEXT CHECK (length(CAST(error AS BLOB)) BETWEEN 1 AND 2059),
  result_preview TEXT CHECK (length(CAST(result_preview AS BLOB)) BETWEEN 1 AND 2059),
  preview_bytes INTEGER CHECK (preview_bytes >= 1),
  result_bytes INTEGER CHECK (result_bytes >= 0),
  result_truncated INTEGER CHECK (result_truncated IN (0, 1)),
  result_sidecar_path TEXT CHECK (length(CAST(result_sidecar_path AS BLOB)) BETWEEN 1 AND 1024),
  exit_code INTEGER CHECK (exit_code BETWEEN -2147483648 AND 2147483647),
  -- json_valid/json_type are not innocuous in every SQLite build, so under trusted_schema = OFF a CHECK cannot
  -- call them; the braces reject every non-object value and verify checks that meta parses as a JSON object.
  meta TEXT CHECK (substr(meta, 1, 1) = '{' AND substr(meta, -1, 1) = '}' AND length(CAST(meta AS BLOB)) <= 8192),
  redaction_version INTEGER NOT NULL CHECK (redaction_version >= 1),
  chain_seq INTEGER NOT NULL CHECK (chain_seq >= 1),
  prev_hash BLOB NOT NULL CHECK (length(prev_hash) = 32),
  row_hash BLOB NOT NULL CHECK (length(row_hash) = 32),
  CHECK (chain_seq <> 1 OR prev_hash = zeroblob(32)),
  CHECK ((arguments IS NULL) = (args_bytes IS NULL)),
  CHECK ((result_preview IS NULL) = (preview_bytes IS NULL)),
  CHECK (result_sidecar_path IS NULL OR result_truncated = 1),
  CHECK (preview_bytes IS NULL OR result_bytes IS NULL OR preview_bytes <= result_bytes),
  CHECK (
    (event = 'start'
      AND started_at IS NOT NULL AND ended_at IS NULL AND duration_ms IS NULL AND status IS NULL
      AND error IS NULL AND result_preview IS NULL AND result_bytes IS NULL AND result_truncated IS NULL
      AND result_sidecar_path IS NULL AND exit_code IS NULL)
    OR
    (event = 'end'
      AND ended_at IS NOT NULL AND duration_ms IS NOT NULL AND status IS NOT NULL
      AND result_truncated IS NOT NULL AND arguments IS NULL
      AND (status = 'error') = (error IS NOT NULL))
  )
) STRICT;

CREATE UNIQUE INDEX tool_invocations_call_key ON tool_invocations (conversation_id, request_id, tool_call_id, event);
CREATE UNIQUE INDEX tool_invocations_chain ON tool_invocations (conversation_id, chain_seq);
CREATE INDEX tool_invocations_seq ON tool_invocations (conversation_id, seq);
CREATE INDEX tool_invocations_tool_ts ON tool_invocations (tool_name, ts DESC);
CREATE INDEX tool_invocations_start_ts ON tool_invocations (ts) WHERE event = 'start';

CREATE TABLE tombstones (
  id INTEGER PRIMARY KEY,
  conversation_id TEXT NOT NULL,
  deleted_at TEXT NOT NULL,
  deleted_by TEXT,
  row_count INTEGER NOT NULL CHECK (row_count >= 0),
  final_chain_seq INTEGER CHECK (final_chain_seq >= 1),
  final_row_hash BLOB CHECK (length(final_row_hash) = 32)
) STRICT;

CREATE INDEX tombstones_conversation ON tombstones (conversation_id);

-- Append-only guards. Anyone who can write the file can drop these; the chain and exported heads are the evidence.
CREATE TRIGGER tool_invocations_no_update BEFORE UPDATE ON tool_invocations
BEGIN
  SELECT RAISE(ABORT, 'tool_invocations is append-only: UPDATE refused');
END;

-- During the cascade from a deleted conversation the parent row is already gone, so only that delete passes.
CREATE TRIGGER tool_invocations_no_delete BEFORE DELETE ON tool_invocations
WHEN EXISTS (SELECT 1 FROM conversations WHERE id = OLD.conversation_id)
BEGIN
  SELECT RAISE(ABORT, 'tool_invocations is append-only: DELETE refused');
END;

CREATE TRIGGER conversations_no_update BEFORE UPDATE ON conversations
BEGIN
  SELECT RAISE(ABORT, 'conversations is append-only: UPDATE refused');
END;

CREATE TRIGGER conversations_tombstone BEFORE DELETE ON conversations
BEGIN
  INSERT INTO tombstones (conversation_id, deleted_at, deleted_by, row_count, final_chain_seq, final_row_hash)
  VALUES (
    OLD.id,
    strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z',
    NULL,
    (SELECT count(*) FROM tool_invocations WHERE conversation_id = OLD.id),
    (SELECT max(chain_seq) FROM tool_invocations WHERE conversation_id = OLD.id),
    (SELECT row_hash FROM tool_invocations WHERE conversation_id = OLD.id ORDER BY chain_seq DESC LIMIT 1)
  );
END;

CREATE TRIGGER tombstones_no_update BEFORE UPDATE ON tombstones
BEGIN
  SELECT RAISE(ABORT, 'tombstones is append-only: UPDATE refused');
END;

CREATE TRIGGER tombstones_no_delete BEFORE DELETE ON tombstones
BEGIN
  SELECT RAISE(ABORT, 'tombstones is append-only: DELETE refused');
END;

CREATE TRIGGER schema_migrations_no_update BEFORE UPDATE ON schema_migrations
BEGIN
  SELECT RAISE(ABORT, 'schema_migrations is append-only: UPDATE refused');
END;

CREATE TRIGGER schema_migrations_no_delete BEFORE DELETE ON schema_migrations
BEGIN
  SELECT RAISE(ABORT, 'schema_migrations is append-only: DELETE refused');
END;
