// End-to-end test of `ama-rpc --mode acp`, driven by the official ACP
// TypeScript SDK the way the Armadra canvas drives ama: initialize,
// session/new, set_mode, a model pick through set_config_option, prompts
// whose tool calls ask permission (allow once, reject, cancel), a cancel
// mid-turn, session/close, then a respawn that resumes the same session id
// and one that loads it with replay.
//
// Usage: AMA_RPC_BIN=/path/to/ama-rpc node e2e.mjs [tmpdir]
// Exit code 0 means every check passed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
// The SDK's generated zod schemas validate every answer the agent gives.
import * as z from "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";

const BIN = process.env.AMA_RPC_BIN;
if (!BIN) {
  console.error("AMA_RPC_BIN must name the ama-rpc binary");
  process.exit(2);
}
const ROOT = fs.realpathSync(fs.mkdtempSync(path.join(process.argv[2] || os.tmpdir(), "acp-e2e-")));
const HOME = path.join(ROOT, "home");
const WORK = path.join(ROOT, "work");
fs.mkdirSync(HOME, { recursive: true });
fs.mkdirSync(WORK, { recursive: true });

// The SDK reports invalid session/update params and failed notification
// handlers on console.error and drops them; any such report fails the test.
const sdkErrors = [];
const origError = console.error;
console.error = (...args) => {
  sdkErrors.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  origError(...args);
};

const deadline = setTimeout(() => {
  origError("e2e: timed out");
  process.exit(1);
}, 90_000);

function script(name, responses) {
  const p = path.join(ROOT, name);
  fs.writeFileSync(p, JSON.stringify({ version: 1, responses, whenExhausted: "echo" }));
  return p;
}

const usage = (input, output) => ({ input, output, cacheRead: 0, cacheWrite: 0 });
const toolCall = (id, name, args, u = usage(0, 0)) => ({ steps: [{ toolCall: { id, name, arguments: args } }], usage: u });

const SCRIPT1 = script("script1.json", [
  // prompt 1: a write (auto-accepted in auto-edit: a diff), a bash call
  // allowed once, a bash call rejected, then text.
  toolCall("call-write", "write", { path: "note.txt", content: "hello from acp\n" }, usage(10, 5)),
  toolCall("call-allow", "bash", { command: "echo allowed > allowed.txt" }),
  toolCall("call-reject", "bash", { command: "echo rejected > rejected.txt" }),
  { text: "all done", usage: usage(20, 3) },
  // prompt 2: a bash call whose permission request is answered by a cancel.
  toolCall("call-cancel", "bash", { command: "echo cancelled > cancelled.txt" }),
  // prompt 3: a slow reply cancelled mid-turn.
  { steps: [{ text: "working" }, { delayMs: 60000 }, { text: " never" }] },
]);
const SCRIPT2 = script("script2.json", [{ text: "resumed ok" }]);

// Spawns the server and connects an SDK client to it. permission answers
// session/request_permission; updates collects every session/update.
function start(scriptPath, permission) {
  const child = spawn(BIN, ["--mode", "acp", "--model", "fake/echo", "--log-level", "warn"], {
    cwd: WORK,
    env: {
      PATH: process.env.PATH,
      HOME,
      XDG_CONFIG_HOME: path.join(HOME, ".config"),
      XDG_DATA_HOME: path.join(HOME, ".local", "share"),
      AMA_FAKE_SCRIPT: scriptPath,
      AMA_LANG: "en",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const updates = [];
  const waiters = [];
  const app = acp
    .client({ name: "armadra-e2e" })
    .onNotification(acp.methods.client.session.update, async ({ params }) => {
      assert.ok(z.zSessionNotification.safeParse(params).success, "session/update params match the schema: " + JSON.stringify(params));
      updates.push(params);
      for (const w of [...waiters]) w();
    })
    .onRequest(acp.methods.client.session.requestPermission, async (ctx) => permission(ctx, updates));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const conn = app.connect(stream);
  const waitFor = (pred, what) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("timed out waiting for " + what)), 20_000);
      const check = () => {
        const u = updates.find(pred);
        if (u) {
          clearTimeout(t);
          waiters.splice(waiters.indexOf(check), 1);
          resolve(u);
        }
      };
      waiters.push(check);
      check();
    });
  return {
    child,
    agent: conn.agent,
    updates,
    waitFor,
    stderr: () => stderr,
    // close ends stdin, as Armadra does, and returns the exit status.
    async close() {
      child.stdin.end();
      return exited;
    },
  };
}

const kinds = (us, sid) => us.filter((u) => u.sessionId === sid).map((u) => u.update.sessionUpdate);

