// Sign-in through snodo's OAuth proxy with the pinned official MCP TypeScript client.
//
//   node check_oauth.mjs MCP_URL
//
// The server (tests/auth_proxy/servers.py) is an OIDCProxy in front of the loopback
// provider of tests/support/idp.py. The client registers at the proxy, and its
// redirectToAuthorization hands the URL to the headless test user (python -m
// tests.support.idp URL --stop-at REDIRECT), who approves the proxy's consent page and
// signs in at the provider; the callback URL it prints goes to finishAuth, and the
// client connects again and calls the `me` tool, which reads the user's claims.
// One PASS/FAIL line per check, then `official client (oauth): N passed, M failed`.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const VENV_PY = path.join(ROOT, '.venv', 'bin', 'python');
const PYTHON = process.env.SNODO_PYTHON || (existsSync(VENV_PY) ? VENV_PY : 'python3');
const REDIRECT = 'http://127.0.0.1:9/callback'; // never requested: the user stops at it

let passed = 0;
let failed = 0;
function check(label, ok, detail = '') {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'} ${label}${detail ? ` -- ${detail}` : ''}`);
}

class HeadlessProvider {
  constructor() {
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.callback = undefined;
    this.authorizations = 0;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'official typescript client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  redirectToAuthorization(url) {
    this.authorizations += 1;
    const out = execFileSync(PYTHON, ['-m', 'tests.support.idp', url.toString(), '--stop-at', REDIRECT], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    this.callback = out.trim().split('\n').pop();
  }
}

async function callMe(url, provider) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client(
    { name: 'snodo-oauth-check', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  try {
    await client.connect(transport, { timeout: 30_000 });
    const result = await client.callTool({ name: 'me', arguments: {} });
    return { text: result.content?.[0]?.text, transport };
  } catch (error) {
    if (error instanceof UnauthorizedError) return { unauthorized: true, transport };
    throw error;
  } finally {
    await client.close().catch(() => {});
  }
}

async function main() {
  const url = process.argv[2];
  const provider = new HeadlessProvider();
  const first = await callMe(url, provider);
  check('the first call is unauthorized and sends the user to authorize', first.unauthorized === true && provider.authorizations === 1);
  const back = provider.callback ? new URL(provider.callback) : undefined;
  check('the user came back with a code', Boolean(back?.searchParams.get('code')), provider.callback);
  check('the client registered at the proxy', Boolean(provider.client?.client_id));
  await first.transport.finishAuth(back.searchParams);
  check('the code was exchanged for a token', Boolean(provider.saved?.access_token));
  const second = await callMe(url, provider);
  check('the tool reads the claims of the user who signed in', typeof second.text === 'string', second.text);
  console.log(`me: ${second.text}`);
  check('no second authorization', provider.authorizations === 1);
}

try {
  await main();
} catch (error) {
  check('the sign-in completes', false, String(error?.stack || error));
}
console.log(`official client (oauth): ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
