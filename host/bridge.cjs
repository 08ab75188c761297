// The ama-rpc host bridge: loads a host adapter module and serves it to
// ama-rpc over JSON-RPC 2.0, one message per line, on file descriptors 3
// (from ama-rpc) and 4 (to ama-rpc). See docs/host-protocol.md.
"use strict";
const net = require("net");
const path = require("path");
const url = require("url");
const { createRequire } = require("module");

const input = new net.Socket({ fd: 3, readable: true, writable: false });
const output = new net.Socket({ fd: 4, readable: false, writable: true });

let nextId = 1;
const waiting = new Map();
function send(msg) {
  msg.jsonrpc = "2.0";
  output.write(JSON.stringify(msg) + "\n");
}
function notify(method, params) {
  send({ method, params });
}
function request(method, params) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    send({ id, method, params });
  });
}

class AmaError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
const invalid = (m) => new AmaError("invalid_arguments", m);

// ---- state mirrored from ama-rpc -------------------------------------
let info = null; // initialize params
let session = {};
const toolNames = new Set(); // registered, not disabled
const disabled = new Set();
const hostTools = new Map(); // name -> definition
const handlers = new Map(); // event -> [fn]
let broker = null;
const runners = new Map();
const warmHandlers = [];
const running = new Map(); // callRef (else toolCallId) -> AbortController
let nextNested = 1; // ids of nested requests (tool.cancel)
const taskViews = new Map(); // callRef (else toolCallId) -> sets the running call's ctx.tasks snapshot (tasks.update)
let created = false;

const NAME = /^[a-z][a-z0-9_]{1,63}$/;
const TYPES = new Set(["object", "string", "number", "integer", "boolean", "array"]);
function checkSchema(s, at, problems) {
  if (s === null || typeof s !== "object" || Array.isArray(s)) {
    problems.push(at + ": schema must be an object");
    return;
  }
  for (const k of Object.keys(s)) {
    const v = s[k];
    switch (k) {
      case "type":
        if (typeof v !== "string" || !TYPES.has(v)) problems.push(at + ": unsupported type " + JSON.stringify(v));
        break;
      case "title":
      case "description":
        if (typeof v !== "string") problems.push(at + ": \"" + k + "\" must be a string");
        break;
      case "default":
        break;
      case "properties":
        if (v === null || typeof v !== "object" || Array.isArray(v)) problems.push(at + ": \"properties\" must be an object");
        else for (const p of Object.keys(v)) checkSchema(v[p], at + ".properties." + p, problems);
        break;
      case "required":
        if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) problems.push(at + ": \"required\" must be an array of strings");
        else if (s.properties && typeof s.properties === "object")
          for (const r of v) if (!(r in s.properties)) problems.push(at + ": required property \"" + r + "\" is not declared");
        break;
      case "additionalProperties":
        if (typeof v !== "boolean") problems.push(at + ": \"additionalProperties\" must be a boolean");
        break;
      case "items":
        checkSchema(v, at + ".items", problems);
        break;
      case "enum":
        if (!Array.isArray(v) || v.length === 0 || v.some((x) => x !== null && !["string", "number", "boolean"].includes(typeof x)))
          problems.push(at + ": \"enum\" must be a non-empty array of strings, numbers, booleans or null");
        break;
      default:
        problems.push(at + ": unsupported keyword \"" + k + "\"");
    }
  }
}

function freeze(o) {
  for (const v of Object.values(o)) if (v && typeof v === "object") freeze(v);
  return Object.freeze(o);
}

