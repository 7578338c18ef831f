import { Fragment } from "react";
import { keyLabels, useShortcutList, type ShortcutRegistry } from "../lib/shortcuts";
import { Dialog } from "./dialog";

// ShortcutHelpDialog lists every registered shortcut, by group.
export function ShortcutHelpDialog({
  open,
  onClose,
  registry,
}: {
  open: boolean;
  onClose: () => void;
  registry?: ShortcutRegistry;
}) {
  const list = useShortcutList(registry);
  // General first, then the groups in the order they registered.
  const groups = new Map<string, typeof list[number][]>([["General", []]]);
  for (const s of list) {
    const g = s.group ?? "General";
    groups.set(g, [...(groups.get(g) ?? []), s]);
  }
  return (
    <Dialog open={open} onClose={onClose} title="Keyboard shortcuts" className="shortcut-help">
      {[...groups].filter(([, items]) => items.length > 0).map(([group, items]) => (
        <section key={group} aria-label={group}>
          <h3>{group}</h3>
          <dl className="shortcut-list">
            {items.map((s) => (
              <Fragment key={`${s.keys}\n${s.description}`}>
                <dt>
                  {keyLabels(s.keys).map((chord, i) => (
                    <Fragment key={i}>
                      {i > 0 && <span className="then"> then </span>}
                      {chord.map((k, j) => (
                        <Fragment key={j}>
                          {j > 0 && "+"}
                          <kbd>{k}</kbd>
                        </Fragment>
                      ))}
                    </Fragment>
                  ))}
                </dt>
                <dd>{s.description}</dd>
              </Fragment>
            ))}
          </dl>
        </section>
      ))}
    </Dialog>
  );
}
