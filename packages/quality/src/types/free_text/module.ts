/**
 * `free_text` as a task type module (contract §task-types; the core is this folder's consensus.ts, fit.ts,
 * decide.ts, decision 0280): answers are compared as their words after the spec's `normalize`; the consensus is
 * the weighted word vote (`textConsensus`) with a calibrated confidence per word and for the whole text; the
 * labeler model (word accuracy per labeler, the two calibration maps) is stored as one space row and one row per
 * labeler; a gold answer matches when the texts are equal after normalization (docs/decisions/0281).
 *
 * Stopping (decide.ts `decideText`) through parts.ts `decideParts`: one part per slot of the consensus (its
 * calibrated confidence; no counts, so it takes no part in the threshold policy) and one counted part, "the
 * largest group of equal normalized answers" (counts [that group, the other answers], posterior [1, 0]): under
 * the threshold policy it settles the task when the group holds `consensus_threshold` answers; under the
 * confidence policy its posterior is 1 and only the slots decide (every word's confidence >= the target).
 */
import type { FreeTextSpec } from "@labelgate/api";
import { freeTextAnswer as freeTextAnswerShape, freeTextSpec } from "@labelgate/api";
import { canonicalJson } from "@labelgate/canonical-json";
import type { Part } from "../../parts";
import {
  type LabeledAnswer,
  type ModelRows,
  refinedAnswer,
  type StoredTypedLabeler,
  type StoredTypedSpace,
  type TaskTypeDefinition,
  typedTaskType,
} from "../module";
import { emptyTextModel, type TextAnswer, type TextMap, type TextModel, textConsensus, textParts } from "./consensus";
import { equalAnswers } from "./decide";
import { fitTextModel } from "./fit";
import { DEFAULT_NORMALIZATION, type Normalization, normalizeText, normalizeWords } from "./normalize";

export interface FreeTextAnswerBody {
  text: string;
}
/** The consensus of a free-text task: the normalized text, its words with their confidences, the aligned answers. */
export interface FreeTextConsensusBody {
  text: string;
  words: { word: string; confidence: number }[];
  /** per slot of the alignment: the consensus choice (null: no word), its confidence, each answer's word */
  slots: { word: string | null; confidence: number; answers: (string | null)[] }[];
}

/** The space row of a free-text space: the population's accuracy and the two calibration maps. */
export interface StoredTextSpace extends StoredTypedSpace {
  defaultAccuracy: number;
  word: TextMap;
  text: TextMap;
}
/** A labeler's row of a free-text space: its word accuracy. */
export interface StoredTextLabeler extends StoredTypedLabeler {
  accuracy: number;
}

const modeOf = (spec: FreeTextSpec): Normalization => spec.normalize ?? DEFAULT_NORMALIZATION;

/** The answers as the consensus takes them: their labeler and normalized words. */
function textAnswers(spec: FreeTextSpec, answers: readonly LabeledAnswer<FreeTextAnswerBody>[]): TextAnswer[] {
  const mode = modeOf(spec);
  return answers.map((a) => ({ labelerId: a.labelerId, words: normalizeWords(a.answer.text, mode) }));
}

/** The one counted part: the largest group of equal normalized answers (module doc). */
function equalGroupPart(answers: readonly TextAnswer[]): Part {
  const equal = equalAnswers(answers.map((a) => a.words));
  return { posterior: [1, 0], counts: [equal, answers.length - equal] };
}

/** The stopping parts of a consensus (module doc). */
function stoppingParts(consensus: ReturnType<typeof textConsensus>, answers: readonly TextAnswer[]): Part[] {
  const slots: Part[] = textParts(consensus).map((p) => ({ posterior: p.posterior, counts: null }));
  if (slots.length === 0) slots.push({ posterior: [consensus.confidence, 1 - consensus.confidence], counts: null });
  return [...slots, equalGroupPart(answers)];
}

export const freeTextType: TaskTypeDefinition<FreeTextSpec, FreeTextAnswerBody, TextModel, FreeTextConsensusBody> = {
  type: "free_text",
  labelSpec: freeTextSpec,
  answerSchema: (spec) => refinedAnswer("free_text", freeTextAnswerShape, spec, {}),
  canonicalAnswer: (_spec, answer) => ({ text: answer.text.replace(/\r\n?/g, "\n").trim() }),
  emptyModel: () => emptyTextModel(),
  // the fit has no warm start: two leave-one-out rounds from the population default (fit.ts)
  fit: (spec, tasks) =>
    fitTextModel(
      tasks.map((t) => ({
        id: t.id,
        answers: textAnswers(spec, t.answers),
        gold: t.gold ? normalizeWords(t.gold.text, modeOf(spec)) : undefined,
      })),
    ),
  aggregate: (spec, model, answers) => {
    const texts = textAnswers(spec, answers);
    const c = textConsensus(model, texts);
    return {
      consensus: {
        text: c.text,
        words: c.words.map((word, i) => ({ word, confidence: c.wordConfidences[i] as number })),
        slots: c.slots.map((s) => ({ word: s.word, confidence: s.confidence, answers: s.votes })),
      },
      consensusLabel: canonicalJson({ text: c.text }),
      confidence: c.confidence,
      parts: stoppingParts(c, texts),
    };
  },
  // the threshold policy reads only the group of equal answers: no alignment until it settles the task
  countedParts: (spec, answers) => [equalGroupPart(textAnswers(spec, answers))],
};

/** The text model as a space row and a row per labeler (its accuracy), and back. */
const textRows: ModelRows<TextModel> = {
  split: (model) => ({
    space: { parts: [], defaultAccuracy: model.defaultAccuracy, word: model.word, text: model.text } satisfies StoredTextSpace,
    labelers: [...model.accuracy].map(([labelerId, accuracy]): StoredTextLabeler => ({ labelerId, labels: 0, parts: [], accuracy })),
  }),
  join: (_spec, space, rows) => {
    const s = space as StoredTextSpace;
    const empty = emptyTextModel();
    return {
      accuracy: new Map(
        rows.flatMap((r) =>
          typeof (r as StoredTextLabeler).accuracy === "number" ? [[r.labelerId, (r as StoredTextLabeler).accuracy]] : [],
        ),
      ),
      defaultAccuracy: s.defaultAccuracy ?? empty.defaultAccuracy,
      word: s.word ?? empty.word,
      text: s.text ?? empty.text,
    };
  },
};

export const freeTextQuality = typedTaskType<FreeTextSpec, FreeTextAnswerBody, TextModel, FreeTextConsensusBody>({
  definition: freeTextType,
  rows: textRows,
  needsText: false,
  // an answer names no option, class or entity type
  namesOf: () => [],
  goldMatch: (gold, answer, spec) => normalizeText(gold.text, modeOf(spec)) === normalizeText(answer.text, modeOf(spec)),
  reviewed: (spec, answer) => {
    const words = normalizeWords(answer.text, modeOf(spec));
    return {
      posterior: {},
      consensus: {
        text: words.join(" "),
        words: words.map((word) => ({ word, confidence: 1 })),
        // the reviewer's answer is the one answer of its alignment
        slots: words.map((word) => ({ word, confidence: 1, answers: [word] })),
      },
    };
  },
});
