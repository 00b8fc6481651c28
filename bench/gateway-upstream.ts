// Child process for the gateway benchmark: the fast OpenAI-compatible fake upstream on loopback.
import { startFastOpenAiFake } from '../test/fakes/providers/index.ts';

const fake = await startFastOpenAiFake({ streamChunks: Number(process.env.BENCH_STREAM_CHUNKS ?? 5) });
const port = Number(new URL(fake.baseUrl).port);
process.stdout.write(`${JSON.stringify({ port, base_url: fake.baseUrl })}\n`);
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
