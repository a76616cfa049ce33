-- The catalog: projects and their files. Applied once, in one transaction, by the migration
-- runner (lib/wheelhouse/catalog/migrations.cpp), which then sets PRAGMA user_version = 1.

-- One row per project, created by its first file.
CREATE TABLE projects (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,   -- PEP 503 normalised: the key every URL uses
    display_name  TEXT    NOT NULL,          -- as the first file's METADATA spells it
    status        TEXT    NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'archived', 'quarantined', 'deprecated')),  -- PEP 792
    status_reason TEXT,
    created_ms    INTEGER NOT NULL           -- Unix time in milliseconds, UTC
) STRICT;

-- One row per wheel. Every field of catalog::file_record is a column, the decoded variant
-- included, so the variant indexes can filter in SQL.
CREATE TABLE files (
    id                 INTEGER PRIMARY KEY,
    project_id         INTEGER NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
    filename           TEXT    NOT NULL UNIQUE,
    version            TEXT    NOT NULL,           -- as written in the filename
    normalized_version TEXT    NOT NULL,           -- PEP 440, local label included
    local_label        TEXT    NOT NULL DEFAULT '',
    python_tag         TEXT    NOT NULL,
    abi_tag            TEXT    NOT NULL,
    platform_tag       TEXT    NOT NULL,
    build_tag          TEXT,
    -- the decoded variant (variants::build_variant)
    cuda               TEXT,
    sm                 TEXT,
    torch              TEXT,
    torch_and_higher   INTEGER NOT NULL DEFAULT 0 CHECK (torch_and_higher IN (0, 1)),
    cxx11abi           INTEGER CHECK (cxx11abi IN (0, 1)),
    rocm               TEXT,
    cpu                INTEGER NOT NULL DEFAULT 0 CHECK (cpu IN (0, 1)),
    xpu                INTEGER NOT NULL DEFAULT 0 CHECK (xpu IN (0, 1)),
    git_hash           TEXT,
    build_date         TEXT,
    variant_unparsed   TEXT,                       -- JSON array of the pieces not understood; NULL when none
    -- the bytes
    sha256             TEXT    NOT NULL CHECK (length(sha256) = 64),
    size               INTEGER NOT NULL CHECK (size >= 0),
    requires_python    TEXT,
    summary            TEXT,
    upload_time_ms     INTEGER NOT NULL,
    yanked_reason      TEXT,                       -- NULL: not yanked; '' : yanked without a reason
    download_mode      TEXT    NOT NULL DEFAULT 'local'
                       CHECK (download_mode IN ('local', 'redirect', 'proxy', 'cache')),
    remote_url         TEXT,
    metadata_sha256    TEXT    NOT NULL DEFAULT '', -- of <sha256>.metadata (PEP 658); '' when not known
    metadata_size      INTEGER NOT NULL DEFAULT 0,
    uploaded_by        TEXT,                        -- token name, or 'cli'
    CHECK (download_mode = 'local' OR remote_url IS NOT NULL)
) STRICT;

CREATE INDEX files_by_project ON files (project_id, normalized_version);
CREATE INDEX files_by_sha256 ON files (sha256);
-- The variant indexes select by CUDA and torch first, then narrow by GPU architecture.
CREATE INDEX files_by_variant ON files (cuda, torch, sm);
CREATE INDEX files_by_rocm ON files (rocm) WHERE rocm IS NOT NULL;
