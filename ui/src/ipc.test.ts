// Exercises the real typed IPC module against Tauri's IPC mock: command names and argument
// names must match what the Rust commands expect.
import { afterEach, describe, expect, it } from "vitest";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import {
  answerApproval,
  callTool,
  detectLocalModels,
  errorMessage,
  openLogFolder,
  previewRule,
  readResource,
  saveRule,
  sendMessage,
  setProvider,
  setToolSettings,
  setUiState,
  startupNotices,
  toolSettings,
  uiState,
  type Rule,
} from "./ipc";

afterEach(() => clearMocks());

describe("ipc", () => {
  it("sends call_tool with the argument names the command declares", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      seen.push({ cmd, args });
      return { isError: false, text: "Echo: hi", raw: {} };
    });
    const out = await callTool("everything", "echo", { message: "hi" });
    expect(out.text).toBe("Echo: hi");
    expect(seen).toEqual([
      { cmd: "call_tool", args: { serverId: "everything", tool: "echo", arguments: { message: "hi" } } },
    ]);
  });

  it("answers an approval with the serde shape of Decision", async () => {
    let received: unknown;
    mockIPC((_cmd, args) => {
      received = args;
    });
    await answerApproval("id-1", { decision: "deny", reason: "no" });
    expect(received).toEqual({ id: "id-1", decision: { decision: "deny", reason: "no" } });
  });

  it("turns a command error into its message", async () => {
    mockIPC(() => {
      throw { kind: "settings", message: "provider.baseUrl: must start with http://" };
    });
    await expect(setProvider({ kind: "openai", baseUrl: "x", model: "m" })).rejects.toMatchObject({
      kind: "settings",
    });
    expect(errorMessage({ kind: "settings", message: "bad" })).toBe("bad");
  });

  it("reads the start-up notices", async () => {
    const seen: string[] = [];
    mockIPC((cmd) => {
      seen.push(cmd);
      return ["Your settings file could not be read (line 3, column 5: expected `,`)."];
    });
    expect(await startupNotices()).toHaveLength(1);
    expect(seen).toEqual(["startup_notices"]);
  });

  it("sends the tool settings and resource reads with the argument names the commands declare", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      seen.push({ cmd, args });
      if (cmd === "read_resource") return { contents: [{ uri: "demo://a", text: "A" }] };
      return { naming: "always" };
    });
    await toolSettings();
    await setToolSettings({ naming: "always", servers: { a: { prefix: "x" } } });
    const read = await readResource("everything", "demo://a");
    expect(read.contents).toHaveLength(1);
    expect(seen).toEqual([
      { cmd: "tool_settings", args: {} },
      { cmd: "set_tool_settings", args: { tools: { naming: "always", servers: { a: { prefix: "x" } } } } },
      { cmd: "read_resource", args: { serverId: "everything", uri: "demo://a" } },
    ]);
  });

  it("sends the shell's commands with the argument names they declare", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      seen.push({ cmd, args: { ...(args as object), onEvent: undefined } });
      if (cmd === "preview_rule") return { checked: 0, matched: [] };
    });
    const rule: Rule = {
      id: "r",
      effect: "ask",
      scope: { kind: "always" },
      target: { kind: "tool", serverId: "fs", tool: "write_file" },
      conditions: [{ pointer: "/path", matcher: { kind: "glob", value: "/etc/**" } }],
      createdAt: 1,
    };
    await previewRule(rule);
    await saveRule(rule);
    await detectLocalModels();
    await openLogFolder();
    await uiState();
    await setUiState("screen", "activity");
    await setUiState("drafts", null);
    await sendMessage("hi", () => undefined, { serversOff: ["web"] });
    expect(seen).toEqual([
      { cmd: "preview_rule", args: { rule } },
      { cmd: "save_rule", args: { rule } },
      { cmd: "detect_local_models", args: {} },
      { cmd: "open_log_folder", args: {} },
      { cmd: "ui_state", args: {} },
      { cmd: "set_ui_state", args: { key: "screen", value: "activity" } },
      { cmd: "set_ui_state", args: { key: "drafts", value: null } },
      { cmd: "send_message", args: { text: "hi", serversOff: ["web"], attachments: [] } },
    ]);
  });
});
