// The publisher's web server for the Client ID Metadata Document tests: serves one file over
// https (a certificate the test made and the authorization server trusts) at one path, as a
// static site would, with the JSON content type and a cache lifetime.
//
// Usage: node document_host.mjs <port> <cert.pem> <key.pem> <path> <file>
// Prints "ready" when listening.
import fs from "node:fs";
import https from "node:https";

const [port, cert, key, path, file] = process.argv.slice(2);
const server = https.createServer(
  { cert: fs.readFileSync(cert), key: fs.readFileSync(key) },
  (req, res) => {
    if (req.method !== "GET" || req.url !== path) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "max-age=300" });
    res.end(fs.readFileSync(file));
  },
);
server.listen(Number(port), "127.0.0.1", () => console.log("ready"));
