/**
 * SHA-256 and HMAC-SHA-256 from the browser's WebCrypto, in the shape SignatureV4 takes (update, then
 * an async digest). WebCrypto hashes whole messages only, so the chunks are kept until the digest.
 */
type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): Uint8Array<ArrayBuffer> {
  if (typeof data === "string") return new TextEncoder().encode(data);
  const view = ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
  return new Uint8Array(view);
}

export class WebCryptoSha256 {
  readonly #secret: Uint8Array<ArrayBuffer> | undefined;
  #chunks: Uint8Array<ArrayBuffer>[] = [];

  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : bytesOf(secret);
  }

  update(data: SourceData): void {
    this.#chunks.push(bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    const message = new Uint8Array(this.#chunks.reduce((n, chunk) => n + chunk.length, 0));
    let at = 0;
    for (const chunk of this.#chunks) {
      message.set(chunk, at);
      at += chunk.length;
    }
    if (this.#secret === undefined) return new Uint8Array(await crypto.subtle.digest("SHA-256", message));
    const key = await crypto.subtle.importKey("raw", this.#secret, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    return new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  }

  reset(): void {
    this.#chunks = [];
  }
}
