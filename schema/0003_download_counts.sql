-- How often each file was downloaded, per UTC day, for the admin catalog's file page. The
-- server counts in memory and adds its counts here about once a second, never per request.

CREATE TABLE download_counts (
    file_id INTEGER NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    day     TEXT    NOT NULL CHECK (length(day) = 10),  -- 'YYYY-MM-DD', UTC
    count   INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (file_id, day)
) STRICT, WITHOUT ROWID;
