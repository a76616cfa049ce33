-- Upload and admin credentials, and the record of who changed what.

CREATE TABLE tokens (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,          -- shown in logs and as files.uploaded_by
    secret_sha256 TEXT    NOT NULL UNIQUE CHECK (length(secret_sha256) = 64),  -- never the secret itself
    scope         TEXT    NOT NULL CHECK (scope IN ('read', 'upload', 'admin')),
    projects      TEXT    NOT NULL DEFAULT '["*"]', -- JSON array of project-name globs
    created_ms    INTEGER NOT NULL,
    expires_ms    INTEGER,
    revoked_ms    INTEGER,
    last_used_ms  INTEGER
) STRICT;

CREATE TABLE audit_log (
    id      INTEGER PRIMARY KEY,
    time_ms INTEGER NOT NULL,
    actor   TEXT    NOT NULL,   -- token name, or 'cli'
    action  TEXT    NOT NULL,   -- 'add_file', 'yank', 'unyank', 'delete_file', ...
    target  TEXT    NOT NULL,   -- what it acted on: a filename, a project, a token name
    detail  TEXT                -- free text or JSON
) STRICT;

CREATE INDEX audit_log_by_time ON audit_log (time_ms);
CREATE INDEX audit_log_by_target ON audit_log (target);
