// The identity provider of folio's OAuth tests: oidc-provider (a certified
// OpenID Connect implementation) on 127.0.0.1, issuing JWT access tokens
// for one protected resource through the client-credentials grant, and,
// for the web app's sign-in, through the authorization code flow with a
// login page of its own.
//
// usage: node provider.mjs PORT KEYS_JSON RESOURCE
//   KEYS_JSON: a file holding {"keys": [private JWKs]}; the first signs.
//   RESOURCE:  the resource indicator tokens are issued for by default
//              (any other one asked for is granted too, so tests can hold
//              a token for the wrong audience).
// Environment: ACCESS_TOKEN_TTL, the access tokens' lifetime in seconds
// (default 300); REFRESH_TOKENS=0, no refresh tokens for the web app;
// LOG_GRANTS=1, a JSON line on stdout for each token granted
// ({"grant": grant type}) and each revocation request ({"revoked": status}).
//
// Clients (secret: the client id followed by "-secret"), each with the
// scopes it may ask for and the libraries its tokens name:
//   lead    search ingest admin   * (every library)
//   writer  search ingest         wiki
//   reader  search                wiki
// The web app's client, folio-web (secret folio-web-secret, redirect URI
// RESOURCE's origin + /app/callback), signs in people (password: the name
// followed by "-password"), granted what their account allows of what is
// asked for:
//   ada     search ingest admin   * (every library)
//   rene    search                wiki
// Prints "ready" on stdout once it listens.

import fs from 'node:fs';
import http from 'node:http';
import Provider, { errors } from 'oidc-provider';

const [port, keysFile, resource] = process.argv.slice(2);
if (!port || !keysFile || !resource) {
  console.error('usage: node provider.mjs PORT KEYS_JSON RESOURCE');
  process.exit(2);
}
const jwks = JSON.parse(fs.readFileSync(keysFile, 'utf8'));
const SCOPES = 'search ingest admin';
const clients = {
  lead: { scope: 'search ingest admin', libraries: ['*'] },
  writer: { scope: 'search ingest', libraries: ['wiki'] },
  reader: { scope: 'search', libraries: ['wiki'] },
};
const accounts = {
  ada: { scope: 'search ingest admin', libraries: ['*'] },
  rene: { scope: 'search', libraries: ['wiki'] },
};
const accessTokenTTL = Number(process.env.ACCESS_TOKEN_TTL ?? 300);
const refreshTokens = process.env.REFRESH_TOKENS !== '0';
const webRedirect = `${new URL(resource).origin}/app/callback`;

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    ...Object.entries(clients).map(([id, c]) => ({
      client_id: id,
      client_secret: `${id}-secret`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: c.scope,
    })),
    {
      client_id: 'folio-web',
      client_secret: 'folio-web-secret',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [webRedirect],
      response_types: ['code'],
      scope: `openid ${SCOPES}`,
    },
  ],
  findAccount: (ctx, id) => (accounts[id] ? { accountId: id, claims: () => ({ sub: id }) } : undefined),
  issueRefreshToken: (ctx, client) => refreshTokens && client.grantTypeAllowed('refresh_token'),
  pkce: { required: () => true },
  jwks,
  scopes: SCOPES.split(' '),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (!/^https?:\/\//.test(indicator)) throw new errors.InvalidTarget();
        return {
          scope: SCOPES,
          audience: indicator,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: jwks.keys[0].alg } },
        };
      },
    },
  },
  extraTokenClaims: (ctx, token) => {
    const libraries = token.accountId ? accounts[token.accountId]?.libraries : clients[token.clientId]?.libraries;
    return libraries ? { libraries } : undefined;
  },
});

// The login page: a person's name and password; signed in, they are
// granted what their account allows of the scopes asked for.
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function page(res, uid, message = '') {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in at the test provider</title><link rel="icon" href="data:,"></head>
<body><main><h1>Sign in</h1>${message ? `<p role="alert">${escape(message)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}">
<label for="login">Name</label> <input id="login" name="login" autocomplete="username" required>
<label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form></main></body></html>`);
}

async function body(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return new URLSearchParams(text);
}

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { params, prompt } = details;
  if (prompt.name === 'consent') {
    // Consent is given at once, for what the account allows.
    const accountId = details.session.accountId;
    const allowed = new Set(accounts[accountId].scope.split(' '));
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: params.client_id });
    const missing = prompt.details ?? {};
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.filter((s) => allowed.has(s)).join(' '));
      grant.rejectResourceScope(indicator, scopes.filter((s) => !allowed.has(s)).join(' '));
    }
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  if (req.method === 'GET') return page(res, details.uid);
  const form = await body(req);
  const login = form.get('login') ?? '';
  if (!accounts[login] || form.get('password') !== `${login}-password`) return page(res, details.uid, 'Wrong name or password.');
  return provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
}

if (process.env.LOG_GRANTS === '1') {
  provider.on('grant.success', (ctx) => console.log(JSON.stringify({ grant: ctx.oidc.params.grant_type })));
}
const handle = provider.callback();
http.createServer((req, res) => {
  if (process.env.LOG_GRANTS === '1' && req.url === '/token/revocation') {
    res.on('finish', () => console.log(JSON.stringify({ revoked: res.statusCode })));
  }
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(`interaction failed: ${e.message}`);
    });
  } else {
    handle(req, res);
  }
}).listen(Number(port), '127.0.0.1', () => {
  process.stdout.write('ready\n');
});
