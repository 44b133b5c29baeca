"""`svc mcp`: svc's MCP server for an agent that speaks stdio (Claude Code, Cursor, Codex...).
A bridge, with the official SDK at both ends: a client of the service's /mcp upstream (the
saved address and token), a server on stdio downstream, each request passed on as it came.
Every tool is written once, in the service (docs/mcp.md)."""

import asyncio

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# What `--allow-writes` asks of the service for this connection (svc.mcp.server reads it; a
# test keeps the two spellings one).
ALLOW_WRITES_HEADER = "X-Svc-Allow-Writes"


def serve(url: str, token: str, allow_writes: bool) -> None:
    asyncio.run(_serve(url.rstrip("/") + "/mcp", token, allow_writes))


async def _serve(endpoint: str, token: str, allow_writes: bool) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    if allow_writes:
        headers[ALLOW_WRITES_HEADER] = "on"
    http = httpx2.AsyncClient(headers=headers, timeout=120)
    async with http, Client(streamable_http_client(endpoint, http_client=http)) as upstream:

        async def list_tools(ctx, params):
            return await upstream.list_tools()

        async def call_tool(ctx, params):
            return await upstream.call_tool(params.name, params.arguments or {})

        async def list_resources(ctx, params):
            return await upstream.list_resources()

        async def list_resource_templates(ctx, params):
            return await upstream.list_resource_templates()

        async def read_resource(ctx, params):
            return await upstream.read_resource(str(params.uri))

        async def list_prompts(ctx, params):
            return await upstream.list_prompts()

        async def get_prompt(ctx, params):
            return await upstream.get_prompt(params.name, params.arguments or {})

        server = Server(
            "svc",
            instructions=upstream.instructions,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_resource_templates,
            on_read_resource=read_resource,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
        )
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
