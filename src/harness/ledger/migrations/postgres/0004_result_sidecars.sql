-- Ledger schema v4 for PostgreSQL (docs/decisions.md, "Ledger storage and group commit"): a result over the
-- preview cap is stored in the ledger, in the transaction of its end row, instead of a sidecar file fsynced per
-- call; and `harness ledger list` reads starts through indexes in its own order instead of sorting them all.

-- The redacted, capped full result of an end row, keyed by that row. The chain covers it the way it covered a
-- sidecar file: the end row's meta holds its byte count and SHA-256, and its path names it.
CREATE TABLE ledger.result_sidecars (
  end_id uuid PRIMARY KEY REFERENCES ledger.tool_invocations (id) ON DELETE CASCADE,
  content text NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 67108875)
);

-- A result delete passes only as the cascade from its end row, itself deleted only by its conversation's cascade
-- (schema v2): nested (depth > 1) and once that row is gone.
CREATE OR REPLACE FUNCTION ledger.refuse_mutation() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  -- Nested: each table's OLD columns exist only on that table, and one IF expression is planned as a whole.
  IF TG_OP = 'DELETE' AND TG_LEVEL = 'ROW' AND TG_TABLE_SCHEMA = 'ledger' AND pg_trigger_depth() > 1 THEN
    IF TG_TABLE_NAME = 'tool_invocations' THEN
      IF NOT EXISTS (SELECT 1 FROM ledger.conversations c WHERE c.id = OLD.conversation_id)
         AND EXISTS (SELECT 1 FROM ledger.tombstones b WHERE b.conversation_id = OLD.conversation_id) THEN
        RETURN OLD;
      END IF;
    ELSIF TG_TABLE_NAME = 'result_sidecars' THEN
      IF NOT EXISTS (SELECT 1 FROM ledger.tool_invocations t WHERE t.id = OLD.end_id) THEN
        RETURN OLD;
      END IF;
    END IF;
  END IF;
  RAISE EXCEPTION 'ledger.% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = '42501';
END
$$;

CREATE TRIGGER result_sidecars_refuse_row BEFORE UPDATE OR DELETE ON ledger.result_sidecars
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_mutation();
CREATE TRIGGER result_sidecars_refuse_truncate BEFORE TRUNCATE ON ledger.result_sidecars
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_mutation();

-- ENABLE ALWAYS: session_replication_role = replica must not skip the guards.
ALTER TABLE ledger.result_sidecars ENABLE ALWAYS TRIGGER result_sidecars_refuse_row;
ALTER TABLE ledger.result_sidecars ENABLE ALWAYS TRIGGER result_sidecars_refuse_truncate;

-- `ledger list`: starts newest first in the list's own order, whole or per tool or principal, so a page stops
-- after `limit` index entries.
CREATE INDEX tool_invocations_list ON ledger.tool_invocations (started_at DESC, conversation_id, seq DESC)
  WHERE event = 'start';
CREATE INDEX tool_invocations_list_tool
  ON ledger.tool_invocations (tool_name, started_at DESC, conversation_id, seq DESC) WHERE event = 'start';
CREATE INDEX tool_invocations_list_principal
  ON ledger.tool_invocations ((meta -> 'caller' ->> 'principal'), started_at DESC, conversation_id, seq DESC)
  WHERE event = 'start';
