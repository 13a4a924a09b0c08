// MCP Apps: the pinned official MCP TypeScript client against examples/apps.py over
// HTTP at SNODO_HTTP_URL, pinned to 2026-07-28 and with its default (legacy) negotiation.
// It sees the extension in the server's capabilities, the tool's view in _meta.ui, and
// reads the view as text/html;profile=mcp-app with its _meta.ui; the app-only tool is
// kept from it (it declares no views). One PASS/FAIL line per check, then
// `official client (apps): N passed, M failed`.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const UI = 'io.modelcontextprotocol/ui';
let passed = 0;
let failed = 0;
function check(label, ok, detail = '') {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${label}${detail ? ` -- ${detail}` : ''}`);
}

async function run(label, negotiation) {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.SNODO_HTTP_URL));
  const client = new Client({ name: 'snodo-apps-check', version: '1.0.0' }, { capabilities: {}, ...negotiation });
  await client.connect(transport, { timeout: 20_000 });
  try {
    const caps = client.getServerCapabilities() || {};
    check(`[${label}] the extension is in the server's capabilities`, Boolean(caps.extensions?.[UI]), JSON.stringify(caps.extensions));
    const { tools } = await client.listTools();
    const names = tools.map(t => t.name);
    const week = tools.find(t => t.name === 'week');
    check(`[${label}] the tool's view in _meta.ui`, week?._meta?.ui?.resourceUri === 'ui://week/chart', JSON.stringify(week?._meta));
    check(`[${label}] the app-only tool is not listed`, JSON.stringify(names) === '["week"]', JSON.stringify(names));
    const read = await client.readResource({ uri: 'ui://week/chart' });
    const page = read.contents[0];
    check(`[${label}] the view's MIME type`, page.mimeType === 'text/html;profile=mcp-app', page.mimeType);
    check(`[${label}] the view's _meta.ui`, JSON.stringify(page._meta) === '{"ui":{"prefersBorder":true}}', JSON.stringify(page._meta));
    const called = await client.callTool({ name: 'week', arguments: { city: 'Oslo' } });
    check(`[${label}] the tool's figures as text for a client without views`, JSON.parse(called.content?.[0]?.text ?? '{}').city === 'Oslo', JSON.stringify(called.content));
  } finally {
    await client.close().catch(() => {});
  }
}

try {
  await run('http, 2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await run('http, default negotiation', {});
} catch (e) {
  check('run', false, String(e?.stack || e));
}
console.log(`official client (apps): ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
