// oidc-provider ships no type declarations; the tests use these members only (the MCP OAuth test
// its constructor and `callback()`; the OIDC sign-in test also middleware, interactions and grants).
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  interface KoaContext {
    path: string;
    body: unknown;
  }
  class Grant {
    constructor(properties: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<{ uid: string; params: Record<string, unknown> }>;
    interactionFinished(request: IncomingMessage, response: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    Grant: typeof Grant;
  }
}
