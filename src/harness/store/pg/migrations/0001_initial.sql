-- Store schema v1 for PostgreSQL (docs/investigate.md §3, README "Moving the store to PostgreSQL"). The runner
-- creates the schema `store` and store.schema_migrations, runs this as the owner role, and applies the grants.
--
-- One row per batch (the PostgreSQL "commit"), one row per record. seq is the stream order and n the batch
-- order; both are assigned by the appending transaction while it holds the store's advisory lock, so they
-- grow in commit order and a snapshot always holds a prefix of each. lid and the filter columns are the
-- UTF-8 of the casefold.ci_key forms (bytea: byte order is code point order, and a payload string may hold
-- U+0000, which text cannot); ts is the record's query.time_key.

CREATE TABLE store.batches (
  n bigint PRIMARY KEY CHECK (n >= 1),
  stream text COLLATE "C" NOT NULL CHECK (stream IN ('events', 'findings', 'baseline', 'resolutions')),
  records integer NOT NULL CHECK (records >= 1),
  committed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX batches_stream ON store.batches (stream, n);

CREATE TABLE store.events (
  seq bigint PRIMARY KEY CHECK (seq >= 1),
  batch bigint NOT NULL REFERENCES store.batches (n),
  id text COLLATE "C" NOT NULL CHECK (octet_length(id) BETWEEN 1 AND 256),
  lid bytea NOT NULL,
  actor bytea NOT NULL,
  type bytea NOT NULL,
  source bytea NOT NULL,
  target bytea NOT NULL,
  ip bytea NOT NULL,
  ts bigint NOT NULL,
  line bytea NOT NULL CHECK (octet_length(line) <= 1048576)
);

CREATE UNIQUE INDEX events_lid ON store.events (lid);
-- One order index per combination of equality filters, ending in the result order (ts, seq).
CREATE INDEX events_by_time ON store.events (ts, seq);
CREATE INDEX events_by_actor ON store.events (actor, ts, seq);
CREATE INDEX events_by_type ON store.events (type, ts, seq);
CREATE INDEX events_by_source ON store.events (source, ts, seq);
CREATE INDEX events_by_target ON store.events (target, ts, seq);
CREATE INDEX events_by_ip ON store.events (ip, ts, seq);
CREATE INDEX events_by_actor_type ON store.events (actor, type, ts, seq);
CREATE INDEX events_by_actor_source ON store.events (actor, source, ts, seq);
CREATE INDEX events_by_actor_target ON store.events (actor, target, ts, seq);
CREATE INDEX events_by_actor_ip ON store.events (actor, ip, ts, seq);
CREATE INDEX events_by_type_source ON store.events (type, source, ts, seq);
CREATE INDEX events_by_type_target ON store.events (type, target, ts, seq);
CREATE INDEX events_by_type_ip ON store.events (type, ip, ts, seq);
CREATE INDEX events_by_source_target ON store.events (source, target, ts, seq);
CREATE INDEX events_by_source_ip ON store.events (source, ip, ts, seq);
CREATE INDEX events_by_target_ip ON store.events (target, ip, ts, seq);
CREATE INDEX events_by_actor_type_source ON store.events (actor, type, source, ts, seq);
CREATE INDEX events_by_actor_type_target ON store.events (actor, type, target, ts, seq);
CREATE INDEX events_by_actor_type_ip ON store.events (actor, type, ip, ts, seq);
CREATE INDEX events_by_actor_source_target ON store.events (actor, source, target, ts, seq);
CREATE INDEX events_by_actor_source_ip ON store.events (actor, source, ip, ts, seq);
CREATE INDEX events_by_actor_target_ip ON store.events (actor, target, ip, ts, seq);
CREATE INDEX events_by_type_source_target ON store.events (type, source, target, ts, seq);
CREATE INDEX events_by_type_source_ip ON store.events (type, source, ip, ts, seq);
CREATE INDEX events_by_type_target_ip ON store.events (type, target, ip, ts, seq);
CREATE INDEX events_by_source_target_ip ON store.events (source, target, ip, ts, seq);
CREATE INDEX events_by_actor_type_source_target ON store.events (actor, type, source, target, ts, seq);
CREATE INDEX events_by_actor_type_source_ip ON store.events (actor, type, source, ip, ts, seq);
CREATE INDEX events_by_actor_type_target_ip ON store.events (actor, type, target, ip, ts, seq);
CREATE INDEX events_by_actor_source_target_ip ON store.events (actor, source, target, ip, ts, seq);
CREATE INDEX events_by_type_source_target_ip ON store.events (type, source, target, ip, ts, seq);
CREATE INDEX events_by_actor_type_source_target_ip ON store.events (actor, type, source, target, ip, ts, seq);

CREATE TABLE store.findings (
  seq bigint PRIMARY KEY CHECK (seq >= 1),
  batch bigint NOT NULL REFERENCES store.batches (n),
  id text COLLATE "C" NOT NULL CHECK (octet_length(id) BETWEEN 1 AND 256),
  lid bytea NOT NULL,
  actor bytea NOT NULL,
  type bytea NOT NULL,
  source bytea NOT NULL,
  ts bigint NOT NULL,
  line bytea NOT NULL CHECK (octet_length(line) <= 1048576)
);

CREATE UNIQUE INDEX findings_lid ON store.findings (lid);
-- One order index per combination of equality filters, ending in the result order (ts, seq).
CREATE INDEX findings_by_time ON store.findings (ts, seq);
CREATE INDEX findings_by_actor ON store.findings (actor, ts, seq);
CREATE INDEX findings_by_type ON store.findings (type, ts, seq);
CREATE INDEX findings_by_source ON store.findings (source, ts, seq);
CREATE INDEX findings_by_actor_type ON store.findings (actor, type, ts, seq);
CREATE INDEX findings_by_actor_source ON store.findings (actor, source, ts, seq);
CREATE INDEX findings_by_type_source ON store.findings (type, source, ts, seq);
CREATE INDEX findings_by_actor_type_source ON store.findings (actor, type, source, ts, seq);

CREATE TABLE store.baseline (
  seq bigint PRIMARY KEY CHECK (seq >= 1),
  batch bigint NOT NULL REFERENCES store.batches (n),
  sha256 text COLLATE "C" NOT NULL CHECK (length(sha256) = 64),
  line bytea NOT NULL CHECK (octet_length(line) <= 536870912)
);

-- resolve_finding's proposals and their checks (docs/investigate.md §9.7), one row per proposal.
CREATE TABLE store.resolutions (
  seq bigint PRIMARY KEY CHECK (seq >= 1),
  batch bigint NOT NULL REFERENCES store.batches (n),
  sha256 text COLLATE "C" NOT NULL CHECK (length(sha256) = 64),
  line bytea NOT NULL CHECK (octet_length(line) <= 1048576)
);

-- Records and batches are never changed or removed, whoever asks: the app role lacks the privilege, and the
-- triggers refuse the owner too (ENABLE ALWAYS: also under session_replication_role = replica).
CREATE FUNCTION store.refuse_mutation() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION 'store.% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;

REVOKE ALL ON FUNCTION store.refuse_mutation() FROM PUBLIC;

CREATE TRIGGER batches_refuse_row BEFORE UPDATE OR DELETE ON store.batches
  FOR EACH ROW EXECUTE FUNCTION store.refuse_mutation();
CREATE TRIGGER batches_refuse_truncate BEFORE TRUNCATE ON store.batches
  FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_mutation();
ALTER TABLE store.batches ENABLE ALWAYS TRIGGER batches_refuse_row;
ALTER TABLE store.batches ENABLE ALWAYS TRIGGER batches_refuse_truncate;

CREATE TRIGGER events_refuse_row BEFORE UPDATE OR DELETE ON store.events
  FOR EACH ROW EXECUTE FUNCTION store.refuse_mutation();
CREATE TRIGGER events_refuse_truncate BEFORE TRUNCATE ON store.events
  FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_mutation();
ALTER TABLE store.events ENABLE ALWAYS TRIGGER events_refuse_row;
ALTER TABLE store.events ENABLE ALWAYS TRIGGER events_refuse_truncate;

CREATE TRIGGER findings_refuse_row BEFORE UPDATE OR DELETE ON store.findings
  FOR EACH ROW EXECUTE FUNCTION store.refuse_mutation();
CREATE TRIGGER findings_refuse_truncate BEFORE TRUNCATE ON store.findings
  FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_mutation();
ALTER TABLE store.findings ENABLE ALWAYS TRIGGER findings_refuse_row;
ALTER TABLE store.findings ENABLE ALWAYS TRIGGER findings_refuse_truncate;

CREATE TRIGGER baseline_refuse_row BEFORE UPDATE OR DELETE ON store.baseline
  FOR EACH ROW EXECUTE FUNCTION store.refuse_mutation();
CREATE TRIGGER baseline_refuse_truncate BEFORE TRUNCATE ON store.baseline
  FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_mutation();
ALTER TABLE store.baseline ENABLE ALWAYS TRIGGER baseline_refuse_row;
ALTER TABLE store.baseline ENABLE ALWAYS TRIGGER baseline_refuse_truncate;

CREATE TRIGGER resolutions_refuse_row BEFORE UPDATE OR DELETE ON store.resolutions
  FOR EACH ROW EXECUTE FUNCTION store.refuse_mutation();
CREATE TRIGGER resolutions_refuse_truncate BEFORE TRUNCATE ON store.resolutions
  FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_mutation();
ALTER TABLE store.resolutions ENABLE ALWAYS TRIGGER resolutions_refuse_row;
ALTER TABLE store.resolutions ENABLE ALWAYS TRIGGER resolutions_refuse_truncate;

CREATE TRIGGER schema_migrations_refuse_row BEFORE UPDATE OR DELETE ON store.schema_migrations
  FOR EACH ROW EXECUTE FUNCTION store.refuse_mutation();
CREATE TRIGGER schema_migrations_refuse_truncate BEFORE TRUNCATE ON store.schema_migrations
  FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_mutation();
ALTER TABLE store.schema_migrations ENABLE ALWAYS TRIGGER schema_migrations_refuse_row;
ALTER TABLE store.schema_migrations ENABLE ALWAYS TRIGGER schema_migrations_refuse_truncate;
