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
// [http.StripPrefix]. Its routes, the list that the package's tests check
// against its route tables (httpapi.go, decisions.go, health.go):
//
//	POST   /v1/web/chat/completions     chat completions with web search
//	POST   /v1/chat/completions         chat completions (n choices, logprobs)
//	POST   /v1/completions              OpenAI's legacy text completions
//	POST   /v1/messages                 messages
//	POST   /v1/messages/count_tokens    a messages request's input tokens
//	POST   /v1/responses                responses
//	GET    /v1/responses/{id}           a stored response
//	DELETE /v1/responses/{id}           deletes a stored response
//	POST   /v1/embeddings               embeddings, in OpenAI's shape
//	POST   /v1/rerank                   documents ranked against a query (Cohere's shape)
//	GET    /v1/models                   the catalog
//	GET    /v1/models/{model_id}        one catalog entry
//	POST   /v1/system                   decisions
//	POST   /v1/systemone                decisions, on System One's path
//	GET    /v1/system/models            the decision models
//	GET    /healthz                     liveness, without a key
//	GET    /readyz                      readiness, without a key
//	GET    /metrics                     Prometheus metrics, with Config.Metrics
//
// A new endpoint is one row of a route table, its handler, and its line
// here and in the README's list.
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
