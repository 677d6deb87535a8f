// nodellama_bench.mjs measures node-llama-cpp itself on a model, as
// BenchmarkBackends measures inferkit's backends: prefill of the prompt
// tokens in one batch, and single-stream greedy decode of N tokens after
// a prompt of its own. BenchmarkBackends/.../node-llama-cpp runs it with
// node, with node-llama-cpp installed in the folder INFERKIT_NODE_LLAMA_CPP
// names, and reads the one JSON line it prints.
//
// node nodellama_bench.mjs MODEL THREADS CONTEXT '{"prefill":[...],"prompt":[...],"generate":48}'
import {createRequire} from "node:module";
import path from "node:path";

const [model, threads, contextSize, spec] = process.argv.slice(2);
const req = createRequire(path.join(process.env.INFERKIT_NODE_LLAMA_CPP, "package.json"));
const {getLlama, LlamaLogLevel} = await import(req.resolve("node-llama-cpp"));
const {prefill, prompt, generate} = JSON.parse(spec);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const m = await llama.loadModel({modelPath: model});
const ctx = await m.createContext({contextSize: Number(contextSize), batchSize: 512, threads: Number(threads), sequences: 1});
const seq = ctx.getSequence();

let start = performance.now();
await seq.evaluateWithoutGeneratingNewTokens(prefill);
const prefillSec = (performance.now() - start) / 1000;
await seq.clearHistory();

// The first token comes from the prompt's decode; the clock runs over
// the next generate-1, each one decode of one token.
let n = 0;
let first = 0;
for await (const tok of seq.evaluate(prompt, {temperature: 0})) {
	n++;
	if (n === 1) {
		first = performance.now();
	}
	if (n === generate) {
		break;
	}
}
const decodeSec = (performance.now() - first) / 1000;
if (n < generate) {
	throw new Error(`generation ended after ${n} tokens of ${generate}`);
}
console.log(JSON.stringify({version: llama.llamaCppRelease, prefill: prefill.length / prefillSec, decode: (generate - 1) / decodeSec}));
await ctx.dispose();
await m.dispose();
await llama.dispose();
