// A handle between two panels that sets the first one's width: dragged with the pointer, or
// moved with the arrow keys (Home and End for the limits). The width is remembered by name.
import { useRef } from "react";

export const SPLITTER_STEP = 16;

interface Props {
  /** What it resizes, for its accessible name ("Resize the sidebar"). */
  label: string;
  width: number;
  min: number;
  max: number;
  onChange: (width: number) => void;
  testId?: string;
}

export default function Splitter({ label, width, min, max, onChange, testId }: Props) {
  const drag = useRef<{ from: number; width: number } | null>(null);
  const clamp = (w: number) => Math.round(Math.min(max, Math.max(min, w)));
  return (
    <div
      className="splitter"
      role="separator"
      aria-orientation="vertical"
      aria-label={label}
      aria-valuenow={width}
      aria-valuemin={min}
      aria-valuemax={max}
      tabIndex={0}
      data-testid={testId}
      onPointerDown={(e) => {
        drag.current = { from: e.clientX, width };
        e.currentTarget.setPointerCapture?.(e.pointerId);
      }}
      onPointerMove={(e) => {
        if (drag.current) onChange(clamp(drag.current.width + e.clientX - drag.current.from));
      }}
      onPointerUp={() => {
        drag.current = null;
      }}
      onKeyDown={(e) => {
        const to =
          e.key === "ArrowLeft"
            ? width - SPLITTER_STEP
            : e.key === "ArrowRight"
              ? width + SPLITTER_STEP
              : e.key === "Home"
                ? min
                : e.key === "End"
                  ? max
                  : null;
        if (to === null) return;
        e.preventDefault();
        onChange(clamp(to));
      }}
    />
  );
}
