-- Ledger schema v2 for PostgreSQL: rows go only with their conversation, in the statement that deletes it, and a
-- deleted conversation id never comes back (docs/decisions.md, "Ledger integrity").

-- A row delete passes only as the foreign-key cascade: nested inside the cascade trigger (depth > 1, which no plain
-- statement reaches), after its conversation is gone and its tombstone written. A standalone DELETE (depth 1) is
-- refused even when the parent is already gone, so rows orphaned in replica mode cannot be picked off later.
CREATE OR REPLACE FUNCTION ledger.refuse_mutation() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  -- Nested: OLD.conversation_id exists only on tool_invocations, and one IF expression is planned as a whole.
  IF TG_OP = 'DELETE' AND TG_LEVEL = 'ROW' AND TG_TABLE_SCHEMA = 'ledger' AND TG_TABLE_NAME = 'tool_invocations'
     AND pg_trigger_depth() > 1 THEN
    IF NOT EXISTS (SELECT 1 FROM ledger.conversations c WHERE c.id = OLD.conversation_id)
       AND EXISTS (SELECT 1 FROM ledger.tombstones b WHERE b.conversation_id = OLD.conversation_id) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION 'ledger.% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = '42501';
END
$$;

-- In replica mode the foreign-key cascade does not run, so deleting the conversation would leave its rows behind.
CREATE OR REPLACE FUNCTION ledger.record_tombstone() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    RAISE EXCEPTION 'ledger.conversations: DELETE refused under session_replication_role = replica, %',
      'where the cascade to its rows does not run' USING ERRCODE = '42501';
  END IF;
  INSERT INTO ledger.tombstones (conversation_id, deleted_at, deleted_by, row_count, final_chain_seq, final_row_hash)
  SELECT OLD.id, clock_timestamp(), session_user::text, count(*), max(t.chain_seq),
         (SELECT h.row_hash FROM ledger.tool_invocations h
           WHERE h.conversation_id = OLD.id ORDER BY h.chain_seq DESC LIMIT 1)
    FROM ledger.tool_invocations t
   WHERE t.conversation_id = OLD.id;
  RETURN OLD;
END
$$;

-- Definer rights: row-level security on tombstones cannot hide the tombstone from the probe.
CREATE FUNCTION ledger.refuse_reused_id() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM ledger.tombstones b WHERE b.conversation_id = NEW.id) THEN
    RAISE EXCEPTION 'conversation % was deleted from the ledger; use a new conversation id', NEW.id
      USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION ledger.refuse_reused_id() FROM PUBLIC;

CREATE TRIGGER conversations_refuse_reuse BEFORE INSERT ON ledger.conversations
  FOR EACH ROW EXECUTE FUNCTION ledger.refuse_reused_id();

-- ENABLE ALWAYS: session_replication_role = replica must not skip the guard.
ALTER TABLE ledger.conversations ENABLE ALWAYS TRIGGER conversations_refuse_reuse;
