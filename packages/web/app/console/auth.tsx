/**
 * The signed-in customer: the SDK client with the customer key (from sessionStorage) and sign-out. A 401
 * from any query or mutation signs out (the key was revoked, e.g. by an upgrade to production).
 */
import type { LabelgateClient } from "@labelgate/sdk/browser";
import { createContext, useContext } from "react";

export interface Session {
  client: LabelgateClient;
  signOut: (reason?: string) => void;
}

export const SessionContext = createContext<Session | null>(null);

/** The session of the signed-in customer. @throws Error outside the signed-in part of the app */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside of a signed-in console");
  return s;
}
