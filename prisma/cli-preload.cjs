// Preloaded into the Prisma CLI (NODE_OPTIONS=--require): Prisma's WASM schema engine arms a 10 s timer
// that keeps `prisma migrate` alive after it has finished (docs/decisions/README.md (Platform)). Timers of
// 10 s or more are unref'd so the CLI exits as soon as its work is done.
const original = global.setTimeout;
global.setTimeout = function setTimeoutUnrefLong(fn, ms, ...args) {
  const timer = original(fn, ms, ...args);
  if (typeof ms === "number" && ms >= 10000 && timer && typeof timer.unref === "function") timer.unref();
  return timer;
};
