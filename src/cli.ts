/**
 * The `svc` command line. Every command takes --json and then prints exactly one JSON object:
 * on stdout when it succeeded, on stderr when it failed (errors always go to stderr, so stdout
 * only ever carries results; logs go to stderr too). Exit code 0 on success (and for --help),
 * 1 when the command failed, 2 on usage.
 *
 * Embedded mode: PGlite lets one process open a data directory, so while `svc serve` runs it
 * listens on DATA_DIR/svc.sock (mode 0600, owner only) and the CLI sends its command there;
 * when no server is running, the CLI opens the data directory itself.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import type { apiCommandSpecs as ApiCommandSpecs } from './api-commands.ts';
import { commandNames, processCommandOf, processCommands, type ProcessCommand } from './cli-commands.ts';
import type { CommandResult, commandSpecs as CommandSpecs } from './commands.ts';
import { ConfigError, loadClientConfig, loadConfig, type Config, type ResolvedConfig } from './platform/config.ts';
import { acquireDataDirLock, DataDirInUseError, type DataDirLock } from './platform/data-dir-lock.ts';
import { SvcError } from './platform/errors.ts';
import { resolveSecrets } from './platform/secrets.ts';
import { ownsDataDir, serve } from './server.ts';

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const args = argv.filter((arg) => arg !== '--json');
  const words: string[] = [];
  while (args.length > 0 && !args[0]!.startsWith('-')) words.push(args.shift()!);
  const name = words.join(' ');

  if (name === '' && (args.includes('--version') || args.includes('-v'))) {
    const version = packageVersion();
    print(json, { version, node: process.versions.node }, `svc ${version}`);
    return 0;
  }
  if (name === 'help' || args.includes('--help') || args.includes('-h')) {
    const [{ commandSpecs }, { apiCommandSpecs }] = await Promise.all([import('./commands.ts'), import('./api-commands.ts')]);
    print(json, { commands: commandNames(commandSpecs, apiCommandSpecs) }, usage(commandSpecs, apiCommandSpecs));
    return 0;
  }
  if (name === '') {
    const [{ commandSpecs }, { apiCommandSpecs }] = await Promise.all([import('./commands.ts'), import('./api-commands.ts')]);
    printError(json, { error: { code: 'USAGE', message: 'no command given' } }, usage(commandSpecs, apiCommandSpecs));
    return 2;
  }
  // Commands on an org's resources go through svc's HTTP API: they need no database config.
  const { apiCommandSpecs } = await import('./api-commands.ts');
  if (apiCommandSpecs[name] !== undefined) return runApiCommand(name, args, json);

  // The commands the process runs itself, `serve` apart (below: it reads the configuration).
  const own = processCommandOf(words);
  if (own !== null && own.command !== 'serve') return processHandlers[own.command](json, own.rest, args);

  let base: Config;
  let config: ResolvedConfig;
  try {
    base = loadConfig(name === 'serve' ? serveEnv(args) : process.env);
    // `serve` takes the data directory's lock before anything touches it (secrets included).
    config = name === 'serve' ? (base as ResolvedConfig) : resolveSecrets(base);
  } catch (error) {
    if (error instanceof ConfigError) {
      printError(json, { error: { code: 'CONFIG_INVALID', message: error.message, problems: error.problems } }, error.message);
      return 1;
    }
    throw error;
  }

  if (name === 'serve') {
    try {
      await serve(base);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (error instanceof DataDirInUseError || code === 'PORT_IN_USE' || code === 'PORT_FORBIDDEN' || code === 'GROUNDING_MODEL_UNAVAILABLE' || code === 'DETECTION_MODEL_UNAVAILABLE' || code === 'CA_KEY_LOCKED' || code === 'CA_KEY_EXPOSED') {
        const message = (error as Error).message;
        const reason = (error as { reason?: unknown }).reason;
        printError(json, { error: { code, message, ...(typeof reason === 'string' ? { reason } : {}) } }, `svc: ${message}`);
        process.exit(1);
      }
      throw error;
    }
    return 0;
  }

  // Loaded only past `serve`: a refused start (lock, port) never pays for loading the commands.
  const { commandSpecs } = await import('./commands.ts');
  const spec = commandSpecs[name];
  if (spec === undefined) {
    printError(json, { error: { code: 'USAGE', message: `unknown command "${name}"` } }, `unknown command "${name}"\n${usage(commandSpecs, apiCommandSpecs)}`);
    return 2;
  }
  let options: Record<string, string | boolean | undefined>;
  try {
    options = parseArgs({ args, options: spec.options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (error) {
    printError(json, { error: { code: 'USAGE', message: (error as Error).message } }, (error as Error).message);
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
    printError(json, { error: { code, message, ...details } }, `error: ${code}: ${message}`);
    return 1;
  }
  print(json, result.json, result.text);
  return result.ok === false ? 1 : 0;
}

/**
 * What each process command runs (`serve` is run by main, after the configuration is read); the
 * type makes every command of processCommands have one.
 */
