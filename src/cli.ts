/**
 * The `svc` command line. Every command takes --json and then prints exactly one JSON object on
 * stdout (logs go to stderr). Exit code 0 on success, 1 when the command failed, 2 on usage.
 *
 * Embedded mode: PGlite lets one process open a data directory, so while `svc serve` runs it
 * listens on DATA_DIR/svc.sock (mode 0600, owner only) and the CLI sends its command there;
 * when no server is running, the CLI opens the data directory itself.
 */
import { existsSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import { commandSpecs, runCommand, type CommandResult } from './commands.ts';
import { ConfigError, loadConfig, type ResolvedConfig } from './platform/config.ts';
import { SvcError } from './platform/errors.ts';
import { resolveSecrets } from './platform/secrets.ts';
import { controlSocketPath, createServices } from './services.ts';
import { serve } from './server.ts';

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const args = argv.filter((arg) => arg !== '--json');
  const words: string[] = [];
  while (args.length > 0 && !args[0]!.startsWith('-')) words.push(args.shift()!);
  const name = words.join(' ');

  if (name === '' || name === 'help' || args.includes('--help')) {
    print(json, { commands: Object.keys(commandSpecs).concat(['serve', 'sensor']) }, usage());
    return name === '' ? 2 : 0;
  }

  let config: ResolvedConfig;
  try {
    config = resolveSecrets(loadConfig(process.env));
  } catch (error) {
    if (error instanceof ConfigError) {
      print(json, { error: { code: 'CONFIG_INVALID', message: error.message, problems: error.problems } }, error.message);
      return 1;
    }
    throw error;
  }

  if (name === 'serve') {
    await serve(config);
    return 0;
  }
  if (name === 'sensor') {
    const message = 'svc sensor: the standalone sensor runtime is not part of this build yet; sensors run in-process under svc serve';
    print(json, { error: { code: 'NOT_AVAILABLE', message } }, message);
    return 1;
  }

  const spec = commandSpecs[name];
  if (spec === undefined) {
    print(json, { error: { code: 'USAGE', message: `unknown command "${name}"` } }, `unknown command "${name}"\n${usage()}`);
    return 2;
  }
  let options: Record<string, string | boolean | undefined>;
  try {
    options = parseArgs({ args, options: spec.options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (error) {
    print(json, { error: { code: 'USAGE', message: (error as Error).message } }, (error as Error).message);
    return 2;
  }

  let result: CommandResult;
  try {
    result = (await viaControlSocket(config, name, options)) ?? (await runLocally(config, name, options));
  } catch (error) {
    const remote = error as { cliCode?: string; details?: Record<string, unknown> };
    const code = error instanceof SvcError ? error.code : (remote.cliCode ?? 'COMMAND_FAILED');
    const message = error instanceof Error ? error.message : String(error);
    const details = error instanceof SvcError ? error.details : remote.details;
    print(json, { error: { code, message, ...details } }, `error: ${code}: ${message}`);
    return 1;
  }
  print(json, result.json, result.text);
  return result.ok === false ? 1 : 0;
}

async function runLocally(config: ResolvedConfig, name: string, options: Record<string, string | boolean | undefined>): Promise<CommandResult> {
  const services = await createServices({ ...config, logLevel: 'warning' }, { logDestination: stderrDestination(), defaultMetrics: false });
  try {
    return await runCommand(services, name, options);
  } finally {
    await services.close();
  }
}

/** Sends the command to a running embedded server, or returns null when none is listening. */
async function viaControlSocket(
  config: ResolvedConfig,
  name: string,
  options: Record<string, string | boolean | undefined>,
): Promise<CommandResult | null> {
  if (config.database.kind !== 'pglite' || config.database.dir === null) return null;
  const socketPath = controlSocketPath(config);
  if (!existsSync(socketPath)) return null;
  const body = JSON.stringify({ name, options });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { socketPath, path: '/command', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as
              | CommandResult
              | { error: { code: string; message: string; details?: Record<string, unknown> } };
            if ('error' in parsed) {
              reject(Object.assign(new Error(parsed.error.message), { cliCode: parsed.error.code, details: parsed.error.details }));
            } else {
              resolve(parsed);
            }
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') {
        rmSync(socketPath, { force: true }); // a socket left by a server that is gone
        resolve(null);
      } else {
        reject(error);
      }
    });
    request.end(body);
  });
}

function stderrDestination() {
  return { write: (line: string) => process.stderr.write(line) };
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function usage(): string {
  const lines = ['usage: svc <command> [options] [--json]', '', '  serve                 run the service', '  sensor --class …      (not in this build)'];
  for (const [name, spec] of Object.entries(commandSpecs)) lines.push(`  ${name.padEnd(20)}  ${spec.summary}`);
  return lines.join('\n');
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0 || !process.argv.slice(2).includes('serve')) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
