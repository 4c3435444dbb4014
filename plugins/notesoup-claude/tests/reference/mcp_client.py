"""An independent MCP client (the Python MCP SDK) against `notesoup mcp`.

usage: python mcp_client.py <notesoup binary> < plan.json

The plan is a JSON list of {"name", "arguments"} calls. The script connects
twice, once through the `initialize` handshake and once through the
stateless `server/discover` probe, lists the tools each time, makes every
call of the plan over the handshake connection, and prints one JSON report.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def server(binary):
    return StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ), cwd=os.getcwd())


def tool_report(tool):
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
    }


async def main(binary, plan):
    report = {}
    async with stdio_client(server(binary)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["initialize"] = {
                "protocol_version": init.protocol_version,
                "server": init.server_info.name,
                "version": init.server_info.version,
                "tools_capability": init.capabilities.tools is not None,
            }
            report["tools"] = [tool_report(t) for t in (await session.list_tools()).tools]
            calls = []
            for call in plan:
                result = await session.call_tool(call["name"], call["arguments"])
                calls.append({
                    "name": call["name"],
                    "is_error": result.is_error,
                    "content_types": [c.type for c in result.content],
                    "text": "".join(c.text for c in result.content if c.type == "text"),
                    "structured": result.structured_content,
                })
            report["calls"] = calls
    async with stdio_client(server(binary)) as (read, write):
        async with ClientSession(read, write) as session:
            found = await session.discover()
            report["discover"] = {
                "supported_versions": list(found.supported_versions),
                "tools": [t.name for t in (await session.list_tools()).tools],
            }
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], json.load(sys.stdin)))
