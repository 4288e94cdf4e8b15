"""Issue 29: OAuth resource-server mode (`folio serve --http --auth oauth`).

A real OpenID provider (the npm package oidc-provider, tests/oidc/provider.mjs)
issues JWT access tokens through the client-credentials grant; folio validates
them against the provider's published keys. The official Python SDK finds the
provider from folio's 401 and its Protected Resource Metadata (RFC 9728) and
gets its own token. Forged, tampered, expired, misdirected and foreign tokens
are refused, a scope a token lacks is refused 403 `insufficient_scope` before
any work, a token's libraries hold as a key's do, and a key rotation at the
provider is followed."""

import base64
import contextlib
import hashlib
import hmac
import json
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import RSAAlgorithm
from mcp import Client, ClientSession
from mcp.client.sse import sse_client
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import BIN, HttpServer, call, folio_env, free_port, http_mcp, ok, run, stdio, write_config
from test_keys import INITIALIZE, status_of

PROVIDER = Path(__file__).resolve().parents[1] / "oidc"


def rsa_key(kid):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(private))
    jwk.update(kid=kid, alg="RS256", use="sig")
    return private, jwk


class Provider:
    """oidc-provider on 127.0.0.1, signing with the first of `jwks`."""

    def __init__(self, folder, jwks, resource, port=None, env=None):
        self.port = port or free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        keys = Path(folder) / f"provider-keys-{self.port}-{time.monotonic_ns()}.json"
        keys.write_text(json.dumps({"keys": jwks}))
        self.process = subprocess.Popen(
            ["node", str(PROVIDER / "provider.mjs"), str(self.port), str(keys), resource],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            self.process.kill()
            raise RuntimeError("oidc-provider did not start: " + line + self.process.stderr.read())

    def token(self, client, scope=None, resource=None):
        fields = {"grant_type": "client_credentials"}
        if scope is not None:
            fields["scope"] = scope
        if resource is not None:
            fields["resource"] = resource
        basic = base64.b64encode(f"{client}:{client}-secret".encode()).decode()
        request = urllib.request.Request(
            self.issuer + "/token",
            data=urllib.parse.urlencode(fields).encode(),
            headers={"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as r:
            return json.loads(r.read())["access_token"]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@contextlib.contextmanager
def provider(folder, jwks, resource, port=None):
    p = Provider(folder, jwks, resource, port)
    try:
        yield p
    finally:
        p.stop()


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


@contextlib.asynccontextmanager
async def sdk_client(url, issuer, client, scope):
    """The official SDK's client-credentials flow: it meets folio's 401,
    reads the resource metadata, finds the provider and asks it for a token."""
    auth = ClientCredentialsOAuthProvider(
        server_url=url + "/mcp", storage=Memory(), client_id=client,
        client_secret=f"{client}-secret", scope=scope, issuer=issuer,
    )
    async with create_mcp_http_client(auth=auth) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http), read_timeout_seconds=300) as c:
            yield c


def b64(data):
    if isinstance(data, (dict, list)):
        data = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def get(url, token=None):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def tool_call(name, arguments):
    """A JSON-RPC tools/call, sent without a session: a scope refusal comes first."""
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def seed(data):
    async def go():
        async with stdio(data) as c:
            await ok(c, "ingest", {"library": "wiki", "content": {"name": "w.md", "text": "# Rivers\n\nRivers carry silt to the delta."}})
            hr = await ok(c, "ingest", {"library": "hr", "content": {"name": "s.md", "text": "# Salaries\n\nThe director earns a confidential bonus."}})
            return hr["items"][0]["document_id"]

    return run(go())


def oauth_server(data, folio_port, issuer, tmp_path, *extra):
    config = tmp_path / "oauth.toml"
    write_config(config, '[serve.oauth]\nlibraries_claim = "libraries"\n')
    return HttpServer(
        data, "--auth", "oauth", "--issuer", issuer, "--resource", f"http://127.0.0.1:{folio_port}/mcp",
        *extra, config=config, port=folio_port,
    )


def test_tokens_of_the_provider_hold_callers_to_their_scopes_and_libraries(data, tmp_path):
    hr_doc = seed(data)
    _, k1 = rsa_key("k1")
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    audit = tmp_path / "audit.jsonl"
    with provider(tmp_path, [k1], resource) as idp, \
            oauth_server(data, port, idp.issuer, tmp_path, "--audit-log", str(audit)) as server:
        # The metadata, at the root and under the resource's path.
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            status, _, body = get(server.url + path)
            assert status == 200, path
            document = json.loads(body)
            assert document["resource"] == resource
            assert document["authorization_servers"] == [idp.issuer]
            assert document["scopes_supported"] == ["search", "ingest", "admin"]
        # No token: 401 naming the metadata and the scope to ask for.
        status, headers = status_of(server.url)
        challenge = headers["www-authenticate"]
        assert status == 401 and challenge.startswith("Bearer ")
        assert f'resource_metadata="{server.url}/.well-known/oauth-protected-resource/mcp"' in challenge
        assert 'scope="search"' in challenge
        assert get(server.url + "/health")[0] == 200

        async def as_reader():
            async with sdk_client(server.url, idp.issuer, "reader", "search") as c:
                listed = {t.name for t in (await c.list_tools()).tools}
                assert "search" in listed and not listed & {"ingest", "delete_document", "delete_library"}, listed
                libraries = await ok(c, "list_libraries")
                assert [l["library"] for l in libraries["libraries"]] == ["wiki"]
                assert (await ok(c, "search", {"library": "wiki", "query": "rivers delta"}))["hits"]
                for tool, arguments in [
                    ("search", {"library": "hr", "query": "bonus"}),
                    ("get_document", {"document_id": hr_doc}),
                ]:
                    is_error, body = await call(c, tool, arguments)
                    assert is_error and body["error"]["code"] == "FORBIDDEN", (tool, body)

        run(as_reader())

        # The older SSE transport: the same token, the same rules.
        assert get(server.url + "/sse")[0] == 401

        async def reader_over_sse():
            token = idp.token("reader", "search")
            async with sse_client(server.url + "/sse", headers={"Authorization": f"Bearer {token}"}) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await session.call_tool("list_libraries", {})
                    assert [l["library"] for l in listed.structured_content["libraries"]] == ["wiki"]
                    refused = await session.call_tool("search", {"library": "hr", "query": "bonus"})
                    assert refused.is_error and refused.structured_content["error"]["code"] == "FORBIDDEN"

        run(reader_over_sse())

        async def as_writer():
            async with sdk_client(server.url, idp.issuer, "writer", "search ingest") as c:
                written = await ok(c, "ingest", {"library": "wiki", "content": {"name": "n.md", "text": "# Notes\n\nLevees hold floods."}})
                assert written["indexed"] == 1
                is_error, body = await call(c, "ingest", {"library": "hr", "content": {"name": "x.md", "text": "# X\n\nx"}})
                assert is_error and body["error"]["code"] == "FORBIDDEN", body

        run(as_writer())

        lead = idp.token("lead", "search ingest admin")

        def failures(reason):
            text = get(server.url + "/metrics", lead)[2].decode()
            found = [l for l in text.splitlines() if l.startswith(f'folio_auth_failures_total{{reason="{reason}"}}')]
            return int(found[0].rsplit(" ", 1)[1]) if found else 0

        # The SDK asked for the 401's scope (search) first; its first ingest
        # met 403 insufficient_scope naming "search ingest", and it stepped up
        # to a token with both and retried: the ingest above succeeded.
        assert failures("insufficient scope") == 1

        # A tool outside the token's scopes: 403 insufficient_scope with
        # every scope the call needs, before any work.
        reader = idp.token("reader", "search")
        status, headers = status_of(server.url, reader, tool_call("ingest", {"library": "wiki", "content": {"name": "y.md", "text": "# Y\n\ny"}}))
        assert status == 403, status
        challenge = headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="search ingest"' in challenge, challenge
        assert "resource_metadata=" in challenge
        status, headers, _ = get(server.url + "/metrics", reader)
        assert status == 403 and 'scope="search admin"' in headers["www-authenticate"]

        assert get(server.url + "/metrics", lead)[0] == 200
        assert failures("insufficient scope") == 3
        assert failures("no token") == 4  # each SDK client's first request, and the two probes

        async def as_lead():
            async with http_mcp(server.url, key=lead) as c:
                assert {l["library"] for l in (await ok(c, "list_libraries"))["libraries"]} == {"wiki", "hr"}
                wiki = await ok(c, "inspect_library", {"library": "wiki"})
                assert wiki["document_count"] == 2, "the refused ingest wrote nothing"

        run(as_lead())

    callers = {(l["caller"], l["operation"], l["outcome"]) for l in map(json.loads, audit.read_text().splitlines())}
    assert ("reader", "search", "ok") in callers and ("reader", "search", "FORBIDDEN") in callers
    assert ("writer", "ingest", "ok") in callers and ("lead", "inspect_library", "ok") in callers
    assert reader not in audit.read_text(), "never the token"


def test_forged_tampered_and_misdirected_tokens_are_refused(data, tmp_path):
    hr_doc = seed(data)
    k1_private, k1 = rsa_key("k1")
    attacker, attacker_jwk = rsa_key("k1")  # a key of its own, under the provider's kid
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    attempts = []  # (what, accepted?)

    with provider(tmp_path, [k1], resource) as idp, \
            provider(tmp_path, [k1], resource) as other_idp, \
            oauth_server(data, port, idp.issuer, tmp_path) as server:
        now = int(time.time())
        claims = {"iss": idp.issuer, "aud": resource, "sub": "mallory", "scope": "search ingest admin",
                  "libraries": ["*"], "iat": now, "exp": now + 300}

        def signed(payload, key=k1_private, headers=None, algorithm="RS256"):
            return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": "k1", **(headers or {})})

        def unsigned(header, payload, signature=""):
            return f"{b64(header)}.{b64(payload)}.{signature}"

        public_pem = k1_private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

        def hs256(secret, payload=claims):
            head = b64({"alg": "HS256", "typ": "JWT", "kid": "k1"})
            body = b64(payload)
            mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
            return f"{head}.{body}.{b64(mac)}"

        # The oracle: the same claims signed with the provider's key pass.
        assert status_of(server.url, signed(claims))[0] == 200
        real = idp.token("reader", "search")
        assert status_of(server.url, real)[0] == 200
        head, body, signature = real.split(".")
        elevated = {**json.loads(unb64(body)), "scope": "search ingest admin"}
        widened = {**json.loads(unb64(body)), "libraries": ["wiki", "hr"]}
        es_key = ec.generate_private_key(ec.SECP256R1())
        foreign = other_idp.token("lead", "search ingest admin")
        assert json.loads(unb64(foreign.split(".")[1]))["iss"] != idp.issuer

        for what, token in [
            ("garbage", "abc"),
            ("an access key where a token belongs", "folio_" + "0" * 64),
            ("two parts", f"{head}.{body}"),
            ("alg none, no signature", unsigned({"alg": "none", "typ": "JWT"}, claims)),
            ("alg none, the real signature kept", unsigned({"alg": "none"}, claims, signature)),
            ("alg None spelled otherwise", unsigned({"alg": "NONE", "kid": "k1"}, claims)),
            ("HS256 keyed with the public key's PEM", hs256(public_pem)),
            ("HS256 keyed with the public key's modulus", hs256(unb64(k1["n"]))),
            ("HS256 keyed with the kid", hs256(b"k1")),
            ("an attacker's key under the provider's kid", signed(claims, attacker)),
            ("an attacker's key without a kid", jwt.encode(claims, attacker, algorithm="RS256")),
            ("an attacker's key under an unknown kid", signed(claims, attacker, {"kid": "k9"})),
            ("an attacker's key embedded in the header", signed(claims, attacker, {"kid": "a", "jwk": {k: attacker_jwk[k] for k in ("kty", "n", "e")}})),
            ("an attacker's key set by jku", signed(claims, attacker, {"kid": "a", "jku": "http://127.0.0.1:9/jwks"})),
            ("ES256 under the RSA key's kid", signed(claims, es_key, algorithm="ES256")),
            ("RS512 header on an RS256 signature", f"{b64({'alg': 'RS512', 'kid': 'k1'})}.{body}.{signature}"),
            ("PS256 header on an RS256 signature", f"{b64({'alg': 'PS256', 'kid': 'k1'})}.{body}.{signature}"),
            ("a real token's scope raised", f"{head}.{b64(elevated)}.{signature}"),
            ("a real token's libraries widened", f"{head}.{b64(widened)}.{signature}"),
            ("a real token's signature cut", f"{head}.{body}.{signature[:-4]}"),
            ("a real token's signature of another token", f"{head}.{body}.{foreign.split('.')[2]}"),
            ("expired an hour ago", signed({**claims, "iat": now - 7200, "exp": now - 3600})),
            ("not valid for an hour", signed({**claims, "nbf": now + 3600})),
            ("no expiry", signed({k: v for k, v in claims.items() if k != "exp"})),
            ("no audience", signed({k: v for k, v in claims.items() if k != "aud"})),
            ("another resource's audience", signed({**claims, "aud": "http://127.0.0.1:1/mcp"})),
            ("the provider's token for another resource", idp.token("lead", "search ingest admin", resource="http://127.0.0.1:1/other")),
            ("no issuer", signed({k: v for k, v in claims.items() if k != "iss"})),
            ("the issuer with a trailing slash", signed({**claims, "iss": idp.issuer + "/"})),
            ("another provider's token, the same keys", foreign),
            ("no subject", signed({k: v for k, v in claims.items() if k != "sub"})),
        ]:
            status, headers = status_of(server.url, token)
            attempts.append((what, status != 401))
            challenge = headers.get("www-authenticate", "")
            assert 'error="invalid_token"' in challenge, (what, status, challenge)

        # A token in the query string is no token.
        request = urllib.request.Request(
            server.url + "/mcp?access_token=" + urllib.parse.quote(signed(claims)),
            data=json.dumps(INITIALIZE).encode(), method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        try:
            urllib.request.urlopen(request, timeout=30)
            attempts.append(("a token in the query string", True))
        except urllib.error.HTTPError as e:
            attempts.append(("a token in the query string", e.code != 401))

        # Scope escalation: a reader's real token, every door that needs more.
        reader = real
        for what, message in [
            ("ingest with a search token", tool_call("ingest", {"library": "wiki", "content": {"name": "z.md", "text": "# Z\n\nz"}})),
            ("delete a document with a search token", tool_call("delete_document", {"document_id": hr_doc})),
            ("delete a library with a search token", tool_call("delete_library", {"library": "hr"})),
            ("ingest hidden in a batch", [tool_call("search", {"library": "wiki", "query": "x"}), tool_call("ingest", {"library": "wiki", "content": {"name": "b.md", "text": "# B\n\nb"}})]),
        ]:
            status, _ = status_of(server.url, reader, message)
            attempts.append((what, status != 403))
        status, _, _ = get(server.url + "/metrics", reader)
        attempts.append(("metrics with a search token", status != 403))
        nobody = signed({**claims, "scope": "openid profile search:all"})
        status, _ = status_of(server.url, nobody, tool_call("search", {"library": "wiki", "query": "x"}))
        attempts.append(("search with a token of no folio scope", status != 403))

        async def escape():
            async with http_mcp(server.url, key=reader) as c:
                for what, tool, arguments in [
                    ("search a library outside the token", "search", {"library": "hr", "query": "bonus"}),
                    ("read a document outside the token", "get_document", {"document_id": hr_doc}),
                    ("read a chunk outside the token", "get_chunks", {"chunk_id": f"{hr_doc}:0"}),
                    ("list a library outside the token", "list_documents", {"library": "hr"}),
                ]:
                    is_error, body = await call(c, tool, arguments)
                    attempts.append((what, not is_error))
                libraries = await ok(c, "list_libraries")
                attempts.append(("see a library outside the token", [l["library"] for l in libraries["libraries"]] != ["wiki"]))

        run(escape())

        async def unlisted():
            # With a libraries claim configured, a token without one may use none.
            bare = signed({k: v for k, v in claims.items() if k != "libraries"})
            async with http_mcp(server.url, key=bare) as c:
                libraries = await ok(c, "list_libraries")
                attempts.append(("see libraries without a libraries claim", libraries["libraries"] != []))
                is_error, _ = await call(c, "search", {"library": "wiki", "query": "rivers"})
                attempts.append(("search without a libraries claim", not is_error))

        run(unlisted())

        async def unchanged():
            async with http_mcp(server.url, key=signed(claims)) as c:
                assert (await ok(c, "inspect_library", {"library": "hr"}))["document_count"] == 1
                assert (await ok(c, "inspect_library", {"library": "wiki"}))["document_count"] == 1

        run(unchanged())

    accepted = [what for what, accepted in attempts if accepted]
    assert len(attempts) >= 30 and accepted == [], (len(attempts), accepted)


def test_a_key_rotation_at_the_provider_is_followed(data, tmp_path):
    seed(data)
    k1_private, k1 = rsa_key("k1")
    _, k2 = rsa_key("k2")
    attacker, _ = rsa_key("k3")
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"

    def accepted_within(url, token, seconds):
        """Whether `token` is accepted before `seconds` pass (an unknown kid
        fetches the keys again at most every 2 s)."""
        deadline = time.monotonic() + seconds
        while True:
            if status_of(url, token)[0] == 200:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)

    idp = Provider(tmp_path, [k1], resource)
    try:
        with oauth_server(data, port, idp.issuer, tmp_path) as server:
            old = idp.token("reader", "search")
            assert status_of(server.url, old)[0] == 200
            # The provider rotates: k2 signs, k1 still listed.
            idp.stop()
            idp = Provider(tmp_path, [k2, k1], resource, port=idp.port)
            new = idp.token("reader", "search")
            assert json.loads(unb64(new.split(".")[0]))["kid"] == "k2"
            assert accepted_within(server.url, new, 5)
            assert status_of(server.url, old)[0] == 200
            # k1 retired: once the keys are fetched again (here because a
            # token names a kid folio has not seen), its tokens are refused.
            idp.stop()
            idp = Provider(tmp_path, [k2], resource, port=idp.port)
            newest = idp.token("reader", "search")
            now = int(time.time())
            probe = jwt.encode({"iss": idp.issuer, "aud": resource, "sub": "p", "exp": now + 60}, attacker,
                               algorithm="RS256", headers={"kid": "k3"})
            deadline = time.monotonic() + 10
            while status_of(server.url, old)[0] == 200:
                assert time.monotonic() < deadline, "k1 still accepted after the keys were fetched again"
                assert status_of(server.url, probe)[0] == 401
                time.sleep(0.2)
            assert status_of(server.url, newest)[0] == 200
    finally:
        idp.stop()


def test_oauth_needs_its_provider_and_is_refused_where_it_cannot_hold(data, tmp_path):
    port = free_port()
    for args, expected in [
        (["serve", "--stdio", "--auth", "oauth", "--issuer", "http://127.0.0.1:9", "--resource", "http://127.0.0.1:9/mcp"], "applies to --http"),
        (["serve", "--http", f"127.0.0.1:{port}", "--auth", "oauth"], "needs --issuer"),
        (["serve", "--http", f"127.0.0.1:{port}", "--auth", "keys", "--issuer", "http://127.0.0.1:9"], "belong to --auth oauth"),
        (["serve", "--http", f"127.0.0.1:{port}", "--auth", "oauth", "--issuer", "http://idp.example.org", "--resource", "https://f.example.org/mcp"], "must use https"),
        # Nothing listens there: the server does not start half-configured.
        (["serve", "--http", f"127.0.0.1:{port}", "--auth", "oauth", "--issuer", f"http://127.0.0.1:{free_port()}", "--resource", f"http://127.0.0.1:{port}/mcp"], "no discovery document"),
    ]:
        done = subprocess.run([BIN, *args], env=folio_env(data), capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (args, done.stderr)
        assert expected in done.stderr, (args, done.stderr)
