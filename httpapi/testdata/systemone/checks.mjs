// checks.mjs drives inferkit's /v1/systemone with System One's official
// TypeScript SDK (@typesafe-ai/sdk), unmodified, and prints a JSON object
// from each check's name to "ok" or what failed. TYPESAFE_BASE_URL and
// TYPESAFE_API_KEY say where and with which key; the SDK reads them.
import {
  APIError,
  AuthenticationError,
  TypeSafeClient,
  choice,
  noul,
  score,
} from "@typesafe-ai/sdk";

const client = new TypeSafeClient({ logLevel: "off" });
const results = {};

async function check(name, fn) {
  try {
    await fn();
    results[name] = "ok";
  } catch (e) {
    results[name] = String((e && e.stack) || e);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

const close = (a, b, eps = 1e-9) => Math.abs(a - b) <= eps;

// finite checks that every number in v is finite.
function finite(v, path = "response") {
  if (typeof v === "number") assert(Number.isFinite(v), `${path} is ${v}`);
  else if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v)) finite(x, `${path}.${k}`);
}

// distribution checks that p covers exactly keys and sums to 1.
function distribution(p, keys, what) {
  const got = Object.keys(p).sort();
  assert(
    JSON.stringify(got) === JSON.stringify([...keys].sort()),
    `${what}: probabilities over ${got}, want ${keys}`,
  );
  const sum = Object.values(p).reduce((s, x) => s + x, 0);
  assert(close(sum, 1, 1e-6), `${what}: probabilities sum to ${sum}`);
  for (const x of Object.values(p)) assert(x >= 0 && x <= 1, `${what}: probability ${x}`);
}

// checkChoice: the most likely option, and confidence (m − 1/n)/(1 − 1/n).
function checkChoice(a, names, what) {
  assert(a.type === "choice", `${what}: type ${a.type}`);
  distribution(a.probabilities, names, what);
  const m = Math.max(...Object.values(a.probabilities));
  assert(a.probabilities[a.choice] === m, `${what}: choice ${a.choice} is not the most likely`);
  const n = names.length;
  const want = n === 1 ? 1 : (m - 1 / n) / (1 - 1 / n);
  assert(close(a.confidence, want), `${what}: confidence ${a.confidence}, formula ${want}`);
}

// checkScore: legend, score = Σ i·pᵢ, confidence max(0, 1 − Σ pᵢ·|i − k| / D).
function checkScore(a, levels, what) {
  assert(a.type === "score", `${what}: type ${a.type}`);
  const keys = levels.map((_, i) => String(i));
  distribution(a.probabilities, keys, what);
  assert(JSON.stringify(a.legend) === JSON.stringify(Object.fromEntries(levels.map((l, i) => [String(i), l]))), `${what}: legend ${JSON.stringify(a.legend)}`);
  const p = keys.map((k) => a.probabilities[k]);
  const mean = p.reduce((s, x, i) => s + i * x, 0);
  assert(close(a.score, mean), `${what}: score ${a.score}, expectation ${mean}`);
  const n = p.length;
  const k = p.indexOf(Math.max(...p));
  const d = p.reduce((s, _, i) => s + Math.abs(i - (n - 1) / 2), 0) / n;
  const spread = p.reduce((s, x, i) => s + x * Math.abs(i - k), 0);
  const want = Math.max(0, 1 - spread / d);
  assert(close(a.confidence, want), `${what}: confidence ${a.confidence}, formula ${want}`);
}

function checkNoul(a, what) {
  assert(a.type === "noul", `${what}: type ${a.type}`);
  assert(typeof a.noul === "number" && a.noul >= 0 && a.noul <= 1, `${what}: noul ${a.noul}`);
  assert(!("confidence" in a), `${what}: a noul answer has confidence`);
}

function envelope(r, ids) {
  assert(typeof r.model === "string", `model ${r.model}`);
  assert(Number.isInteger(r.usage.input_tokens) && r.usage.input_tokens > 0, `usage ${JSON.stringify(r.usage)}`);
  assert(Number.isInteger(r.usage.output_tokens) && r.usage.output_tokens >= 0, `usage ${JSON.stringify(r.usage)}`);
  assert(JSON.stringify(Object.keys(r.answers).sort()) === JSON.stringify([...ids].sort()), `answers for ${Object.keys(r.answers)}, want ${ids}`);
  for (const [id, a] of Object.entries(r.answers))
    for (const k of Object.keys(a))
      assert(["type", "noul", "choice", "score", "legend", "probabilities", "confidence"].includes(k) || k.startsWith("x_"), `${id}: field ${k} is neither System One's nor x_`);
  finite(r);
}

