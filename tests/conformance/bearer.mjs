// Loaded before the conformance suite (`node --import ./bearer.mjs …`) when it tests Toolgate's
// HTTP door: every request the suite makes to TOOLGATE_DOOR_URL's host and port carries the
// door's token as `Authorization: Bearer …`, as a configured MCP client would send it. The suite
// itself has no option for a header. Its MCP SDK client (global `fetch`) and its raw probes
// (undici's `request`) go through undici's global dispatcher, which this replaces; its header
// probes use node:http's `request`, which this wraps. Nothing else about the requests changes:
// the Host, Origin and other headers the suite sets reach the door as sent.
import http from 'node:http';
import { Agent, setGlobalDispatcher } from 'undici';

const token = process.env.TOOLGATE_DOOR_TOKEN;
const door = process.env.TOOLGATE_DOOR_URL;
if (!token || !door) {
  throw new Error('bearer.mjs needs TOOLGATE_DOOR_TOKEN and TOOLGATE_DOOR_URL');
}
const target = new URL(door).origin;

function withToken(headers) {
  const value = `Bearer ${token}`;
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) {
    // Either [name, value, name, value…] or [[name, value]…].
    if (headers.length > 0 && Array.isArray(headers[0])) return [...headers, ['authorization', value]];
    return [...headers, 'authorization', value];
  }
  if (typeof headers[Symbol.iterator] === 'function' && typeof headers !== 'string') {
    return [...headers, ['authorization', value]];
  }
  return { ...headers, authorization: value };
}

const agent = new Agent().compose(
  (dispatch) => (options, handler) =>
    dispatch(
      new URL(options.origin).origin === target
        ? { ...options, headers: withToken(options.headers) }
        : options,
      handler,
    ),
);
setGlobalDispatcher(agent);

// node:http, for the probes that need exact header casing: `request(options[, callback])`.
const request = http.request;
const port = (url) => url.port || (url.protocol === 'https:' ? '443' : '80');
http.request = function (options, ...rest) {
  if (options && typeof options === 'object' && !(options instanceof URL)) {
    const doorUrl = new URL(door);
    const host = (options.hostname ?? options.host ?? '').replace(/^\[|\]$/g, '');
    const sameHost = host === doorUrl.hostname.replace(/^\[|\]$/g, '') || (host === 'localhost' && doorUrl.hostname === '127.0.0.1');
    if (sameHost && String(options.port ?? '80') === port(doorUrl)) {
      const headers = { ...(options.headers ?? {}) };
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
        headers.Authorization = `Bearer ${token}`;
      }
      options = { ...options, headers };
    }
  }
  return request.call(this, options, ...rest);
};