async function initialize(agent) {
  const res = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, session: { configOptions: {} }, elicitation: {} },
    clientInfo: { name: "armadra", title: "Armadra", version: "1" },
  });
  z.zInitializeResponse.parse(res);
  assert.equal(res.protocolVersion, 1);
  assert.equal(res.agentCapabilities.loadSession, true);
  for (const k of ["list", "resume", "close"]) assert.ok(res.agentCapabilities.sessionCapabilities[k], "sessionCapabilities." + k);
  assert.equal(res.agentCapabilities.promptCapabilities.image, true);
  assert.equal(res.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(res.agentInfo.name, "ama");
  assert.ok(res.agentInfo.version);
  assert.deepEqual(res.authMethods, []);
  return res;
}

// --- 0: a warmer: initialize, then EOF exits 0 at once -------------------
{
  const p = start(SCRIPT1, () => assert.fail("no permission expected"));
  await initialize(p.agent);
  const st = await p.close();
  assert.deepEqual(st, { code: 0, signal: null }, "initialize then EOF exits 0; stderr:\n" + p.stderr());
}

// --- 1: the canvas flow ---------------------------------------------------
let sessionId;
{
  const answers = ["allow_once", "reject_once", "cancel"];
  const asked = [];
  const p = start(SCRIPT1, async ({ params, agent }, updates) => {
    z.zRequestPermissionRequest.parse(params);
    asked.push(params);
    assert.deepEqual(
      params.options.map((o) => o.kind),
      ["allow_once", "allow_always", "reject_once"],
    );
    for (const o of params.options) assert.ok(o.optionId && o.name && o.kind);
    assert.ok(
      updates.some((u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === params.toolCall.toolCallId),
      "the permission's toolCall refers to an announced tool_call",
    );
    const a = answers.shift();
    if (a === "cancel") {
      // Armadra: session/cancel, and every pending permission of the
      // session answers cancelled.
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === a).optionId } };
  });
  const { agent } = p;
  await initialize(agent);

  const created = await agent.request(acp.methods.agent.session.new, { cwd: WORK, mcpServers: [] });
  z.zNewSessionResponse.parse(created);
  sessionId = created.sessionId;
  assert.match(sessionId, /^[0-9a-f-]{36}$/);
  const modeIds = created.modes.availableModes.map((m) => m.id);
  for (const m of ["plan", "allowlist", "default", "auto-edit", "auto", "full-auto"]) assert.ok(modeIds.includes(m), "mode " + m);
  assert.equal(created.modes.currentModeId, "default");
  const modelOpt = created.configOptions.find((o) => o.category === "model");
  assert.equal(modelOpt.currentValue, "fake/echo");
  const catalog = modelOpt.options.flatMap((g) => g.options ?? [g]).map((o) => o.value);
  assert.ok(catalog.includes("fake/reasoning"), "model catalog lists fake/reasoning");
  await p.waitFor((u) => u.update.sessionUpdate === "available_commands_update", "available_commands_update");
  await p.waitFor((u) => u.update.sessionUpdate === "usage_update", "usage_update after session/new");

  // set_mode, as the canvas does when the wanted mode differs.
  z.zSetSessionModeResponse.parse(await agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "auto-edit" }));
  await p.waitFor((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "auto-edit", "current_mode_update");

  // The model pick.
  const picked = await agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: modelOpt.id, value: "fake/reasoning" });
  z.zSetSessionConfigOptionResponse.parse(picked);
  assert.equal(picked.configOptions.find((o) => o.id === "model").currentValue, "fake/reasoning");
  assert.ok(picked.configOptions.find((o) => o.id === "thinking").options.length > 1, "a reasoning model offers thinking levels");
  assert.equal(picked.configOptions.find((o) => o.id === "mode").currentValue, "auto-edit");

  // Prompt 1: write (diff), bash allowed once, bash rejected, text.
  const from1 = p.updates.length;
  const r1 = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [
      { type: "text", text: "please write the note and run the commands" },
      { type: "resource_link", uri: "file://" + path.join(WORK, "README.md"), name: "README.md", mimeType: "text/markdown", size: 1 },
    ],
  });
  z.zPromptResponse.parse(r1);
  assert.equal(r1.stopReason, "end_turn");
  const { _meta: usageMeta, ...usage1 } = r1.usage;
  assert.deepEqual(usage1, { inputTokens: 30, outputTokens: 8, cachedReadTokens: 0, cachedWriteTokens: 0, totalTokens: 38 });
  // The permission counters ride in the usage's _meta (issue 27).
  const perms = usageMeta["ama/permissions"];
  assert.deepEqual([perms.allowed, perms.asked, perms.denied], [2, 2, 1]);
  const u1 = p.updates.slice(from1).filter((u) => u.sessionId === sessionId).map((u) => u.update);
  const calls = u1.filter((u) => u.sessionUpdate === "tool_call");
  assert.deepEqual(calls.map((c) => [c.toolCallId, c.kind, c.status]), [
    ["call-write", "edit", "pending"],
    ["call-allow", "execute", "pending"],
    ["call-reject", "execute", "pending"],
  ]);
  assert.deepEqual(calls[0].locations, [{ path: path.join(WORK, "note.txt") }]);
  assert.deepEqual(calls[0].rawInput, { path: "note.txt", content: "hello from acp\n" });
  const final = (id) => u1.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id).at(-1);
  assert.equal(final("call-write").status, "completed");
  const diff = final("call-write").content.find((c) => c.type === "diff");
  assert.deepEqual(diff, { type: "diff", path: path.join(WORK, "note.txt"), oldText: null, newText: "hello from acp\n" });
  assert.equal(final("call-allow").status, "completed");
  assert.equal(final("call-reject").status, "failed");
  for (const u of u1.filter((u) => u.sessionUpdate === "tool_call_update")) {
    for (const c of u.content ?? []) {
      const keys = Object.keys(c).sort().join(",");
      assert.ok(keys === "content,type" || keys === "newText,oldText,path,type", "content item of one shape: " + keys);
    }
  }
  assert.ok(
    u1.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call-allow" && u.status === "in_progress"),
    "an allowed call goes in_progress",
  );
  assert.equal(
    u1.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join(""),
    "all done",
  );
  const usage = u1.filter((u) => u.sessionUpdate === "usage_update").at(-1);
  assert.ok(usage && usage.used > 0 && usage.size === 200000 && usage.cost.currency === "USD", "usage_update after the turn");
  const info = u1.find((u) => u.sessionUpdate === "session_info_update");
  assert.ok(info.title.startsWith("please write the note and run the commands"), "title " + info.title); // blocks are joined by a newline; the title is the first line
  assert.ok([...info.title].length <= 101, "titles are short");
  assert.equal(asked.length, 2);
  assert.equal(fs.readFileSync(path.join(WORK, "note.txt"), "utf8"), "hello from acp\n");
  assert.equal(fs.readFileSync(path.join(WORK, "allowed.txt"), "utf8"), "allowed\n");
  assert.ok(!fs.existsSync(path.join(WORK, "rejected.txt")), "a rejected command does not run");

  // Prompt 2: the permission request is answered by a cancel.
  const r2 = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "one more command" }] });
  assert.equal(r2.stopReason, "cancelled");
  assert.equal(asked.length, 3);
  assert.ok(!fs.existsSync(path.join(WORK, "cancelled.txt")), "a cancelled command does not run");
  assert.equal(
    p.updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "call-cancel").at(-1).update.status,
    "failed",
  );

  // Prompt 3: cancel mid-turn, once the reply has started streaming.
  const from3 = p.updates.length;
  const pending = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "take your time" }] });
  await p.waitFor((u) => p.updates.indexOf(u) >= from3 && u.update.sessionUpdate === "agent_message_chunk", "the first chunk of prompt 3");
  await agent.notify(acp.methods.agent.session.cancel, { sessionId });
  const r3 = await pending;
  assert.equal(r3.stopReason, "cancelled");

  // Unknown methods are -32601.
  await assert.rejects(agent.request("session/delete", { sessionId }), (e) => e.code === -32601);

  z.zCloseSessionResponse.parse(await agent.request(acp.methods.agent.session.close, { sessionId }));
  // A closed session is gone: prompting it is -32002.
  await assert.rejects(
    agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "x" }] }),
    (e) => e.code === -32002,
  );
  const st = await p.close();
  assert.deepEqual(st, { code: 0, signal: null }, "exit 0; stderr:\n" + p.stderr());
}

