// Package completions is the wire style of POST /v1/completions, OpenAI's
// legacy text completion: the request body (Request, checked into the
// hub's formats.Request by Parse), the engine's request for each prompt
// (ForPrompt), the response (Response, from NewResponse) and its stream
// (Stream, from NewStream). Errors are written in the chat style, in
// chat's parameter names (chat.Error) with formats.WriteError; the shared
// core (the hub request, request errors, Server-Sent Events) is package
// formats.
//
// Its types are plain data, safe for concurrent reads, except Stream,
// which one goroutine drives; none needs closing.
package completions
