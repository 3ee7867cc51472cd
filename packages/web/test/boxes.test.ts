/** The bounding-box widget's geometry (app/label/boxes.ts): display → natural pixels, clamping, rounding. */
import { boxFromCorners, centeredBox, moveBox, nudgeStep, resizeBox, resizeBoxTo, roundBox, toNatural } from "../app/label/boxes";

const natural = { width: 480, height: 360 };
// the image shown at half size, 100 px from the left and 50 px from the top of the viewport
const rect = { left: 100, top: 50, width: 240, height: 180 };

describe("toNatural", () => {
  it("scales a client point from the displayed size to natural pixels", () => {
    expect(toNatural(100, 50, rect, natural)).toEqual({ x: 0, y: 0 });
    expect(toNatural(220, 140, rect, natural)).toEqual({ x: 240, y: 180 });
    expect(toNatural(340, 230, rect, natural)).toEqual({ x: 480, y: 360 });
  });

  it("clamps a point outside the image to its edge", () => {
    expect(toNatural(0, 0, rect, natural)).toEqual({ x: 0, y: 0 });
    expect(toNatural(1000, 1000, rect, natural)).toEqual({ x: 480, y: 360 });
    expect(toNatural(90, 400, rect, natural)).toEqual({ x: 0, y: 360 });
  });

  it("maps a zero-size display to the origin instead of dividing by zero", () => {
    expect(toNatural(10, 10, { left: 0, top: 0, width: 0, height: 0 }, natural)).toEqual({ x: 0, y: 0 });
  });
});

describe("boxFromCorners", () => {
  it("spans two corners in any order", () => {
    expect(boxFromCorners({ x: 50, y: 80 }, { x: 10, y: 20 }, "car")).toEqual({ label: "car", x: 10, y: 20, w: 40, h: 60 });
  });

  it("is null for a click or a sliver (under 3 px a side)", () => {
    expect(boxFromCorners({ x: 5, y: 5 }, { x: 5, y: 5 }, "car")).toBeNull();
    expect(boxFromCorners({ x: 5, y: 5 }, { x: 100, y: 7 }, "car")).toBeNull();
  });
});

describe("roundBox", () => {
  it("rounds the corners to whole pixels", () => {
    expect(roundBox({ label: "a", x: 10.4, y: 20.6, w: 30.2, h: 9.8 }, natural)).toEqual({ label: "a", x: 10, y: 21, w: 31, h: 9 });
  });

  it("clamps inside the image and keeps w, h at least 1", () => {
    expect(roundBox({ label: "a", x: -5, y: 350, w: 600, h: 30 }, natural)).toEqual({ label: "a", x: 0, y: 350, w: 480, h: 10 });
    expect(roundBox({ label: "a", x: 479.9, y: 0, w: 0.2, h: 0.1 }, natural)).toEqual({ label: "a", x: 479, y: 0, w: 1, h: 1 });
  });
});

describe("moving and resizing", () => {
  const box = { label: "a", x: 400, y: 300, w: 50, h: 40 };

  it("moves a box but keeps it whole inside the image", () => {
    expect(moveBox(box, 10, -20, natural)).toEqual({ ...box, x: 410, y: 280 });
    expect(moveBox(box, 100, 100, natural)).toEqual({ ...box, x: 430, y: 320 });
    expect(moveBox(box, -1000, -1000, natural)).toEqual({ ...box, x: 0, y: 0 });
  });

  it("resizes from the bottom-right corner, at least 1 pixel, not past the image", () => {
    expect(resizeBox(box, 20, -10, natural)).toEqual({ ...box, w: 70, h: 30 });
    expect(resizeBox(box, 500, 500, natural)).toEqual({ ...box, w: 80, h: 60 });
    expect(resizeBox(box, -100, -100, natural)).toEqual({ ...box, w: 1, h: 1 });
    expect(resizeBoxTo(box, { x: 460, y: 320 }, natural)).toEqual({ ...box, w: 60, h: 20 });
  });

  it("adds a keyboard box centered, a quarter of each side", () => {
    expect(centeredBox(natural, "car")).toEqual({ label: "car", x: 180, y: 135, w: 120, h: 90 });
    expect(centeredBox({ width: 1, height: 1 }, "car")).toEqual({ label: "car", x: 0, y: 0, w: 1, h: 1 });
  });

  it("nudges by 1% of the longer side, at least a pixel", () => {
    expect(nudgeStep(natural)).toBe(5);
    expect(nudgeStep({ width: 20, height: 10 })).toBe(1);
  });
});
