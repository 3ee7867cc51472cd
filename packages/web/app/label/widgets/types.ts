/** What every task-type widget of the labeler app gets (registry.ts). */
import type { AnswerBody, Claim } from "@labelgate/sdk/browser";
import { type ReactNode, useLayoutEffect } from "react";
import { activatesOnEnter, type Hotkeys, optionOfKey } from "../hotkeys";
import type { ItemView } from "../queue";

/**
 * A widget's key handler: the app calls it with every key press that is not the app's own (skip) and not
 * typed into a text field; it calls `preventDefault()` on the keys it uses.
 */
export type KeyHandler = (e: KeyboardEvent) => void;

export interface WidgetProps {
  claim: Claim;
  /** the item as the queue prepared it (a preloaded image, a link) */
  view: ItemView;
  hotkeys: Hotkeys;
  /** sends the answer body of the claim's task type and moves to the next item */
  onAnswer: (answer: AnswerBody) => void;
  /** where the widget puts its key handler (the app has one window listener) */
  keys: { current: KeyHandler | null };
  /** the panel's last rows (the keys hint with skip, the Skip button, the task id), given the widget's hint */
  footer: (hint: string) => ReactNode;
}

/** A widget: renders the item and the answer panel of one task type. */
export type Widget = (props: WidgetProps) => ReactNode;

/** Classes, entity types and their marks cycle through this many colors (label.css `.choice-color-N`). */
export const CHOICE_COLORS = 8;

/**
 * Installs `handler` as the widget's key handler after each render (so it sees that render's state), and removes
 * it when the widget unmounts: the app's one window listener calls `keys.current`.
 */
export function useKeyHandler(keys: WidgetProps["keys"], handler: KeyHandler): void {
  useLayoutEffect(() => {
    keys.current = handler;
    return () => {
      keys.current = null;
    };
  });
}

/**
 * Enter submits the answer, unless the key is held down or a focused button or link takes it (hotkeys.ts
 * `activatesOnEnter`). Returns whether the key was Enter, so the widget's handler stops there.
 */
export function submitOnEnter(e: KeyboardEvent, submit: () => void): boolean {
  if (e.key !== "Enter") return false;
  if (!e.repeat && !activatesOnEnter(e.target)) {
    e.preventDefault();
    submit();
  }
  return true;
}

/**
 * A choice key (hotkeys 1-9 or the labeler's layout) picks choice `index` of `count` (0-based): calls `pick` and
 * `preventDefault()`. Returns whether it did; a key past the last choice picks nothing.
 */
export function pickOnKey(e: KeyboardEvent, hotkeys: Hotkeys, count: number, pick: (index: number) => void): boolean {
  const index = optionOfKey(hotkeys, e.key);
  if (index === -1 || index >= count) return false;
  e.preventDefault();
  pick(index);
  return true;
}
