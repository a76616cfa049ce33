-- PEP 740 attestations (issue 25): the provenance of each file uploaded with attestations that
-- verified, served as it was made at upload. `attested` says on the file's row that it has one,
-- so pages are rendered from the rows alone; both are written in the transaction that adds the
-- file, and the provenance goes with the row.
ALTER TABLE files ADD COLUMN attested INTEGER NOT NULL DEFAULT 0 CHECK (attested IN (0, 1));

CREATE TABLE file_provenance (
    file_id    INTEGER PRIMARY KEY REFERENCES files (id) ON DELETE CASCADE,
    provenance TEXT    NOT NULL     -- PEP 740's provenance object, JSON
) STRICT;
