// The window's script speed (scripts/window-bench.sh): the chat's Markdown renderer re-rendering a
// long reply as it streams in, one render per chunk, with the app's own styles and a layout after
// each render, as the chat does while a reply arrives. Prints one line, read by the script.
import { flushSync } from "react-dom";
import { createRoot } from "react-dom/client";
import Markdown from "../../src/components/Markdown";
import "../../src/styles.css";

const SECTIONS = 12;
const RENDERS = 300;

// A long model reply (about 8 kB): headings, lists, a task, code, a table, emphasis, links.
function reply(): string {
  const parts: string[] = [];
  for (let s = 0; s < SECTIONS; s++) {
    parts.push(
      `## Section ${s}\n\nThis is **bold** and _italic_ text with \`code\` and a [link](https://example.com/${s}).\n`,
      `- item one of ${s}\n- item two with some more words in it\n  - nested item\n- [x] done task\n`,
      '```rust\nfn main() {\n    println!("hello {}", 42);\n}\n```\n',
      `| col a | col b | col c |\n|---|---|---|\n| ${s} | two | three |\n| four | five | six |\n`,
      "A paragraph of ordinary prose that goes on for a while, as a model's answer does. ".repeat(4),
    );
  }
  return parts.join("\n");
}

const text = reply();
const main = document.createElement("main");
main.className = "messages";
document.getElementById("root")!.append(main);
const root = createRoot(main);
const times: number[] = [];
const start = performance.now();
for (let i = 1; i <= RENDERS; i++) {
  const shown = text.slice(0, Math.ceil((text.length * i) / RENDERS));
  const before = performance.now();
  flushSync(() => root.render(<Markdown text={shown} />));
  void main.offsetHeight; // the layout the window does before it paints
  times.push(performance.now() - before);
}
const total = performance.now() - start;
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
const line =
  `WINDOW-BENCH chars=${text.length} renders=${RENDERS} total_ms=${total.toFixed(0)} ` +
  `median_ms=${at(0.5)} p95_ms=${at(0.95)} max_ms=${times[times.length - 1].toFixed(1)}`;
console.log(line);
document.title = line;
