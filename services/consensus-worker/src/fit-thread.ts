/**
 * Runs in a worker thread of the consensus worker (piscina, refit.ts): the pure computation of a label
 * space's refit (@labelgate/quality `refitSpace`: Dawid-Skene EM and the gold calibration), so a fit of
 * 100,000 labels never blocks the process's event loop (settlements, lock renewals).
 */
import { refitSpace } from "@labelgate/quality";

export default refitSpace;
