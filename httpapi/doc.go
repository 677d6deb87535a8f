// Package httpapi serves the Inference API over HTTP: chat completions
// (with n choices and logprobs), OpenAI's legacy completions, messages
// (and count_tokens), responses and embeddings (the generation routes, on
// the spec's base_url), the model catalog (the platform routes, on its
// api_url) and decisions, in the wire formats of package formats, on an
// engine that runs the models in process. Images come as data: URLs, or
// by http(s) URL when [Config.RemoteImages] lets the Handler fetch them.
//
// A [Handler] registers method+path patterns on a caller's
// [*http.ServeMux], all together ([Handler.Register]) or the generation
// and platform routes apart ([Handler.RegisterGeneration],
// [Handler.RegisterModels]); it is also an [http.Handler] serving every
// route, for mounting under a prefix with [http.StripPrefix].
//
// Every route takes a bearer API key, checked through a [KeyStore]
// ([StaticKeys] keeps keys as HMAC-SHA-256 digests under a secret, and
// none is ever logged) or through the accounts of package account
// ([Config.Accounts]), whose keys belong to accounts with a tier and a
// monthly spend. The key's [Identity] is in the request's context for
// middleware such as rate limits, and it scopes stored responses: one key
// cannot read, continue or delete another key's response.
//
// With [Config.AdminKey], the admin API under /v1/admin manages the
// accounts: create and list accounts, pin tiers, start trials and
// subscriptions, create, list and revoke API keys (a key's secret is in
// its creation's answer only), record credit purchases (once per payment
// id) and report a month's usage ([Handler.RegisterAdmin] lists the
// routes and their JSON). It takes the admin key as a
// bearer and refuses API keys and anything else with a 401; the admin
// key is no API key. Errors have the body shape of the route's family, before the
// headers as a status and a JSON body, after them as the stream's own
// error event. A client that goes away cancels its generation.
//
// Operators get GET /healthz, GET /readyz and, when [Config.Metrics]
// names a Prometheus registry, GET /metrics, which take no key and no
// rate limit ([Handler.RegisterOperations]): requests by route, status
// and tier; prompt, cached and generated tokens; time to first token and
// per output token; queue depth, active sequences and load time per
// model. Each Handler registers on the registry it is given, never on a
// global one.
//
// The package holds no global state and needs no cgo: its tests run
// against a fake [Engine], and [*inference.Engine] satisfies Engine (and
// [Embedder], which POST /v1/embeddings needs).
package httpapi
