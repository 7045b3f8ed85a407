//! MCP bundles at the terminal, made by the official `@anthropic-ai/mcpb` CLI (2.1.2, from
//! `mcp-servers/node_modules`): a node server packed by `mcpb pack`, installed with a value
//! and a secret (read from stdin into the keychain), started and called; the same bundle signed
//! by `mcpb sign` with a certificate made here by `openssl` shown as signed with its signer;
//! that signed bundle with one byte changed refused, leaving nothing behind; a required value
//! missing named with how to give it. Needs node, openssl and a keychain session (as the
//! README's test command runs).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use toolgate_secrets::SecretStore;
use toolgate_tests::{example_servers_dir, temp_dir};

const TOOLGATE: &str = env!("CARGO_BIN_EXE_toolgate");

/// A dependency-free MCP server over stdio: newline-delimited JSON-RPC, one tool that says
/// what the bundle's configuration gave it.
const SERVER: &str = r#"
const readline = require("node:readline");
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const ok = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  switch (m.method) {
    case "initialize":
      return ok({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
                  serverInfo: { name: "bundled-notes", version: "0.3.0" } });
    case "ping": return ok({});
    case "tools/list":
      return ok({ tools: [{ name: "whoami", description: "What the bundle was configured with",
                            inputSchema: { type: "object", properties: {} } }] });
    case "tools/call": {
      const token = process.env.NOTES_TOKEN || "";
      const text = `greeting=${process.env.GREETING} token-tail=${token.slice(-4)} dir=${__dirname}`;
      return ok({ content: [{ type: "text", text }] });
    }
    default:
      return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } });
  }
});
"#;

const MANIFEST: &str = r#"{
  "manifest_version": "0.3",
  "name": "bundled-notes",
  "display_name": "Bundled Notes",
  "version": "0.3.0",
  "description": "A test server packed by mcpb",
  "author": { "name": "Toolgate Tests" },
  "server": {
    "type": "node",
    "entry_point": "server/index.js",
    "mcp_config": {
      "command": "node",
      "args": ["${__dirname}/server/index.js"],
      "env": { "GREETING": "${user_config.greeting}", "NOTES_TOKEN": "${user_config.token}" }
    }
  },
  "user_config": {
    "greeting": { "type": "string", "title": "Greeting", "description": "Said first", "required": true },
    "token": { "type": "string", "title": "Token", "description": "The notes service's token",
               "sensitive": true, "required": true }
  },
  "compatibility": { "platforms": ["linux", "darwin", "win32"] }
}"#;

fn run(program: &Path, args: &[&str], cwd: &Path) -> Output {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        program.display(),
        text(&out)
    );
    out
}

fn mcpb() -> PathBuf {
    let bin = example_servers_dir().join("node_modules/.bin/mcpb");
    assert!(
        bin.exists(),
        "{} is missing: run the README's test command, which installs mcp-servers",
        bin.display()
    );
    bin
}

