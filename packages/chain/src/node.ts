/**
 * @labelgate/chain/node: the Node-only part: {@link startAnvil} (a local chain from the `@foundry-rs/anvil`
 * package) and the anchor client on viem. Also re-exports the browser-safe part.
 */
export * from "./anchor-client";
export * from "./anvil";
export * from "./events";
export * from "./index";
