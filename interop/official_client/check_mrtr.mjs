// MRTR interop check: the pinned official MCP TypeScript client
// (@modelcontextprotocol/client 2.4.0, see package.json) against examples/preferences.py.
//
// Five workflows, each over stdio and over Streamable HTTP:
//   1. tool flow      tools/call preferences        (theme+language, then confirm)
//   2. resource flow  resources/read prefs://summary
//   3. prompt flow    prompts/get preferences_prompt
//   4. partial answers: theme only, then language, then confirm; the server must re-ask
//      only what is missing. Driven in the client's manual mode (language key left out
//      of inputResponses), for all three features: the auto driver always answers every
//      key of a round, so it cannot give a partial answer. With the auto driver we check
//      instead that an accept lacking the required field is refused (-32602).
//   5. decline and cancel, at the first question and at the confirmation
// and, on every flow: each retry has a fresh JSON-RPC id, the requestState changes each
// round and is echoed byte-exactly, the retry keeps the original params, and a retry
// whose params changed but which carries the old state is refused with -32602.
// URL mode: the example's privacy_notice tool asks the user to open a page; accepting
// is consent to open it, not proof of a visit, and the tool's answer says exactly that.
// Declarative asks: the example's greeting tool has three parameters the client answers
// (a form, a sample, the roots); all three come in one round (pinned) or as three
// requests of the server's within the one call (default negotiation), and a tampered
// state with the three answers is refused.
//
// Client machinery used (2026-07-28 era, connect with versionNegotiation pinned):
//   * auto mode (the default `inputRequired: { autoFulfill: true }`): callTool /
//     readResource / getPrompt fulfil `input_required` results through the handler
//     registered with setRequestHandler('elicitation/create', ...) and retry on their own;
//   * manual mode: client.request({method, params}, {allowInputRequired: true}) hands the
//     input_required result back, and we build the retry (inputResponses + requestState)
//     ourselves. The raw rejection probes go through the same call.
// A tap on the transport (send + onmessage) records the wire traffic the checks inspect.
//
// Configuration (environment):
//   SNODO_PYTHON     Python with snodo installed   (default: <repo>/.venv/bin/python, else python3)
//   SNODO_TARGET     server to run                  (default: <repo>/examples/preferences.py:server)
//   SNODO_HTTP_URL   MCP endpoint of an already running HTTP server for the same target;
//                    unset: this script starts one on a free loopback port and stops it.
//   SNODO_TRANSPORTS comma list, subset of "stdio,http" (default: both)
//
// Output: one PASS/FAIL/SKIP line per check, then `official client: N passed, M failed`.
// Exit status 1 if any check failed (or the run itself broke), else 0.
//
// Quirks of the pinned client (2.4.0):
// * An `input_required` result with an empty or absent `inputRequests` AND no string
//   `requestState` is rejected client-side as INVALID_RESULT ("carries neither
//   inputRequests nor requestState"), although schema.json allows `inputRequests: {}`.
//   Servers should omit the key when there are no requests and always send at least one
//   request or a state. (Not exercised: this server never sends that.) A state-only
//   result is fine; the auto driver then waits 250 ms before retrying.
// * Its default `versionNegotiation` is 'legacy' (an `initialize` handshake at
//   2025-11-25); it speaks MRTR only when pinned to 2026-07-28 or in mode 'auto'. Both
//   are run here: pinned (the workflows above), and default (legacyFlows: the server
//   is dual-era, and its bridge turns each round into real elicitation requests).
//   Pinned on stdio, it probes `server/discover` on a short-lived sibling server
//   process before starting the real one.
// * Elicitation answers are validated as ElicitResult shapes only, not against the
//   requestedSchema: an accept with empty content goes to the server unchanged.
// * The auto driver answers every key of a round (a handler that throws aborts the
//   whole call), so partial answers need manual mode.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const VENV_PY = path.join(ROOT, '.venv', 'bin', 'python');
const PYTHON = process.env.SNODO_PYTHON || (existsSync(VENV_PY) ? VENV_PY : 'python3');
const TARGET = process.env.SNODO_TARGET || `${path.join(ROOT, 'examples', 'preferences.py')}:server`;
const TRANSPORTS = (process.env.SNODO_TRANSPORTS || 'stdio,http').split(',').map(s => s.trim()).filter(Boolean);
const PROTOCOL = '2026-07-28';
const LEG_TIMEOUT_MS = 20_000;
const WHOLE_RUN_MS = 240_000;

