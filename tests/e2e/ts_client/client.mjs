// A strict TypeScript MCP client: lists the tools, then calls each one given on stdin and prints what it got.
// The SDK validates structuredContent against each tool's outputSchema; a schema mismatch throws.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(0, "utf8"));
const client = new Client({ name: "ts-strict-client", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" }));
const { tools } = await client.listTools();
const results = [];
for (const [name, args] of calls) {
  const result = await client.callTool({ name, arguments: args });
  results.push({
    isError: result.isError === true,
    text: result.content.map((c) => c.text).join(""),
    structured: result.structuredContent ?? null,
  });
}
await client.close();
process.stdout.write(JSON.stringify({ protocol: client.getServerVersion()?.name ?? "", tools: tools.map((t) => ({
  name: t.name, hasOutputSchema: Boolean(t.outputSchema), annotations: t.annotations ?? null })), results }));
