// Icons come from one well-kept set (lucide-react), at one size, always beside a word that names
// the thing (an icon alone is never the only label) and hidden from screen readers. A screen or a
// settings section has one icon, on its tab and on its heading alike; an action's icon is the
// same on each button that carries one.
import {
  ArrowLeftRight,
  Bot,
  CircleAlert,
  KeyRound,
  LogIn,
  MessagesSquare,
  Plus,
  RotateCw,
  SendHorizontal,
  Server,
  Settings,
  ShieldCheck,
  SlidersHorizontal,
  Square,
  Stethoscope,
  Tags,
  type LucideIcon,
} from "lucide-react";

export const ICON_SIZE = 16;

/** Inside a badge (small text), icons are this size: the one other size. */
export const BADGE_ICON_SIZE = 12;

/** Each screen's icon: its tab in the sidebar and its heading. */
export const SCREEN_ICONS = {
  chat: MessagesSquare,
  servers: Server,
  activity: ShieldCheck,
  provider: Bot,
  settings: Settings,
} satisfies Record<string, LucideIcon>;

/** Each settings section's icon: its entry in the section list and its heading. */
export const SECTION_ICONS = {
  general: SlidersHorizontal,
  tools: Tags,
  secrets: KeyRound,
  import: ArrowLeftRight,
  diagnostics: Stethoscope,
} satisfies Record<string, LucideIcon>;

/** Actions, one icon each wherever their buttons are. */
export const ACTION_ICONS = {
  /** Add server, New rule, New chat. */
  add: Plus,
  send: SendHorizontal,
  stop: Square,
  restart: RotateCw,
  signIn: LogIn,
} satisfies Record<string, LucideIcon>;

/** States said with an icon beside their words. */
export const STATUS_ICONS = {
  failed: CircleAlert,
} satisfies Record<string, LucideIcon>;
