// The globals of a codemode script (README "Codemode"). Evaluated once per
// script, before the script, in the script's runtime; it receives the host
// bridge as arguments and leaves nothing of it on the global object.
(function (host, names, decls, initial) {
  "use strict";
  const g = globalThis;
  const define = (k, v) => Object.defineProperty(g, k, { value: v, writable: false, enumerable: false, configurable: false });
  const mangle = (n) => n.replace(/[^A-Za-z0-9_$]/g, "_");
  const byMangled = new Map();
  for (const n of names) byMangled.set(mangle(n), n);
  const callable = names.join(", ");

  const format = (v) => {
    if (typeof v === "string") return v;
    if (v === undefined) return "undefined";
    if (v instanceof Error) return v.name + ": " + v.message;
    try {
      const j = JSON.stringify(v, null, 2);
      return j === undefined ? String(v) : j;
    } catch (e) {
      return String(v);
    }
  };
  const text = (v) => { host.out(format(v)); };
  const logLine = (...args) => { host.out(args.map(format).join(" ")); };

  const call = (real, args) => {
    if (args === undefined) args = {};
    let s;
    try { s = JSON.stringify(args); } catch (e) { s = undefined; }
    if (s === undefined) return Promise.reject(new TypeError("tools." + real + ": arguments must be JSON-serializable"));
    return host.call(real, s).then((v) => JSON.parse(v));
  };
  const reject = (msg) => () => Promise.reject(new Error(msg));
  const tools = new Proxy(Object.create(null), {
    get(t, k) {
      if (typeof k !== "string" || k === "then") return undefined;
      if (k === "codemode") return reject("codemode cannot be called from a codemode script");
      const real = byMangled.get(k);
      if (real === undefined) return reject("Unknown tool " + k + ". Callable tools: " + callable);
      return (args) => call(real, args);
    },
    has(t, k) { return typeof k === "string" && byMangled.has(k); },
    ownKeys() { return [...byMangled.keys()]; },
    getOwnPropertyDescriptor(t, k) {
      if (typeof k !== "string" || !byMangled.has(k)) return undefined;
      return { value: this.get(t, k), writable: false, enumerable: true, configurable: true };
    },
    set(t, k) { throw new TypeError("tools is read-only: cannot assign " + String(k)); },
    defineProperty(t, k) { throw new TypeError("tools is read-only: cannot define " + String(k)); },
    deleteProperty(t, k) { throw new TypeError("tools is read-only: cannot delete " + String(k)); },
    setPrototypeOf() { throw new TypeError("tools is read-only"); },
  });

  // The store: JSON texts by key, committed by the parent when the script
  // succeeds and changed it.
  const MAX_VALUE = 262144, MAX_TOTAL = 1048576;
  const entries = new Map();
  for (const k of Object.keys(initial)) entries.set(k, JSON.stringify(initial[k]));
  let changed = false;
  const store = (key, v) => {
    if (typeof key !== "string" || key === "") throw new TypeError("store(key, value): key must be a non-empty string");
    if (v === undefined) {
      changed = entries.delete(key) || changed;
      return;
    }
    let s;
    try { s = JSON.stringify(v); } catch (e) { s = undefined; }
    if (s === undefined) throw new TypeError('store("' + key + '"): value must be JSON-serializable');
    if (s.length > MAX_VALUE) throw new RangeError('store("' + key + '"): value is ' + s.length + " JSON characters, the limit is " + MAX_VALUE);
    let total = s.length;
    for (const [k, old] of entries) if (k !== key) total += old.length;
    if (total > MAX_TOTAL) throw new RangeError('store("' + key + '"): the store would hold ' + total + " JSON characters, the limit is " + MAX_TOTAL);
    entries.set(key, s);
    changed = true;
  };
  const load = (key) => {
    const s = entries.get(key);
    return s === undefined ? undefined : JSON.parse(s);
  };
  const describeTool = (name) => {
    const real = byMangled.has(name) ? byMangled.get(name) : name;
    return Object.prototype.hasOwnProperty.call(decls, real) ? decls[real] : undefined;
  };

  define("tools", tools);
  define("text", text);
  define("console", Object.freeze({ log: logLine, info: logLine, warn: logLine, error: logLine, debug: logLine }));
  define("store", store);
  define("load", load);
  define("describeTool", describeTool);
  define("ALL_TOOLS", Object.freeze(names.slice()));

  return {
    finish: async (p) => {
      const v = await p;
      if (v !== undefined) text(v);
    },
    errorParts: (e) => {
      if (e instanceof Error) return [String(e.name), String(e.message), String(e.stack || "")];
      return ["", format(e), ""];
    },
    snapshot: () => {
      if (!changed) return undefined;
      const out = {};
      for (const [k, s] of entries) out[k] = s;
      return out;
    },
  };
})