fn toolgate(data: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(TOOLGATE)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("typed");
    child.wait_with_output().expect("ends")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn bundles_made_by_mcpb_are_installed_started_shown_signed_and_refused_when_tampered() {
    let dir = temp_dir("cli-bundles");
    let source = dir.join("notes");
    std::fs::create_dir_all(source.join("server")).expect("source");
    std::fs::write(source.join("manifest.json"), MANIFEST).expect("manifest");
    std::fs::write(source.join("server/index.js"), SERVER).expect("server");
    let unsigned = dir.join("notes.mcpb");
    run(&mcpb(), &["pack", path(&source), path(&unsigned)], &dir);

    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data");

    // A required value missing: named, with how to give it; nothing unpacked.
    let missing = toolgate(&data, &["servers", "add", "notes", path(&unsigned)], "");
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing));
    assert!(
        text(&missing).contains("greeting (Greeting)"),
        "{}",
        text(&missing)
    );
    assert!(
        text(&missing).contains("--config KEY=VALUE"),
        "{}",
        text(&missing)
    );
    assert!(!data.join("bundles/notes").exists());

    // Unsigned, said plainly; the secret read from stdin into the keychain only.
    let added = toolgate(
        &data,
        &[
            "servers",
            "add",
            "notes",
            path(&unsigned),
            "--config",
            "greeting=hello there",
        ],
        "tok-canary-7731\n",
    );
    assert!(added.status.success(), "{}", text(&added));
    assert!(
        text(&added).contains("Bundled Notes 0.3.0 by Toolgate Tests"),
        "{}",
        text(&added)
    );
    assert!(text(&added).contains("\nunsigned"), "{}", text(&added));
    assert!(data.join("bundles/notes/server/index.js").is_file());
    let settings = std::fs::read_to_string(data.join("settings.json")).expect("settings");
    assert!(!settings.contains("tok-canary-7731"), "{settings}");
    assert!(settings.contains("${secret:NOTES_TOKEN}"), "{settings}");
    let stored = toolgate_secrets::Keychain::default()
        .get(&toolgate_settings::secret_item("NOTES_TOKEN"))
        .expect("keychain");
    assert_eq!(stored.as_deref(), Some("tok-canary-7731"));

    // Started (in its sandbox, its folder readable) and called.
    let started = toolgate(&data, &["servers", "restart", "notes"], "");
    assert!(
        text(&started).contains("notes: ready"),
        "{}",
        text(&started)
    );
    let called = toolgate(&data, &["call", "whoami"], "");
    assert!(called.status.success(), "{}", text(&called));
    let answer = text(&called);
    assert!(answer.contains("greeting=hello there"), "{answer}");
    assert!(answer.contains("token-tail=7731"), "{answer}");
    assert!(
        answer.contains(&format!("dir={}", path(&data.join("bundles/notes/server")))),
        "{answer}"
    );
    let removed = toolgate(&data, &["servers", "remove", "notes"], "");
    assert!(removed.status.success(), "{}", text(&removed));
    assert!(!data.join("bundles/notes").exists(), "its files go with it");

    // Signed by `mcpb sign` with a certificate of our own: shown signed, with the signer.
    openssl(&dir);
    let signed = dir.join("signed.mcpb");
    std::fs::copy(&unsigned, &signed).expect("copy");
    run(
        &mcpb(),
        &[
            "sign",
            path(&signed),
            "--cert",
            "cert.pem",
            "--key",
            "key.pem",
        ],
        &dir,
    );
    assert!(std::fs::read(&signed)
        .expect("signed")
        .ends_with(b"MCPB_SIG_END"));
    let added = toolgate(
        &data,
        &[
            "servers",
            "add",
            "signed-notes",
            path(&signed),
            "--config",
            "greeting=hi",
        ],
        "tok-signed-0042\n",
    );
    assert!(added.status.success(), "{}", text(&added));
    let shown = text(&added);
    assert!(
        shown.contains("signed by Toolgate Test Publisher"),
        "{shown}"
    );
    assert!(shown.contains("self-signed"), "{shown}");
    assert!(!shown.contains("\nunsigned"), "{shown}");
    let started = toolgate(&data, &["servers", "restart", "signed-notes"], "");
    assert!(
        text(&started).contains("signed-notes: ready"),
        "{}",
        text(&started)
    );

    // One byte of the signed bundle's zip changed: refused, nothing left behind.
    let mut bytes = std::fs::read(&signed).expect("signed");
    let zip_len = std::fs::metadata(&unsigned).expect("unsigned").len() as usize;
    bytes[zip_len / 2] ^= 0x01;
    let tampered = dir.join("tampered.mcpb");
    std::fs::write(&tampered, &bytes).expect("tampered");
    let refused = toolgate(
        &data,
        &[
            "servers",
            "add",
            "bad",
            path(&tampered),
            "--config",
            "greeting=hi",
        ],
        "tok\n",
    );
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(text(&refused).contains("TAMPERED"), "{}", text(&refused));
    assert!(
        text(&refused).contains("changed after it was signed"),
        "{}",
        text(&refused)
    );
    assert!(!data.join("bundles/bad").exists());
    let settings = std::fs::read_to_string(data.join("settings.json")).expect("settings");
    assert!(!settings.contains("\"bad\""), "{settings}");
}

/// A self-signed code-signing certificate and its key, in `dir`.
fn openssl(dir: &Path) {
    run(
        Path::new("openssl"),
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-subj",
            "/CN=Toolgate Test Publisher/O=Toolgate Tests",
        ],
        dir,
    );
}
