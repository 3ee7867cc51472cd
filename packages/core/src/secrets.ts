/**
 * Secrets at rest (contract §events): AES-256-GCM under ENCRYPTION_KEY, via node:crypto.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>` (base64url; 12-byte random IV, 16-byte tag). The optional
 * `context` (e.g. the webhook id) is bound as additional authenticated data, so a sealed secret cannot be
 * moved to another row.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export class SecretBoxError extends Error {
  override name = "SecretBoxError";
}

/**
 * Parses ENCRYPTION_KEY: 32 bytes as 64 hex characters or as base64/base64url.
 * @throws SecretBoxError when it is not exactly 32 bytes.
 */
export function parseEncryptionKey(value: string): Buffer {
  const trimmed = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) throw new SecretBoxError("ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)");
  return key;
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new SecretBoxError("AES-256-GCM needs a 32-byte key");
    this.key = Buffer.from(key);
  }

  /** Encrypts `plaintext` (UTF-8). */
  seal(plaintext: string, context = ""): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(context, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ciphertext.toString("base64url")].join(".");
  }

  /** Decrypts a sealed value. @throws SecretBoxError when it was tampered with, or sealed under another key or context. */
  open(sealed: string, context = ""): string {
    const [version, iv, tag, ciphertext] = sealed.split(".");
    if (version !== "v1" || !iv || !tag || ciphertext === undefined) throw new SecretBoxError("not a sealed secret");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
    } catch (err) {
      throw new SecretBoxError("sealed secret does not authenticate", { cause: err });
    }
  }
}