function buildApi() {
  const api = {
    version: 1,
    agent: { name: "ama", version: info.agentVersion },
    env: Object.assign({}, info.env),
    mode: info.mode,
    session: {
      id: () => session.id,
      file: () => session.file || undefined,
      cwd: () => session.cwd,
      model: () => (session.model ? Object.assign({}, session.model) : undefined),
    },
    tools: {
      register(tool) {
        if (tool === null || typeof tool !== "object") throw invalid("tools.register: tool must be an object");
        if (typeof tool.name !== "string" || !NAME.test(tool.name)) throw invalid("tools.register: invalid tool name " + JSON.stringify(tool.name) + " (must match ^[a-z][a-z0-9_]{1,63}$)");
        if (typeof tool.execute !== "function") throw invalid("tools.register: " + tool.name + ": execute must be a function");
        if (!["read", "write", "execute"].includes(tool.permission)) throw invalid("tools.register: " + tool.name + ": permission must be read, write or execute");
        if (tool.executionMode !== undefined && !["parallel", "sequential"].includes(tool.executionMode)) throw invalid("tools.register: " + tool.name + ": executionMode must be parallel or sequential");
        if (info.builtinTools.includes(tool.name) || (info.reservedTools || []).includes(tool.name) || hostTools.has(tool.name)) throw new AmaError("tool_exists", "tool " + tool.name + " is already registered");
        const problems = [];
        if (tool.parameters !== undefined) checkSchema(tool.parameters, "$", problems);
        if (problems.length) throw invalid("tools.register: " + tool.name + ": " + problems.join("; "));
        hostTools.set(tool.name, tool);
        if (!disabled.has(tool.name)) toolNames.add(tool.name);
        notify("tools.register", {
          name: tool.name, label: tool.label, description: String(tool.description ?? ""),
          parameters: tool.parameters ?? { type: "object" }, permission: tool.permission,
          executionMode: tool.executionMode, annotations: tool.annotations,
          promptSnippet: tool.promptSnippet, promptGuidelines: tool.promptGuidelines,
        });
      },
      disable(name) {
        if (typeof name !== "string") throw invalid("tools.disable: name must be a string");
        disabled.add(name);
        toolNames.delete(name);
        notify("tools.disable", { name });
      },
      list() {
        return Object.freeze([...toolNames].sort());
      },
    },
    instructions: {
      add(source) {
        if (source === null || typeof source !== "object") throw invalid("instructions.add: source must be an object");
        if (source.kind === "file") {
          if (typeof source.path !== "string") throw invalid("instructions.add: path must be a string");
          notify("instructions.add", { kind: "file", path: path.resolve(source.path) });
        } else if (source.kind === "text") {
          if (typeof source.text !== "string") throw invalid("instructions.add: text must be a string");
          notify("instructions.add", { kind: "text", text: source.text, name: source.name });
        } else throw invalid("instructions.add: kind must be file or text");
      },
    },
    events: {
      on(name, handler) {
        if (typeof name !== "string" || typeof handler !== "function") throw invalid("events.on: name and handler function required");
        let list = handlers.get(name);
        if (!list) {
          list = [];
          handlers.set(name, list);
          notify("events.subscribe", { name });
        }
        const entry = { handler };
        list.push(entry);
        return () => {
          const i = list.indexOf(entry);
          if (i >= 0) list.splice(i, 1);
        };
      },
    },
    approvals: {
      setBroker(b) {
        if (b === null || typeof b !== "object" || typeof b.ask !== "function") throw invalid("approvals.setBroker: broker must have an ask function");
        broker = b;
        notify("approvals.setBroker", {});
      },
    },
    messages: {
      sendUser(text, origin) {
        if (typeof text !== "string") return Promise.reject(invalid("messages.sendUser: text must be a string"));
        if (!created) return Promise.reject(new AmaError("busy", "the session does not exist yet"));
        return request("messages.sendUser", { text, origin: origin ?? "host" }).catch((e) => {
          throw new AmaError(e.data && e.data.code ? e.data.code : "internal", e.message);
        });
      },
    },
    ui: {
      notify(message, level) {
        notify("ui.notify", { message: String(message), level: level ?? "info" });
      },
      setStatus(key, text) {
        if (typeof key !== "string") throw invalid("ui.setStatus: key must be a string");
        notify("ui.setStatus", { key, text: text ? String(text) : "" });
      },
    },
    log(level, message, detail) {
      notify("log", { level: String(level), message: String(message), detail });
    },
    cache: {
      // The last registered handler still subscribed decides; ama-rpc
      // asks it with cache.decide before every warming send.
      onWarmingDecision(handler) {
        if (typeof handler !== "function") throw invalid("cache.onWarmingDecision: handler must be a function");
        warmHandlers.push(handler);
        if (warmHandlers.length === 1) notify("cache.decider", { active: true });
        return () => {
          const i = warmHandlers.lastIndexOf(handler);
          if (i < 0) return;
          warmHandlers.splice(i, 1);
          if (warmHandlers.length === 0) notify("cache.decider", { active: false });
        };
      },
    },
    runners: {
      provide(runner) {
        if (runner === null || typeof runner !== "object" || typeof runner.id !== "string" || runner.id === "" || typeof runner.start !== "function")
          throw invalid("runners.provide: runner needs a non-empty id and a start function");
        runners.set(runner.id, runner);
        notify("runners.provide", { id: runner.id, description: String(runner.description ?? "") });
        return () => {
          if (runners.get(runner.id) === runner) {
            runners.delete(runner.id);
            notify("runners.remove", { id: runner.id });
          }
        };
      },
    },
  };
  for (const k of ["agent", "session", "tools", "instructions", "events", "approvals", "messages", "ui", "cache", "runners"]) Object.freeze(api[k]);
  Object.freeze(api.env);
  return Object.freeze(api);
}

