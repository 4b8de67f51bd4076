"""LTI 1.3: launches from an LMS into a class's exercise, and scores sent back (Assignment and Grade Services).

`registry` keeps the tool's key, the platforms, deployments, logins in progress, LMS users and where grades go;
`launch` verifies a platform's id_token; `grades` sends scores; `routes` are the HTTP endpoints. See docs/lti.md.
Signatures are PyJWT with cryptography; the only hosts reached are the configured platforms' own URLs.
"""
