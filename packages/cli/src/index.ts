/** @labelgate/cli (being written) */
export {};