// ---- module loading (spec §1) ----------------------------------------
class LoadError extends Error {
  constructor(code, message) {
    super(message);
    this.rpcCode = code;
  }
}
const LOAD_FAILED = -32010;
const VERSION_MISMATCH = -32011;

async function loadModule(file) {
  const lower = file.toLowerCase();
  const req = createRequire(file);
  if (lower.endsWith(".mjs")) return import(url.pathToFileURL(file).href);
  if (lower.endsWith(".cjs")) return req(file);
  try {
    return req(file);
  } catch (e) {
    if (e && (e.code === "ERR_REQUIRE_ESM" || e.code === "ERR_REQUIRE_ASYNC_MODULE" || e instanceof SyntaxError))
      return import(url.pathToFileURL(file).href);
    throw e;
  }
}

function pickExport(ns) {
  const isObj = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  const cands = [];
  if (isObj(ns) && isObj(ns.default) && !("hostApi" in ns.default) && isObj(ns.default.default)) cands.push(ns.default.default);
  if (isObj(ns) && isObj(ns.default)) cands.push(ns.default);
  cands.push(ns);
  for (const c of cands) if (isObj(c) && ("hostApi" in c || "create" in c)) return c;
  return null;
}

let adapter = null;
async function initialize(params) {
  info = params;
  session = params.session || {};
  for (const n of params.builtinTools || []) toolNames.add(n);
  const file = params.module;
  let ns;
  try {
    ns = await loadModule(file);
  } catch (e) {
    throw new LoadError(LOAD_FAILED, "host adapter " + file + " failed to load: " + (e && e.message ? e.message : String(e)));
  }
  const mod = pickExport(ns);
  if (!mod) throw new LoadError(LOAD_FAILED, "host adapter " + file + " exports neither hostApi nor create");
  if (mod.hostApi !== 1) throw new LoadError(VERSION_MISMATCH, "host adapter " + file + " wants hostApi " + JSON.stringify(mod.hostApi) + ", this ama-rpc offers 1");
  if (typeof mod.create !== "function") throw new LoadError(LOAD_FAILED, "host adapter " + file + ": create is not a function");
  let result;
  try {
    result = await mod.create(buildApi());
  } catch (e) {
    throw new LoadError(LOAD_FAILED, "host adapter " + file + ": create failed: " + (e && e.message ? e.message : String(e)));
  }
  if (result === undefined || result === null) return { status: "inactive" };
  if (typeof result !== "object" || typeof result.id !== "string" || result.id === "")
    throw new LoadError(LOAD_FAILED, "host adapter " + file + ": create must return {id: non-empty string}");
  adapter = result;
  return { status: "active", id: result.id };
}

