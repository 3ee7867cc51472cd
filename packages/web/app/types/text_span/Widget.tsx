/**
 * `text_span`: the claim's `data_text`, cut into tokens, on which spans of the entity types are marked;
 * offsets are code points (spans.ts), never UTF-16 units.
 *
 * Mouse: select text, then press a key 1-9 (or click an entity type) to mark it; a span's Remove button
 * removes it. Keyboard: arrows move a caret over the tokens, Shift+arrows extend the selection, keys 1-9
 * mark it, Delete/Backspace removes the spans under it. A new span replaces those it overlaps. Enter sends
 * `{spans}`.
 *
 * A text may have 100,000 code points: it is drawn in chunks (spans.ts `chunksOf`: paragraphs, a few
 * sentences), each a block of its own (label.css `.span-chunk`) and a memoized component, so a key press
 * re-renders and lays out only the chunks whose spans, selection or caret it changes.
 */
import { Alert, Button, Kbd, Stack, Text, Title } from "@mantine/core";
import { memo, useLayoutEffect, useMemo, useRef, useState } from "react";
import {
  addSpan,
  type Chunk,
  chunksOf,
  clipRange,
  codePointOffset,
  codePointsOf,
  removeSpans,
  type Span,
  sameRange,
  sameSpans,
  segmentsIn,
  spansIn,
  type Token,
  tokenAt,
  tokenize,
  tokenRange,
  trimRange,
} from "../../label/spans";
import { ChoiceButtons } from "../../label/widgets/ChoiceButtons";
import { Media } from "../../label/widgets/Media";
import { CHOICE_COLORS, pickOnKey, submitOnEnter, useKeyHandler, type WidgetProps } from "../../label/widgets/types";

/** The code-point offset of a DOM selection boundary inside `container` (segments carry data-start/data-end). */
function boundaryOffset(container: HTMLElement, node: Node, offset: number, length: number): number | null {
  if (!container.contains(node)) return null;
  if (node.nodeType === Node.TEXT_NODE) {
    const segment = node.parentElement?.closest<HTMLElement>("[data-start]");
    if (!segment) return null;
    return Number(segment.dataset.start) + codePointOffset(node.textContent ?? "", offset);
  }
  if (!(node instanceof Element)) return null;
  const child = node.childNodes[offset];
  if (child instanceof Element) {
    const segment = child.matches("[data-start]") ? child : child.querySelector("[data-start]");
    if (segment instanceof HTMLElement) return Number(segment.dataset.start);
  }
  const segment = node.closest<HTMLElement>("[data-start]");
  if (segment) return Number(segment.dataset.end);
  // past the last run of a chunk
  const chunk = node.closest<HTMLElement>("[data-chunk-end]");
  return chunk ? Number(chunk.dataset.chunkEnd) : length;
}

