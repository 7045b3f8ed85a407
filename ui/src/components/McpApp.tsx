import { useEffect, useRef, useState } from "react";
import { isDark } from "../theme";
import { appCallTool, appReadResource, type AppView, closeApp, errorMessage, loadApp, type ToolApp } from "../ipc";

/** The MCP Apps protocol version Toolgate speaks to apps. */
const APPS_PROTOCOL = "2026-01-26";
/** The frame's height stays within these, whatever the app asks. */
export const MIN_HEIGHT = 60;
export const MAX_HEIGHT = 800;

/** Where the backend serves an app: its custom scheme (WebView2 reaches it over http). */
export function appUrl(id: string, windows = navigator.userAgent.includes("Windows")): string {
  return windows ? `http://mcpapp.localhost/${id}` : `mcpapp://localhost/${id}`;
}

interface Message {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
}

/**
 * A tool result shown by its server's MCP App. The document is served by the backend with the
 * policy the app declared and framed sandboxed with scripts only: an opaque origin (no access to
 * this window, its storage or its commands), no navigation of the window, no pop-ups, a bounded
 * height. The app talks JSON-RPC over postMessage; only messages from its own frame are read,
 * and it may call and read only its own server, each call through the gate like the model's.
 */
export default function McpApp({ app, serverName }: { app: ToolApp; serverName: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [view, setView] = useState<AppView | null>(null);
  const [height, setHeight] = useState(160);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let opened: string | null = null;
    let gone = false;
    loadApp(app.serverId, app.resourceUri).then(
      (v) => {
        if (gone) {
          void closeApp(v.id);
          return;
        }
        opened = v.id;
        setView(v);
      },
      (e: unknown) => setProblem(errorMessage(e)),
    );
    return () => {
      gone = true;
      if (opened) void closeApp(opened);
    };
  }, [app.serverId, app.resourceUri]);

  useEffect(() => {
    if (!view) return;
    const post = (message: object) => frame.current?.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, "*");
    const onMessage = (event: MessageEvent) => {
      if (!frame.current || event.source !== frame.current.contentWindow) return;
      const message = event.data as Message;
      if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0" || !message.method) return;
      const params = message.params ?? {};
      const reply = (result: unknown) => post({ id: message.id, result });
      const fail = (code: number, text: string) => post({ id: message.id, error: { code, message: text } });
      const request = message.id !== undefined;
      switch (message.method) {
        case "ui/initialize":
          reply({
            protocolVersion: typeof params.protocolVersion === "string" ? params.protocolVersion : APPS_PROTOCOL,
            hostInfo: { name: "toolgate", version: "0.1.0" },
            hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
            hostContext: {
              theme: isDark() ? "dark" : "light",
              displayMode: "inline",
              availableDisplayModes: ["inline"],
              platform: "desktop",
              containerDimensions: { maxHeight: MAX_HEIGHT },
            },
          });
          break;
        case "ui/notifications/initialized":
          post({ method: "ui/notifications/tool-input", params: { arguments: app.arguments ?? {} } });
          post({ method: "ui/notifications/tool-result", params: app.result });
          break;
        case "tools/call":
          appCallTool(view.id, String(params.name ?? ""), params.arguments).then(reply, (e: unknown) =>
            fail(-32603, errorMessage(e)),
          );
          break;
        case "resources/read":
          appReadResource(view.id, String(params.uri ?? "")).then(reply, (e: unknown) => fail(-32603, errorMessage(e)));
          break;
        case "ui/notifications/size-changed": {
          const wanted = Number(params.height);
          if (Number.isFinite(wanted)) setHeight(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(wanted))));
          break;
        }
        case "ping":
          reply({});
          break;
        default:
          // Links, messages to the chat, downloads, display modes: not offered to apps.
          if (request) fail(-32601, `Toolgate does not offer ${message.method} to apps`);
      }
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [view, app]);

  if (problem)
    return (
      <p className="muted small" data-testid="app-problem">
        The app could not be shown: {problem}
      </p>
    );
  if (!view) return null;
  return (
    <iframe
      ref={frame}
      className={view.prefersBorder ? "mcp-app bordered" : "mcp-app"}
      data-testid="mcp-app"
      title={`App of ${serverName}`}
      src={appUrl(view.id)}
      sandbox="allow-scripts"
      referrerPolicy="no-referrer"
      style={{ height: `${height}px` }}
    />
  );
}
