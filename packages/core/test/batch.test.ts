/** core's statement batching: `Batcher` (group commit) and `perOwner` (one batcher per pool). */
import { Batcher, perOwner } from "../src/batch";

describe("Batcher", () => {
  it("concurrent calls share a batch; each gets its own result", async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>(async (items) => {
      batches.push(items);
      return items.map((x) => x * 2);
    });
    expect(await Promise.all([1, 2, 3].map((x) => b.call(x)))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it("items of equal key never share a batch", async () => {
    const batches: string[][] = [];
    const b = new Batcher<string, string>(
      async (items) => {
        batches.push(items);
        return items;
      },
      { key: (x) => x },
    );
    await Promise.all(["a", "b", "a"].map((x) => b.call(x)));
    expect(batches).toEqual([["a", "b"], ["a"]]);
  });

  it("a failing batch runs each item alone: only the bad item's call rejects", async () => {
    const b = new Batcher<number, number>(async (items) => {
      if (items.includes(0)) throw new Error("zero");
      return items.map((x) => 10 / x);
    });
    const results = await Promise.allSettled([1, 0, 2].map((x) => b.call(x)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[2] as PromiseFulfilledResult<number>).value).toBe(5);
  });
});

describe("perOwner", () => {
  it("makes one value per owner, on first use", () => {
    let made = 0;
    const of = perOwner((owner: { name: string }) => ({ owner: owner.name, n: ++made }));
    const a = { name: "a" };
    const b = { name: "b" };
    expect(made).toBe(0);
    expect(of(a)).toBe(of(a));
    expect(of(b)).toEqual({ owner: "b", n: 2 });
    expect(of(a)).toEqual({ owner: "a", n: 1 });
    expect(made).toBe(2);
  });
});
