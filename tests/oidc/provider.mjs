// The identity provider of folio's OAuth tests: oidc-provider (a certified
// OpenID Connect implementation) on 127.0.0.1, issuing JWT access tokens
// for one protected resource through the client-credentials grant.
//
// usage: node provider.mjs PORT KEYS_JSON RESOURCE
//   KEYS_JSON: a file holding {"keys": [private JWKs]}; the first signs.
//   RESOURCE:  the resource indicator tokens are issued for by default
//              (any other one asked for is granted too, so tests can hold
//              a token for the wrong audience).
//
// Clients (secret: the client id followed by "-secret"), each with the
// scopes it may ask for and the libraries its tokens name:
//   lead    search ingest admin   * (every library)
//   writer  search ingest         wiki
//   reader  search                wiki
// Prints "ready" on stdout once it listens.

import fs from 'node:fs';
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

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: Object.entries(clients).map(([id, c]) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: c.scope,
  })),
  jwks,
  scopes: SCOPES.split(' '),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (!/^https?:\/\//.test(indicator)) throw new errors.InvalidTarget();
        return {
          scope: SCOPES,
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: jwks.keys[0].alg } },
        };
      },
    },
  },
  extraTokenClaims: (ctx, token) => {
    const libraries = clients[token.clientId]?.libraries;
    return libraries ? { libraries } : undefined;
  },
});

provider.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write('ready\n');
});
