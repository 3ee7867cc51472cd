/**
 * The labels of one label space, held in typed arrays for the EM fit (`fit`).
 *
 * Tasks and labelers are interned to dense indexes in order of first appearance, so the same sequence of
 * `add` calls always gives the same arrays (and the fit, which iterates in index order, the same result).
 * Labels are option indexes 0..k-1 of the label space's ordered options.
 */
export class LabelTable {
  /** number of options of the label space (2..50) */
  readonly k: number;
  private readonly taskIndex = new Map<string, number>();
  private readonly labelerIndex = new Map<string, number>();
  /** task ids by dense index */
  readonly taskIds: string[] = [];
  /** labeler ids by dense index */
  readonly labelerIds: string[] = [];
  private taskOf = new Int32Array(1024);
  private labelerOf = new Int32Array(1024);
  private optionOf = new Int32Array(1024);
  private goldOf = new Int32Array(256).fill(-1);
  private reviewedOf = new Uint8Array(256);
  private size = 0;
  private goldTasks = 0;

  /** @throws RangeError when k is not an integer in 2..50 */
  constructor(k: number) {
    if (!Number.isInteger(k) || k < 2 || k > 50) throw new RangeError(`a label space has 2..50 options, got ${k}`);
    this.k = k;
  }

  /** Number of labels added. */
  get length(): number {
    return this.size;
  }

  /** Number of distinct tasks (with a label or a gold answer). */
  get taskCount(): number {
    return this.taskIds.length;
  }

  /** Number of distinct labelers. */
  get labelerCount(): number {
    return this.labelerIds.length;
  }

  /** Number of gold tasks (tasks given a known true option with `setGold`). */
  get goldTaskCount(): number {
    return this.goldTasks;
  }

  /**
   * Records that `labelerId` labeled `taskId` with option index `option`.
   * @throws RangeError when option is not an integer in 0..k-1
   */
  add(taskId: string, labelerId: string, option: number): void {
    this.checkOption(option);
    const t = this.internTask(taskId);
    let l = this.labelerIndex.get(labelerId);
    if (l === undefined) {
      l = this.labelerIds.length;
      this.labelerIds.push(labelerId);
      this.labelerIndex.set(labelerId, l);
    }
    if (this.size === this.taskOf.length) {
      this.taskOf = grow(this.taskOf, this.size * 2);
      this.labelerOf = grow(this.labelerOf, this.size * 2);
      this.optionOf = grow(this.optionOf, this.size * 2);
    }
    this.taskOf[this.size] = t;
    this.labelerOf[this.size] = l;
    this.optionOf[this.size] = option;
    this.size++;
  }

  /**
   * Marks `taskId` as a gold task whose true option is `option` (it enters the fit as a known truth).
   * @throws RangeError when option is not an integer in 0..k-1
   */
  setGold(taskId: string, option: number): void {
    this.checkOption(option);
    const t = this.internTask(taskId);
    if ((this.goldOf[t] as number) < 0) this.goldTasks++;
    this.goldOf[t] = option;
  }

  /**
   * Marks `taskId` as a reviewed result whose true option is `option` (contract §review): a known truth for the
   * fit, as a gold task is, and a sample of the settled state for the calibration (fit.ts `calibrate`).
   * @throws RangeError when option is not an integer in 0..k-1
   */
  setReviewed(taskId: string, option: number): void {
    this.setGold(taskId, option);
    this.reviewedOf[this.taskIndex.get(taskId) as number] = 1;
  }

  /** Dense index of a task, or undefined. */
  taskIndexOf(taskId: string): number | undefined {
    return this.taskIndex.get(taskId);
  }

  /** Dense index of a labeler, or undefined. */
  labelerIndexOf(labelerId: string): number | undefined {
    return this.labelerIndex.get(labelerId);
  }

  /** Read-only views of the columns (valid until the next `add`/`setGold`/`setReviewed`); `reviewed` 1 = a reviewed result. */
  columns(): { task: Int32Array; labeler: Int32Array; option: Int32Array; gold: Int32Array; reviewed: Uint8Array } {
    return {
      task: this.taskOf.subarray(0, this.size),
      labeler: this.labelerOf.subarray(0, this.size),
      option: this.optionOf.subarray(0, this.size),
      gold: this.goldOf.subarray(0, this.taskIds.length),
      reviewed: this.reviewedOf.subarray(0, this.taskIds.length),
    };
  }

  private internTask(taskId: string): number {
    let t = this.taskIndex.get(taskId);
    if (t === undefined) {
      t = this.taskIds.length;
      this.taskIds.push(taskId);
      this.taskIndex.set(taskId, t);
      if (t === this.goldOf.length) {
        const next = new Int32Array(t * 2).fill(-1);
        next.set(this.goldOf);
        this.goldOf = next;
        const reviewed = new Uint8Array(t * 2);
        reviewed.set(this.reviewedOf);
        this.reviewedOf = reviewed;
      }
    }
    return t;
  }

  private checkOption(option: number): void {
    if (!Number.isInteger(option) || option < 0 || option >= this.k) {
      throw new RangeError(`option index must be an integer in 0..${this.k - 1}, got ${option}`);
    }
  }
}

function grow(a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(size);
  next.set(a);
  return next;
}
