// A server that keeps no legacy sessions (tests/legacy/stateless_server.py, legacy="stateless"),
// driven by the pinned official MCP TypeScript client over HTTP at SNODO_HTTP_URL: with its
// default (legacy) negotiation it initializes, gets no session id, calls a tool and sees a
// question the server cannot ask refused with an error naming the mode; pinned to 2026-07-28
// the same question is an MRTR round it answers. One PASS/FAIL line per check, then
// `official client (stateless): N passed, M failed`.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const URL_ = process.env.SNODO_HTTP_URL;
let passed = 0;
let failed = 0;
function check(label, ok, detail = '') {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${label}${detail ? ` -- ${detail}` : ''}`);
}

async function run(label, negotiation) {
  const transport = new StreamableHTTPClientTransport(new URL(URL_));
  const client = new Client(
    { name: 'snodo-stateless-check', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, ...negotiation },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { city: 'Oslo' } }));
  await client.connect(transport, { timeout: 20_000 });
  try {
    const legacy = !negotiation.versionNegotiation;
    if (legacy) check(`[${label}] no session id`, transport.sessionId === undefined, String(transport.sessionId));
    const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    check(`[${label}] echo answers`, echo.content?.[0]?.text === 'hi', JSON.stringify(echo.content));
    const weather = await client.callTool({ name: 'weather', arguments: {} });
    const text = weather.content?.[0]?.text || '';
    if (legacy) {
      check(`[${label}] a question is a tool error naming the mode`, weather.isError === true && text.includes('stateless mode'), text);
    } else {
      check(`[${label}] a question is an MRTR round, answered`, text === 'sunny in Oslo', text);
    }
  } finally {
    await client.close().catch(() => {});
  }
}

try {
  await run('http, default negotiation', {});
  await run('http, 2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' } } });
} catch (e) {
  check('run', false, String(e?.stack || e));
}
console.log(`official client (stateless): ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
