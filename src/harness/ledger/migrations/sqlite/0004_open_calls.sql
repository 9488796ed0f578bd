-- Ledger schema v4 for SQLite (docs/decisions.md, "Open calls"): the calls still in flight, kept by triggers in
-- the transaction of each row, so `ledger list --status in_flight` and the web view's in-flight filter read them
-- instead of looking for a missing end behind every start. The ledger stays append-only: this table is an index
-- of it, derived from it, and `ledger verify` checks that it lists exactly the starts that have no end.

-- No foreign key: the rows are what the index follows, and a ledger may hold rows whose conversation row is gone
-- (`ledger verify` reports those as orphans); the delete trigger below is the cascade.
CREATE TABLE open_calls (
  conversation_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  PRIMARY KEY (conversation_id, request_id, tool_call_id)
) STRICT, WITHOUT ROWID;

-- A start opens its call unless the end is already there (rows copied out of chain order).
CREATE TRIGGER tool_invocations_open_call AFTER INSERT ON tool_invocations
WHEN NEW.event = 'start' AND NOT EXISTS (
  SELECT 1 FROM tool_invocations e WHERE e.conversation_id = NEW.conversation_id
    AND e.request_id = NEW.request_id AND e.tool_call_id = NEW.tool_call_id AND e.event = 'end'
)
BEGIN
  INSERT INTO open_calls (conversation_id, request_id, tool_call_id)
  VALUES (NEW.conversation_id, NEW.request_id, NEW.tool_call_id);
END;

CREATE TRIGGER tool_invocations_close_call AFTER INSERT ON tool_invocations
WHEN NEW.event = 'end'
BEGIN
  DELETE FROM open_calls WHERE conversation_id = NEW.conversation_id AND request_id = NEW.request_id
    AND tool_call_id = NEW.tool_call_id;
END;

-- Deleting a conversation deletes its rows (conversations_cascade), and with them its open calls.
CREATE TRIGGER tool_invocations_cascade_open_call AFTER DELETE ON tool_invocations
WHEN OLD.event = 'start'
BEGIN
  DELETE FROM open_calls WHERE conversation_id = OLD.conversation_id AND request_id = OLD.request_id
    AND tool_call_id = OLD.tool_call_id;
END;

INSERT INTO open_calls (conversation_id, request_id, tool_call_id)
SELECT s.conversation_id, s.request_id, s.tool_call_id FROM tool_invocations s
 WHERE s.event = 'start' AND NOT EXISTS (
   SELECT 1 FROM tool_invocations e WHERE e.conversation_id = s.conversation_id
     AND e.request_id = s.request_id AND e.tool_call_id = s.tool_call_id AND e.event = 'end'
 );
