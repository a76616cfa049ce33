-- PEP 825 properties as rows (issue 24): parsed once, at ingest, and read back by the pages and
-- the API as they are, where the canonical JSON of files.variant_properties was parsed again
-- on every read. One row per property of a variant wheel; the null variant has none. A file's
-- rows go with it.

CREATE TABLE variant_properties (
    file_id   INTEGER NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    namespace TEXT    NOT NULL,
    feature   TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    PRIMARY KEY (file_id, namespace, feature, value)  -- the order the pages read them in
) STRICT, WITHOUT ROWID;

-- The rows already there, from their canonical JSON: {"namespace": {"feature": ["value", ...]}}.
INSERT INTO variant_properties (file_id, namespace, feature, value)
SELECT f.id, space.key, feature.key, property.value
  FROM files f,
       json_each(f.variant_properties) AS space,
       json_each(space.value) AS feature,
       json_each(feature.value) AS property
 WHERE f.variant_label IS NOT NULL AND f.variant_properties <> '';

ALTER TABLE files DROP COLUMN variant_properties;
