// The command palette (Ctrl+K): every action of the window by name. Type to filter, arrows to
// move, Enter to run, Escape to close. A command may open a second list (the models to switch
// to), loaded when it is chosen.
import { useEffect, useMemo, useRef, useState } from "react";

export interface PaletteCommand {
  id: string;
  label: string;
  /** Shown beside the label, and searched too (e.g. "Go to", "Server"). */
  group?: string;
  /** The key combination that also runs it, shown as a hint. */
  shortcut?: string;
  /** Runs the command; the palette closes first. */
  run?: () => void;
  /** Opens a second list instead of running. */
  then?: PaletteStage;
}

/** A second list: its items, loaded when it opens, and what typing may add. */
export interface PaletteStage {
  title: string;
  placeholder: string;
  load: () => Promise<PaletteCommand[]>;
  /** A command made of what was typed (a model name the list does not have). */
  custom?: (query: string) => PaletteCommand | null;
}

/** Commands whose label (or group) has every typed word, in their order. */
export function filterCommands(commands: PaletteCommand[], query: string): PaletteCommand[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return commands;
  return commands.filter((c) => {
    const text = `${c.group ?? ""} ${c.label}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

interface Props {
  open: boolean;
  onClose: () => void;
  commands: PaletteCommand[];
}

export default function CommandPalette({ open, onClose, commands }: Props) {
  if (!open) return null;
  return <Palette onClose={onClose} commands={commands} />;
}

function Palette({ onClose, commands }: { onClose: () => void; commands: PaletteCommand[] }) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [stage, setStage] = useState<PaletteStage | null>(null);
  const [staged, setStaged] = useState<PaletteCommand[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  // Focus goes back where it was when the palette closes.
  const before = useRef<Element | null>(document.activeElement);

  useEffect(() => {
    input.current?.focus();
    const back = before.current;
    return () => {
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    };
  }, []);

  const shown = useMemo(() => {
    const base = filterCommands(stage ? (staged ?? []) : commands, query);
    const extra = stage?.custom?.(query.trim());
    return extra && !base.some((c) => c.label === extra.label) ? [...base, extra] : base;
  }, [commands, query, stage, staged]);
  const current = Math.min(active, Math.max(shown.length - 1, 0));

  const choose = (command: PaletteCommand | undefined) => {
    if (!command) return;
    if (command.then) {
      const next = command.then;
      setStage(next);
      setStaged(null);
      setQuery("");
      setActive(0);
      setProblem(null);
      next.load().then(setStaged, (e: unknown) => {
        setStaged([]);
        setProblem(e instanceof Error ? e.message : String((e as { message?: string })?.message ?? e));
      });
      input.current?.focus();
      return;
    }
    onClose();
    command.run?.();
  };

  const onKey = (e: React.KeyboardEvent) => {
    if (e.key === "Tab") {
      // Focus stays in the palette while it is open: the list is moved with the arrows.
      e.preventDefault();
    } else if (e.key === "Escape") {
      e.preventDefault();
      if (stage) {
        setStage(null);
        setQuery("");
        setActive(0);
      } else onClose();
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      setActive((current + 1) % Math.max(shown.length, 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((current + shown.length - 1) % Math.max(shown.length, 1));
    } else if (e.key === "Enter") {
      e.preventDefault();
      choose(shown[current]);
    }
  };

  const optionId = (i: number) => `palette-option-${i}`;
  return (
    <div className="palette-backdrop" onMouseDown={onClose}>
      <div
        className="palette"
        role="dialog"
        aria-modal="true"
        aria-label={stage ? stage.title : "Command palette"}
        data-testid="command-palette"
        onMouseDown={(e) => e.stopPropagation()}
        onKeyDown={onKey}
      >
        <input
          ref={input}
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-autocomplete="list"
          aria-activedescendant={shown.length ? optionId(current) : undefined}
          aria-label={stage ? stage.title : "Type a command"}
          placeholder={stage ? stage.placeholder : "Type a command (Enter runs it, Esc closes)"}
          data-testid="palette-input"
          value={query}
          spellCheck={false}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
        />
        {stage && staged === null && (
          <p className="muted small" role="status">
            Loading…
          </p>
        )}
        {problem && (
          <p className="error small" role="alert">
            {problem}
          </p>
        )}
        <ul id="palette-list" role="listbox" aria-label="Commands" className="palette-list">
          {shown.map((c, i) => (
            <li
              key={c.id}
              id={optionId(i)}
              role="option"
              aria-selected={i === current}
              data-testid={`palette-${c.id}`}
              onMouseMove={() => setActive(i)}
              onClick={() => choose(c)}
            >
              {c.group && <span className="muted small">{c.group}: </span>}
              {c.label}
              {c.then && <span aria-hidden="true"> …</span>}
              {c.shortcut && <kbd aria-hidden="true">{c.shortcut}</kbd>}
            </li>
          ))}
          {shown.length === 0 && !(stage && staged === null) && (
            <li className="muted small" role="option" aria-selected="false" aria-disabled="true">
              Nothing matches “{query}”.
            </li>
          )}
        </ul>
      </div>
    </div>
  );
}
