// A real OAuth 2 authorization server for the remote-server tests: oidc-provider (npm, pinned in
// mcp-servers/package.json), configured here and nothing more. It offers what the MCP
// authorization spec asks of one: RFC 8414/OpenID metadata (it publishes only
// /.well-known/openid-configuration, so clients must fall back from RFC 8414), dynamic client
// registration (RFC 7591, with application_type), PKCE S256, resource indicators (RFC 8707),
// the `iss` authorization response parameter (RFC 9207), refresh tokens (rotated), revocation
// (RFC 7009), and its development login and consent pages, which the stand-in browser fills in.
//
// Usage: node auth_server.mjs <mcp-servers dir> <port> <resource url> [access token seconds] [mode]
// Modes (one configuration each, as providers differ):
// - "" (default): dynamic registration, and the client `toolgate-by-hand` (client_secret_basic);
//   in every mode, the machine client `toolgate-machine` (client credentials grant);
// - "cimd": also Client ID Metadata Documents (`client_id_metadata_document_supported`), beside
//   dynamic registration; documents are fetched over https, trusting NODE_EXTRA_CA_CERTS;
// - "post": no registration, the token and revocation endpoints take client_secret_post only,
//   and the client `toolgate-by-post` is registered by hand;
// - "dpop": DPoP-bound tokens (RFC 9449) with a nonce required at the token endpoint
//   (oidc-provider takes DPoP proofs in every mode; only here does it insist on nonces).
// Prints "ready" when listening, one line "registered <client_id>" per registration and one
// "fetched <url>" per client metadata document fetched.
import crypto from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dir, port, resource, ttl = "3600", mode = ""] = process.argv.slice(2);
const { default: Provider } = await import(
  pathToFileURL(path.join(path.resolve(dir), "node_modules/oidc-provider/lib/index.js")).href
);

const issuer = `http://127.0.0.1:${port}`;
const accessTokenTTL = Number(ttl);
const byHand = mode === "post"
  ? {
    // A client id and secret the user enters, at a provider that takes only client_secret_post.
    // Its redirect names no port: native apps' loopback redirects match on any (RFC 8252 §7.3).
    client_id: "toolgate-by-post",
    client_secret: "by-post-secret-0123456789",
    redirect_uris: ["http://127.0.0.1/callback"],
    token_endpoint_auth_method: "client_secret_post",
  }
  : {
    // The "client id and secret the user enters" path, with client_secret_basic.
    client_id: "toolgate-by-hand",
    client_secret: "by-hand-secret-0123456789",
    redirect_uris: ["http://127.0.0.1:47123/callback"],
    token_endpoint_auth_method: "client_secret_basic",
  };
const provider = new Provider(issuer, {
  clients: [
    { ...byHand, application_type: "native", grant_types: ["authorization_code", "refresh_token"] },
    // A machine client (`toolgate serve` on a server): the client credentials grant only.
    {
      client_id: "toolgate-machine",
      client_secret: "machine-secret-0123456789",
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: mode === "post" ? "client_secret_post" : "client_secret_basic",
    },
  ],
  ...(mode === "post" ? { clientAuthMethods: ["client_secret_post"] } : {}),
  // oidc-provider refuses to fetch from special-use addresses such as 127.0.0.1 (its guard
  // against server-side request forgery); the test's documents are served there, so the fetch
  // goes out without that guard. Everything else about the fetch (https, the CA, status,
  // content, the document's own checks) is oidc-provider's.
  fetch: (url, { dispatcher: _ssrfGuard, ...options }) => {
    console.log(`fetched ${url}`);
    return globalThis.fetch(url, options);
  },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: mode !== "post" },
    clientIdMetadataDocument: { enabled: mode === "cimd", ack: "draft-02" },
    revocation: { enabled: true },
    clientCredentials: { enabled: true },
    ...(mode === "dpop"
      ? { dPoP: { enabled: true, nonceSecret: crypto.randomBytes(32), requireNonce: () => true } }
      : {}),
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => resource,
      useGrantedResource: async () => true,
      getResourceServerInfo: async () => ({
        scope: "mcp:tools mcp:admin",
        audience: resource,
        accessTokenTTL,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
  scopes: ["openid", "offline_access", "mcp:tools", "mcp:admin"],
  // Every client that may refresh gets a refresh token (not only those asking offline_access).
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
  pkce: { required: () => true },
  ttl: { AccessToken: accessTokenTTL },
});
provider.proxy = false;
provider.on("registration_create.success", (_ctx, client) => {
  console.log(`registered ${client.clientId}`);
});
provider.on("server_error", (_ctx, err) => console.error("server_error", err));
provider.listen(Number(port), "127.0.0.1", () => console.log("ready"));