const SAVED = 'Would save: theme dark, language de.';
const NOT_ANSWERED = 'Nothing changed: you chose not to answer.';
const NOT_CONFIRMED = 'Nothing changed: not confirmed.';
const GREETED = 'Hallo! [de; notes]';
const SAMPLE = { role: 'assistant', content: { type: 'text', text: 'Hallo!' }, model: 'scripted' };
const ROOTS = { roots: [{ uri: 'file:///home/ana/notes', name: 'notes' }] };
const MRTR_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

// ---------------------------------------------------------------------------- report

let passed = 0;
let failed = 0;

function check(label, ok, detail = '') {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${label}${detail ? ` -- ${detail}` : ''}`);
}

function skip(label, why) {
  console.log(`SKIP ${label} -- ${why}`);
}

const show = value => {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}...` : text;
};
const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const errorText = e => (e && e.code !== undefined ? `${e.code} ${e.message}` : String(e?.stack || e));

// ---------------------------------------------------------------------------- the user

/** The scripted user, swapped per flow; the elicitation handler asks it. */
let user = () => ({ action: 'cancel' });

/** The field a form question asks for (every question here asks exactly one). */
const fieldOf = params => Object.keys(params?.requestedSchema?.properties ?? {})[0];

/** A user who answers from a table; 'decline'/'cancel' as a value are those actions. */
function answering(table) {
  return params => {
    const field = fieldOf(params);
    const answer = table[field];
    if (answer === 'decline' || answer === 'cancel') return { action: answer };
    if (answer === undefined) return { action: 'accept', content: {} };
    return { action: 'accept', content: { [field]: answer } };
  };
}

// ---------------------------------------------------------------------------- wire tap

/** Records every JSON-RPC message the client sends and receives on a transport. */
function tap(transport) {
  const sent = [];
  const received = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(structuredClone(message));
    return send(message, options);
  };
  let inner;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get() {
      return inner && ((message, extra) => {
        received.push(structuredClone(message));
        return inner(message, extra);
      });
    },
    set(handler) {
      inner = handler;
    },
  });
  return { sent, received };
}

/**
 * The MRTR legs of one flow: the requests sent from index `from` on with one of the
 * MRTR methods, each with its response. A leg's `kind` is input_required, complete,
 * or error.
 */
function legsSince(wire, from) {
  const legs = [];
  for (const request of wire.sent.slice(from)) {
    if (!('id' in request) || !MRTR_METHODS.has(request.method)) continue;
    const response = wire.received.find(m => 'id' in m && m.id === request.id && !('method' in m));
    const result = response?.result;
    legs.push({
      id: request.id,
      params: request.params ?? {},
      response,
      kind: response === undefined ? 'none' : response.error ? 'error' : result?.resultType ?? 'absent',
      asked: result?.resultType === 'input_required' ? Object.keys(result.inputRequests ?? {}).sort() : [],
      state: result?.requestState,
    });
  }
  return legs;
}

/** The ids the client sent on this connection before index `from`. */
const idsBefore = (wire, from) => new Set(wire.sent.slice(0, from).filter(m => 'id' in m).map(m => m.id));

/** Ids distinct among themselves and never sent before on the connection. */
const freshIds = (ids, earlier) => new Set(ids).size === ids.length && ids.every(id => !earlier.has(id));

/** Request params minus the fields that legitimately change between rounds. */
const salient = params => {
  const { _meta, inputResponses, requestState, ...rest } = params ?? {};
  return rest;
};

