-- Ledger schema v5 for PostgreSQL (docs/decisions.md, "Open calls"): the calls still in flight, kept by a trigger
-- in the transaction of each row, so `ledger list --status in_flight` and the web view's in-flight filter read them
-- instead of looking for a missing end behind every start. The ledger stays append-only: this table is an index
-- of it, derived from it, and `ledger verify` checks that it lists exactly the starts that have no end.

-- No foreign key: the rows are what the index follows, and a ledger may hold rows whose conversation row is gone
-- (`ledger verify` reports those as orphans); the trigger's delete branch is the cascade.
CREATE TABLE ledger.open_calls (
  conversation_id text COLLATE "C" NOT NULL,
  request_id text COLLATE "C" NOT NULL,
  tool_call_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (conversation_id, request_id, tool_call_id)
);

-- Definer rights: the app role may read open_calls but not write it; only this trigger does. A start opens its
-- call unless the end is already there (rows copied out of chain order); an end closes it; a start deleted with
-- its conversation takes its call along.
CREATE FUNCTION ledger.track_open_call() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.event = 'start' THEN
      DELETE FROM ledger.open_calls WHERE conversation_id = OLD.conversation_id AND request_id = OLD.request_id
         AND tool_call_id = OLD.tool_call_id;
    END IF;
  ELSIF NEW.event = 'start' THEN
    INSERT INTO ledger.open_calls (conversation_id, request_id, tool_call_id)
    SELECT NEW.conversation_id, NEW.request_id, NEW.tool_call_id
     WHERE NOT EXISTS (
       SELECT 1 FROM ledger.tool_invocations e WHERE e.conversation_id = NEW.conversation_id
          AND e.request_id = NEW.request_id AND e.tool_call_id = NEW.tool_call_id AND e.event = 'end'
     );
  ELSE
    DELETE FROM ledger.open_calls WHERE conversation_id = NEW.conversation_id AND request_id = NEW.request_id
       AND tool_call_id = NEW.tool_call_id;
  END IF;
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION ledger.track_open_call() FROM PUBLIC;

CREATE TRIGGER tool_invocations_track_open_call AFTER INSERT OR DELETE ON ledger.tool_invocations
  FOR EACH ROW EXECUTE FUNCTION ledger.track_open_call();

-- ENABLE ALWAYS: session_replication_role = replica must not leave the index behind.
ALTER TABLE ledger.tool_invocations ENABLE ALWAYS TRIGGER tool_invocations_track_open_call;

INSERT INTO ledger.open_calls (conversation_id, request_id, tool_call_id)
SELECT s.conversation_id, s.request_id, s.tool_call_id FROM ledger.tool_invocations s
 WHERE s.event = 'start' AND NOT EXISTS (
   SELECT 1 FROM ledger.tool_invocations e WHERE e.conversation_id = s.conversation_id
      AND e.request_id = s.request_id AND e.tool_call_id = s.tool_call_id AND e.event = 'end'
 );
