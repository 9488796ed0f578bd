-- Ledger schema v2 for SQLite: a deleted conversation id never comes back, and a conversation's rows go with it
-- even on a connection without foreign keys (docs/decisions.md, "Ledger integrity").

CREATE TRIGGER conversations_no_reuse BEFORE INSERT ON conversations
WHEN EXISTS (SELECT 1 FROM tombstones WHERE conversation_id = NEW.id)
BEGIN
  SELECT RAISE(ABORT, 'conversations: this id was deleted from the ledger; use a new conversation id');
END;

-- Foreign keys are a per-connection setting, off by default in other SQLite clients; without them the cascade does
-- not run, and the rows left behind could then be deleted one by one. With them, this finds nothing left to delete.
CREATE TRIGGER conversations_cascade AFTER DELETE ON conversations
BEGIN
  DELETE FROM tool_invocations WHERE conversation_id = OLD.id;
END;
