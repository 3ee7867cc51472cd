/**
 * TEST_TIME_SCALE (test/env.ts, issue 28 item 7): one setting raises every deadline of the tests on a
 * loaded machine: `eventually`'s, the process start deadlines (through `eventually`) and jest's timeouts.
 */
import { scaled, timeScale } from "./env";
import { eventually } from "./system";

const saved = process.env.TEST_TIME_SCALE;
afterEach(() => {
  if (saved === undefined) delete process.env.TEST_TIME_SCALE;
  else process.env.TEST_TIME_SCALE = saved;
});

it("multiplies eventually's deadline", async () => {
  process.env.TEST_TIME_SCALE = "3";
  expect(timeScale()).toBe(3);
  expect(scaled(30_000)).toBe(90_000);
  const t0 = Date.now();
  await expect(eventually(async () => undefined, 100, "nothing")).rejects.toThrow("timed out after 300 ms waiting for nothing");
  expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
});

it("is 1 unless set to a number of at least 1", () => {
  for (const value of [undefined, "", "0.5", "x", "-2"]) {
    if (value === undefined) delete process.env.TEST_TIME_SCALE;
    else process.env.TEST_TIME_SCALE = value;
    expect({ value, scale: timeScale() }).toEqual({ value, scale: 1 });
  }
});
