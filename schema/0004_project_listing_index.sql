-- The list of every project (the /simple/ index and the admin catalog) counts each project's
-- files and finds its last upload. This index covers that query, so it reads two integers a
-- file instead of whole file rows (the rows carry METADATA fields and are wide).

CREATE INDEX files_by_project_upload ON files (project_id, upload_time_ms);
