-- Trusted publishing (OIDC): the CI workflows a project trusts to publish it, the identity tokens
-- already exchanged (each is accepted once), and what the upload tokens they are exchanged for
-- may publish.

CREATE TABLE trusted_publishers (
    id            INTEGER PRIMARY KEY,
    project       TEXT    NOT NULL,  -- PEP 503-normalised; the project need not exist yet
    kind          TEXT    NOT NULL CHECK (kind IN ('github', 'gitlab')),  -- which claims name what
    issuer        TEXT    NOT NULL,  -- the tokens' "iss", exactly
    repository    TEXT    NOT NULL,  -- "owner/name"; GitLab "group/…/project"
    owner_id      TEXT    NOT NULL,  -- the owner's immutable id: repository_owner_id, namespace_id
    workflow      TEXT    NOT NULL,  -- path in the repository: .github/workflows/release.yml
    environment   TEXT    NOT NULL DEFAULT '',  -- '' for any
    label_pattern TEXT    NOT NULL DEFAULT '',  -- builds it may publish ('cu130*'); '' for any
    created_ms    INTEGER NOT NULL,
    created_by    TEXT    NOT NULL
) STRICT;

CREATE UNIQUE INDEX trusted_publishers_unique ON trusted_publishers
    (project, issuer, lower(repository), workflow, lower(environment), label_pattern);
CREATE INDEX trusted_publishers_by_issuer ON trusted_publishers (issuer);

-- Each identity token's "jti", kept until the token has expired (and its leeway passed).
CREATE TABLE oidc_token_ids (
    issuer     TEXT    NOT NULL,
    jti        TEXT    NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (issuer, jti)
) STRICT, WITHOUT ROWID;

CREATE INDEX oidc_token_ids_by_expiry ON oidc_token_ids (expires_ms);

-- What a token may publish beyond its projects: a JSON list of {"project", "labels"}; NULL for
-- any build. Tokens a trusted publisher minted name it, so removing it revokes them.
ALTER TABLE tokens ADD COLUMN builds TEXT;
ALTER TABLE tokens ADD COLUMN publisher_id INTEGER;
CREATE INDEX tokens_by_publisher ON tokens (publisher_id) WHERE publisher_id IS NOT NULL;