/** The code-point range of the page's text selection inside `container`, trimmed of white space, or null. */
function selectedRange(container: HTMLElement | null, chars: readonly string[]): [number, number] | null {
  const selection = window.getSelection();
  if (!container || !selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
  const range = selection.getRangeAt(0);
  const a = boundaryOffset(container, range.startContainer, range.startOffset, chars.length);
  const b = boundaryOffset(container, range.endContainer, range.endOffset, chars.length);
  if (a === null || b === null) return null;
  return trimRange(chars, a, b);
}

/** The color class of entity type `label` (label.css `.choice-color-N`, by its place in `types`). */
function colorClass(types: readonly string[], label: string): string {
  return `choice-color-${Math.max(0, types.indexOf(label)) % CHOICE_COLORS}`;
}

interface TextChunkProps {
  chunk: Chunk;
  /** the whole text's code points and tokens (the same arrays for every chunk) */
  chars: readonly string[];
  tokens: readonly Token[];
  types: readonly string[];
  /** the spans sharing a code point with the chunk */
  spans: readonly Span[];
  /** the keyboard's selection clipped to the chunk, and the caret's token when in it (code points) */
  selected: [number, number] | null;
  caret: [number, number] | null;
}

/**
 * One chunk of the text as its runs (segments with data-start/data-end, code points). Memoized on the
 * values of its spans, selection and caret: a key press re-renders only the chunks it changes.
 */
const TextChunk = memo(
  function TextChunk({ chunk, chars, tokens, types, spans, selected, caret }: TextChunkProps) {
    const segments = segmentsIn(chunk, tokens, spans);
    return (
      <span className="span-chunk" data-chunk-start={chunk.start} data-chunk-end={chunk.end}>
        {segments.map((s) => {
          const span = spans[s.span];
          const inKeyboard = selected !== null && s.token !== -1 && selected[0] <= s.start && s.end <= selected[1];
          const classes = [
            "span-seg",
            span ? `span-mark ${colorClass(types, span.label)}` : "",
            inKeyboard ? "span-selected" : "",
            caret && s.start >= caret[0] && s.end <= caret[1] ? "span-caret" : "",
          ]
            .filter(Boolean)
            .join(" ");
          return (
            <span key={s.start} data-start={s.start} data-end={s.end} className={classes}>
              {chars.slice(s.start, s.end).join("")}
            </span>
          );
        })}
      </span>
    );
  },
  (a, b) =>
    a.chunk === b.chunk &&
    a.chars === b.chars &&
    a.tokens === b.tokens &&
    a.types === b.types &&
    sameSpans(a.spans, b.spans) &&
    sameRange(a.selected, b.selected) &&
    sameRange(a.caret, b.caret),
);

export function TextSpan({ claim, view, hotkeys, onAnswer, keys, footer }: WidgetProps) {
  const spec = claim.label_spec;
  const types = "entity_types" in spec ? spec.entity_types : [];
  const text = claim.data_text ?? "";
  const chars = useMemo(() => codePointsOf(text), [text]);
  const tokens = useMemo(() => tokenize(text), [text]);
  const [spans, setSpans] = useState<Span[]>([]);
  const [caret, setCaret] = useState(-1);
  const [anchor, setAnchor] = useState(-1);
  const container = useRef<HTMLDivElement>(null);
  const chunks = useMemo(() => chunksOf(chars, tokens), [chars, tokens]);
  const keyboardRange = caret === -1 ? null : tokenRange(tokens, anchor, caret);

  /** The range to act on: the mouse's text selection, else the keyboard's tokens. */
  const target = (): [number, number] | null => selectedRange(container.current, chars) ?? keyboardRange;
  const mark = (typeIndex: number) => {
    const label = types[typeIndex];
    const range = target();
    if (label === undefined || !range) return;
    setSpans((s) => addSpan(s, { start: range[0], end: range[1], label }));
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed) {
      selection.removeAllRanges();
      const at = tokenAt(tokens, range[0]);
      setCaret(at);
      setAnchor(at);
    }
  };
  const unmark = () => {
    const range = target();
    if (range) setSpans((s) => removeSpans(s, range[0], range[1]));
  };
  const submit = () => onAnswer({ spans });

  useKeyHandler(keys, (e) => {
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      if (tokens.length === 0) return;
      e.preventDefault();
      const next = caret === -1 ? 0 : Math.max(0, Math.min(tokens.length - 1, caret + (e.key === "ArrowLeft" ? -1 : 1)));
      setCaret(next);
      if (!e.shiftKey || caret === -1) setAnchor(next);
      window.getSelection()?.removeAllRanges();
      return;
    }
    if (submitOnEnter(e, submit) || e.repeat) return;
    if (e.key === "Escape") {
      setAnchor(caret);
      return;
    }
    if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      unmark();
      return;
    }
    pickOnKey(e, hotkeys, types.length, mark);
  });

  // keep the keyboard's caret in view in a long text
  useLayoutEffect(() => {
    if (caret === -1) return;
    container.current?.querySelector(".span-caret")?.scrollIntoView({ block: "nearest" });
  }, [caret]);

  const colorOf = (label: string) => colorClass(types, label);
  const caretToken = tokens[caret];

  return (
    <>
      <div className="label-media label-media-text">
        {claim.data_text === undefined ? (
          <Stack gap="xs">
            <Alert color="yellow" title="The text of this item is not available yet">
              Skip it, or open its source:
            </Alert>
            <Media view={view} />
          </Stack>
        ) : (
          // biome-ignore lint/a11y/useSemanticElements: a run of text to select, not a form group
          <div ref={container} className="span-text" role="group" aria-label="Text to label" data-testid="span-text">
            {chunks.map((c) => (
              <TextChunk
                key={c.start}
                chunk={c}
                chars={chars}
                tokens={tokens}
                types={types}
                spans={spansIn(spans, c)}
                selected={clipRange(keyboardRange, c)}
                caret={caretToken && caretToken.start < c.end && caretToken.end > c.start ? [caretToken.start, caretToken.end] : null}
              />
            ))}
          </div>
        )}
      </div>
      <Stack className="label-panel" gap="sm">
        <Title order={1} size="h3" id="question">
          {spec.question}
        </Title>
        <ChoiceButtons
          legend="Entity types: mark the selected text"
          label="Entity types"
          choices={types}
          hotkeys={hotkeys}
          onPick={mark}
          keepSelection
        />
        <ol className="label-parts" aria-label="Spans">
          {spans.map((s, i) => (
            <li key={`${s.start}-${s.end}`} className="label-part">
              <Text size="sm" className="label-part-text">
                <span className={`label-swatch ${colorOf(s.label)}`} aria-hidden="true" /> {s.label}: “
                {chars.slice(s.start, s.end).join("")}” ({s.start}–{s.end})
              </Text>
              <Button
                variant="subtle"
                color="red"
                size="xs"
                aria-label={`Remove span ${i + 1}`}
                onClick={() => setSpans((all) => all.filter((x) => x !== s))}
              >
                Remove
              </Button>
            </li>
          ))}
        </ol>
        <Button onClick={submit} rightSection={<Kbd>Enter</Kbd>}>
          Submit {spans.length === 0 ? "(no spans)" : `(${spans.length})`}
        </Button>
        {footer(
          "Select text (or move with the arrows, Shift+arrows to extend), then press " +
            `${[...hotkeys.options].slice(0, types.length).join(" ")} to mark it; Delete removes; Enter submits`,
        )}
      </Stack>
    </>
  );
}
