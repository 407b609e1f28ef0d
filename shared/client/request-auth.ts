/**
 * How a request proves who sends it: the headers to add, given the request. Its own file so that the
 * client (`ebb-client.ts`) needs nothing from Node: the web UI uses the same client in a browser.
 */
export interface RequestAuth {
  headers(request: { method: string; url: URL; body: string | undefined }): Promise<Record<string, string>>;
}