// --- 2: respawn, resume the same id, prompt, EOF --------------------------
{
  const p = start(SCRIPT2, () => assert.fail("no permission expected"));
  await initialize(p.agent);
  const listed = await p.agent.request(acp.methods.agent.session.list, { cwd: WORK });
  z.zListSessionsResponse.parse(listed);
  const mine = listed.sessions.find((s) => s.sessionId === sessionId);
  assert.ok(mine, "session/list has the session");
  assert.equal(mine.cwd, WORK);
  // The client's MCP server "fs" names a program that does not exist: at
  // the prompt ama-rpc says so in an _ama/notice extension notification,
  // which the SDK must take without complaint, and the turn goes on.
  const mcp = [{ name: "fs", command: "mcp-fs", args: [], env: [] }];
  const resumed = await p.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: WORK, mcpServers: mcp });
  z.zResumeSessionResponse.parse(resumed);
  assert.equal(resumed.configOptions.find((o) => o.id === "model").currentValue, "fake/reasoning", "the model pick is stored with the session");
  assert.ok(!kinds(p.updates, sessionId).includes("user_message_chunk"), "resume does not replay");
  const r = await p.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "after resume" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.equal(
    p.updates.filter((u) => u.update.sessionUpdate === "agent_message_chunk").map((u) => u.update.content.text).join(""),
    "resumed ok",
  );
  const st = await p.close();
  assert.deepEqual(st, { code: 0, signal: null }, "exit 0; stderr:\n" + p.stderr());
}

