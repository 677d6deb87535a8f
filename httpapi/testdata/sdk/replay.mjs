// replay.mjs sends requests through the official TypeScript SDKs, openai
// and @anthropic-ai/sdk, unmodified, each to the method an application
// calls for its route, and prints what each SDK made of the answer: one
// JSON array, an entry per request, in order.
//
// node replay.mjs CALLS.json, with BASE_URL (the server, without /v1) and
// API_KEY set. CALLS.json is [{"path": "/v1/chat/completions", "body":
// {...}}, ...]. Each entry printed is {"ok": true, "text": ..., "usage":
// ...} (and a response's "state") when the SDK returned (or streamed to
// the end) without an error,
// else {"ok": false, "status": ..., "message": ..., "type": ..., "code":
// ...}, the error the SDK raised. Neither SDK retries (maxRetries 0), so each request is sent
// once.
import {readFileSync} from "node:fs";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const base = process.env.BASE_URL;
const openai = new OpenAI({baseURL: base + "/v1", apiKey: process.env.API_KEY, maxRetries: 0});
const anthropic = new Anthropic({baseURL: base, apiKey: process.env.API_KEY, maxRetries: 0});

// What a route's answer says, as an application reads it from the SDK:
// the text (or the streamed text deltas), and the usage.
async function chat(body) {
	const res = await openai.chat.completions.create(body);
	if (!body.stream) {
		return {text: res.choices?.[0]?.message?.content ?? "", usage: res.usage};
	}
	let text = "", usage;
	for await (const chunk of res) {
		text += chunk.choices?.[0]?.delta?.content ?? "";
		usage = chunk.usage ?? usage;
	}
	return {text, usage};
}

async function completions(body) {
	const res = await openai.completions.create(body);
	if (!body.stream) {
		return {text: res.choices?.[0]?.text ?? "", usage: res.usage};
	}
	let text = "", usage;
	for await (const chunk of res) {
		text += chunk.choices?.[0]?.text ?? "";
		usage = chunk.usage ?? usage;
	}
	return {text, usage};
}

async function responses(body) {
	const res = await openai.responses.create(body);
	if (!body.stream) {
		return {text: res.output_text ?? "", usage: res.usage, state: res.status};
	}
	let text = "", usage, state;
	for await (const ev of res) {
		if (ev.type === "response.output_text.delta") {
			text += ev.delta;
		}
		if (ev.response) {
			usage = ev.response.usage ?? usage;
			state = ev.response.status;
		}
	}
	return {text, usage, state};
}

async function messages(body) {
	if (!body.stream) {
		const res = await anthropic.messages.create(body);
		return {text: res.content.filter((b) => b.type === "text").map((b) => b.text).join(""), usage: res.usage};
	}
	const stream = anthropic.messages.stream(body);
	let text = "";
	for await (const ev of stream) {
		if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") {
			text += ev.delta.text;
		}
	}
	const final = await stream.finalMessage();
	return {text, usage: final.usage};
}

// Embeddings come back as vectors (the SDK asks for base64 and decodes
// it where the request names no encoding); reranking, which neither SDK
// has a method for, goes through the OpenAI client's own post.
async function embeddings(body) {
	const res = await openai.embeddings.create(body);
	return {text: res.data.map((d) => (typeof d.embedding === "string" ? d.embedding : d.embedding.length)).join(","), usage: res.usage};
}

async function rerank(body) {
	const res = await openai.post("/rerank", {body});
	return {text: res.results.map((r) => r.index).join(","), usage: res.usage};
}

const routes = {
	"/v1/chat/completions": chat,
	"/v1/completions": completions,
	"/v1/responses": responses,
	"/v1/messages": messages,
	"/v1/embeddings": embeddings,
	"/v1/rerank": rerank,
};

const calls = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = [];
for (const {path, body} of calls) {
	const send = routes[path];
	if (!send) {
		out.push({ok: false, status: 0, message: "no SDK method for " + path});
		continue;
	}
	try {
		out.push({ok: true, ...(await send(body))});
	} catch (err) {
		// OpenAI's errors carry the body's error object, Anthropic's the
		// whole body.
		const e = err.error?.error ?? err.error ?? {};
		out.push({ok: false, status: err.status ?? 0, message: e.message ?? err.message, type: e.type ?? "", code: e.code ?? ""});
	}
}
console.log(JSON.stringify(out));
