// Well-known MCP servers, as their own READMEs tell you to run them. Choosing one only fills the
// add-server form: the user checks (and completes the `<placeholders>` of) the command, sees it
// again before it runs, and confirms. Nothing here is run or downloaded by itself.
import type { AddServerDraft } from "./components/AddServer";

export interface WellKnownServer {
  id: string;
  name: string;
  /** What it lets the model do. */
  description: string;
  /** What must be on this computer or in hand first. */
  needs: string;
  /** Where it comes from, as text (the window never opens links). */
  source: string;
  draft: AddServerDraft;
}

const stdio = (name: string, command: string, pairs = ""): AddServerDraft => ({
  name,
  kind: "stdio",
  command,
  url: "",
  pairs,
});

const http = (name: string, url: string, pairs = ""): AddServerDraft => ({
  name,
  kind: "http",
  command: "",
  url,
  pairs,
});

export const WELL_KNOWN: WellKnownServer[] = [
  {
    id: "filesystem",
    name: "Filesystem",
    description: "Read, write, search and move files, only inside the folders you name.",
    needs: "Node.js (npx)",
    source: "npm @modelcontextprotocol/server-filesystem",
    draft: stdio("Filesystem", "npx -y @modelcontextprotocol/server-filesystem <folder>"),
  },
  {
    id: "memory",
    name: "Memory",
    description: "A knowledge graph the model keeps between chats: people, projects, facts.",
    needs: "Node.js (npx)",
    source: "npm @modelcontextprotocol/server-memory",
    draft: stdio("Memory", "npx -y @modelcontextprotocol/server-memory"),
  },
  {
    id: "git",
    name: "Git",
    description: "Read a repository's status, log and diffs; stage and commit.",
    needs: "uv (uvx) and git",
    source: "PyPI mcp-server-git",
    draft: stdio("Git", "uvx mcp-server-git --repository <repository>"),
  },
  {
    id: "fetch",
    name: "Fetch",
    description: "Fetch a web page and hand it to the model as Markdown.",
    needs: "uv (uvx)",
    source: "PyPI mcp-server-fetch",
    draft: stdio("Fetch", "uvx mcp-server-fetch"),
  },
  {
    id: "time",
    name: "Time",
    description: "The current time in any time zone, and conversions between zones.",
    needs: "uv (uvx)",
    source: "PyPI mcp-server-time",
    draft: stdio("Time", "uvx mcp-server-time"),
  },
  {
    id: "github",
    name: "GitHub",
    description: "Issues, pull requests, code search and repositories, through GitHub's own remote server.",
    needs: "A GitHub personal access token (it goes to the OS keychain)",
    source: "github/github-mcp-server (remote)",
    draft: http("GitHub", "https://api.githubcopilot.com/mcp/", "Authorization: Bearer <token>"),
  },
  {
    id: "sequential-thinking",
    name: "Sequential thinking",
    description: "A scratchpad for step-by-step reasoning that the model can revise.",
    needs: "Node.js (npx)",
    source: "npm @modelcontextprotocol/server-sequential-thinking",
    draft: stdio("Sequential thinking", "npx -y @modelcontextprotocol/server-sequential-thinking"),
  },
  {
    id: "playwright",
    name: "Playwright",
    description: "Drive a web browser: open pages, click, type, take snapshots.",
    needs: "Node.js (npx); it downloads a browser on first use",
    source: "npm @playwright/mcp",
    draft: stdio("Playwright", "npx -y @playwright/mcp@latest"),
  },
  {
    id: "context7",
    name: "Context7",
    description: "Up-to-date documentation and code examples for libraries, by version.",
    needs: "Nothing; an API key raises its limits",
    source: "Upstash (remote)",
    draft: http("Context7", "https://mcp.context7.com/mcp"),
  },
  {
    id: "everything",
    name: "Everything (demo)",
    description: "The MCP reference server: every protocol feature, for trying Toolgate out.",
    needs: "Node.js (npx)",
    source: "npm @modelcontextprotocol/server-everything",
    draft: stdio("Everything", "npx -y @modelcontextprotocol/server-everything"),
  },
];
