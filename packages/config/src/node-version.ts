/**
 * The Node versions labelgate runs on, stated once (the root package.json's `engines.node` says the same;
 * test/readme.test.ts keeps the two equal) and checked when a process starts.
 *
 * Why this range: the strictest engines among the dependencies are vite's and rolldown's
 * (`^20.19.0 || >=22.12.0`); 20.19 is the first 20.x that loads ES modules with `require`, which the
 * ESM-only dependencies need when a CommonJS file requires them.
 */
export const SUPPORTED_NODE = "^20.19.0 || >=22.12.0";

/** The lowest supported minor of each supported major (a major above the last listed is supported). */
const MINIMUM_BY_MAJOR: ReadonlyArray<readonly [major: number, minor: number]> = [
  [20, 19],
  [22, 12],
];

/** True when `version` (`process.versions.node`, e.g. "20.20.2") is in {@link SUPPORTED_NODE}. */
export function isSupportedNode(version: string): boolean {
  const [major, minor] = version.replace(/^v/, "").split(".").map(Number) as [number, number];
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  const last = MINIMUM_BY_MAJOR[MINIMUM_BY_MAJOR.length - 1] as readonly [number, number];
  if (major > last[0]) return true;
  const rule = MINIMUM_BY_MAJOR.find(([m]) => m === major);
  return rule !== undefined && minor >= rule[1];
}

/**
 * Throws an Error naming the running and the supported versions when this Node is not supported.
 * Called first thing by `createRuntime` (every service) and by `pnpm start`.
 */
export function assertSupportedNode(version: string = process.versions.node): void {
  if (!isSupportedNode(version)) {
    throw new Error(
      `labelgate needs Node ${SUPPORTED_NODE} (this is Node ${version}): install a supported Node (e.g. nvm install 22) and run again`,
    );
  }
}
