import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { decideText, fitTextModel, normalizeWords, slotCorrectness, textConsensus, type TextAnswer, type TextTask } from "../packages/quality/src/types/free_text";
import { pickGold } from "../packages/quality/bench/types-quality";
const dir = path.join("../shared/data/crowd-text", process.argv[2] ?? "crowdspeech-dev-other");
const T = Number(process.argv[3] ?? 0.9);
const seed = 1;
const rd = (f: string) => readFileSync(path.join(dir, f), "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
const gold = new Map(rd("gold.jsonl").map((g: any) => [g.item, normalizeWords(g.text)]));
const answers = new Map<string, any[]>();
for (const a of rd("answers.jsonl")) { const l = answers.get(a.item) ?? []; l.push({ labelerId: a.worker, words: normalizeWords(a.text), key: createHash("sha256").update(`${seed}:${a.item}:${a.worker}:${l.length}`).digest("hex") }); answers.set(a.item, l); }
const items = [...answers].filter(([id]) => gold.has(id)).map(([id, l]) => { l.sort((x, y) => (x.key < y.key ? -1 : 1)); return { id, answers: l.map(({ labelerId, words }) => ({ labelerId, words })) as TextAnswer[], gold: gold.get(id) as string[] }; });
const goldIds = pickGold(items.map((i) => i.id), 0.05, seed);
const model = fitTextModel(items.map((i) => ({ id: i.id, answers: i.answers, gold: goldIds.has(i.id) ? i.gold : undefined })) as TextTask[]);
console.log("word map", model.word.coefficients.map((c) => c.toFixed(2)));
const bins = Array.from({ length: 10 }, () => ({ n: 0, right: 0, conf: 0 }));
const blockers: Record<string, number> = {};
let atMax = 0, blockedSlotsAtMax = 0;
const stopAt: number[] = [0,0,0,0,0,0,0,0];
const ev = items.filter((i) => !goldIds.has(i.id));
for (const item of ev) {
  let stopped = item.answers.length;
  for (let k = 1; k <= item.answers.length; k++) {
    const prefix = item.answers.slice(0, k);
    const c = textConsensus(model, prefix);
    const right = slotCorrectness(c, item.gold);
    c.slots.forEach((s, i) => { const b = Math.min(9, Math.floor(s.confidence * 10)); bins[b]!.n++; bins[b]!.conf += s.confidence; if (right[i]) bins[b]!.right++; });
    const d = decideText({ kind: "confidence", confidenceTarget: T, minLabels: 1, maxLabels: item.answers.length } as any, prefix.map((a) => a.words), c);
    if (d.settled && (d as any).resolution !== "max_labels") { stopped = k; break; }
    if (k === item.answers.length) {
      atMax++;
      for (const s of c.slots) if (s.confidence < T) { blockedSlotsAtMax++; const lab = s.choices[0]?.labels ?? 0; const key = `${s.word === null ? "null" : "word"} ${lab}-${s.votes.length - lab}`; blockers[key] = (blockers[key] ?? 0) + 1; }
    }
  }
  stopAt[stopped]!++;
}
console.log("items", ev.length, "at max unsettled", atMax, "blocking slots there", blockedSlotsAtMax, "stop at k", stopAt);
console.log("blockers at max (choice labels-others):", Object.entries(blockers).sort((a, b) => b[1] - a[1]).slice(0, 20));
console.log("slot reliability over every prefix (non-gold):");
for (const [i, b] of bins.entries()) if (b.n) console.log(`${(i / 10).toFixed(1)} n=${b.n} conf=${(b.conf / b.n).toFixed(3)} acc=${(b.right / b.n).toFixed(3)}`);
