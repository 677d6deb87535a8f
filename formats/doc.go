// Package formats is the shared core of the Inference API's wire
// formats: the canonical request every style parses into (a
// *RequestError names the offending parameter), its conversion to the
// engine's [inference.Request], the errors and their bodies in each
// style, Server-Sent Events and the model list. The wire styles
// themselves (chat completions, messages, responses, legacy completions,
// embeddings) are packages below it, each converting its JSON to and from
// the hub [Request], [inference.Result] and [inference.Event].
//
// Formats are hub and spoke: every style parses into one [Request] (an
// [inference.Request] plus what the engine does not read itself, such as
// the stream flag or the reasoning effort), and is built back from it, so a
// chat request converts into a messages or responses request through
// [Request] without a converter per pair.
//
// Tool calls are chat message.tool_calls (finish_reason tool_calls),
// messages tool_use blocks (stop_reason tool_use) and responses
// function_call items, blocking and streamed in each style's own events;
// their results are tool messages, tool_result blocks and
// function_call_output items, all the engine's RoleTool messages. An
// invalid request the engine rejects (a schema it cannot enforce, say) is
// a 400 whose param is the style's name of the field at fault: the
// engine's *inference.FieldError carries the field as an [inference.Path],
// and each style maps it through a [ParamNames] table of its own, kept
// next to its request type, with its Error (chat.Error, messages.Error)
// before [WriteError] writes the body.
//
// # Layout
//
// This package is the hub: the canonical [Request] and its conversion to
// the engine's ([Request.Inference], [Request.Transcript], [Continue]),
// errors and their bodies in every [Style] ([Error], [RequestError],
// [WriteError], System One's bodies among them), the request decoding
// every style shares ([Decode], [Invalid], [Missing], [TypeError]),
// Server-Sent Events ([WriteEvent], [WriteJSONEvent], [WriteDone]), the
// ids and clock of built responses ([Options]) and the model list
// ([ModelList]). Each wire style is a package below it, with short names:
//
//   - formats/chat: chat completions, chat.Request, chat.Completion,
//     chat.Stream
//   - formats/messages: Anthropic's messages, messages.Request,
//     messages.Message, messages.Stream
//   - formats/responses: OpenAI's responses, responses.Request,
//     responses.Response, responses.Item, responses.Stream
//   - formats/completions: OpenAI's legacy completions,
//     completions.Request, completions.Response, completions.Stream
//   - formats/embeddings: embeddings.Request, embeddings.Response
//
// What the styles share in reading and writing a request (parameter
// checks, images, search options, sampling, a stream's progress) is
// formats/internal/wire, which imports this package; this package imports
// none of the styles. System One's decision request is package
// decision's; its error bodies and model entries are the hub's, since an
// error's body in each [Style] is the hub's to write.
//
// A new wire style touches three places: its package under formats (the
// request and response types, Parse, the conversion to and from
// [Request] or the engine's own request, its ParamNames table and Error),
// its handler file in httpapi, and its row in httpapi's route table
// (httpapi.go; the route list of httpapi's doc.go, which a test checks
// against the table, gets the same line). A style whose error body has
// a shape of its own also adds a [Style] here (errors.go) and its case
// in httpapi's named (errors.go).
//
// A new endpoint of an existing style touches at most three places: its
// handler, in its style's handler file in httpapi; its row in httpapi's
// route table; and, when its body or answer has a shape of its own, the
// types in its style's package (as messages.TokenCount for
// /v1/messages/count_tokens).
//
// # Parameters
//
// No parameter is accepted and then ignored: every field of the
// generation styles' request types (chat, messages, responses and legacy
// completions) is honoured, or refused with a 400 that names it in the
// style's error shape. The table lists them by
// each style's own name: H is honoured, R refused, HR honoured for the
// values the note gives and refused for the others, and - not a field of
// that style. httpapi's TestParameterTable runs every cell through the
// official SDKs on a real tiny model, showing each honoured one's effect
// and each refused one's 400, and fails for a cell without a check or a
// request field without a row. The sampling parameters that /v1/models
// lists (catalog.SamplingParameters) are H on every generation style.
//
//	parameter                chat  messages  responses  completions
//	model                    H     H         H          H
//	messages                 H     H         -          -
//	input                    -     -         H          -
//	system                   -     H         -          -
//	instructions             -     -         H          -
//	previous_response_id     -     -         H          -
//	stream                   H     H         H          H
//	stream_options           H     -         -          H
//	tools                    H     H         H          -
//	tool_choice              H     H         H          -
//	parallel_tool_calls      H     -         H          -
//	max_new_tokens           H     -         -          -
//	max_completion_tokens    H     -         -          -
//	max_tokens               H     H         -          H
//	max_output_tokens        -     -         H          -
//	reasoning                H     -         H          -
//	reasoning_effort         H     -         -          -
//	thinking                 -     H         -          -
//	thinking.budget_tokens   -     HR        -          -
//	response_format          H     -         -          -
//	text                     -     -         H          -
//	text.format.name         -     -         H          -
//	output_config            -     H         -          -
//	verbosity                H     -         -          -
//	temperature              H     H         H          H
//	top_p                    H     H         H          H
//	top_k                    H     H         H          H
//	min_p                    H     -         -          H
//	seed                     H     H         H          H
//	stop                     H     -         H          H
//	stop_sequences           -     H         -          -
//	frequency_penalty        H     H         H          H
//	presence_penalty         H     H         H          H
//	repetition_penalty       H     H         H          H
//	n                        H     -         -          H
//	web_search_options       H     -         -          -
//	mcp_servers              -     H         -          -
//	logprobs                 H     -         -          H
//	top_logprobs             H     -         H          -
//	include                  -     -         HR         -
//	user                     H     -         H          H
//	safety_identifier        -     -         H          -
//	metadata                 R     H         H          -
//	store                    R     -         H          -
//	cache_control            -     HR        -          -
//	truncation               -     -         HR         -
//	background               -     -         HR         -
//	max_tool_calls           -     -         H          -
//	prompt_cache_key         -     -         H          -
//	conversation             -     -         R          -
//	prompt                   -     -         R          H
//	echo                     -     -         -          H
//	suffix                   -     -         -          R
//	best_of                  -     -         -          HR
//	logit_bias               -     -         -          R
//
// The embeddings and rerank styles, by the same rules (rerank refuses
// any field beyond its shape; httpapi's TestEmbedRerankParameterTable
// runs these cells):
//
//	parameter                embeddings  rerank
//	model                    H           H
//	input                    H           -
//	encoding_format          HR          -
//	dimensions               HR          -
//	user                     H           -
//	query                    -           H
//	documents                -           H
//	top_n                    -           H
//	return_documents         -           H
//
// Notes: thinking (messages) is thinking.type; reasoning is
// reasoning.effort and reasoning.summary. thinking.budget_tokens is
// refused at or above max_tokens (Anthropic's rule) and otherwise kept
// whole; with none given the default budget, 8192, is fitted under
// max_tokens, at most three quarters of it (Reasoning.Budget), so that
// the answer keeps a quarter. cache_control (on tools, system and content
// blocks) refuses ttl 1h and more than four breakpoints. include refuses
// message.input_image.image_url and unknown values; truncation refuses
// auto; store refuses true on chat, whose completions are not stored, and
// metadata is refused there for the same reason. user, safety_identifier
// and messages' metadata.user_id are logged as the request's end user;
// responses' metadata, user, safety_identifier, prompt_cache_key and
// max_tool_calls are echoed in the response, max_tool_calls also bounding
// the searches. Legacy completions refuse suffix (no model here fills in
// the middle), logit_bias, and best_of other than n (candidates are not
// ranked). Embeddings' user is logged as the end user too;
// encoding_format is float or base64, and dimensions is refused for a
// model not trained for shorter vectors (catalog MinDimensions). Fields unknown to a style are ignored, as the SDKs'
// forward-compatible clients expect.
//
// The package is pure Go and holds no state; its values are safe for
// concurrent use unless their doc says otherwise.
package formats
