/** @labelgate/sdk (being written) */
export {};
