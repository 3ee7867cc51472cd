/**
 * The pure helpers of the console's consensus views (app/console/task-types/geometry.ts): box extent,
 * scaling and fitting; code point offsets to UTF-16 indices with emoji and other surrogate pairs; cutting a
 * text at spans, including a text of 100,000 code points with 500 spans.
 */
import fc from "fast-check";
import { boxExtent, codePointIndex, fitSize, scaleBox, segmentText, truncateCodePoints } from "../app/console/task-types/geometry";

describe("boxes", () => {
  it("the extent holds every box, at least 1 × 1, rounded up", () => {
    expect(boxExtent([])).toEqual({ width: 1, height: 1 });
    expect(
      boxExtent([
        { x: 10, y: 20, w: 30, h: 40 },
        { x: 100.5, y: 0, w: 20, h: 5 },
      ]),
    ).toEqual({ width: 121, height: 60 });
  });

  it("scales a box from the item's natural size to its drawn size, each axis on its own", () => {
    expect(scaleBox({ x: 48, y: 36, w: 96, h: 72 }, { width: 480, height: 360 }, { width: 240, height: 180 })).toEqual({
      x: 24,
      y: 18,
      w: 48,
      h: 36,
    });
    expect(scaleBox({ x: 10, y: 10, w: 10, h: 10 }, { width: 100, height: 100 }, { width: 200, height: 50 })).toEqual({
      x: 20,
      y: 5,
      w: 20,
      h: 5,
    });
    expect(() => scaleBox({ x: 0, y: 0, w: 1, h: 1 }, { width: 0, height: 10 }, { width: 10, height: 10 })).toThrow(RangeError);
  });

  it("a box inside the item stays inside the drawing (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8000 }),
        fc.integer({ min: 1, max: 8000 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (W, H, sw, sh, fx, fy) => {
          const box = { x: fx * (W - 1), y: fy * (H - 1), w: (1 - fx) * (W - 1) + 1, h: (1 - fy) * (H - 1) + 1 };
          const r = scaleBox(box, { width: W, height: H }, { width: sw, height: sh });
          const eps = 1e-6 * Math.max(sw, sh);
          return r.x >= 0 && r.y >= 0 && r.x + r.w <= sw + eps && r.y + r.h <= sh + eps;
        },
      ),
    );
  });

  it("fits a size inside a maximum, never enlarging it", () => {
    expect(fitSize({ width: 1280, height: 480 }, { width: 640, height: 480 })).toEqual({ width: 640, height: 240 });
    expect(fitSize({ width: 300, height: 960 }, { width: 640, height: 480 })).toEqual({ width: 150, height: 480 });
    expect(fitSize({ width: 200, height: 100 }, { width: 640, height: 480 })).toEqual({ width: 200, height: 100 });
  });
});

describe("code points", () => {
  it("maps each code point offset to its UTF-16 index (surrogate pairs are one code point)", () => {
    const text = "a😀b👍🏽c"; // 👍🏽 is two code points (thumb + skin tone), each a surrogate pair
    expect(Array.from(text)).toHaveLength(6);
    expect(Array.from(codePointIndex(text))).toEqual([0, 1, 3, 4, 6, 8, 9]);
    expect(Array.from(codePointIndex(""))).toEqual([0]);
    // a lone surrogate is one code point, as `for…of` counts it
    expect(Array.from(codePointIndex("x\ud83dy"))).toEqual([0, 1, 2, 3]);
  });

  it("agrees with Array.from on any string (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), (text) => {
        const index = codePointIndex(text);
        const chars = Array.from(text);
        expect(index.length).toBe(chars.length + 1);
        for (const [k, c] of chars.entries()) expect(text.slice(index[k], index[k + 1])).toBe(c);
      }),
    );
  });

  it("cuts the text at spans given in code points, emoji included", () => {
    const text = "😀 Ana met 👩‍💻 Bob in Zürich 🇨🇭.";
    const cps = Array.from(text);
    const find = (word: string) => {
      const at = cps.join("").indexOf(word);
      const start = Array.from(text.slice(0, at)).length;
      return { start, end: start + Array.from(word).length };
    };
    const spans = [
      { ...find("Zürich 🇨🇭"), label: "LOC" },
      { ...find("Ana"), label: "PER" },
      { ...find("👩‍💻 Bob"), label: "PER" },
    ];
    const { segments, length, skipped } = segmentText(text, spans);
    expect(length).toBe(cps.length);
    expect(skipped).toEqual([]);
    expect(segments.filter((s) => s.span !== null).map((s) => [s.span, s.text])).toEqual([
      [1, "Ana"],
      [2, "👩‍💻 Bob"],
      [0, "Zürich 🇨🇭"],
    ]);
    expect(segments.map((s) => s.text).join("")).toBe(text);
    for (const s of segments) expect(Array.from(s.text)).toHaveLength(s.end - s.start);
  });

  it("cuts spans past the text, and leaves out empty and overlapping ones", () => {
    const text = "ab😀cd";
    const { segments, skipped } = segmentText(text, [
      { start: 1, end: 3, label: "A" },
      { start: 2, end: 4, label: "B" }, // overlaps the first
      { start: 4, end: 99, label: "C" }, // past the end: cut at 5
      { start: 9, end: 12, label: "D" }, // empty once cut
    ]);
    expect(skipped).toEqual([1, 3]);
    expect(segments.map((s) => [s.span, s.text])).toEqual([
      [null, "a"],
      [0, "b😀"],
      [null, "c"],
      [2, "d"],
    ]);
    expect(segmentText("", []).segments).toEqual([{ text: "", span: null, start: 0, end: 0 }]);
  });

  it("cuts a text of 100,000 code points at 500 spans at once", () => {
    const unit = "words 😀 "; // 8 code points: the emoji is code point 6 of each
    const text = unit.repeat(100_000 / Array.from(unit).length);
    expect(Array.from(text)).toHaveLength(100_000);
    const spans = Array.from({ length: 500 }, (_, i) => ({ start: i * 200 + 6, end: i * 200 + 7, label: "EMOJI" }));
    const started = performance.now();
    const { segments, skipped } = segmentText(text, spans);
    const ms = performance.now() - started;
    expect(skipped).toEqual([]);
    expect(segments.filter((s) => s.span !== null).every((s) => s.text === "😀")).toBe(true);
    expect(segments).toHaveLength(1001);
    expect(segments.map((s) => s.text).join("")).toBe(text);
    expect(ms).toBeLessThan(500);
  });

  it("truncates by code points, never inside a surrogate pair", () => {
    expect(truncateCodePoints("😀😀😀", 2)).toBe("😀😀…");
    expect(truncateCodePoints("😀😀", 2)).toBe("😀😀");
    expect(truncateCodePoints("abc", 5)).toBe("abc");
  });
});