function errText(e) {
  return e && e.message ? e.message : String(e);
}

async function execute(p) {
  const tool = hostTools.get(p.name);
  if (!tool) return { content: [{ type: "text", text: "Tool " + p.name + " not found" }], isError: true };
  const ac = new AbortController();
  // ama-rpc names the call by callRef in what comes back (toolCallIds are
  // the model's and may repeat across sessions).
  const ref = { toolCallId: p.toolCallId, callRef: p.callRef };
  const key = p.callRef || p.toolCallId;
  running.set(key, ac);
  const c = p.context || {};
  // The file of the current session may be newer than the last queued
  // session.update (created by this run's first request).
  if (!c.depth && c.sessionId === session.id && c.sessionFile && !session.file) session = Object.assign({}, session, { file: c.sessionFile });
  const ctx = {
    toolCallId: p.toolCallId, cwd: c.cwd, sessionId: c.sessionId, sessionFile: c.sessionFile || undefined,
    signal: ac.signal, depth: c.depth || 0, model: c.model, outputDir: c.outputDir || undefined,
    thinkingLevel: c.thinkingLevel || undefined, activeTools: c.activeTools ? new Set(c.activeTools) : undefined,
    maxResultChars: c.maxResultChars || undefined,
    readFiles: new Set(c.readFiles || []),
    markRead(absolutePath) {
      if (typeof absolutePath !== "string" || !path.isAbsolute(absolutePath)) return;
      ctx.readFiles.add(absolutePath);
      if (c.nested) notify("session.markRead", Object.assign({ path: absolutePath }, ref));
    },
    onUpdate(partial) {
      notify("tool.update", Object.assign({ partial }, ref));
    },
    log(level, message) {
      notify("log", { level: String(level), message: String(message) });
    },
  };
  if (c.nested) {
    // ctx.tools / ctx.session / ctx.spawnSubagent reach the session through
    // ama-rpc, bound to this call (it refuses them once the call ended).
    const custom = new Map(Object.entries(c.custom || {}));
    const nested = (method, params, signal) => {
      const callId = "n" + nextNested++;
      const abort = () => notify("tool.cancel", { callId });
      if (signal) {
        if (signal.aborted) return Promise.reject(new AmaError("aborted", "aborted"));
        signal.addEventListener("abort", abort, { once: true });
      }
      return request(method, Object.assign({ callId }, ref, params)).then(
        (r) => {
          if (signal) signal.removeEventListener("abort", abort);
          return r;
        },
        (e) => {
          if (signal) signal.removeEventListener("abort", abort);
          throw new AmaError(e.data && e.data.code ? e.data.code : "internal", e.message);
        },
      );
    };
    ctx.tools = Object.freeze({
      executeTool(name, input, options) {
        if (typeof name !== "string") return Promise.reject(invalid("executeTool: name must be a string"));
        return nested("tool.executeTool", { name, input: input === undefined ? {} : input }, options && options.signal);
      },
    });
    ctx.session = Object.freeze({
      appendCustom(customType, data) {
        if (typeof customType !== "string" || customType === "") throw invalid("appendCustom: customType must be a non-empty string");
        const copy = data === undefined ? null : JSON.parse(JSON.stringify(data));
        custom.set(customType, copy);
        notify("session.appendCustom", Object.assign({ customType, data: copy }, ref));
      },
      lastCustom(customType) {
        const v = custom.get(customType);
        return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
      },
    });
    if (c.checkpoint) {
      // ctx.checkpoint: beforeWrite resolves once the turn's checkpoint holds
      // the file's content; like ama's hooks it never rejects (a failure is
      // logged). afterWrite has nothing to send: ama-rpc reads what the tool
      // left from disk when its batch ends.
      ctx.checkpoint = Object.freeze({
        beforeWrite(absolutePath) {
          if (typeof absolutePath !== "string" || !path.isAbsolute(absolutePath)) {
            notify("log", { level: "warn", message: "checkpoint.beforeWrite: not an absolute path: " + String(absolutePath) });
            return Promise.resolve();
          }
          return request("checkpoint.beforeWrite", { toolCallId: p.toolCallId, callRef: p.callRef, path: absolutePath }).then(
            () => undefined,
            (e) => notify("log", { level: "warn", message: "checkpoint.beforeWrite " + absolutePath + ": " + errText(e) }),
          );
        },
        afterWrite() {},
      });
    }
    if (Array.isArray(c.tasks)) {
      // ctx.tasks: the registry's snapshot at execute, refreshed before each
      // nested request of this call resolves; copies, so a caller cannot
      // change what the next list() returns.
      let snap = c.tasks;
      taskViews.set(key, (tasks) => (snap = tasks));
      const copy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
      ctx.tasks = Object.freeze({
        list: () => copy(snap),
        get: (taskId) => copy(snap.find((t) => t.taskId === taskId)),
      });
    }
    if (c.subagents) {
      ctx.spawnSubagent = (req) => {
        if (req === null || typeof req !== "object" || typeof req.prompt !== "string") return Promise.reject(invalid("spawnSubagent: request.prompt must be a string"));
        const pick = {};
        for (const k of ["prompt", "description", "tools", "model", "thinkingLevel", "maxTurns", "agent", "background", "taskId", "isolation", "budgetUsd", "context"])
          if (req[k] !== undefined) pick[k] = req[k];
        return nested("tool.spawnSubagent", { request: pick }, req.signal);
      };
    }
  }
  try {
    const r = await tool.execute(p.input, ctx);
    if (r === null || typeof r !== "object") return { content: [{ type: "text", text: String(r ?? "") }] };
    let content = r.content;
    if (typeof content === "string") content = [{ type: "text", text: content }];
    return { content: content || [], isError: !!r.isError, details: r.details, terminate: r.terminate === true };
  } catch (e) {
    return { content: [{ type: "text", text: errText(e) }], isError: true };
  } finally {
    running.delete(key);
    taskViews.delete(key);
  }
}