// --- 3: respawn, load with replay -----------------------------------------
{
  const p = start(SCRIPT2, () => assert.fail("no permission expected"));
  await initialize(p.agent);
  const loaded = await p.agent.request(acp.methods.agent.session.load, { sessionId, cwd: WORK, mcpServers: [] });
  z.zLoadSessionResponse.parse(loaded);
  // Every replayed update was received before the response.
  const replay = p.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  const users = replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
  assert.deepEqual(users, [
    "please write the note and run the commands\n@file://" + path.join(WORK, "README.md"),
    "one more command",
    "take your time",
    "after resume",
  ]);
  const calls = replay.filter((u) => u.sessionUpdate === "tool_call").map((u) => [u.toolCallId, u.status]);
  assert.deepEqual(calls, [
    ["call-write", "completed"],
    ["call-allow", "completed"],
    ["call-reject", "failed"],
    ["call-cancel", "failed"],
  ]);
  const texts = replay.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text);
  assert.ok(texts.includes("all done") && texts.includes("resumed ok"), "agent texts are replayed: " + JSON.stringify(texts));
  const st = await p.close();
  assert.deepEqual(st, { code: 0, signal: null }, "exit 0; stderr:\n" + p.stderr());
}

// --- 4: the client's MCP server is used, through the same permission ask --
if (process.env.AMA_MCP_SERVER_BIN) {
  const SCRIPT3 = script("script3.json", [
    toolCall("call-mcp-allow", "mcp__t__write_marker", { path: path.join(WORK, "mcp-allowed.txt") }),
    toolCall("call-mcp-reject", "mcp__t__write_marker", { path: path.join(WORK, "mcp-rejected.txt") }),
    { text: "mcp done" },
  ]);
  const answers = ["allow_once", "reject_once"];
  const asked = [];
  const p = start(SCRIPT3, async ({ params }) => {
    z.zRequestPermissionRequest.parse(params);
    asked.push(params.toolCall.toolCallId);
    // Nothing ran before the person answered.
    assert.ok(!fs.existsSync(path.join(WORK, "mcp-allowed.txt")) || asked.length > 1, "no MCP write before approval");
    const a = answers.shift();
    return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === a).optionId } };
  });
  await initialize(p.agent);
  const mcpServers = [{ name: "t", command: process.env.AMA_MCP_SERVER_BIN, args: [], env: [] }];
  const created = await p.agent.request(acp.methods.agent.session.new, { cwd: WORK, mcpServers });
  z.zNewSessionResponse.parse(created);
  const sid = created.sessionId;
  const r = await p.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "use the mcp tool" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.deepEqual(asked, ["call-mcp-allow", "call-mcp-reject"], "each MCP call asks (default mode)");
  assert.equal(fs.readFileSync(path.join(WORK, "mcp-allowed.txt"), "utf8"), "written by mcp");
  assert.ok(!fs.existsSync(path.join(WORK, "mcp-rejected.txt")), "a rejected MCP call does not reach the server");
  const u = p.updates.filter((x) => x.sessionId === sid).map((x) => x.update);
  const final = (id) => u.filter((x) => x.sessionUpdate === "tool_call_update" && x.toolCallId === id).at(-1);
  assert.equal(final("call-mcp-allow").status, "completed");
  assert.equal(final("call-mcp-reject").status, "failed");
  const st = await p.close();
  assert.deepEqual(st, { code: 0, signal: null }, "exit 0; stderr:\n" + p.stderr());
}

clearTimeout(deadline);
console.error = origError;
if (sdkErrors.length) {
  console.error("the SDK reported errors:\n" + sdkErrors.join("\n"));
  process.exit(1);
}
fs.rmSync(ROOT, { recursive: true, force: true });
console.log("acp e2e: ok");
