/**
 * The commands the `svc` process runs itself, beside the data-directory commands (commands.ts)
 * and the API commands (api-commands.ts): one table that cli.ts dispatches from and prints in its
 * usage and `svc --help --json`, so that a command cannot be accepted without being listed.
 */
export const processCommands = {
  serve: { usage: 'serve [--role collector]', summary: 'run the service (all-in-one; or the collector of self-hosted sensors)' },
  sensor: { usage: 'sensor --class verification|gateway|mcp --collector URL --data-dir DIR [--enrolment-token T]', summary: 'run a sensor' },
  'compliance verify-export': { usage: 'compliance verify-export FILE [--public-key B64]', summary: 'verify a signed audit export offline' },
  'model check': { usage: 'model check DIR [--labels L1,L2]', summary: 'load a local detection model (ONNX) and report its labels, size and latency' },
} as const;

export type ProcessCommand = keyof typeof processCommands;

/** The process command `words` starts with, and the words after it; null when none does. */
export function processCommandOf(words: readonly string[]): { command: ProcessCommand; rest: string[] } | null {
  for (const command of Object.keys(processCommands) as ProcessCommand[]) {
    const parts = command.split(' ');
    if (parts.every((part, index) => words[index] === part)) return { command, rest: words.slice(parts.length) };
  }
  return null;
}

/** Every command the CLI accepts, for `svc --help --json`. */
export function commandNames(commandSpecs: Readonly<Record<string, unknown>>, apiCommandSpecs: Readonly<Record<string, unknown>>): string[] {
  return [...Object.keys(commandSpecs), ...Object.keys(apiCommandSpecs), ...Object.keys(processCommands)];
}
