"""The Model Context Protocol server (docs/mcp.md, contract v6 §24): a developer's coding agent
reads reports with the user's personal access token. `tools` says what an agent may do, once;
`server` makes it an MCP server with the official SDK; `endpoint` serves it at /mcp beside the
API (Streamable HTTP); the `svc mcp` command bridges stdio to that endpoint (svc.client.mcp)."""
