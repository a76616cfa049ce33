-- PEP 825 variant wheels (issue 18). A variant wheel's label and what its variant.json says of
-- it; and per release with variant wheels, the {name}-{version}-variants.json generated from
-- them, rewritten in the transaction that adds or deletes one of them, so it is never stale.

ALTER TABLE files ADD COLUMN variant_label TEXT;                         -- NULL: not a variant wheel
ALTER TABLE files ADD COLUMN variant_properties TEXT NOT NULL DEFAULT ''; -- canonical JSON of the label's properties
ALTER TABLE files ADD COLUMN variant_namespaces TEXT NOT NULL DEFAULT ''; -- JSON: its default-priorities.namespace

CREATE INDEX files_by_variant_label ON files (project_id, normalized_version, variant_label)
    WHERE variant_label IS NOT NULL;

CREATE TABLE release_variants (
    project_id         INTEGER NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
    normalized_version TEXT    NOT NULL,
    filename           TEXT    NOT NULL,  -- "{name}-{version}-variants.json", as a wheel filename normalises them
    content            TEXT    NOT NULL,  -- the file, byte for byte
    sha256             TEXT    NOT NULL CHECK (length(sha256) = 64),
    updated_ms         INTEGER NOT NULL,  -- when the content last changed (PEP 700 upload-time)
    PRIMARY KEY (project_id, normalized_version)
) STRICT;

CREATE INDEX release_variants_by_sha256 ON release_variants (sha256);
