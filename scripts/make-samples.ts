/**
 * Writes the sample items of data/samples (docs/decisions/0221): drawn pictures for classification and
 * boxes, and short texts for spans, every one made here (no download, no third-party work), so the
 * repository may carry them under its own license. The gateway serves them read-only at `/samples/`; the
 * README's examples and the apps' empty states use them. Run `pnpm exec tsx scripts/make-samples.ts` after
 * changing a drawing; the output is committed and is the same on every run.
 *
 * street.svg is drawn so its objects have known boxes (SAMPLE_BOXES, pixels of the 640 × 400 picture): the
 * README's box example labels the first car at exactly its box.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const OUT = path.resolve(__dirname, "..", "data", "samples");

/** The objects of street.svg and their boxes, pixels (x, y: top left). */
export const SAMPLE_BOXES = [
  { label: "car", x: 100, y: 250, w: 200, h: 100 },
  { label: "car", x: 400, y: 270, w: 160, h: 80 },
  { label: "person", x: 340, y: 200, w: 40, h: 130 },
] as const;

function svg(width: number, height: number, title: string, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">
<title>${title}</title>
${body.trim()}
</svg>
`;
}

/** A cartoon cat's face on a sky-blue ground: pointed ears, whiskers. */
const cat = svg(
  480,
  360,
  "A drawn cat",
  `
<rect width="480" height="360" fill="#cfe8fc"/>
<rect y="290" width="480" height="70" fill="#9ccf7f"/>
<ellipse cx="240" cy="300" rx="120" ry="60" fill="#f59f00"/>
<path d="M150 150 L165 60 L215 115 Z" fill="#f59f00" stroke="#7a4b00" stroke-width="4"/>
<path d="M330 150 L315 60 L265 115 Z" fill="#f59f00" stroke="#7a4b00" stroke-width="4"/>
<path d="M163 135 L170 85 L200 118 Z" fill="#ffc9c9"/>
<path d="M317 135 L310 85 L280 118 Z" fill="#ffc9c9"/>
<circle cx="240" cy="175" r="95" fill="#f59f00" stroke="#7a4b00" stroke-width="4"/>
<path d="M200 110 q10 25 0 45 M240 100 q10 25 0 45 M280 110 q10 25 0 45" stroke="#c77700" stroke-width="8" fill="none" stroke-linecap="round"/>
<ellipse cx="205" cy="170" rx="14" ry="20" fill="#2b8a3e"/>
<ellipse cx="275" cy="170" rx="14" ry="20" fill="#2b8a3e"/>
<ellipse cx="205" cy="170" rx="4" ry="16" fill="#111"/>
<ellipse cx="275" cy="170" rx="4" ry="16" fill="#111"/>
<path d="M230 205 L250 205 L240 217 Z" fill="#e8590c"/>
<path d="M240 217 q-10 15 -25 10 M240 217 q10 15 25 10" stroke="#7a4b00" stroke-width="4" fill="none" stroke-linecap="round"/>
<path d="M150 205 L215 212 M150 225 L215 220 M330 205 L265 212 M330 225 L265 220" stroke="#5c3b00" stroke-width="3" stroke-linecap="round"/>
`,
);

/** A cartoon dog's face on a meadow: floppy ears, tongue out. */
const dog = svg(
  480,
  360,
  "A drawn dog",
  `
<rect width="480" height="360" fill="#fff3bf"/>
<rect y="290" width="480" height="70" fill="#8ce99a"/>
<ellipse cx="240" cy="305" rx="125" ry="55" fill="#a9794a"/>
<circle cx="240" cy="175" r="100" fill="#c8965f" stroke="#5c3d1e" stroke-width="4"/>
<ellipse cx="140" cy="180" rx="35" ry="80" fill="#6b4423" stroke="#3d2612" stroke-width="4" transform="rotate(20 140 180)"/>
<ellipse cx="340" cy="180" rx="35" ry="80" fill="#6b4423" stroke="#3d2612" stroke-width="4" transform="rotate(-20 340 180)"/>
<ellipse cx="275" cy="150" rx="30" ry="26" fill="#f1e3d3"/>
<circle cx="205" cy="150" r="12" fill="#111"/>
<circle cx="275" cy="150" r="12" fill="#111"/>
<circle cx="209" cy="146" r="4" fill="#fff"/>
<circle cx="279" cy="146" r="4" fill="#fff"/>
<ellipse cx="240" cy="215" rx="55" ry="40" fill="#f1e3d3"/>
<ellipse cx="240" cy="195" rx="20" ry="14" fill="#111"/>
<path d="M240 209 v15 M240 224 q-18 12 -30 0 M240 224 q18 12 30 0" stroke="#3d2612" stroke-width="4" fill="none" stroke-linecap="round"/>
<path d="M228 232 q12 35 24 0 Z" fill="#f06595" stroke="#a61e4d" stroke-width="3"/>
`,
);

/** A car whose body fills the box (x, y, w, h), wheels at its bottom edge. */
function car(x: number, y: number, w: number, h: number, color: string): string {
  const r = h * 0.22;
  return `
<g>
<path d="M${x + w * 0.2} ${y + h * 0.45} L${x + w * 0.32} ${y} L${x + w * 0.72} ${y} L${x + w * 0.85} ${y + h * 0.45} Z" fill="${color}" stroke="#212529" stroke-width="3"/>
<path d="M${x + w * 0.3} ${y + h * 0.42} L${x + w * 0.37} ${y + h * 0.1} L${x + w * 0.5} ${y + h * 0.1} L${x + w * 0.5} ${y + h * 0.42} Z M${x + w * 0.54} ${y + h * 0.42} L${x + w * 0.54} ${y + h * 0.1} L${x + w * 0.68} ${y + h * 0.1} L${x + w * 0.77} ${y + h * 0.42} Z" fill="#d0ebff"/>
<rect x="${x}" y="${y + h * 0.42}" width="${w}" height="${h * 0.36}" rx="${h * 0.1}" fill="${color}" stroke="#212529" stroke-width="3"/>
<circle cx="${x + w * 0.22}" cy="${y + h - r}" r="${r}" fill="#212529"/>
<circle cx="${x + w * 0.78}" cy="${y + h - r}" r="${r}" fill="#212529"/>
<circle cx="${x + w * 0.22}" cy="${y + h - r}" r="${r * 0.45}" fill="#adb5bd"/>
<circle cx="${x + w * 0.78}" cy="${y + h - r}" r="${r * 0.45}" fill="#adb5bd"/>
<rect x="${x + w - 10}" y="${y + h * 0.5}" width="8" height="${h * 0.1}" fill="#ffe066"/>
</g>`;
}

/** A person filling the box (x, y, w, h): head, body, legs. */
function person(x: number, y: number, w: number, h: number): string {
  const cx = x + w / 2;
  return `
<g>
<circle cx="${cx}" cy="${y + w * 0.4}" r="${w * 0.4}" fill="#ffd8a8" stroke="#212529" stroke-width="2"/>
<rect x="${x + w * 0.1}" y="${y + w * 0.85}" width="${w * 0.8}" height="${h * 0.42}" rx="8" fill="#5f3dc4"/>
<rect x="${x + w * 0.18}" y="${y + w * 0.85 + h * 0.4}" width="${w * 0.26}" height="${h - (w * 0.85 + h * 0.4)}" fill="#343a40"/>
<rect x="${x + w * 0.56}" y="${y + w * 0.85 + h * 0.4}" width="${w * 0.26}" height="${h - (w * 0.85 + h * 0.4)}" fill="#343a40"/>
</g>`;
}

/** A street: houses, a road, two cars and a person at SAMPLE_BOXES. */
const [car1, car2, walker] = SAMPLE_BOXES;
const street = svg(
  640,
  400,
  "A drawn street with two cars and a person",
  `
<rect width="640" height="400" fill="#d0ebff"/>
<circle cx="560" cy="60" r="35" fill="#ffd43b"/>
<rect x="20" y="90" width="150" height="150" fill="#ffc9c9" stroke="#862e9c" stroke-width="3"/>
<path d="M10 95 L95 30 L180 95 Z" fill="#c92a2a"/>
<rect x="50" y="130" width="35" height="35" fill="#e7f5ff" stroke="#495057" stroke-width="3"/>
<rect x="110" y="130" width="35" height="35" fill="#e7f5ff" stroke="#495057" stroke-width="3"/>
<rect x="200" y="60" width="120" height="180" fill="#e9ecef" stroke="#495057" stroke-width="3"/>
<rect x="225" y="85" width="25" height="30" fill="#74c0fc"/><rect x="270" y="85" width="25" height="30" fill="#74c0fc"/>
<rect x="225" y="135" width="25" height="30" fill="#74c0fc"/><rect x="270" y="135" width="25" height="30" fill="#74c0fc"/>
<rect x="420" y="110" width="190" height="130" fill="#fff3bf" stroke="#495057" stroke-width="3"/>
<path d="M410 115 L515 50 L620 115 Z" fill="#5c940d"/>
<rect y="240" width="640" height="160" fill="#868e96"/>
<rect y="236" width="640" height="8" fill="#ced4da"/>
<path d="M0 372 H640" stroke="#f8f9fa" stroke-width="6" stroke-dasharray="40 30"/>
${car(car1.x, car1.y, car1.w, car1.h, "#e03131")}
${car(car2.x, car2.y, car2.w, car2.h, "#1971c2")}
${person(walker.x, walker.y, walker.w, walker.h)}
`,
);

/** Fruit on a table, for multi-label questions ("which fruits are there?"): an apple, a banana, grapes. */
const fruit = svg(
  480,
  360,
  "A drawn apple, banana and grapes on a table",
  `
<rect width="480" height="360" fill="#f8f0fc"/>
<rect y="250" width="480" height="110" fill="#b08968"/>
<circle cx="130" cy="210" r="60" fill="#e03131" stroke="#862e2e" stroke-width="4"/>
<path d="M130 152 q5 -25 20 -35" stroke="#5c3d1e" stroke-width="6" fill="none" stroke-linecap="round"/>
<ellipse cx="160" cy="135" rx="22" ry="10" fill="#40c057" transform="rotate(-30 160 135)"/>
<path d="M220 250 q80 -10 140 -110 q10 10 5 25 q-50 110 -150 100 Z" fill="#ffd43b" stroke="#a07800" stroke-width="4"/>
<g fill="#7048e8" stroke="#3b1e94" stroke-width="2">
<circle cx="390" cy="190" r="17"/><circle cx="420" cy="190" r="17"/><circle cx="405" cy="215" r="17"/>
<circle cx="375" cy="215" r="17"/><circle cx="435" cy="215" r="17"/><circle cx="390" cy="240" r="17"/><circle cx="420" cy="240" r="17"/>
</g>
<path d="M405 172 v-20" stroke="#5c3d1e" stroke-width="5" stroke-linecap="round"/>
`,
);

/** Short original texts with people and places in them, for span questions. */
const TEXTS: Record<string, string> = {
  "harbor.txt":
    "On Monday morning Marta Okafor sailed from Lisbon to the small harbor of Porto Santo, where her brother Tomas had opened a bakery beside the lighthouse.\n",
  "letter.txt":
    "Dear Ingrid, the train from Oslo reached Bergen two hours late, but Professor Haugen waited at the station with an umbrella and a map of the old town. Yours, Pavel\n",
  "market.txt":
    "Every Saturday Amira Haddad sells lemons and olives at the market in Tunis. Her neighbor, Jean-Luc Martin, drives down from Bizerte to buy her oil.\n",
};

mkdirSync(path.join(OUT, "texts"), { recursive: true });
for (const [name, body] of Object.entries({ "cat.svg": cat, "dog.svg": dog, "street.svg": street, "fruit.svg": fruit }))
  writeFileSync(path.join(OUT, name), body);
for (const [name, body] of Object.entries(TEXTS)) writeFileSync(path.join(OUT, "texts", name), body);
process.stdout.write(`wrote ${OUT}\n`);
