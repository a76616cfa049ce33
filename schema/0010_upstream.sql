-- Upstream indexes (issue 26): the names owned before their first upload, and the files fetched
-- from an upstream and kept.

-- A name under one of these patterns is owned (PEP 752's idea): no upstream ever serves it, on
-- any page, whether or not it has files here yet. `wheelhouse reserve` writes them.
CREATE TABLE reserved_names (
    pattern    TEXT    PRIMARY KEY,   -- normalised as token scopes' project patterns: 'acme-*', 'acme'
    reason     TEXT,
    created_ms INTEGER NOT NULL,
    created_by TEXT    NOT NULL       -- token name, or 'cli'
) STRICT;

-- Files of upstream projects this index fetched, checked against the upstream page's sha256,
-- and kept in the blob store as uploads are. A row says what is kept: the file (size > 0 and
-- its blob), its core metadata (metadata_sha256 and <sha256>.metadata), or both. Such a file
-- is never a row of `files`: its project is no project of this index.
CREATE TABLE upstream_files (
    sha256          TEXT    NOT NULL CHECK (length(sha256) = 64),
    filename        TEXT    NOT NULL,
    project         TEXT    NOT NULL,              -- normalised
    upstream        TEXT    NOT NULL,              -- the name of the upstream it came from
    url             TEXT    NOT NULL,              -- where it was fetched
    size            INTEGER NOT NULL DEFAULT 0 CHECK (size >= 0),  -- 0: the file itself is not kept
    metadata_sha256 TEXT    NOT NULL DEFAULT '',   -- of the kept .metadata; '': none kept
    kept_ms         INTEGER NOT NULL,
    PRIMARY KEY (sha256, filename)
) STRICT;

CREATE INDEX upstream_files_by_project ON upstream_files (project);

-- Every row that may need a blob, for fsck, backup and releasing a blob: an upstream file's
-- blob is optional, as a cache-mode file's is, since it can be fetched again.
CREATE VIEW blob_rows AS
    SELECT sha256, filename, download_mode, metadata_sha256, size FROM files
    UNION ALL
    SELECT sha256, filename, 'cache', metadata_sha256, size FROM upstream_files;
