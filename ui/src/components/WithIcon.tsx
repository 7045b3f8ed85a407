// A word with its icon before it: the icon at the one size, hidden from screen readers (the word
// is the name), never shrunk by a long word.
import type { ReactNode } from "react";
import type { LucideIcon } from "lucide-react";
import { ICON_SIZE } from "../icons";

/** Inside a button or a label: `<button><WithIcon icon={Plus}>Add server</WithIcon></button>`. */
export function WithIcon({ icon: Icon, children }: { icon: LucideIcon; children: ReactNode }) {
  return (
    <span className="with-icon">
      <Icon size={ICON_SIZE} aria-hidden="true" />
      {children}
    </span>
  );
}

/** A screen's or a settings section's heading, with the icon its tab has. */
export function ScreenHeading({ icon: Icon, id, children }: { icon: LucideIcon; id?: string; children: ReactNode }) {
  return (
    <h2 id={id} className="with-icon">
      <Icon size={ICON_SIZE} aria-hidden="true" />
      {children}
    </h2>
  );
}
