// A small MCP 2025-11-25 server on the official TypeScript SDK's public API
// (@modelcontextprotocol/sdk 1.32.2), written by protocheck's authors from
// the SDK's documentation and the specification, for the interop panel.
//
//   node ts_sdk_server.cjs http [PORT]   # Streamable HTTP at /mcp, with sessions;
//                                        # prints "PORT n" once it listens on 127.0.0.1
//   node ts_sdk_server.cjs stdio         # newline-delimited JSON-RPC on stdin/stdout
//
// The SDK is resolved through NODE_PATH (the node_modules that holds it).
"use strict";

const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { McpServer, ResourceTemplate } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { completable } = require("@modelcontextprotocol/sdk/server/completable.js");
const { z } = require("zod");

function build() {
  const server = new McpServer(
    { name: "protocheck-interop-ts-sdk", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.registerTool(
    "echo",
    {
      description: "Returns its text argument.",
      inputSchema: { text: z.string() },
      outputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({
      content: [{ type: "text", text: JSON.stringify({ text }) }],
      structuredContent: { text },
    }),
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerResource(
    "greeting",
    "memo://greeting",
    { description: "A fixed greeting.", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello" }] }),
  );
  server.registerResource(
    "note",
    new ResourceTemplate("memo://notes/{name}", { list: undefined }),
    { description: "A note by name.", mimeType: "text/plain" },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${name}` }] }),
  );
  server.registerPrompt(
    "greet",
    {
      description: "Asks for a greeting.",
      argsSchema: { who: completable(z.string(), (value) => ["world", "team"].filter((w) => w.startsWith(value))) },
    },
    ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: `Greet ${who}.` } }] }),
  );
  return server;
}

async function serveStdio() {
  await build().connect(new StdioServerTransport());
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

async function serveHttp(port) {
  const sessions = new Map();
  const ended = new Set();
  const server = http.createServer(async (req, res) => {
    try {
      const path = new URL(req.url, "http://127.0.0.1").pathname;
      if (path !== "/mcp") {
        res.writeHead(404).end();
        return;
      }
      const origins = [`http://127.0.0.1:${server.address().port}`, `http://localhost:${server.address().port}`];
      const sid = req.headers["mcp-session-id"];
      if (sid !== undefined) {
        const transport = sessions.get(sid);
        if (transport === undefined) {
          // Streamable HTTP, "Session Management": a request with a session id
          // the server does not know (ended or never issued) gets 404.
          jsonError(res, 404, -32001, ended.has(sid) ? "Session ended" : "Session not found");
          return;
        }
        await transport.handleRequest(req, res);
        return;
      }
      if (req.method !== "POST") {
        jsonError(res, 400, -32000, "Bad Request: no session id");
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableDnsRebindingProtection: true,
        allowedOrigins: origins,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) {
          sessions.delete(transport.sessionId);
          ended.add(transport.sessionId);
        }
      };
      await build().connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      if (!res.headersSent) jsonError(res, 500, -32603, String(err));
    }
  });
  server.listen(port, "127.0.0.1", () => {
    process.stdout.write(`PORT ${server.address().port}\n`);
  });
}

const [mode, port] = process.argv.slice(2);
if (mode === "stdio") {
  serveStdio();
} else if (mode === "http") {
  serveHttp(Number(port || process.env.PORT || 0));
} else {
  process.stderr.write("usage: ts_sdk_server.cjs http [PORT] | stdio\n");
  process.exit(2);
}
