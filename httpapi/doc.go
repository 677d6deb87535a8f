// Package httpapi serves the Inference API over HTTP: chat completions
// (with n choices and logprobs), OpenAI's legacy completions, messages
// (and count_tokens), responses and embeddings (the generation routes, on
// the spec's base_url), the model catalog (the platform routes, on its
// api_url) and decisions, in the wire formats of package formats, on an
// engine that runs the models in process. Images come as data: URLs, or
// by http(s) URL when [Config.RemoteImages] lets the Handler fetch them.
//
// A [Handler] registers method+path patterns on a caller's
// [*http.ServeMux], all together ([Handler.Register]) or the generation,
// catalog and decision routes apart ([Handler.RegisterGeneration],
// [Handler.RegisterModels], [Handler.RegisterDecisions]); the operators'
// routes come with [Handler.RegisterOperations]. It is also an
// [http.Handler] serving every route, for mounting under a prefix with
// [http.StripPrefix]. Its routes are listed once, in the README's API
// section, which the package's tests check against the route tables
// (httpapi.go, decisions.go, health.go).
//
// A new endpoint touches three places: its row in a route table, its
// handler, and its line in the README's list.
//
// The stages that wrap every route are exported as
// func(http.Handler) http.Handler values, for a caller's own handlers:
// [ErrorStyle], [AccessLog], [BodyDeadline], [Authenticate] and [LimitBody];
// [Fail] and [WriteJSON] write their errors and answers.
//
// Every route takes a bearer API key, checked through a [KeyStore]
// ([StaticKeys] keeps keys as HMAC-SHA-256 digests under a secret, and
// none is ever logged) or through the accounts of package account
// ([Config.Accounts]), whose keys belong to accounts with a tier and a
// monthly spend. The key's [Identity] is in the request's context for
// middleware such as rate limits, and it scopes stored responses: one key
// cannot read, continue or delete another key's response.
//
// The admin API, which manages the accounts, is package httpapi/admin,
// mounted beside the Handler; [Config.RefuseKey] keeps its key from
// being taken as an API key. Errors have the body shape of the route's
// style, before the headers as a status and a JSON body, after them as
// the stream's own error event. A client that goes away cancels its generation.
//
// A responses request with background true is stored as queued and
// answered at once, and runs within its key's limits on a context of its
// own, bounded in number per account and in all; GET follows its
// progress (or resumes its stream after a sequence_number), cancel stops
// it, and a response whose server was killed is found failed, never left
// in progress (see background.go). [Handler.Close] ends those still
// running.
//
// The catalog's model objects carry each entry's datacenters
// (catalog.Model.Datacenters, ISO 3166-1 alpha-2 codes) and created: the
// entry's Created, or else the modification time of its GGUF file, read
// when New runs (not the GGUF's metadata, whose general.* keys hold no
// standard date); 0 when neither is known.
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
