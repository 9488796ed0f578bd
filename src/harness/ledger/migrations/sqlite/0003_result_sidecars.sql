-- Ledger schema v3 for SQLite (docs/decisions.md, "Ledger storage and group commit"): a result over the preview
-- cap is stored in the ledger, in the transaction of its end row, instead of a sidecar file fsynced per call; and
-- `harness ledger list` reads starts through indexes in its own order instead of sorting every start row.

-- The redacted, capped full result of an end row, keyed by that row. The chain covers it the way it covered a
-- sidecar file: the end row's meta holds its byte count and SHA-256, and its path names it.
CREATE TABLE result_sidecars (
  end_id TEXT PRIMARY KEY NOT NULL REFERENCES tool_invocations (id) ON DELETE CASCADE,
  content TEXT NOT NULL CHECK (length(CAST(content AS BLOB)) BETWEEN 1 AND 67108875)
) STRICT;

CREATE TRIGGER result_sidecars_no_update BEFORE UPDATE ON result_sidecars
BEGIN
  SELECT RAISE(ABORT, 'result_sidecars is append-only: UPDATE refused');
END;

-- Like its end row, a result goes only once that row has gone with its conversation.
CREATE TRIGGER result_sidecars_no_delete BEFORE DELETE ON result_sidecars
WHEN EXISTS (SELECT 1 FROM tool_invocations WHERE id = OLD.end_id)
BEGIN
  SELECT RAISE(ABORT, 'result_sidecars is append-only: DELETE refused');
END;

-- The cascade for a connection without foreign keys, as conversations_cascade does for the rows.
CREATE TRIGGER tool_invocations_cascade AFTER DELETE ON tool_invocations
BEGIN
  DELETE FROM result_sidecars WHERE end_id = OLD.id;
END;

-- `ledger list`: starts newest first in the list's own order, whole or per tool, so a page stops after `limit`
-- index entries (docs/decisions.md, "Ledger storage and group commit"). The principal lives in meta, and with
-- trusted_schema off SQLite refuses json_extract in an index, so that filter walks the first index.
CREATE INDEX tool_invocations_list ON tool_invocations (started_at DESC, conversation_id, seq DESC)
  WHERE event = 'start';
CREATE INDEX tool_invocations_list_tool ON tool_invocations (tool_name, started_at DESC, conversation_id, seq DESC)
  WHERE event = 'start';
