-- Where proxy and cache modes read a remote file's bytes when that is not remote_url: a private
-- repository's asset through GitHub's API ({api}/repos/OWNER/REPO/releases/assets/ID), asked with
-- Accept: application/octet-stream and the token from the server's settings at fetch time (a
-- token is never stored). NULL: the bytes come from remote_url. Redirects still go to remote_url.

ALTER TABLE files ADD COLUMN fetch_url TEXT;
