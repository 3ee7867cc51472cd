/**
 * Runs in a worker thread of the consensus worker (piscina, refit.ts): the pure computation of a label
 * space's refit (@labelgate/quality `refitAny`: single choice's Dawid-Skene EM and gold calibration, or a reserved type's fit), so a fit of
 * 100,000 labels never blocks the process's event loop (settlements, lock renewals).
 */
import { refitAny } from "@labelgate/quality";

export default refitAny;
