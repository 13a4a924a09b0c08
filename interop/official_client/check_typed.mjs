// Typed outputs: the pinned official MCP TypeScript client against docs/examples/typed.py
// over stdio, pinned to 2026-07-28 and with its default (legacy) negotiation. It lists
// the tools (caching each outputSchema) and calls the typed ones; the client checks each
// structuredContent against the listed schema with its own validator and throws on a
// mismatch. One PASS/FAIL line per check, then `official client (typed): N passed, M failed`.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const VENV_PY = path.join(ROOT, '.venv', 'bin', 'python');
const PYTHON = process.env.SNODO_PYTHON || (existsSync(VENV_PY) ? VENV_PY : 'python3');
const TARGET = `${path.join(ROOT, 'docs', 'examples', 'typed.py')}:server`;
const EXPECTED = {
  now: { city: 'Bergen', celsius: 21.5 },
  week: { city: 'Bergen', highs: [20, 22, 19] },
  spread: { low: 12, high: 22 },
  rain_days: { result: 3 },
  warnings: { result: ['wind'] },
};

let passed = 0;
let failed = 0;
function check(label, ok, detail = '') {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${label}${detail ? ` -- ${detail}` : ''}`);
}

async function run(label, negotiation) {
  const transport = new StdioClientTransport({
    command: PYTHON,
    args: ['-m', 'snodo', 'run', TARGET, '--transport', 'stdio'],
    cwd: ROOT,
  });
  const client = new Client({ name: 'snodo-typed-check', version: '1.0.0' }, { capabilities: {}, ...negotiation });
  await client.connect(transport, { timeout: 20_000 });
  try {
    const { tools } = await client.listTools();
    const schemas = Object.fromEntries(tools.map(t => [t.name, t.outputSchema]));
    check(
      `[${label}] typed tools list an outputSchema, the str tool none`,
      Object.keys(EXPECTED).every(name => schemas[name]?.type === 'object') && schemas.summary === undefined,
    );
    for (const [name, expected] of Object.entries(EXPECTED)) {
      let got;
      try {
        const result = await client.callTool({ name, arguments: { city: 'Bergen' } });
        got = result.structuredContent;
      } catch (e) {
        got = `threw ${e}`;
      }
      check(`[${label}] ${name}: structuredContent passes the client's validator`, JSON.stringify(got) === JSON.stringify(expected), JSON.stringify(got));
    }
  } finally {
    await client.close().catch(() => {});
  }
}

try {
  await run('stdio, 2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await run('stdio, default negotiation', {});
} catch (e) {
  check('run', false, String(e?.stack || e));
}
console.log(`official client (typed): ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
