import { describe, expect, it } from "vitest";
import { itemsFromMessages } from "./ChatPanel";

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
