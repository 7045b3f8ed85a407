import { useEffect, useRef, useState } from "react";
import { errorMessage, serverLog } from "../ipc";

/** A server's stderr, followed live while shown (read again every second). Shown as text. */
export default function ServerLog({ serverId }: { serverId: string }) {
  const [lines, setLines] = useState<string[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const end = useRef<HTMLPreElement>(null);

  useEffect(() => {
    let live = true;
    const read = () =>
      serverLog(serverId).then(
        (l) => live && setLines(l),
        (e) => live && setProblem(errorMessage(e)),
      );
    read();
    const timer = setInterval(read, 1000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [serverId]);

  useEffect(() => {
    const pre = end.current;
    if (pre) pre.scrollTop = pre.scrollHeight;
  }, [lines]);

  return (
    <div className="server-log">
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      <pre ref={end} role="log" aria-label="Server log" data-testid="server-log" tabIndex={0}>
        {lines.length ? lines.join("\n") : "Nothing logged yet."}
      </pre>
    </div>
  );
}
