import { useEffect, useImperativeHandle, useLayoutEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import {
  answerAll,
  answerApproval,
  approvalRules,
  type ConversationSummary,
  currentConversation,
  listConversations,
  type Attachment,
  type Decision,
  errorMessage,
  wasStopped,
  openConversation,
  type Message,
  resetConversation,
  sendMessage,
  stopTurn,
  type PendingCall,
  type ProviderView,
  type ServerSnapshot,
  type ShownImage,
  type ToolApp,
  type TurnEvent,
  type Usage,
} from "../ipc";
import ApprovalCard from "./ApprovalCard";
import { approvalWaitSecs, outcomeOf, toolDescription, unansweredOutcome } from "../approval";
import ChatExtras from "./ChatExtras";
import ChatHeader from "./ChatHeader";
import { ACTION_ICONS, STATUS_ICONS } from "../icons";
import { WithIcon } from "./WithIcon";
import Conversations from "./Conversations";
import FirstRun from "./FirstRun";
import Markdown from "./Markdown";
import McpApp from "./McpApp";
import { dismiss, isDismissed, remember, remembered } from "../uiState";
import { describeUsage } from "../usage";

type ToolState = "waiting" | "running" | "done" | "failed" | "denied";

export type Item =
  | { type: "user"; text: string }
  | { type: "assistant"; text: string; usage?: Usage; cost?: number | null; streaming?: boolean }
  | {
      type: "tool";
      call: PendingCall;
      state: ToolState;
      output?: string;
      /** The result's images, shown under its text. */
      images?: ShownImage[];
      progress?: string;
      /** The server's MCP App that shows the result. */
      app?: ToolApp;
      /** Who asks, in words (the chat and its model). */
      asker?: string;
      /** When the gate denies the call if nobody answers (Unix milliseconds). */
      deadline?: number;
      /** What happened once it was decided. */
      outcome?: string;
    }
  | { type: "notice"; text: string }
  | { type: "error"; text: string };

/** What the window's shell asks of the chat (the command palette, Ctrl+N). */
export interface ChatHandle {
  newChat: () => void;
}

interface Props {
  provider: ProviderView | null;
  servers: ServerSnapshot[];
  onOpenProvider: () => void;
  /** Where the conversation list goes (the window's sidebar); beside the chat when absent. */
  listHost?: HTMLElement | null;
  /** Brings the chat on screen (a conversation was opened from the sidebar). */
  onShow?: () => void;
  /** The provider changed (a model picked in the header, a local server chosen). */
  onProvider?: (view: ProviderView) => void;
  /** Opens adding servers from another app's file or JSON. */
  onImportFrom?: () => void;
  ref?: React.Ref<ChatHandle>;
}

/** How close to the bottom (in pixels) still counts as reading the newest message. */
export const FOLLOW_SLACK_PX = 48;

/** The key a chat's draft and server choices are remembered under: its id, or `new`. */
const chatKey = (id: string | null) => id ?? "new";

/** Turns stored messages back into what the chat shows. */
export function itemsFromMessages(messages: Message[]): Item[] {
  const items: Item[] = [];
  for (const m of messages) {
    if (m.role === "user") items.push({ type: "user", text: m.text });
    else if (m.role === "assistant") {
      if (m.text) items.push({ type: "assistant", text: m.text });
      for (const call of m.toolCalls) {
        items.push({
          type: "tool",
          state: "done",
          call: {
            id: "",
            request: "toolCall",
            callId: call.id,
            serverId: "",
            serverName: "",
            tool: call.name,
            arguments: call.arguments,
            readOnly: false,
            destructive: false,
            // A past call: the history keeps no schema, and no one is asked.
            inputSchema: null,
            reason: "",
            beyondRules: false,
          },
        });
      }
    } else {
      const text = m.content
        .flatMap((p) => (p.type === "text" ? [p.text] : []))
        .join("\n");
      const images = m.content.flatMap((p) => (p.type === "image" ? [{ mimeType: p.mimeType, data: p.data }] : []));
      const at = items.findIndex((it) => it.type === "tool" && it.call.callId === m.callId);
      if (at >= 0) {
        const tool = items[at] as Extract<Item, { type: "tool" }>;
        items[at] = {
          ...tool,
          state: m.isError ? "failed" : "done",
          output: text,
          ...(images.length > 0 ? { images } : {}),
        };
      }
    }
  }
  return items;
}

export default function ChatPanel({
  provider,
  servers,
  onOpenProvider,
  listHost,
  onShow,
  onProvider,
  onImportFrom,
  ref,
}: Props) {
  const [items, setItems] = useState<Item[]>([]);
  const [text, setText] = useState(() => remembered().drafts?.new ?? "");
  const [attachments, setAttachments] = useState<(Attachment & { label: string })[]>([]);
  const [busy, setBusy] = useState(false);
  const [current, setCurrent] = useState<string | null>(null);
  const [listVersion, setListVersion] = useState(0);
  /** A new chat's title while its first turn runs: listed at once, before it is stored. */
  const [pendingTitle, setPendingTitle] = useState<string | null>(null);
  /** The conversation's totals, as the history last had them. */
  const [totals, setTotals] = useState<ConversationSummary | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  // The chat follows the conversation: the newest message stays in view as items arrive, unless
  // the user scrolled up to read something (then it stays put until they scroll back down, send,
  // or answer a call).
  const messageList = useRef<HTMLOListElement>(null);
  const following = useRef(true);
  const stop = () => void stopTurn();
  useLayoutEffect(() => {
    const el = messageList.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  }, [items]);
  const onMessagesScroll = () => {
    const el = messageList.current;
    if (el) following.current = el.scrollHeight - el.scrollTop - el.clientHeight <= FOLLOW_SLACK_PX;
  };
  const [welcomed, setWelcomed] = useState(() => isDismissed("first-run"));
  // Servers switched off for this chat, remembered with it.
  const [serversOff, setServersOff] = useState<string[]>(() => remembered().chatServers?.new ?? []);
  // The draft in the box is kept (per chat) until it is sent.
  const draftFor = useRef(chatKey(null));
  useEffect(() => {
    if ((remembered().drafts?.[draftFor.current] ?? "") === text) return;
    const drafts = { ...remembered().drafts };
    if (text) drafts[draftFor.current] = text;
    else delete drafts[draftFor.current];
    remember("drafts", drafts);
  }, [text]);
  const showChat = (id: string | null, off?: string[]) => {
    draftFor.current = chatKey(id);
    setText(remembered().drafts?.[chatKey(id)] ?? "");
    setServersOff(off ?? remembered().chatServers?.[chatKey(id)] ?? []);
  };
  const chooseServers = (off: string[]) => {
    setServersOff(off);
    const all = { ...remembered().chatServers };
    if (off.length) all[chatKey(current)] = off;
    else delete all[chatKey(current)];
    remember("chatServers", all);
  };

  const refreshTotals = async (id: string | null) => {
    if (!id) return setTotals(null);
    try {
      const all = await listConversations(null);
      setTotals(all.find((c) => c.id === id) ?? null);
    } catch {
      setTotals(null);
    }
  };

  const toolCount = servers
    .filter((s) => s.status.state === "ready")
    .reduce((n, s) => n + s.tools.length, 0);

  // Only the latest card of a call id: a provider that reuses ids must not change older cards.
  const updateTool = (callId: string, change: Partial<Extract<Item, { type: "tool" }>>) =>
    setItems((all) => {
      let at = -1;
      all.forEach((it, i) => {
        if (it.type === "tool" && it.call.callId === callId) at = i;
      });
      return all.map((it, i) => (i === at && it.type === "tool" ? { ...it, ...change } : it));
    });

  // The text of a round arrives in pieces into one "streaming" item, which the round's whole
  // text then replaces (so what stays on screen is exactly what the model said).
  const settleText = (text: string, usage?: Usage, cost?: number | null) =>
    setItems((all) => {
      const last = all[all.length - 1];
      const done: Item = { type: "assistant", text, usage, cost };
      if (last?.type === "assistant" && last.streaming) return [...all.slice(0, -1), done];
      return text || usage ? [...all, done] : all;
    });

  // The backend stores a new chat before the model answers: at the turn's first event the list
  // can show it for real (and it becomes the current chat).
  const stored = useRef(true);
  const onEvent = (event: TurnEvent) => {
    if (!stored.current) {
      stored.current = true;
      currentConversation().then((id) => {
        if (!id) return;
        setCurrent(id);
        setListVersion((v) => v + 1);
      }, () => undefined);
    }
    switch (event.kind) {
      case "textDelta":
        setItems((all) => {
          const last = all[all.length - 1];
          if (last?.type === "assistant" && last.streaming) {
            return [...all.slice(0, -1), { ...last, text: last.text + event.text }];
          }
          return [...all, { type: "assistant", text: event.text, streaming: true }];
        });
        break;
      case "assistantText":
        settleText(event.text);
        break;
      case "approvalRequested": {
        const { kind: _kind, ...call } = event;
        void _kind;
        const heldAt = Date.now();
        const chat = totals?.title ? `the chat “${totals.title}”` : "this chat";
        const asker = provider ? `${chat} and its model, ${provider.model}` : chat;
        // The gate says when it denies the call; without that, the wait is the policy's: read
        // it now (it may have changed in Activity).
        if (call.deadline == null) {
          approvalRules().then(
            (policy) => {
              if (!policy) return;
              const deadline = heldAt + approvalWaitSecs(policy.approvalTimeoutSecs) * 1000;
              setItems((all) =>
                all.map((it) => (it.type === "tool" && it.call.id === call.id ? { ...it, deadline } : it)),
              );
            },
            () => undefined,
          );
        }
        setItems((all) => [
          // A result held for review: the call's own card is done; the review card follows.
          ...(call.request === "toolResult"
            ? all.map((it) =>
                it.type === "tool" && it.call.callId === call.callId && it.state === "running"
                  ? { ...it, state: "done" as const, output: "The result waits for your review below." }
                  : it,
              )
            : all),
          { type: "tool", call, state: "waiting", asker, deadline: call.deadline },
        ]);
        break;
      }
      case "decidedByRule": {
        // Decided without asking: shown with the rule that decided, never with buttons.
        const { kind: _kind, allowed, ...call } = event;
        void _kind;
        const outcome = `${allowed ? "Allowed" : "Denied"} by a rule, without asking${call.reason ? `: ${call.reason}` : ""}.`;
        setItems((all) => [...all, { type: "tool", call, state: allowed ? "running" : "denied", outcome }]);
        break;
      }
      case "unattended": {
        // Nobody could be asked (never in the window, which is always there to ask): denied.
        const { kind: _kind, ...call } = event;
        void _kind;
        setItems((all) => [...all, { type: "tool", call, state: "denied" }]);
        break;
      }
      case "toolStarted":
        updateTool(event.callId, { state: "running" });
        break;
      case "toolProgress": {
        if (event.task) {
          // A task has no share done, only a status and the server's message.
          const status = event.task.status.replace("_", " ");
          updateTool(event.callId, {
            progress: `running as a task on the server: ${status}${event.message ? ` (${event.message})` : ""}`,
          });
          break;
        }
        const share =
          event.total !== null && event.total > 0
            ? `${Math.round((100 * event.progress) / event.total)}%`
            : `${event.progress}`;
        updateTool(event.callId, { progress: event.message ? `${share} ${event.message}` : share });
        break;
      }
      case "retrying":
        setItems((all) => [
          // A retry starts the round's text afresh.
          ...all.filter((it) => !(it.type === "assistant" && it.streaming)),
          {
            type: "notice",
            text: `${event.reason}. Trying again in ${Math.ceil(event.delayMs / 1000)} s (attempt ${event.attempt}).`,
          },
        ]);
        break;
      case "toolFinished":
        updateTool(event.callId, {
          state: event.isError ? "failed" : "done",
          output: event.output,
          images: event.images,
          app: event.app,
        });
        break;
      case "toolDenied":
        // A card still waiting was never answered here: it timed out, or the turn was stopped.
        setItems((all) => {
          let at = -1;
          all.forEach((it, i) => {
            if (it.type === "tool" && it.call.callId === event.callId) at = i;
          });
          return all.map((it, i) =>
            i === at && it.type === "tool"
              ? {
                  ...it,
                  state: "denied" as const,
                  output: event.reason ?? undefined,
                  outcome: it.state === "waiting" ? unansweredOutcome(event.reason) : it.outcome,
                }
              : it,
          );
        });
        break;
      case "toolsSearched": {
        const names = event.found.map((f) => f.name);
        setItems((all) => [
          ...all,
          {
            type: "notice",
            text:
              names.length > 0
                ? `Searched the tools for “${event.query}”: loaded ${names.join(", ")}.`
                : `Searched the tools for “${event.query}”: nothing found.`,
          },
        ]);
        break;
      }
      case "usage":
        // Added to the conversation's totals as each model call ends (the backend saves them).
        setTotals((t) =>
          t
            ? {
                ...t,
                inputTokens: t.inputTokens + event.usage.inputTokens,
                outputTokens: t.outputTokens + event.usage.outputTokens,
                cacheReadTokens: t.cacheReadTokens + event.usage.cacheReadTokens,
                cacheWriteTokens: t.cacheWriteTokens + event.usage.cacheWriteTokens,
                costMicroUsd: t.costMicroUsd + (event.costMicroUsd ?? 0),
                unpricedCalls: t.unpricedCalls + (event.costMicroUsd === null ? 1 : 0),
              }
            : t,
        );
        break;
      case "finished":
        settleText(event.text, event.usage, event.costMicroUsd);
        break;
      case "failed":
        break; // The command's rejection carries the same message; shown once, below.
    }
  };

  const send = async () => {
    const message = text.trim();
    if (!message || busy) return;
    const attached = attachments;
    setText("");
    setAttachments([]);
    setBusy(true);
    following.current = true;
    if (!current) {
      stored.current = false;
      setPendingTitle(message.split("\n")[0].slice(0, 60));
    }
    const shown = attached.length > 0 ? `${message}\n\n(attached: ${attached.map((a) => a.label).join(", ")})` : message;
    setItems((all) => [...all, { type: "user", text: shown }]);
    try {
      await sendMessage(message, onEvent, {
        serversOff,
        attachments: attached.map(({ serverId, uri }) => ({ serverId, uri })),
      });
    } catch (e) {
      // The user's Stop is their choice, said as such, not as an error.
      const ended: Item = wasStopped(e)
        ? { type: "notice", text: "You stopped this answer. What was written so far is kept." }
        : { type: "error", text: errorMessage(e) };
      // What was written before the end stays, as written so far: no longer "writing".
      setItems((all) => [...all.map((it) => (it.type === "assistant" && it.streaming ? { ...it, streaming: false } : it)), ended]);
    } finally {
      setBusy(false);
      setPendingTitle(null);
      stored.current = true;
      // The first message of a new chat creates its stored conversation, which keeps the
      // chat's choice of servers (and its totals of tokens and cost).
      currentConversation().then((id) => {
        if (id && !current) {
          draftFor.current = chatKey(id);
          const all = { ...remembered().chatServers };
          delete all.new;
          if (serversOff.length) all[id] = serversOff;
          remember("chatServers", all);
        }
        setCurrent(id);
        void refreshTotals(id);
      }, () => undefined);
      setListVersion((v) => v + 1);
      input.current?.focus();
    }
  };

  const open = async (id: string) => {
    try {
      const messages = await openConversation(id);
      following.current = true;
      setItems(itemsFromMessages(messages));
      setCurrent(id);
      void refreshTotals(id);
      showChat(id);
      onShow?.();
    } catch (e) {
      setItems((all) => [...all, { type: "error", text: errorMessage(e) }]);
    }
  };

  // Rejects with the reason when the gate refuses the answer (edited arguments that do not fit).
  const answer = async (call: PendingCall, decision: Decision) => {
    try {
      await answerApproval(call.id, decision);
    } catch (e) {
      throw new Error(errorMessage(e), { cause: e });
    }
    const approved = decision.decision !== "deny" && decision.decision !== "denyAlways";
    // The user answered: what comes next (the result, the model's reply) is what they want to see.
    following.current = true;
    // Events may already have moved the card on (a fast tool finishes before this returns).
    setItems((all) =>
      all.map((it) =>
        it.type === "tool" && it.call.id === call.id && it.state === "waiting"
          ? { ...it, state: approved ? "running" : "denied", outcome: outcomeOf(decision, call.client) }
          : it.type === "tool" && it.call.id === call.id && !it.outcome
            ? { ...it, outcome: outcomeOf(decision, call.client) }
            : it,
      ),
    );
  };

  // Screen readers read the streamed answer once it is whole, not piece by piece.
  const streaming = items.some((it) => it.type === "assistant" && it.streaming);
  const waiting = items.filter((it) => it.type === "tool" && it.state === "waiting").length;

  const answerEvery = async (decision: Decision) => {
    try {
      await answerAll(decision);
    } catch (e) {
      setItems((all) => [...all, { type: "error", text: errorMessage(e) }]);
    }
  };

  const clear = async () => {
    await resetConversation();
    setItems([]);
    setCurrent(null);
    setTotals(null);
    showChat(null, []);
    setListVersion((v) => v + 1);
    input.current?.focus();
  };

  // Not while a turn runs: Stop it first (a new chat waits for the turn to end).
  useImperativeHandle(ref, () => ({ newChat: () => void (busy ? undefined : clear()) }));

  // The chat's tokens and cost: the saved conversation's totals (kept up to date by each model
  // call's usage), or, before it is saved, the turns on screen.
  const onScreen = items.reduce(
    (sum, it) =>
      it.type === "assistant" && it.usage
        ? {
            inputTokens: sum.inputTokens + it.usage.inputTokens,
            outputTokens: sum.outputTokens + it.usage.outputTokens,
            cacheReadTokens: sum.cacheReadTokens + it.usage.cacheReadTokens,
            cacheWriteTokens: sum.cacheWriteTokens + it.usage.cacheWriteTokens,
            cost: sum.cost === null || it.cost === null || it.cost === undefined ? null : sum.cost + it.cost,
          }
        : sum,
    { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 as number | null },
  );
  const usage = totals ?? { ...onScreen, unpricedCalls: 0 };
  const cost = totals
    ? totals.costMicroUsd > 0 || totals.unpricedCalls === 0
      ? totals.costMicroUsd
      : null
    : onScreen.cost;
  const list = (
    <Conversations
      version={listVersion}
      current={current}
      busy={busy}
      pending={pendingTitle}
      onOpen={(id) => void open(id)}
      onDeleted={(id) => {
        if (id === current) {
          setItems([]);
          setCurrent(null);
          showChat(null, []);
        }
      }}
    />
  );

  return (
    <div className="chat-layout">
    {listHost ? createPortal(list, listHost) : list}
    <div className="panel chat">
      <ChatHeader
        provider={provider}
        servers={servers}
        serversOff={serversOff}
        onServersOff={chooseServers}
        usage={usage}
        cost={cost}
        unpriced={usage.unpricedCalls}
        busy={busy}
        onProvider={onProvider}
        onSetUp={onOpenProvider}
      />
      {items.length === 0 && !busy && !(provider && provider.keyNeeded && !provider.keySet && !welcomed) && (
        <div className="empty chat-empty" data-testid="chat-empty">
          <h3>What can I help with?</h3>
          <p className="muted">
            {toolCount > 0
              ? `Type a message below. The model can use ${toolCount} ${toolCount === 1 ? "tool" : "tools"} from your servers, and every call waits for your approval unless a rule allows it.`
              : "Type a message below. No server's tools are on yet: add a server under Servers to let the model use tools, each call with your approval."}
          </p>
        </div>
      )}
      {provider && provider.keyNeeded && !provider.keySet && !welcomed && (
        <FirstRun
          onDismiss={() => {
            dismiss("first-run");
            setWelcomed(true);
          }}
          toolCount={toolCount}
          onOpenProvider={onOpenProvider}
          onProvider={(view) => {
            onProvider?.(view);
            input.current?.focus();
          }}
          onImportFrom={onImportFrom}
        />
      )}
      <ol
        className="messages"
        ref={messageList}
        onScroll={onMessagesScroll}
        aria-live="polite"
        aria-busy={streaming}
        aria-label="Messages"
        data-testid="messages"
      >
        {items.map((item, i) => (
          <li key={i} className={`msg ${item.type}`}>
            {item.type === "user" && <p data-testid="user-message">{item.text}</p>}
            {item.type === "assistant" && (
              <>
                <div className="markdown" data-testid="assistant-message">
                  <Markdown text={item.text} />
                </div>
                {item.streaming && (
                  <p className="writing muted small" data-testid="assistant-writing">
                    <span className="spinner" aria-hidden="true" /> Writing…
                  </p>
                )}
                {item.usage && (
                  <span className="muted small" data-testid="turn-usage">
                    {describeUsage(item.usage, item.cost)}
                  </span>
                )}
              </>
            )}
            {item.type === "tool" && (
              <ApprovalCard
                call={item.call}
                state={item.state}
                output={item.output}
                images={item.images}
                progress={item.progress}
                asker={item.asker}
                description={toolDescription(servers, item.call)}
                deadline={item.deadline}
                outcome={item.outcome}
                onAnswer={(decision) => answer(item.call, decision)}
              />
            )}
            {item.type === "tool" && item.app && <McpApp app={item.app} serverName={item.call.serverName} />}
            {item.type === "notice" && (
              <p className="muted" role="status" data-testid="chat-notice">
                {item.text}
              </p>
            )}
            {item.type === "error" && (
              <p className="error callout" role="alert" data-testid="chat-error">
                <WithIcon icon={STATUS_ICONS.failed}>{item.text}</WithIcon>
              </p>
            )}
          </li>
        ))}
      </ol>
      {waiting > 1 && (
        <div className="row" data-testid="answer-all">
          <span className="muted">{waiting} calls are waiting:</span>
          <button type="button" onClick={() => void answerEvery({ decision: "approve" })}>
            Approve all
          </button>
          <button type="button" onClick={() => void answerEvery({ decision: "deny", reason: null })}>
            Deny all
          </button>
        </div>
      )}
      {attachments.length > 0 && (
        <ul className="attachments plain row wrap" aria-label="Attached resources" data-testid="attachments">
          {attachments.map((a, i) => (
            <li key={`${a.serverId}|${a.uri}`} className="badge">
              {a.label}{" "}
              <button
                type="button"
                className="link"
                aria-label={`Remove ${a.label}`}
                onClick={() => setAttachments((all) => all.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <ChatExtras
        servers={servers}
        onAttach={(a) =>
          setAttachments((all) =>
            all.some((b) => b.serverId === a.serverId && b.uri === a.uri) ? all : [...all, a],
          )
        }
        onInsert={(inserted) => {
          setText((current) => (current.trim() ? `${current}\n\n${inserted}` : inserted));
          input.current?.focus();
        }}
      />
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        <label htmlFor="chat-input" className="sr-only">
          Message
        </label>
        <textarea
          id="chat-input"
          ref={input}
          value={text}
          rows={2}
          placeholder={
            busy ? "Working… (Esc stops)" : "Ask something (Enter sends, Shift+Enter for a new line)"
          }
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape" && busy) {
              e.preventDefault();
              stop();
            } else if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              send();
            }
          }}
        />
        {busy ? (
          <button id="chat-stop" type="button" onClick={stop}>
            <WithIcon icon={ACTION_ICONS.stop}>Stop</WithIcon>
          </button>
        ) : (
          <button id="chat-send" type="submit" disabled={!text.trim()}>
            <WithIcon icon={ACTION_ICONS.send}>Send</WithIcon>
          </button>
        )}
      </form>
    </div>
    </div>
  );
}
