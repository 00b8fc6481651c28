/**
 * A tiny REAL text-classification model, built by the tests that need one (no weights can be
 * downloaded): an ONNX graph written with onnx-proto (token embedding → mask-weighted mean pool →
 * linear layer → logits of 2 labels, over int64 input_ids / attention_mask, opset 13) and a BERT
 * style WordPiece tokenizer.json, laid out as `optimum-cli export onnx --task text-classification`
 * lays out a real one (model.onnx, tokenizer.json, config.json with id2label).
 *
 * Its weights make the answer readable: every word has a zero embedding except the trigger words,
 * so the injection logit is (80 × xyzzy + 10 × plugh) / tokens − 1 against 0 for the safe label.
 * "hello xyzzy world" (5 tokens with [CLS] and [SEP]): logit 15, P(INJECTION) ≈ 1; one xyzzy in
 * 13 tokens: logit 5.2, P ≈ 0.99; "hello plugh world": logit 1, P ≈ 0.73; no trigger: logit −1,
 * P ≈ 0.27.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export const TRIGGER = 'xyzzy';
export const WEAK_TRIGGER = 'plugh';
export const VOCABULARY = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', TRIGGER, WEAK_TRIGGER, 'hello', 'world', 'the', 'a', 'please', 'summarise', 'report', 'weather', 'today', 'in', 'of', 'and', 'notes'];

export interface TinyModelOptions {
  /** config.json id2label names (default SAFE, INJECTION); null: no config.json at all. */
  readonly labels?: readonly [string, string] | null;
  /** tokenizer_config.json model_max_length (none written when absent: 512 applies). */
  readonly maxLength?: number;
  /** The graph's first input name (default input_ids): another name makes a graph svc cannot feed. */
  readonly inputName?: string;
}

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

function tensor(name: string, dims: number[], data: Float32Array | BigInt64Array, dataType: number) {
  return onnx.TensorProto.create({ name, dims, dataType, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
}

function node(opType: string, input: string[], output: string[], attributes: Record<string, number> = {}) {
  const attribute = Object.entries(attributes).map(([name, value]) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i: value }));
  return onnx.NodeProto.create({ opType, input, output, name: output[0], attribute });
}

function valueInfo(name: string, elemType: number, dims: Array<string | number>) {
  const dim = dims.map((value) => (typeof value === 'string' ? onnx.TensorShapeProto.Dimension.create({ dimParam: value }) : onnx.TensorShapeProto.Dimension.create({ dimValue: value })));
  return onnx.ValueInfoProto.create({ name, type: onnx.TypeProto.create({ tensorType: onnx.TypeProto.Tensor.create({ elemType, shape: onnx.TensorShapeProto.create({ dim }) }) }) });
}

/** The ONNX graph's bytes. */
export function tinyGraph(inputName = 'input_ids'): Uint8Array {
  const dimensions = 2;
  const embeddings = new Float32Array(VOCABULARY.length * dimensions);
  embeddings[VOCABULARY.indexOf(TRIGGER) * dimensions + 1] = 80;
  embeddings[VOCABULARY.indexOf(WEAK_TRIGGER) * dimensions + 1] = 10;
  const graph = onnx.GraphProto.create({
    name: 'tiny-prompt-guard',
    initializer: [
      tensor('embeddings', [VOCABULARY.length, dimensions], embeddings, FLOAT),
      tensor('classifier.weight', [dimensions, 2], Float32Array.from([1, 0, 0, 1]), FLOAT),
      tensor('classifier.bias', [2], Float32Array.from([0, -1]), FLOAT),
      tensor('sequence_axis', [1], BigInt64Array.from([1n]), INT64),
      tensor('feature_axis', [1], BigInt64Array.from([2n]), INT64),
    ],
    node: [
      node('Gather', ['embeddings', inputName], ['token_vectors'], { axis: 0 }),
      node('Cast', ['attention_mask'], ['mask'], { to: FLOAT }),
      node('Unsqueeze', ['mask', 'feature_axis'], ['mask_3d']),
      node('Mul', ['token_vectors', 'mask_3d'], ['masked']),
      node('ReduceSum', ['masked', 'sequence_axis'], ['summed'], { keepdims: 0 }),
      node('ReduceSum', ['mask_3d', 'sequence_axis'], ['counted'], { keepdims: 0 }),
      node('Div', ['summed', 'counted'], ['pooled']),
      node('MatMul', ['pooled', 'classifier.weight'], ['projected']),
      node('Add', ['projected', 'classifier.bias'], ['logits']),
    ],
    input: [valueInfo(inputName, INT64, ['batch', 'sequence']), valueInfo('attention_mask', INT64, ['batch', 'sequence'])],
    output: [valueInfo('logits', FLOAT, ['batch', 2])],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [onnx.OperatorSetIdProto.create({ domain: '', version: 13 })], producerName: 'svc-tests', graph });
  return onnx.ModelProto.encode(model).finish();
}

/** A BERT-style tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] … [SEP]). */
export function tinyTokenizer(): object {
  const special = (content: string) => ({ id: VOCABULARY.indexOf(content), content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const token = (id: string, typeId = 0) => ({ SpecialToken: { id, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [token('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, token('[SEP]')],
      pair: [token('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, token('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, token('[SEP]', 1)],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(VOCABULARY.map((word, index) => [word, index])) },
  };
}

/** Writes the tiny model into `dir` (created) and returns `dir`. */
export function writeTinyModel(dir: string, options: TinyModelOptions = {}): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.onnx'), tinyGraph(options.inputName));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizer()));
  const labels = options.labels === undefined ? (['SAFE', 'INJECTION'] as const) : options.labels;
  if (labels !== null) {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ architectures: ['TinyForSequenceClassification'], id2label: { 0: labels[0], 1: labels[1] }, label2id: { [labels[0]]: 0, [labels[1]]: 1 } }));
  }
  if (options.maxLength !== undefined) writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ model_max_length: options.maxLength, do_lower_case: true }));
  return dir;
}
