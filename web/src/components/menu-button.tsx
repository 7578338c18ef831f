import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";

export interface MenuItem {
  label: string;
  onSelect: () => void;
  disabled?: boolean;
  // Drawn as a destructive action.
  danger?: boolean;
  // The item's tooltip.
  title?: string;
}

// MenuButton is a button that opens a menu of actions, after the WAI-ARIA
// menu button pattern: Enter, Space or the arrow keys open it on its
// first (last, for ArrowUp) item; the arrow keys, Home and End move
// between the items, Enter or Space picks one; Escape closes the menu
// and gives focus back to the button, Tab or a click elsewhere closes
// it. A disabled item stays in the list, focusable and marked
// aria-disabled, so a keyboard user learns it is there.
// buttonClassName styles the button itself (the bar's look, say).
export function MenuButton({ label, items, className, buttonClassName }: { label: string; items: MenuItem[]; className?: string; buttonClassName?: string }) {
  const [open, setOpen] = useState(false);
  // The item to focus when the menu opens.
  const [start, setStart] = useState<"first" | "last">("first");
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);

  const entries = () => [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];

  useEffect(() => {
    if (!open) return;
    const list = entries();
    (start === "last" ? list[list.length - 1] : list[0])?.focus();
    const away = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", away);
    return () => document.removeEventListener("pointerdown", away);
  }, [open, start]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };

  const openAt = (where: "first" | "last") => {
    setStart(where);
    setOpen(true);
  };

  const onButtonKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      openAt(e.key === "ArrowUp" ? "last" : "first");
    }
  };

  const onMenuKey = (e: KeyboardEvent<HTMLUListElement>) => {
    const list = entries();
    const at = list.indexOf(document.activeElement as HTMLElement);
    let next: number | undefined;
    switch (e.key) {
      case "ArrowDown":
        next = (at + 1) % list.length;
        break;
      case "ArrowUp":
        next = (at - 1 + list.length) % list.length;
        break;
      case "Home":
        next = 0;
        break;
      case "End":
        next = list.length - 1;
        break;
      case "Escape":
        e.preventDefault();
        // The menu closes, not what holds it (a dialog, the page's keys).
        e.stopPropagation();
        close(true);
        return;
      case "Tab":
        close(false);
        return;
      default:
        return;
    }
    e.preventDefault();
    list[next]?.focus();
  };

  const pick = (item: MenuItem) => {
    if (item.disabled) return;
    close(true);
    item.onSelect();
  };

  return (
    <div className={`menu-button ${className ?? ""}`} ref={root}>
      <button
        ref={button}
        type="button"
        className={buttonClassName}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        onClick={() => (open ? close(false) : openAt("first"))}
        onKeyDown={onButtonKey}
      >
        {label} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <ul id={id} role="menu" aria-label={label} className="menu" ref={menu} onKeyDown={onMenuKey}>
          {items.map((item) => (
            <li
              key={item.label}
              role="menuitem"
              tabIndex={-1}
              aria-disabled={item.disabled || undefined}
              title={item.title}
              className={item.danger ? "danger" : undefined}
              onClick={() => pick(item)}
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  pick(item);
                }
              }}
            >
              {item.label}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
