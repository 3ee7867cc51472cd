#!/usr/bin/env node
// The `labelgate` command: runs src/main.ts through tsx (as every service of this repository starts).
require("tsx/cjs");
require("../src/main.ts");
