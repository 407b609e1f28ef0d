import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape SignatureV4 takes. */
export class NodeSha256 {
  #hash: Hash | Hmac;
  constructor(secret?: string | Uint8Array) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", secret);
  }
  update(data: string | Uint8Array): void {
    this.#hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {
    throw new Error("NodeSha256 cannot be reset");
  }
}
