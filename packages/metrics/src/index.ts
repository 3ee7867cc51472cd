/** @labelgate/metrics (being written) */
export {};
