// The worker-thread entry of label space refits (refit.ts): a thread starts without the parent's TypeScript
// loader when the parent runs under jest, so it registers tsx's CommonJS hook (the services run under tsx,
// see the Dockerfile) and loads the TypeScript module, whose default export piscina calls.
require("tsx/cjs/api").register();
module.exports = require("./fit-thread.ts");