await check("instructions: text, JSON and null", async () => {
  const r = await client.systemOne({
    state: "I was charged twice for order 4411. Please fix this today.",
    questions: {
      "text instructions": noul("Is the customer asking for a refund?"),
      "json.instructions": choice({ task: "route the ticket", teams: ["billing", "technical"] }, { billing: null, technical: "bugs and outages", other: null }),
      "null 指示": score(null, ["Calm", "Annoyed", "Furious"]),
      "no instructions": noul(),
    },
  });
  envelope(r, ["text instructions", "json.instructions", "null 指示", "no instructions"]);
  checkNoul(r.answers["text instructions"], "text instructions");
  checkChoice(r.answers["json.instructions"], ["billing", "technical", "other"], "json.instructions");
  checkScore(r.answers["null 指示"], ["Calm", "Annoyed", "Furious"], "null 指示");
  checkNoul(r.answers["no instructions"], "no instructions");
});

await check("JSON state", async () => {
  const r = await client.systemOne({
    state: { document: "I was charged twice. Please fix this ASAP.", customer: { plan: "pro", months: 14 } },
    questions: { category: choice("What is this ticket about?", { billing: null, technical: null, other: null }) },
  });
  envelope(r, ["category"]);
  checkChoice(r.answers.category, ["billing", "technical", "other"], "category");
});

await check("three question types", async () => {
  const levels = ["Calm", { label: "Frustrated" }, "Angry", "Very angry", "Furious"];
  const options = { billing: "payments", sales: null, "ünïcödé 😀": ["a", "list"], support: { area: "help" } };
  const r = await client.systemOne({
    state: "Hangul 한국어 and emoji 🎉 in the state.",
    questions: {
      urgent: noul("Is it urgent?", { true: "needs an answer today", false: null }),
      yes: noul("Is it spam?", { true: "unsolicited" }),
      team: choice("Which team?", options),
      anger: score("How angry?", levels),
    },
  });
  envelope(r, ["urgent", "yes", "team", "anger"]);
  checkNoul(r.answers.urgent, "urgent");
  checkNoul(r.answers.yes, "yes");
  checkChoice(r.answers.team, Object.keys(options), "team");
  checkScore(r.answers.anger, levels, "anger");
});

await check("255 options", async () => {
  const options = Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`option ${i}`, null]));
  const r = await client.systemOne({ state: "Pick one.", questions: { wide: choice("Which option?", options) } });
  envelope(r, ["wide"]);
  checkChoice(r.answers.wide, Object.keys(options), "wide");
});

await check("bad request is a 4xx", async () => {
  for (const body of [
    { state: "s", questions: { q: { type: "choice", instructions: "x", criteria: {} } } },
    { state: "s", questions: { q: { type: "boolean", instructions: "x" } } },
    { state: "s", questions: { q: { type: "choice", instructions: "x", criteria: ["a", "b"] } } },
    { questions: { q: { type: "noul" } } },
  ]) {
    try {
      // Past the SDK's own checks, as another client would send it.
      await client.systemOne({ ...body, questions: { ...body.questions } });
    } catch (e) {
      assert(e instanceof APIError && e.status >= 400 && e.status < 500, `${JSON.stringify(body)}: ${e}`);
      continue;
    }
    throw new Error(`${JSON.stringify(body)} was accepted`);
  }
});

await check("wrong key is a 401", async () => {
  const wrong = new TypeSafeClient({ apiKey: "sk-wrong", logLevel: "off" });
  try {
    await wrong.systemOne({ state: "s", questions: { q: noul("x") } });
  } catch (e) {
    assert(e instanceof AuthenticationError && e.status === 401, String(e));
    assert(e.body && e.body.detail && e.body.detail.error_type === "authentication_error", JSON.stringify(e.body));
    return;
  }
  throw new Error("a wrong key was accepted");
});

await check("models", async () => {
  const models = await client.models.list();
  assert(models.length > 0, "no models");
  for (const m of models)
    assert(typeof m.name === "string" && typeof m.description === "string" && /^\d{4}-\d\d-\d\d$/.test(m.release_date), JSON.stringify(m));
});

console.log(JSON.stringify(results));