const processHandlers: Record<Exclude<ProcessCommand, 'serve'>, (json: boolean, words: string[], args: string[]) => Promise<number>> = {
  // Offline: reads one file, opens no database and needs no configuration.
  'compliance verify-export': verifyExportCommand,
  // Offline: loads a model directory, opens no database and needs no configuration.
  'model check': modelCheckCommand,
  // A sensor holds no database or cache and needs none of the server's configuration.
  sensor: (json, words, args) => {
    if (words.length === 0) return sensorCommand(json, args);
    const message = `unknown command "sensor ${words.join(' ')}"`;
    printError(json, { error: { code: 'USAGE', message } }, message);
    return Promise.resolve(2);
  },
};

async function runLocally(config: ResolvedConfig, name: string, options: Record<string, string | boolean | undefined>): Promise<CommandResult> {
  // The CLI opens an embedded data directory only as its owner, like the server does.
  let lock: DataDirLock | null = null;
  if (ownsDataDir(config)) {
    for (let attempt = 0; ; attempt++) {
      try {
        lock = acquireDataDirLock(config.dataDir, { role: 'cli' });
        break;
      } catch (error) {
        // A server that holds the directory but has not opened its control socket yet (starting).
        if (!(error instanceof DataDirInUseError) || error.holder.role !== 'server' || attempt >= 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
        const remote = await viaControlSocket(config, name, options);
        if (remote !== null) return remote;
      }
    }
  }
  try {
    const [{ createServices }, { runCommand }] = await Promise.all([import('./services.ts'), import('./commands.ts')]);
    const services = await createServices({ ...config, logLevel: 'warning' }, { logDestination: stderrDestination(), defaultMetrics: false });
    try {
      return await runCommand(services, name, options);
    } finally {
      await services.close();
    }
  } finally {
    lock?.release();
  }
}

/** Sends the command to a running embedded server, or returns null when none is listening. */
async function viaControlSocket(
  config: ResolvedConfig,
  name: string,
  options: Record<string, string | boolean | undefined>,
): Promise<CommandResult | null> {
  if (config.database.kind !== 'pglite' || config.database.dir === null) return null;
  const socketPath = join(config.dataDir, 'svc.sock'); // services.ts controlSocketPath, without loading services
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

/**
 * `svc compliance verify-export FILE [--public-key BASE64]`: checks a signed audit export (JSON or
 * PDF) offline — the deployment signature over its manifest, then every part's SHA-256 — and
 * names the first part that does not verify. Exit 0 when all verify, 1 otherwise, 2 on usage.
 */
async function verifyExportCommand(json: boolean, words: string[], args: string[]): Promise<number> {
  let files = words;
  let publicKey: string | undefined;
  try {
    const parsed = parseArgs({ args, options: { 'public-key': { type: 'string' } }, strict: true, allowPositionals: true });
    publicKey = parsed.values['public-key'];
    files = [...files, ...parsed.positionals];
  } catch (error) {
    printError(json, { error: { code: 'USAGE', message: (error as Error).message } }, (error as Error).message);
    return 2;
  }
  if (files.length !== 1) {
    const message = 'usage: svc compliance verify-export FILE [--public-key BASE64] [--json]';
    printError(json, { error: { code: 'USAGE', message } }, message);
    return 2;
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(files[0]!);
  } catch (error) {
    const message = `cannot read ${files[0]}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
    printError(json, { error: { code: 'FILE_UNREADABLE', message } }, message);
    return 1;
  }
  const { verifyExport } = await import('./compliance/index.ts');
  const report = verifyExport(bytes, publicKey === undefined ? {} : { publicKey });
  const text = report.ok
    ? `export verified: ${report.checked} parts, signed by deployment key ${report.key_id}${report.key_pinned ? ' (pinned)' : ''}`
    : `export does NOT verify: part ${report.first_bad?.part}: ${report.first_bad?.reason}`;
  print(json, report, text);
  return report.ok ? 0 : 1;
}

/**
 * `svc model check DIR [--labels L1,L2]`: loads a local detection model the way the service
 * would (DETECTION_MODEL_DIR, DETECTION_MODEL_LABELS) and reports its labels, the ones read as an
 * attack, its size and its latency on one thread (a short prompt, and a text filling one window
 * of the model's length). A directory that is not a usable model answers
 * DETECTION_MODEL_UNAVAILABLE with a `reason`. Exit 0 when usable, 1 otherwise, 2 on usage.
 */
async function modelCheckCommand(json: boolean, words: string[], args: string[]): Promise<number> {
  let dirs = words;
  let labels: string | undefined;
  try {
    const parsed = parseArgs({ args, options: { labels: { type: 'string' } }, strict: true, allowPositionals: true });
    labels = parsed.values.labels;
    dirs = [...dirs, ...parsed.positionals];
  } catch (error) {
    printError(json, { error: { code: 'USAGE', message: (error as Error).message } }, (error as Error).message);
    return 2;
  }
  if (dirs.length !== 1) {
    const message = 'usage: svc model check DIR [--labels LABEL,…] [--json]';
    printError(json, { error: { code: 'USAGE', message } }, message);
    return 2;
  }
  const { checkModel } = await import('./detection/index.ts');
  try {
    const report = await checkModel(dirs[0]!, labels);
    const text = [
      `model ${report.dir}: usable`,
      `  graph ${report.graph} (${report.bytes >= 1e6 ? `${(report.bytes / 1e6).toFixed(1)} MB` : `${(report.bytes / 1e3).toFixed(1)} kB`}), ${report.max_tokens} tokens per window`,
      `  labels ${report.labels.join(', ')}; attack: ${report.attack_labels.join(', ')}`,
      `  load ${report.load_ms} ms; latency p50 ${report.latency_ms.short_p50} ms (short prompt), ${report.latency_ms.window_p50} ms (one full window), one thread`,
    ].join('\n');
    print(json, report, text);
    return 0;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'DETECTION_MODEL_UNAVAILABLE') throw error;
    const message = (error as Error).message;
    const reason = (error as { reason: string }).reason;
    printError(json, { error: { code, reason, message } }, `error: ${code} (${reason}): ${message}`);
    return 1;
  }
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function printError(json: boolean, value: unknown, text: string): void {
  process.stderr.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** `svc serve --role collector` (or --role=collector): the role is the ROLE variable, the flag wins. */
function serveEnv(args: readonly string[]): NodeJS.ProcessEnv {
  const index = args.findIndex((arg) => arg === '--role' || arg.startsWith('--role='));
  if (index < 0) return process.env;
  const flag = args[index]!;
  const role = flag === '--role' ? args[index + 1] : flag.slice('--role='.length);
  return { ...process.env, ROLE: role === undefined || role.startsWith('-') ? '(missing)' : role };
}

function usage(commandSpecs: typeof CommandSpecs, apiCommandSpecs: typeof ApiCommandSpecs): string {
  const lines = ['usage: svc <command> [options] [--json]', '       svc --version', ''];
  for (const { usage: line, summary } of Object.values(processCommands)) lines.push(`  ${line}  ${summary}`);
  for (const [name, spec] of Object.entries(commandSpecs)) lines.push(`  ${name.padEnd(24)}  ${spec.summary}`);
  lines.push('', "Through a running svc's API (--svc-url, default SVC_URL or http://HOST:PORT; --key, default SVC_KEY):");
  for (const [name, spec] of Object.entries(apiCommandSpecs)) lines.push(`  ${name.padEnd(24)}  ${spec.summary}`);
  return lines.join('\n');
}

/** `svc sensor --class …`: runs until SIGTERM or SIGINT (docs/sensors-operations.md). */
async function sensorCommand(json: boolean, args: string[]): Promise<number> {
  const { runSensor, SensorUsageError, SensorStartError } = await import('./sensors/index.ts');
  let running: Awaited<ReturnType<typeof runSensor>>;
  try {
    running = await runSensor(args, packageVersion());
  } catch (error) {
    if (error instanceof SensorUsageError || error instanceof SensorStartError) {
      printError(json, { error: { code: error.code, message: error.message } }, `svc sensor: ${error.message}`);
      return error instanceof SensorUsageError ? 2 : 1;
    }
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      printError(json, { error: { code: 'PORT_IN_USE', message: (error as Error).message } }, `svc sensor: ${(error as Error).message}`);
      return 1;
    }
    throw error;
  }
  print(json, { sensor_id: running.sensorId, url: running.url }, `svc sensor ${running.sensorId} listening on ${running.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await running.close();
  return 0;
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

/** One API command: parse its options, call svc's API with the key, print the answer. */
async function runApiCommand(name: string, args: string[], json: boolean): Promise<number> {
  const { apiCommandSpecs, API_CONNECTION_OPTIONS, sendApiCall, UsageError } = await import('./api-commands.ts');
  const spec = apiCommandSpecs[name]!;
  const client = loadClientConfig(process.env);
  try {
    const options = parseArgs({ args, options: { ...spec.options, ...API_CONNECTION_OPTIONS }, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
    const key = options.key ?? client.apiKey;
    if (key === null || key === undefined || key === '') throw new UsageError('key', 'an API key is needed: --key or SVC_KEY');
    const answer = await sendApiCall(options['svc-url'] ?? client.url, key, spec.call(options));
    if (answer.status >= 400) {
      const error = (answer.json.error ?? {}) as { code?: string; message?: string };
      printError(json, { status: answer.status, ...answer.json }, `error: ${error.code ?? answer.status}: ${error.message ?? ''}`);
      return 1;
    }
    print(json, answer.json, spec.text(answer.json));
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) {
      printError(json, { error: { code: 'USAGE', message: (error as Error).message, ...(error instanceof UsageError ? { field: error.field } : {}) } }, (error as Error).message);
      return 2;
    }
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const message = `svc could not be reached: ${cause ?? (error as Error).message}`;
    printError(json, { error: { code: 'SVC_UNREACHABLE', message } }, message);
    return 1;
  }
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
