// The protected MCP server for the remote-server tests: server-everything (Streamable HTTP)
// behind this resource server, which does what the MCP authorization spec asks of one and no
// more: it publishes its protected resource metadata (RFC 9728) naming the authorization server,
// answers a request without a valid access token with 401 and a WWW-Authenticate header
// pointing at that metadata, checks each token (a JWT from oidc-provider, verified with `jose`
// against the authorization server's keys: issuer, audience, expiry, scope), answers a call to
// a tool that needs more with 403 insufficient_scope, and passes everything else through.
//
// Usage: node resource_proxy.mjs <mcp-servers dir> <port> <upstream url> <issuer> <admin tool> [fault]
// Prints "ready" when listening; one line "call <tool> <sub>" per proxied tools/call.
// A fault makes it a misconfigured server, for the tests of what the user is told:
// `metadata-500` (its metadata answers 500), `bad-metadata` (metadata for another resource),
// `wrong-issuer` (it names an authorization server here whose metadata claims another issuer).
// `dpop` is no fault: it takes DPoP-bound tokens only (RFC 9449 §7): `Authorization: DPoP`, a
// proof verified with the key in its header (method, address, the token's hash, a fresh jti,
// its nonce), the token's `cnf.jkt` that key's thumbprint; its challenges name the DPoP scheme,
// and it asks for a nonce of its own (printing "dpop <jti>" per proof it accepted and
// "dpop refused <why>" per one it did not).
import crypto from "node:crypto";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dir, port, upstream, issuer, adminTool, fault = ""] = process.argv.slice(2);
const jose = await import(
  pathToFileURL(path.join(path.resolve(dir), "node_modules/jose/dist/webapi/index.js")).href
);
const resource = `http://127.0.0.1:${port}/mcp`;
const metadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
const keys = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));

const dpop = fault === "dpop";
const rsNonce = `rs-nonce-${crypto.randomUUID()}`;
const jtis = new Set();

function challenge(res, status, error, scope, extra = {}) {
  const parts = [`resource_metadata="${metadataUrl}"`, `scope="${scope}"`];
  if (error) parts.unshift(`error="${error}"`);
  const scheme = dpop ? `DPoP algs="ES256"` : "Bearer";
  res.writeHead(status, { "WWW-Authenticate": `${scheme} ${parts.join(", ")}`, ...extra });
  res.end();
}

// The token's claims, or null; with `dpop`, { nonce: true } when the proof lacks our nonce.
async function verify(req) {
  const header = req.headers.authorization || "";
  const scheme = dpop ? "DPoP " : "Bearer ";
  if (!header.startsWith(scheme)) {
    if (dpop && header) console.log(`dpop refused ${header.split(" ")[0]} scheme`);
    return null;
  }
  const token = header.slice(scheme.length);
  let payload;
  try {
    ({ payload } = await jose.jwtVerify(token, keys, { issuer, audience: resource }));
  } catch {
    return null;
  }
  if (!dpop) return payload;
  const proof = req.headers.dpop;
  if (typeof proof !== "string") {
    console.log("dpop refused no proof");
    return null;
  }
  try {
    const { jwk } = jose.decodeProtectedHeader(proof);
    const key = await jose.importJWK(jwk, "ES256");
    const { payload: claims } = await jose.jwtVerify(proof, key, { typ: "dpop+jwt", maxTokenAge: "5m" });
    const ath = crypto.createHash("sha256").update(token).digest("base64url");
    const why =
      claims.htm !== req.method ? "htm"
      : claims.htu !== resource ? `htu ${claims.htu}`
      : claims.ath !== ath ? "ath"
      : payload.cnf?.jkt !== (await jose.calculateJwkThumbprint(jwk)) ? "key"
      : jtis.has(claims.jti) ? "replayed"
      : null;
    if (why) {
      console.log(`dpop refused ${why}`);
      return null;
    }
    if (claims.nonce !== rsNonce) return { nonce: true };
    jtis.add(claims.jti);
    console.log(`dpop ${claims.jti}`);
    return payload;
  } catch (e) {
    console.log(`dpop refused ${e.code || e.message}`);
    return null;
  }
}

const server = http.createServer(async (req, res) => {
  if (req.url === "/.well-known/oauth-protected-resource/mcp") {
    if (fault === "metadata-500") {
      res.writeHead(500);
      res.end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({
      resource: fault === "bad-metadata" ? "http://127.0.0.1:9/elsewhere" : resource,
      authorization_servers: [fault === "wrong-issuer" ? `http://127.0.0.1:${port}/as` : issuer],
      scopes_supported: ["mcp:tools", "mcp:admin"],
      bearer_methods_supported: ["header"],
    }));
    return;
  }
  if (fault === "wrong-issuer" && req.url.startsWith("/.well-known/oauth-authorization-server/as")) {
    const real = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ ...real, issuer: "http://127.0.0.1:9/impostor" }));
    return;
  }
  if (!req.url.startsWith("/mcp")) {
    res.writeHead(404);
    res.end();
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  const claims = await verify(req);
  if (claims?.nonce === true) {
    return challenge(res, 401, "use_dpop_nonce", "mcp:tools", { "DPoP-Nonce": rsNonce });
  }
  if (!claims) return challenge(res, 401, req.headers.authorization ? "invalid_token" : null, "mcp:tools");
  const scopes = String(claims.scope || "").split(" ");
  if (!scopes.includes("mcp:tools")) return challenge(res, 403, "insufficient_scope", "mcp:tools");
  let message = null;
  try { message = JSON.parse(body.toString() || "null"); } catch {}
  if (message && message.method === "tools/call") {
    const tool = message.params && message.params.name;
    if (tool === adminTool && !scopes.includes("mcp:admin")) {
      return challenge(res, 403, "insufficient_scope", "mcp:tools mcp:admin");
    }
    console.log(`call ${tool} ${claims.sub}`);
  }
  const headers = { ...req.headers };
  delete headers.host;
  delete headers.authorization;
  delete headers.dpop;
  delete headers["content-length"];
  const upstreamResponse = await fetch(upstream, {
    method: req.method,
    headers,
    body: ["GET", "HEAD", "DELETE"].includes(req.method) ? undefined : body,
    duplex: "half",
  }).catch(() => null);
  if (!upstreamResponse) {
    res.writeHead(502);
    res.end();
    return;
  }
  const out = {};
  upstreamResponse.headers.forEach((value, name) => {
    if (!["content-length", "transfer-encoding", "connection", "content-encoding"].includes(name)) out[name] = value;
  });
  res.writeHead(upstreamResponse.status, out);
  if (!upstreamResponse.body) return res.end();
  const reader = upstreamResponse.body.getReader();
  req.on("close", () => reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true }));
    if (done) break;
    res.write(value);
  }
  res.end();
});
server.listen(Number(port), "127.0.0.1", () => console.log("ready"));
