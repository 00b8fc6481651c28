/**
 * `svc serve`: builds the services and the app, listens on HOST:PORT, and in embedded mode also
 * on the owner-only control socket DATA_DIR/svc.sock that the CLI uses while the server holds
 * the PGlite data directory. Shuts down cleanly on SIGINT/SIGTERM.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { runCommand } from './commands.ts';
import { buildApp } from './http/build-app.ts';
import type { ResolvedConfig } from './platform/config.ts';
import { SvcError } from './platform/errors.ts';
import { controlSocketPath, createServices, type Services } from './services.ts';

export async function serve(config: ResolvedConfig): Promise<void> {
  const services = await createServices(config);
  const { logger } = services;
  if (config.embedded || config.database.kind === 'pglite') {
    logger.warn(
      { data_dir: config.dataDir, database: 'pglite', cache: config.cache.kind },
      'embedded mode: PGlite under DATA_DIR, in-memory cache and job queue — for development and single-node use; set DATABASE_URL and REDIS_URL for production',
    );
  }
  const app = await buildApp(config, services);
  await app.listen({ port: config.port, host: config.host });
  const control = config.database.kind === 'pglite' && config.database.dir !== null ? await startControlSocket(config, services) : null;
  logger.info({ port: config.port, host: config.host, environment: config.environment }, 'svc listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'svc stopping');
    control?.close();
    if (control) rmSync(controlSocketPath(config), { force: true });
    await app.close();
    await services.close();
    logger.flush();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

async function startControlSocket(config: ResolvedConfig, services: Services): Promise<Server> {
  const path = controlSocketPath(config);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  rmSync(path, { force: true });
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 65_536) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      void (async () => {
        let status = 200;
        let body: unknown;
        try {
          if (request.method !== 'POST' || request.url !== '/command') throw new SvcError('ROUTE_NOT_FOUND');
          const { name, options } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name: string; options: Record<string, string> };
          body = await runCommand(services, name, options ?? {});
        } catch (error) {
          status = error instanceof SvcError ? error.status : 500;
          body = {
            error: {
              code: error instanceof SvcError ? error.code : 'COMMAND_FAILED',
              message: error instanceof Error ? error.message : String(error),
              ...(error instanceof SvcError ? { details: error.details } : {}),
            },
          };
        }
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}
