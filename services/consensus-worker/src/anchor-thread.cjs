// The worker-thread entry of anchor batches (anchorer.ts): like fit-thread.cjs, it registers tsx's CommonJS
// hook (a thread starts without the parent's TypeScript loader under jest) and loads the TypeScript module,
// whose default export piscina calls.
require("tsx/cjs/api").register();
module.exports = require("./anchor-thread.ts");
