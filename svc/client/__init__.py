"""`svc`, the command line of svc (docs/cli.md): talks to any svc over HTTP(S) with a
personal access token, for people (tables) and scripts (`--json`). It imports nothing of the
service: the HTTP API is its only way in, as for any other client."""
