// usage.mjs sends one conversation, a system prompt and a user's turn,
// through the official TypeScript SDKs, as TestUsageAddsUpRealEngine
// sends it through the Go ones, and prints its prompt usage in the
// three styles' common terms: {"prompt", "read", "written", "input"}
// (the last two on messages only).
//
// node usage.mjs MODEL SYSTEM MAX_TOKENS STYLE USER, with BASE_URL and
// API_KEY set; STYLE is chat, responses, messages or messages-breakpoint
// (a cache_control breakpoint on the system block).
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const [model, system, maxTokens, style, user] = process.argv.slice(2);
const base = process.env.BASE_URL;
const openai = new OpenAI({baseURL: base + "/v1", apiKey: process.env.API_KEY, maxRetries: 0});
const anthropic = new Anthropic({baseURL: base, apiKey: process.env.API_KEY, maxRetries: 0});
const max = Number(maxTokens);

let out;
switch (style) {
	case "chat": {
		const res = await openai.chat.completions.create({
			model, max_tokens: max, temperature: 0, reasoning_effort: "none",
			messages: [{role: "system", content: system}, {role: "user", content: user}],
		});
		out = {prompt: res.usage.prompt_tokens, read: res.usage.prompt_tokens_details?.cached_tokens ?? 0};
		break;
	}
	case "responses": {
		const res = await openai.responses.create({
			model, max_output_tokens: max, temperature: 0, reasoning: {effort: "none"}, instructions: system, input: user,
		});
		out = {prompt: res.usage.input_tokens, read: res.usage.input_tokens_details?.cached_tokens ?? 0};
		break;
	}
	case "messages":
	case "messages-breakpoint": {
		const block = {type: "text", text: system};
		if (style === "messages-breakpoint") {
			block.cache_control = {type: "ephemeral"};
		}
		const res = await anthropic.messages.create({
			model, max_tokens: max, temperature: 0, thinking: {type: "disabled"},
			system: [block], messages: [{role: "user", content: [{type: "text", text: user}]}],
		});
		const u = res.usage;
		const read = u.cache_read_input_tokens ?? 0, written = u.cache_creation_input_tokens ?? 0;
		out = {prompt: u.input_tokens + read + written, read, written, input: u.input_tokens};
		break;
	}
	default:
		throw new Error("no style " + style);
}
console.log(JSON.stringify(out));
