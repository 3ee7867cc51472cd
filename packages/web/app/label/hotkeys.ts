/**
 * The labeler's keyboard layout: the keys that pick options 1-9 (default `123456789`) and the key that
 * skips (default `s`). A labeler can change them (e.g. `asdfghjkl` for the home row); the layout is a
 * preference, not a secret, so it is kept in localStorage (the labeler key never is).
 */
export interface Hotkeys {
  /** one key per option position, up to 9 */
  options: string;
  skip: string;
}

export const DEFAULT_HOTKEYS: Hotkeys = { options: "123456789", skip: "s" };
/** The key that opens and closes a label space's instructions (Instructions.tsx): no layout may use it. */
export const INSTRUCTIONS_KEY = "i";
const ENTRY = "labelgate.hotkeys";

/** Why a layout cannot be used, or null when it can: single printable characters, none used twice. */
export function hotkeysProblem(h: Hotkeys): string | null {
  const keys = [...h.options, h.skip];
  if (h.options.length < 1 || h.options.length > 9) return "Give 1 to 9 option keys.";
  if ([...h.skip].length !== 1) return "Give one skip key.";
  if (keys.some((k) => !/^[\p{L}\p{N}\p{P}\p{S}]$/u.test(k))) return "Use letters, digits or punctuation (no spaces).";
  if (new Set(keys.map((k) => k.toLowerCase())).size !== keys.length) return "Each key may be used once.";
  if (keys.some((k) => k.toLowerCase() === INSTRUCTIONS_KEY)) return `${INSTRUCTIONS_KEY} opens the instructions: choose another key.`;
  return null;
}

export function loadHotkeys(): Hotkeys {
  const raw = localStorage.getItem(ENTRY);
  if (raw === null) return DEFAULT_HOTKEYS;
  try {
    const parsed = JSON.parse(raw) as Partial<Hotkeys>;
    const h = { options: String(parsed.options ?? ""), skip: String(parsed.skip ?? "") };
    return hotkeysProblem(h) === null ? h : DEFAULT_HOTKEYS;
  } catch {
    // a stored layout that is not JSON (edited by hand): the default layout
    return DEFAULT_HOTKEYS;
  }
}

export function saveHotkeys(h: Hotkeys): void {
  localStorage.setItem(ENTRY, JSON.stringify(h));
}

/** The option position (0-based) a key picks, or -1. */
export function optionOfKey(h: Hotkeys, key: string): number {
  return [...h.options].findIndex((k) => k.toLowerCase() === key.toLowerCase());
}

/** Whether a key press goes to a text field (typed, not a hotkey): a text input, a textarea, a select. */
export function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
  return target instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit"].includes(target.type);
}

/** Whether Enter on `target` is its own (a focused button or link activates it): a widget leaves it alone. */
export function activatesOnEnter(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.tagName === "BUTTON" || target.tagName === "A");
}
