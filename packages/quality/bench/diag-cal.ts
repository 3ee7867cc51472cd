import path from "node:path";
import { calibrationSummary, fit, LabelTable } from "../src/index";
import { loadDataset } from "./dataset";
import { pickGold } from "./sim-lib";

for (const f of process.argv.slice(2)) {
  const ds = loadDataset(path.resolve(f));
  for (const withGold of [true, false]) {
    const gold = withGold ? pickGold(ds, 0.05, 1) : new Set<string>();
    const table = new LabelTable(ds.options.length);
    for (const it of ds.items) if (gold.has(it.id)) table.setGold(it.id, it.gold as number);
    for (const it of ds.items) for (const a of it.answers.slice(0, 50)) table.add(it.id, a.worker, a.option);
    const t0 = performance.now();
    const { model } = fit(table);
    const c = model.space.calibration;
    console.log(
      ds.name,
      withGold,
      Math.round(performance.now() - t0),
      c.source,
      JSON.stringify(calibrationSummary(c)),
      c.prequentialTemperature,
      JSON.stringify(
        c.components.slice(0, 6).map((x) => [x.temperature.toFixed(2), x.hardShare, x.uninformativeShare, x.weight.toFixed(3)]),
      ),
    );
  }
}