// ---------------------------------------------------------------------------- servers

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function portOpen(port) {
  return new Promise(resolve => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const started = [];

/** Starts the target over HTTP on a free port; resolves with its /mcp URL. */
async function startHttpServer() {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const port = await freePort();
    const child = spawn(
      PYTHON,
      ['-m', 'snodo', 'run', TARGET, '--transport', 'http', '--host', '127.0.0.1', '--port', String(port)],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    child.stderr.on('data', chunk => {
      log += chunk;
    });
    started.push(child);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && child.exitCode === null) {
      if (await portOpen(port)) return `http://127.0.0.1:${port}/mcp`;
      await new Promise(r => setTimeout(r, 100));
    }
    child.kill();
    console.error(`HTTP server attempt ${attempt} on port ${port} did not start:\n${log}`);
  }
  throw new Error('could not start the HTTP server');
}

function stopServers() {
  for (const child of started) if (child.exitCode === null) child.kill();
}

// ---------------------------------------------------------------------------- client

async function connect(kind, url, negotiation = { versionNegotiation: { mode: { pin: PROTOCOL } } }) {
  let transport;
  const stderr = [];
  if (kind === 'stdio') {
    transport = new StdioClientTransport({
      command: PYTHON,
      args: ['-m', 'snodo', 'run', TARGET, '--transport', 'stdio'],
      cwd: ROOT,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', chunk => stderr.push(String(chunk)));
  } else {
    transport = new StreamableHTTPClientTransport(new URL(url));
  }
  const wire = tap(transport);
  const client = new Client(
    { name: 'snodo-official-client-check', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      ...negotiation,
    },
  );
  // The official client's MRTR hook: embedded elicitation/create requests of an
  // input_required result are dispatched to this handler (auto mode).
  client.setRequestHandler('elicitation/create', async request => user(request.params));
  client.setRequestHandler('sampling/createMessage', async () => SAMPLE);
  client.setRequestHandler('roots/list', async () => ROOTS);
  await client.connect(transport, { timeout: LEG_TIMEOUT_MS });
  return { client, wire, stderr };
}

/** A raw request through the client's request API, input_required handed back. */
function raw(client, method, params) {
  return client.request({ method, params }, { allowInputRequired: true, timeout: LEG_TIMEOUT_MS });
}

// ---------------------------------------------------------------------------- features

const FEATURES = {
  tool: {
    method: 'tools/call',
    params: { name: 'preferences', arguments: {} },
    auto: client => client.callTool({ name: 'preferences', arguments: {} }, { timeout: LEG_TIMEOUT_MS }),
    text: result => result?.content?.[0]?.text,
    expect: text => text,
  },
  resource: {
    method: 'resources/read',
    params: { uri: 'prefs://summary' },
    auto: client => client.readResource({ uri: 'prefs://summary' }, { timeout: LEG_TIMEOUT_MS }),
    text: result => result?.contents?.[0]?.text,
    expect: text => text,
  },
  prompt: {
    method: 'prompts/get',
    params: { name: 'preferences_prompt', arguments: {} },
    auto: client => client.getPrompt({ name: 'preferences_prompt', arguments: {} }, { timeout: LEG_TIMEOUT_MS }),
    text: result => result?.messages?.[0]?.content?.text,
    expect: text => `User preferences: ${text}`,
  },
};

/**
 * The invariants every multi-round flow must keep, from its wire legs: fresh ids, a new
 * state each round, the latest state echoed byte-exactly, original params kept.
 */
function checkLegs(label, legs, earlier) {
  const ids = legs.map(leg => leg.id);
  check(`${label}: each retry has a fresh JSON-RPC id`, freshIds(ids, earlier) && legs.length > 1, `ids ${show(ids)}`);

  const states = legs.filter(leg => leg.kind === 'input_required').map(leg => leg.state);
  const replaced =
    states.length > 0 && states.every(s => typeof s === 'string') && states.every((s, i) => i === 0 || s !== states[i - 1]);
  check(`${label}: requestState replaced every round`, replaced, `${states.length} states`);

  let echoed = true;
  let kept = true;
  for (let i = 1; i < legs.length; i += 1) {
    if (legs[i].params.requestState !== legs[i - 1].state) echoed = false;
    if (!sameJson(salient(legs[i].params), salient(legs[0].params))) kept = false;
  }
  check(`${label}: each retry echoes the previous requestState byte-exactly`, echoed && legs.length > 1);
  check(`${label}: each retry repeats the original params`, kept && legs.length > 1, show(salient(legs[0].params)));
}

// ---------------------------------------------------------------------------- workflows

/** Workflows 1-3: the full flow of one feature through the auto-fulfilment driver. */
async function fullFlow(session, label, featureName) {
  const feature = FEATURES[featureName];
  const name = `[${label}] ${featureName} flow`;
  const from = session.wire.sent.length;
  user = answering({ theme: 'dark', language: 'de', confirm: true });
  let result;
  try {
    result = await feature.auto(session.client);
  } catch (e) {
    check(`${name}: completes`, false, errorText(e));
    return;
  }
  const text = feature.text(result);
  check(`${name}: completes with "${feature.expect(SAVED)}"`, text === feature.expect(SAVED), show(text));
  const legs = legsSince(session.wire, from);
  const rounds = legs.filter(l => l.kind === 'input_required').map(l => l.asked);
  check(
    `${name}: asks theme+language, then confirm, then completes`,
    sameJson(rounds, [['language', 'theme'], ['confirm']]) && legs.at(-1)?.kind === 'complete',
    `asked ${show(rounds)}, last leg ${legs.at(-1)?.kind}`,
  );
  checkLegs(name, legs, idsBefore(session.wire, from));
  await rejections(session, name, featureName, legs);
}

/** The token with one character of its last segment (the MAC) changed. */
function tamper(token) {
  const at = token.lastIndexOf('.') + 5;
  return `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
}

/**
 * A retry whose params changed but which carries the old state must be refused (-32602),
 * while the same changed request without a state is accepted (so the refusal is the
 * state's doing).
 */
async function rejections(session, name, featureName, legs) {
  const feature = FEATURES[featureName];
  const firstState = legs[0]?.state;
  const inputResponses = { theme: { action: 'accept', content: { theme: 'light' } } };
  if (typeof firstState !== 'string') {
    check(`${name}: old state on changed params refused`, false, 'no state from round 1');
    return;
  }
  const expectStateRefused = async (what, method, params) => {
    try {
      const value = await raw(session.client, method, params);
      check(`${name}: ${what} refused with -32602`, false, `answered ${show(value)}`);
    } catch (e) {
      check(`${name}: ${what} refused with -32602`, e?.code === -32602 && /state/i.test(e.message), errorText(e));
    }
  };

  if (featureName === 'resource') {
    // The example has one fixed URI, so a changed URI is also an unknown one. Either
    // refusal is -32602: "Invalid request state" when the server verifies the state
    // before it resolves the URI (what snodo does), "Resource not found" otherwise; the
    // detail shows which. The replay below isolates the state's binding.
    const what = `${name}: retry with changed uri + old state refused with -32602`;
    try {
      const value = await raw(session.client, feature.method, { uri: 'prefs://elsewhere', inputResponses, requestState: firstState });
      check(what, false, `answered ${show(value)}`);
    } catch (e) {
      check(what, e?.code === -32602, errorText(e));
    }
    // Same URI, but the state replayed on another request: minted for resources/read,
    // presented on tools/call, which is bound into the state.
    await expectStateRefused('state replayed on another method (tools/call)', 'tools/call', {
      name: 'preferences',
      arguments: {},
      inputResponses,
      requestState: firstState,
    });
    return;
  }
  // The server verifies an echoed state before anything else looks at the request, so
  // changed arguments with the old state are refused for the state (-32602, "Invalid
  // request state") even though these arguments would also fail the tool's or prompt's
  // own checks. The control sends the same change without state: whatever it gets, it
  // is not a state refusal, which shows the refusal below comes from the binding.
  const changed = { ...feature.params, arguments: { changed: 'yes' } };
  const controlWhat = `${name}: changed arguments without state are not refused for state (control)`;
  try {
    const control = await raw(session.client, feature.method, changed);
    check(controlWhat, control !== undefined, show(control?.resultType));
  } catch (e) {
    check(controlWhat, !/state/i.test(e?.message ?? ''), errorText(e));
  }
  await expectStateRefused('retry with changed arguments + old state', feature.method, {
    ...changed,
    inputResponses,
    requestState: firstState,
  });
  await expectStateRefused('retry with a tampered state', feature.method, {
    ...feature.params,
    inputResponses,
    requestState: tamper(firstState),
  });
}

/**
 * Workflow 4, auto driver: the driver answers every key of a round, so it cannot leave
 * the language out. An accept whose content lacks the required field is not "missing"
 * but an invalid answer: the official client forwards it unchecked against the
 * requestedSchema, and the server must refuse it (-32602) rather than guess.
 */
async function incompleteAccept(session, label) {
  const name = `[${label}] partial answers (auto driver)`;
  const from = session.wire.sent.length;
  const table = answering({ theme: 'system', language: 'en', confirm: true });
  user = params => (fieldOf(params) === 'language' ? { action: 'accept', content: {} } : table(params));
  const what = `${name}: an accept without the required language is refused with -32602`;
  try {
    const result = await FEATURES.tool.auto(session.client);
    check(what, false, `completed ${show(result)}`);
  } catch (e) {
    const legs = legsSince(session.wire, from);
    check(what, e?.code === -32602 && /language/.test(e.message) && legs.length === 2, `${errorText(e)}, ${legs.length} legs`);
  }
}

/**
 * Workflow 4, manual mode: answer only the theme (the language key left out of
 * inputResponses), then the language, then confirm; the server keeps the theme in its
 * state and re-asks only what is missing. All three features.
 */
async function partialManual(session, label, featureName) {
  const feature = FEATURES[featureName];
  const name = `[${label}] partial answers (manual, ${featureName})`;
  const from = session.wire.sent.length;
  const answers = [{ theme: 'system' }, { language: 'en' }, { confirm: true }];
  const rounds = [];
  let value;
  try {
    value = await raw(session.client, feature.method, feature.params);
    for (const given of answers) {
      if (value?.resultType !== 'input_required') break;
      rounds.push(Object.keys(value.inputRequests ?? {}).sort());
      const inputResponses = {};
      for (const [key, request] of Object.entries(value.inputRequests ?? {})) {
        const field = fieldOf(request.params);
        if (field in given) inputResponses[key] = { action: 'accept', content: { [field]: given[field] } };
      }
      value = await raw(session.client, feature.method, {
        ...feature.params,
        inputResponses,
        ...(value.requestState !== undefined && { requestState: value.requestState }),
      });
    }
  } catch (e) {
    check(`${name}: completes`, false, errorText(e));
    return;
  }
  const complete = value?.resultType === undefined || value?.resultType === 'complete';
  const text = complete ? feature.text(value) : undefined;
  const expected = feature.expect('Would save: theme system, language en.');
  check(`${name}: completes with "${expected}"`, text === expected, show(text ?? value));
  check(
    `${name}: re-asks only what is missing (theme+language, language, confirm)`,
    sameJson(rounds, [['language', 'theme'], ['language'], ['confirm']]),
    `asked ${show(rounds)}`,
  );
  checkLegs(name, legsSince(session.wire, from), idsBefore(session.wire, from));
}

/** Workflow 5: decline and cancel, each ends the flow with "Nothing changed". */
/** URL-mode elicitation: the page to open is offered, accept means consent only. */
async function urlConsent(session, label) {
  const name = `[${label}] url consent`;
  for (const [action, expected] of [
    ['accept', 'You agreed to open the privacy notice; whether you read it is not known.'],
    ['decline', 'You chose not to open the privacy notice.'],
  ]) {
    const offered = [];
    user = params => {
      offered.push(params);
      return { action };
    };
    const from = session.wire.sent.length;
    let text;
    try {
      const result = await session.client.callTool({ name: 'privacy_notice', arguments: {} }, { timeout: LEG_TIMEOUT_MS });
      text = result?.content?.[0]?.text;
    } catch (e) {
      check(`${name}: ${action} completes`, false, errorText(e));
      continue;
    }
    const legs = legsSince(session.wire, from);
    const answer = legs[1]?.params?.inputResponses?.notice;
    check(
      `${name}: the URL is offered in url mode, ${action} answers without content, and the result says "${expected}"`,
      offered.length === 1 && offered[0].mode === 'url' && offered[0].url === 'https://example.com/privacy'
        && answer?.action === action && !('content' in (answer ?? {})) && text === expected && legs.length === 2,
      `${show(text)}, ${legs.length} legs, answer ${show(answer)}`,
    );
  }
}

async function declineCancel(session, label) {
  const cases = [
    ['tool', { theme: 'decline', language: 'de' }, NOT_ANSWERED, 'decline at the first question'],
    ['resource', { theme: 'dark', language: 'cancel' }, NOT_ANSWERED, 'cancel at the first question'],
    ['prompt', { theme: 'dark', language: 'de', confirm: 'decline' }, NOT_CONFIRMED, 'decline the confirmation'],
    ['tool', { theme: 'dark', language: 'de', confirm: 'cancel' }, NOT_CONFIRMED, 'cancel the confirmation'],
  ];
  for (const [featureName, table, expected, what] of cases) {
    const feature = FEATURES[featureName];
    const name = `[${label}] ${featureName}: ${what}`;
    const from = session.wire.sent.length;
    user = answering(table);
    let text;
    try {
      text = feature.text(await feature.auto(session.client));
    } catch (e) {
      check(`${name} ends with "Nothing changed"`, false, errorText(e));
      continue;
    }
    const legs = legsSince(session.wire, from);
    const confirmRound = table.confirm !== undefined;
    const ids = legs.map(l => l.id);
    const fresh = freshIds(ids, idsBefore(session.wire, from));
    check(
      `${name} ends with "${feature.expect(expected)}" and asks nothing more`,
      text === feature.expect(expected) && legs.length === (confirmRound ? 3 : 2) && legs.at(-1)?.kind === 'complete' && fresh,
      `${show(text)}, ${legs.length} legs, ids ${show(ids)}`,
    );
  }
}

// ---------------------------------------------------------------------------- legacy era

/**
 * The same flows with the client's default negotiation: an `initialize` handshake at
 * 2025-11-25, no MRTR on the wire. The server's bridge must send each question as a
 * real elicitation/create request in the session, and answer each call once, complete.
 */
/** Declarative asks, modern era: three questions of three kinds in one round. */
async function greetingFlow(session, label) {
  const name = `[${label}] declarative asks`;
  const from = session.wire.sent.length;
  user = answering({ language: 'de' });
  let text;
  try {
    const result = await session.client.callTool({ name: 'greeting', arguments: {} }, { timeout: LEG_TIMEOUT_MS });
    text = result?.content?.[0]?.text;
  } catch (e) {
    text = errorText(e);
  }
  check(`${name}: completes with "${GREETED}"`, text === GREETED, show(text));
  const legs = legsSince(session.wire, from);
  check(
    `${name}: form, sampling and roots asked in one round, then complete`,
    legs.length === 2 && sameJson(legs[0].asked, ['folders', 'language', 'text']) && legs[1].kind === 'complete',
    show(legs.map(l => [l.kind, l.asked])),
  );
  const retry = legs[1]?.params ?? {};
  const refused = await raw(session.client, 'tools/call', { ...retry, requestState: tamper(retry.requestState ?? '') })
    .then(r => `answered ${show(r)}`, e => e?.code);
  check(`${name}: a tampered state with the three answers is refused (-32602)`, refused === -32602, show(refused));
}

async function legacyFlows(session, label) {
  const asked = from => session.wire.received.slice(from).filter(m => m.method === 'elicitation/create');
  const calls = from => session.wire.sent.slice(from).filter(m => 'id' in m && MRTR_METHODS.has(m.method));
  for (const featureName of ['tool', 'resource', 'prompt']) {
    const feature = FEATURES[featureName];
    const name = `[${label}] legacy ${featureName} flow`;
    const from = session.wire.received.length;
    const sentFrom = session.wire.sent.length;
    user = answering({ theme: 'dark', language: 'de', confirm: true });
    let result;
    try {
      result = await feature.auto(session.client);
    } catch (e) {
      check(`${name}: completes`, false, errorText(e));
      continue;
    }
    const text = feature.text(result);
    check(`${name}: completes with "${feature.expect(SAVED)}"`, text === feature.expect(SAVED), show(text));
    const questions = asked(from).map(m => fieldOf(m.params)).sort();
    check(
      `${name}: theme, language and confirm arrive as server requests; one call, no retry`,
      sameJson(questions, ['confirm', 'language', 'theme']) && calls(sentFrom).length === 1,
      `asked ${show(questions)}, ${calls(sentFrom).length} call(s)`,
    );
    const response = session.wire.received.slice(from).find(m => m.id === calls(sentFrom)[0]?.id && !('method' in m));
    check(`${name}: the result has the legacy shape (no resultType)`, response?.result && !('resultType' in response.result));
  }
  {
    const name = `[${label}] legacy declarative asks`;
    const from = session.wire.received.length;
    const sentFrom = session.wire.sent.length;
    user = answering({ language: 'de' });
    const text = FEATURES.tool.text(
      await session.client.callTool({ name: 'greeting', arguments: {} }, { timeout: LEG_TIMEOUT_MS }).catch(e => ({ error: e })),
    );
    const methods = session.wire.received.slice(from).filter(m => 'method' in m && 'id' in m).map(m => m.method).sort();
    check(
      `${name}: form, sampling and roots arrive as server requests in one call; completes`,
      text === GREETED
        && sameJson(methods, ['elicitation/create', 'roots/list', 'sampling/createMessage'])
        && calls(sentFrom).length === 1,
      `${show(text)} ${show(methods)} ${calls(sentFrom).length} call(s)`,
    );
  }
  {
    const name = `[${label}] legacy decline`;
    user = answering({ theme: 'decline', language: 'de' });
    const text = FEATURES.tool.text(await FEATURES.tool.auto(session.client).catch(e => ({ error: e })));
    check(`${name}: ends with "${NOT_ANSWERED}"`, text === NOT_ANSWERED, show(text));
  }
  {
    const name = `[${label}] legacy url consent`;
    const from = session.wire.received.length;
    user = () => ({ action: 'accept' });
    let text;
    try {
      const answer = await session.client.callTool({ name: 'privacy_notice', arguments: {} }, { timeout: LEG_TIMEOUT_MS });
      text = answer?.content?.[0]?.text;
    } catch (e) {
      text = errorText(e);
    }
    const request = asked(from)[0]?.params ?? {};
    check(
      `${name}: url mode with an elicitationId, accept means consent`,
      request.mode === 'url' && request.url === 'https://example.com/privacy' && typeof request.elicitationId === 'string'
        && text === 'You agreed to open the privacy notice; whether you read it is not known.',
      `${show(text)} ${show(request)}`,
    );
  }
}

async function runLegacy(kind, url) {
  let session;
  try {
    session = await connect(kind, url, {});
  } catch (e) {
    check(`[${kind}] connect (default negotiation)`, false, errorText(e));
    return;
  }
  check(
    `[${kind}] connect with the default negotiation: legacy era, 2025-11-25`,
    session.client.getProtocolEra() === 'legacy' && session.client.getNegotiatedProtocolVersion() === '2025-11-25',
    `${session.client.getProtocolEra()} ${session.client.getNegotiatedProtocolVersion()}`,
  );
  try {
    await legacyFlows(session, kind);
  } catch (e) {
    check(`[${kind}] legacy workflows ran to the end`, false, errorText(e));
  } finally {
    await session.client.close().catch(() => {});
    if (failed && session.stderr.length) console.error(`[${kind}] server stderr:\n${session.stderr.join('')}`);
  }
}

// ---------------------------------------------------------------------------- main

async function runTransport(kind, url) {
  let session;
  try {
    session = await connect(kind, url);
  } catch (e) {
    check(`[${kind}] connect (pinned ${PROTOCOL})`, false, errorText(e));
    return;
  }
  check(
    `[${kind}] connect: modern era, ${PROTOCOL} negotiated via server/discover`,
    session.client.getProtocolEra() === 'modern' && session.client.getNegotiatedProtocolVersion() === PROTOCOL,
  );
  try {
    for (const feature of ['tool', 'resource', 'prompt']) await fullFlow(session, kind, feature);
    await incompleteAccept(session, kind);
    for (const feature of ['tool', 'resource', 'prompt']) await partialManual(session, kind, feature);
    await declineCancel(session, kind);
    await urlConsent(session, kind);
    await greetingFlow(session, kind);
  } catch (e) {
    check(`[${kind}] workflows ran to the end`, false, errorText(e));
  } finally {
    await session.client.close().catch(() => {});
    if (failed && session.stderr.length) console.error(`[${kind}] server stderr:\n${session.stderr.join('')}`);
  }
}

async function main() {
  const guard = setTimeout(() => {
    console.log(`FAIL run finished within ${WHOLE_RUN_MS / 1000} s`);
    console.log(`official client: ${passed} passed, ${failed + 1} failed`);
    stopServers();
    process.exit(1);
  }, WHOLE_RUN_MS);
  try {
    for (const kind of TRANSPORTS) {
      if (kind === 'stdio') {
        await runTransport('stdio');
        await runLegacy('stdio');
      } else if (kind === 'http') {
        let url = process.env.SNODO_HTTP_URL;
        if (!url) {
          try {
            url = await startHttpServer();
          } catch (e) {
            check('[http] server started', false, errorText(e));
            continue;
          }
        }
        await runTransport('http', url);
        await runLegacy('http', url);
      } else check(`transport "${kind}" known`, false, 'use stdio and/or http');
    }
  } finally {
    clearTimeout(guard);
    stopServers();
  }
  console.log(`official client: ${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopServers();
    process.exit(130);
  });
}

main().then(
  code => process.exit(code),
  e => {
    console.log(`FAIL run: ${errorText(e)}`);
    console.log(`official client: ${passed} passed, ${failed + 1} failed`);
    stopServers();
    process.exit(1);
  },
);
