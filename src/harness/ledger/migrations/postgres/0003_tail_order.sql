-- Ledger schema v3 for PostgreSQL: a global order for `harness ledger tail` (docs/decisions.md, "Ledger tail and
-- signed heads"). Each row records the id of the transaction that wrote it; the tail reads only rows of
-- transactions older than its snapshot's xmin, all of which have ended, so no row can still appear behind the
-- position it prints. Rows written before this migration carry the migration's own transaction id.
ALTER TABLE ledger.tool_invocations ADD COLUMN tail_xid xid8 NOT NULL DEFAULT pg_current_xact_id();

CREATE INDEX tool_invocations_tail ON ledger.tool_invocations (tail_xid, id);
