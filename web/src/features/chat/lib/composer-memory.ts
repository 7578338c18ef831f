// What each session's composer held when its chat was left, for the
// page's life, so coming back finds the text where it was.
const held = new Map<string, string>();

export function heldText(id: string): string {
  return held.get(id) ?? "";
}

export function holdText(id: string, text: string): void {
  if (text === "") held.delete(id);
  else held.set(id, text);
}
