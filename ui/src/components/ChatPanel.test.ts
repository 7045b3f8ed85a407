import { describe, expect, it } from "vitest";
import { itemsFromMessages } from "./ChatPanel";
import { describeUsage } from "../usage";

describe("a stored conversation on screen", () => {
  it("shows the messages, each tool call with its result", () => {
    const items = itemsFromMessages([
      { role: "user", text: "list files" },
      { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "list_directory", arguments: { path: "/" } }] },
      { role: "toolResult", callId: "c1", content: [{ type: "text", text: "a.txt" }], isError: false },
      { role: "assistant", text: "There is a.txt.", toolCalls: [] },
    ]);
    expect(items.map((i) => i.type)).toEqual(["user", "tool", "assistant"]);
    const tool = items[1];
    expect(tool.type === "tool" && tool.output).toBe("a.txt");
    expect(tool.type === "tool" && tool.state).toBe("done");
  });

  it("keeps a stored result's images for the card to show", () => {
    const items = itemsFromMessages([
      { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "get-tiny-image", arguments: {} }] },
      {
        role: "toolResult",
        callId: "c1",
        content: [
          { type: "text", text: "Here it is:" },
          { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
        ],
        isError: false,
      },
    ]);
    const tool = items[0];
    expect(tool.type === "tool" && tool.output).toBe("Here it is:");
    expect(tool.type === "tool" && tool.images).toEqual([{ mimeType: "image/png", data: "iVBORw0KGgo=" }]);
  });
});

describe("tokens and cost", () => {
  const usage = { inputTokens: 1234, outputTokens: 56, cacheReadTokens: 10000, cacheWriteTokens: 0 };

  it("says every kind of token and the estimated cost", () => {
    expect(describeUsage(usage, 4200)).toBe("1,234 in · 56 out · 10,000 cache read tokens · ≈ $0.0042");
    expect(describeUsage({ ...usage, cacheReadTokens: 0, cacheWriteTokens: 300 }, 2_500_000)).toBe(
      "1,234 in · 56 out · 300 cache write tokens · ≈ $2.50",
    );
  });

  it("says when the model's price is not known, and what the total leaves out", () => {
    expect(describeUsage(usage, null)).toBe("1,234 in · 56 out · 10,000 cache read tokens · cost unknown for this model");
    expect(describeUsage(usage, 100, 2)).toContain("(+ 2 model calls of unknown price)");
  });

  it("keeps a search result's tool references out of the text shown", () => {
    const items = itemsFromMessages([
      { role: "assistant", text: "", toolCalls: [{ id: "s1", name: "search_tools", arguments: { query: "x" } }] },
      {
        role: "toolResult",
        callId: "s1",
        content: [
          { type: "text", text: "Found 1 tool" },
          { type: "toolReference", toolName: "convert_temperature" },
        ],
        isError: false,
      },
    ]);
    const tool = items[0];
    expect(tool.type === "tool" && tool.output).toBe("Found 1 tool");
  });
});
