// background.mjs drives background responses through the official
// TypeScript SDK (openai), as TestSDKBackground drives them through the Go
// one, and prints what it saw as one JSON object.
//
// node background.mjs run MODEL: creates a background response, retrieves
// it until it ends, and streams it again after sequence number 2:
// {"created", "status", "text", "first", "last"} (the status it was
// created with and ended with, its output text, and the resumed stream's
// first sequence number and last event type).
//
// node background.mjs cancel ID: cancels response ID, then retrieves it:
// {"cancelled", "text", "retrieved"} (the statuses and the text so far).
//
// BASE_URL and API_KEY name the server and the key.
import OpenAI from "openai";

const openai = new OpenAI({baseURL: process.env.BASE_URL + "/v1", apiKey: process.env.API_KEY, maxRetries: 0});
const [mode, arg] = process.argv.slice(2);

if (mode === "run") {
	const created = await openai.responses.create({model: arg, input: "Hi", background: true});
	let r = created;
	const deadline = Date.now() + 5000;
	while (r.status === "queued" || r.status === "in_progress") {
		if (Date.now() > deadline) {
			throw new Error("still " + r.status);
		}
		r = await openai.responses.retrieve(r.id);
	}
	let first, last;
	const stream = await openai.responses.retrieve(r.id, {stream: true, starting_after: 2});
	for await (const ev of stream) {
		first ??= ev.sequence_number;
		last = ev.type;
	}
	console.log(JSON.stringify({created: created.status, status: r.status, text: r.output_text, first, last}));
} else if (mode === "cancel") {
	const c = await openai.responses.cancel(arg);
	const g = await openai.responses.retrieve(arg);
	console.log(JSON.stringify({cancelled: c.status, text: c.output_text, retrieved: g.status}));
} else {
	throw new Error("no mode " + mode);
}