let eventChain = Promise.resolve();
function deliver(name, payload) {
  const list = (handlers.get(name) || []).slice();
  const run = async () => {
    for (const { handler } of list) {
      try {
        await handler(payload);
      } catch (e) {
        notify("log", { level: "error", message: "host event handler " + name + " failed: " + errText(e) });
      }
    }
  };
  eventChain = eventChain.then(run);
  return eventChain;
}

async function ask(p) {
  if (!broker) return { decision: null };
  const ac = new AbortController();
  running.set("ask:" + p.request.requestId, ac);
  try {
    const d = await broker.ask(p.request, ac.signal);
    return { decision: d === "allow" || d === "deny" || d === "allow_session" ? d : null };
  } catch (e) {
    return { decision: "deny", error: errText(e) };
  } finally {
    running.delete("ask:" + p.request.requestId);
  }
}

let disposed = false;
async function dispose() {
  if (disposed || !adapter) return {};
  disposed = true;
  if (typeof adapter.dispose === "function") {
    try {
      await adapter.dispose();
    } catch (e) {
      notify("log", { level: "warn", message: "host adapter dispose failed: " + errText(e) });
    }
  }
  return {};
}

// runner.start runs one task on a provided runner (runners.provide):
// start(request) with signal and onEvent, then the handle's wait(). Events
// reported before start() resolves are held back until "started".
const runs = new Map();
async function runnerStart(p) {
  const runner = runners.get(p.runnerId);
  if (!runner) throw new Error("no host runner " + p.runnerId);
  const ac = new AbortController();
  const run = { ac, handle: null };
  runs.set(p.callId, run);
  let started = false;
  const held = [];
  const report = (event) => notify("runner.event", { callId: p.callId, event });
  const req = Object.assign({}, p.request, {
    signal: ac.signal,
    onEvent(event) {
      if (!event || typeof event !== "object") return;
      if (started) report(event);
      else held.push(event);
    },
  });
  try {
    run.handle = await runner.start(req);
    started = true;
    report({ type: "started", id: run.handle && run.handle.id ? String(run.handle.id) : undefined });
    held.splice(0).forEach(report);
    if (ac.signal.aborted && run.handle && typeof run.handle.stop === "function") await run.handle.stop();
    const r = (await run.handle.wait()) || {};
    return { text: String(r.text ?? ""), usage: r.usage, stopReason: r.stopReason, isError: !!r.isError, status: r.status, kept: keep(p.callId, run.handle) };
  } finally {
    runs.delete(p.callId);
  }
}

// Finished runs' handles, kept for runner.send (a continued task); at most
// 16, the oldest released first.
const kept = new Map();
function keep(callId, handle) {
  if (!handle || typeof handle.send !== "function") return false;
  kept.delete(callId);
  kept.set(callId, handle);
  while (kept.size > 16) kept.delete(kept.keys().next().value);
  return true;
}

// runner.send continues a finished run on its kept handle: send(text),
// then the handle's next wait(). Events keep the run's callId.
async function runnerSend(p) {
  const handle = kept.get(p.callId);
  if (!handle) {
    const e = new Error("runner handle released");
    e.rpcCode = -32001;
    throw e;
  }
  kept.delete(p.callId);
  runs.set(p.callId, { ac: new AbortController(), handle });
  try {
    await handle.send(String(p.text ?? ""));
    const r = (await handle.wait()) || {};
    return { text: String(r.text ?? ""), usage: r.usage, stopReason: r.stopReason, isError: !!r.isError, status: r.status, kept: keep(p.callId, handle) };
  } finally {
    runs.delete(p.callId);
  }
}

const methods = {
  initialize,
  execute,
  ask,
  "runner.start": runnerStart,
  "runner.send": runnerSend,
  async "cache.decide"(p) {
    const h = warmHandlers[warmHandlers.length - 1];
    if (!h) return { answer: null };
    try {
      const a = await h(p.decision);
      return { answer: a === "warm" || a === "stop" ? a : null };
    } catch (e) {
      return { answer: null };
    }
  },
  event: (p) => deliver(p.name, p.payload).then(() => ({})),
  dispose,
};
const notifications = {
  "runner.stop"(p) {
    const run = runs.get(p.callId);
    if (!run) return;
    run.ac.abort();
    if (run.handle && typeof run.handle.stop === "function") Promise.resolve().then(() => run.handle.stop()).catch(() => {});
  },
  cancel(p) {
    const ac = running.get(p.callRef || p.toolCallId);
    if (ac) ac.abort();
  },
  "tasks.update"(p) {
    const set = taskViews.get(p.callRef || p.toolCallId);
    if (set && Array.isArray(p.tasks)) set(p.tasks);
  },
  "session.update"(p) {
    // A session keeps its file once it exists (an update queued before the
    // file was created may arrive late); another session starts afresh.
    session = Object.assign({}, p.id === session.id ? session : {}, p);
  },
  ready() {
    created = true;
  },
};

async function handle(msg) {
  if (msg.method === undefined) {
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) {
      const e = new Error(msg.error.message);
      e.data = msg.error.data;
      w.reject(e);
    } else w.resolve(msg.result);
    return;
  }
  if (msg.id === undefined) {
    const f = notifications[msg.method];
    if (f) f(msg.params || {});
    return;
  }
  const f = methods[msg.method];
  if (!f) {
    send({ id: msg.id, error: { code: -32601, message: "method not found: " + msg.method } });
    return;
  }
  try {
    const result = await f(msg.params || {});
    send({ id: msg.id, result: result === undefined ? null : result });
  } catch (e) {
    send({ id: msg.id, error: { code: e.rpcCode || -32603, message: errText(e) } });
  }
}

let buf = "";
input.setEncoding("utf8");
input.on("data", (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (line.trim() === "") continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    handle(msg);
  }
});
input.on("end", () => {
  // ama-rpc closed the pipe: it is gone; leave without running anything else.
  process.exit(0);
});
